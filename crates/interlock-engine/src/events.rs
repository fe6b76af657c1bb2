//! The engine's event bus: one stream of "something changed" that the reviewer API,
//! the desktop notifications and the tray count all read.

use interlock_core::RiskLevel;
use interlock_core::canon::Digest;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A new plan (or revision) is held for review.
    Proposed,
    Approved,
    Rejected,
    Expired,
    Executing,
    Succeeded,
    Halted,
}

/// One change to one plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineEvent {
    pub kind: EventKind,
    pub plan_id: String,
    pub revision: i64,
    pub plan_hash: Digest,
    pub title: String,
    pub risk: RiskLevel,
    /// The log index of the leaf that records it.
    pub log_index: u64,
}
