//! Waiting on a held plan that is bound by a digest: a coding agent's held
//! tool use (`hooks`) and a held request to a model (`llm`). Both find the
//! agent's plan for exactly what it sent again — approved already (run it),
//! or still proposed (wait on it rather than propose another) — and wait for
//! a reviewer's decision, polling the store (a decision may be made in
//! another process), at most a given time.

use std::time::{Duration, Instant};

use interlock_canon as canon;
use interlock_engine::{PlanRecord, PlanStatus};

use crate::gateway::Gateway;

/// How often a waiting request polls for its decision.
const POLL_EVERY: Duration = Duration::from_millis(250);

/// The agent's plan already made for exactly this binding.
pub(crate) enum Existing {
    /// Approved: this is the retry; run it (once).
    Approved { plan_id: String, plan_hash: String },
    /// Proposed: a retry before the decision; wait on it.
    Pending { plan_id: String, plan_hash: String },
    /// None: propose one.
    None,
}

/// Finds the plan of `proposer` whose id starts with `prefix` and whose one
/// stage's `params.binding_hash` is `binding`.
pub(crate) async fn existing(
    gw: &Gateway,
    prefix: &str,
    proposer: &str,
    binding: &str,
) -> Existing {
    let mine = |p: &PlanRecord| {
        p.plan_id.starts_with(prefix) && p.proposer == proposer && binds(p, binding)
    };
    if let Ok(approved) = gw.engine().plans(Some(PlanStatus::Approved)).await
        && let Some(p) = approved.into_iter().find(|p| mine(p))
    {
        return Existing::Approved {
            plan_id: p.plan_id,
            plan_hash: p.plan_hash,
        };
    }
    match gw
        .engine()
        .plans(Some(PlanStatus::Proposed))
        .await
        .ok()
        .and_then(|plans| plans.into_iter().find(|p| mine(p)))
    {
        Some(p) => Existing::Pending {
            plan_id: p.plan_id,
            plan_hash: p.plan_hash,
        },
        None => Existing::None,
    }
}

/// Whether a plan is for exactly this binding.
fn binds(plan: &PlanRecord, binding: &str) -> bool {
    canon::parse_json(&plan.document).is_ok_and(|doc| {
        canon::to_serde_json(&doc)["body"]["stages"][0]["params"]["binding_hash"] == binding
    })
}

/// What waiting on a plan came to.
pub(crate) enum Decided {
    Approved,
    /// Rejected, expired or superseded: it must not run.
    Refused(PlanStatus),
    /// Not decided within the wait (or its state could not be read).
    Undecided,
}

/// Waits at most `secs` for a reviewer's decision on `plan_id`.
pub(crate) async fn wait(gw: &Gateway, plan_id: &str, secs: u64) -> Decided {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        match gw.engine().plan(plan_id).await.map(|p| p.status) {
            Ok(PlanStatus::Approved) => return Decided::Approved,
            Ok(PlanStatus::Proposed) => {}
            Ok(status @ (PlanStatus::Rejected | PlanStatus::Expired | PlanStatus::Superseded)) => {
                return Decided::Refused(status);
            }
            Ok(_) | Err(_) => return Decided::Undecided,
        }
        if Instant::now() >= deadline {
            return Decided::Undecided;
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}
