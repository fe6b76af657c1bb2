//! How a held call is named: by the digest of its arguments
//! ([`arguments_digest`]), and, as a plan, by an id that starts with
//! [`HELD_PREFIX`], which tells it apart from a plan an agent proposed. The governance tools (an agent may not execute
//! a held call as a plan) and scope offers (only a held call has them) ask;
//! a room of its own so they need not import the held call's lifecycle.

/// What a plan's `proposer` starts with when an agent key proposed it
/// (`agent:<name>`; the gateway's `auth::agent_identity`).
pub const AGENT_IDENTITY_PREFIX: &str = "agent:";

/// The plan id prefix of a held tool call (`call-<digest>-<random>`).
pub const HELD_PREFIX: &str = "call-";

/// The plan id prefix of a coding agent's held tool use (issue 40,
/// `call-hook-<binding>-<random>`): a held call's prefix too, so no agent
/// can run one through `execute_plan`.
pub const HOOK_HELD_PREFIX: &str = "call-hook-";

/// The plan id prefix of a held request to a model (issue 42,
/// `call-llm-<binding>-<random>`): a held call's prefix too, so no agent can
/// run one through `execute_plan`.
pub const LLM_HELD_PREFIX: &str = "call-llm-";

/// What a standing approval of a coding agent's own tool use names as its
/// tool: `hook:<client>:<tool>` (`hook:claude-code:Bash`) — never an MCP
/// tool's exposed name, which has no `:`.
pub fn hook_tool(client: &str, tool: &str) -> String {
    format!("{HOOK_TOOL_PREFIX}{client}:{tool}")
}

/// See [`hook_tool`].
pub const HOOK_TOOL_PREFIX: &str = "hook:";

/// The SHA-256 of the canonical arguments (what a held call's plan and a log
/// leaf name).
pub fn arguments_digest(arguments: &interlock_canon::Value) -> interlock_canon::Digest {
    interlock_canon::digest(arguments)
}
