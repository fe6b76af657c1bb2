//! How a held call is told apart from a plan an agent proposed: its plan id
//! starts with [`HELD_PREFIX`]. The governance tools (an agent may not execute
//! a held call as a plan) and scope offers (only a held call has them) ask;
//! a room of its own so they need not import the held call's lifecycle.

/// The plan id prefix of a held tool call (`call-<digest>-<random>`).
pub const HELD_PREFIX: &str = "call-";
