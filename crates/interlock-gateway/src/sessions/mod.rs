//! What the gateway keeps for agents between their requests, in memory: the
//! runtime ([`crate::gateway`]) holds it, the agent face reads and writes it.
//!
//! - [`subscriptions`]: sessions' resource subscriptions and streams.
//! - [`tasks`]: MCP tasks, bounded per key.
//! - [`round_trip`]: a stateless (2026-07-28) client's held call: a sealed
//!   `requestState` it retries with, to keep waiting for the same plan.
//! - [`limits`]: per-key rate buckets and monthly quotas.

pub mod limits;
pub(crate) mod round_trip;
pub(crate) mod subscriptions;
pub(crate) mod tasks;
