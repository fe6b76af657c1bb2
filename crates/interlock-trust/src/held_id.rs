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

/// The SHA-256 of the canonical arguments (what a held call's plan and a log
/// leaf name).
pub fn arguments_digest(arguments: &interlock_canon::Value) -> interlock_canon::Digest {
    interlock_canon::digest(arguments)
}
