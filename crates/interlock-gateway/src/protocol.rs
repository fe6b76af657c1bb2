//! The MCP protocol versions the gateway speaks, to agents and to upstream
//! servers alike. A room of their own because both faces name them and neither
//! may import the other.

/// Protocol versions served with the initialize handshake, newest first.
pub const SESSION_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The protocol version whose sessions may run calls as tasks (MCP tasks
/// were introduced, experimental, in 2025-11-25 and left the 2026-07-28
/// specification).
pub const TASKS_VERSION: &str = "2025-11-25";
/// The stateless protocol version.
pub const STATELESS_VERSION: &str = "2026-07-28";
