//! Why an engine operation was refused or failed.

use interlock_core::rollback::RollbackPlanError;
use interlock_core::{DecisionError, Violations};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The plan breaks invariants; every violation is listed.
    #[error("the plan was rejected:\n{0}")]
    Invalid(Violations),
    #[error("no plan `{0}`")]
    NoSuchPlan(String),
    /// The plan is not in a state that allows this operation.
    #[error("plan `{plan_id}` is {status}; {action} needs it to be {needed}")]
    WrongState {
        plan_id: String,
        status: String,
        action: &'static str,
        needed: &'static str,
    },
    /// The signed statement does not hold for this plan now.
    #[error("decision refused: {0}")]
    Decision(#[from] DecisionError),
    #[error(
        "decision refused: the approver ({0}) proposed this plan; a proposer cannot approve their own plan"
    )]
    SelfApproval(String),
    #[error("decision refused: this statement was already recorded (replay)")]
    Replay,
    /// A newer decision about the same subject is recorded: applying this one
    /// would undo it.
    #[error(
        "decision refused: `{subject}` has a decision issued at {latest_issued_at}, after this statement ({issued_at}); sign a new decision"
    )]
    Stale {
        subject: String,
        issued_at: i64,
        latest_issued_at: i64,
    },
    #[error("execution refused: {0}")]
    NotApproved(String),
    #[error(
        "execution refused: plan `{0}` has already been executed or is executing (its approval is consumed; run a new plan to change anything)"
    )]
    AlreadyStarted(String),
    /// No rollback plan can be built for this halted plan.
    #[error("no rollback plan: {0}")]
    Rollback(#[from] RollbackPlanError),
    /// A plan's `body.rollback_of` does not name a halted plan of its proposer.
    #[error("the plan was rejected: {0}")]
    RollbackLink(String),
    #[error("the document is not a JSON object")]
    NotAnObject,
    #[error("storage: {0}")]
    Store(#[from] interlock_store::StoreError),
    #[error("log: {0}")]
    Log(#[from] interlock_log::LogError),
}
