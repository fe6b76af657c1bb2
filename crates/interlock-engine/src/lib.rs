//! The governance loop of DESIGN.md §1, running for real: agents *propose* plans,
//! reviewers *decide* with signed statements, and approved plans *execute* stage by
//! stage against live state. Every transition is a leaf of the tamper-evident log.
//!
//! The engine owns no SQL (that is `interlock-store`), no hashing or signing rules
//! (that is `interlock-core`), and no infrastructure (that is `interlock-adapters`):
//! it sequences them and enforces the state machine
//! `PROPOSED → APPROVED | REJECTED | EXPIRED → EXECUTING → SUCCEEDED | HALTED`.
#![forbid(unsafe_code)]

mod clock;
mod decide;
mod engine;
mod error;
mod events;
mod execute;
mod propose;
mod rollback;

pub use clock::{Clock, ManualClock, SystemClock};
pub use decide::{DecisionOutcome, VerifiedDecision};
pub use engine::{DATABASE_FILE, Engine, EngineConfig, fresh_origin};
pub use error::EngineError;
pub use events::{EngineEvent, EventKind};
pub use execute::{ExecutionReport, LEASE_TIMEOUT_SECS, StageReport, StageResult};
pub use propose::Proposal;

pub use interlock_store::{PlanRecord, PlanStatus};
