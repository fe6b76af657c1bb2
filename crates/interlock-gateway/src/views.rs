//! How plans and decisions are summarized for a client: shared by the
//! reviewer API, the governance tools an agent calls, and the desktop app, so
//! the two faces show the same fields without importing each other.

use interlock_engine::{DecisionOutcome, PlanRecord};
use serde_json::{Value, json};

/// A plan revision as the API lists it (the governance tools too).
pub fn plan_summary(r: &PlanRecord) -> Value {
    json!({
        "plan_id": r.plan_id,
        "revision": r.revision,
        "plan_hash": r.plan_hash,
        "title": r.title,
        "proposer": r.proposer,
        "risk": r.risk,
        "status": r.status.as_str(),
        "created_at": r.created_at,
        "updated_at": r.updated_at,
    })
}

/// A plan decision's outcome as the API (and the desktop app) reports it.
pub fn decision_outcome_json(o: &DecisionOutcome) -> Value {
    json!({
        "plan_id": o.plan_id,
        "revision": o.revision,
        "decision": o.decision.name(),
        "status": o.status.as_str(),
        "approvals": o.approvals,
        "approvals_required": o.approvals_required,
        "log_index": o.log_index,
    })
}
