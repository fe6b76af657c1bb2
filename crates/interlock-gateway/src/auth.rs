//! Who is calling: the bearer API key of a request (agents on `/mcp`,
//! reviewers on `/api/v1`), and the identity an agent key acts under. Shared
//! by both faces, which otherwise do not import each other.

use axum::http::{HeaderMap, header};

/// The bearer key of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// The identity an agent key named `name` proposes plans under
/// (`agent:<name>`): a plan's `proposer`, and whose held calls are whose.
pub fn agent_identity(name: &str) -> String {
    format!("{}{name}", interlock_trust::held_id::AGENT_IDENTITY_PREFIX)
}
