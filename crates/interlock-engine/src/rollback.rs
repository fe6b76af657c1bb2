//! Rollback plans (issue 23 item 1): a halted plan's committed stages' compensating
//! stages, proposed as a *new* plan that is reviewed like any other.
//!
//! Nothing here runs anything. `propose_rollback` reads the halted revision and the
//! stages its execution committed (the lease row keeps them), has the pure core
//! build the document (`interlock_core::rollback`), and proposes it — so it is
//! validated under the policy in force, logged and held for review. `propose`
//! checks every `body.rollback_of` link the same way, whoever wrote the plan.

use interlock_core::canon::{self, Value};
use interlock_core::rollback::rollback_plan;
use interlock_core::{Plan, PlanSchema, RollbackOf};
use interlock_store::PlanStatus;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::propose::Proposal;

impl Engine {
    /// The rollback plan document of halted plan `plan_id` (its current revision),
    /// proposed by that plan's proposer and dated now. See the module docs.
    pub async fn rollback_document(&self, plan_id: &str) -> Result<Value, EngineError> {
        let record = self.plan(plan_id).await?;
        if record.status != PlanStatus::Halted {
            return Err(EngineError::WrongState {
                plan_id: record.plan_id,
                status: record.status.as_str().to_owned(),
                action: "building a rollback plan",
                needed: "HALTED",
            });
        }
        let committed = self
            .store
            .execution_committed(&record.plan_id, record.revision)
            .await?
            .unwrap_or_default();
        let doc = canon::parse_json(&record.document).map_err(|e| {
            interlock_store::StoreError::Malformed(format!("plan `{plan_id}` document: {e}"))
        })?;
        let halted = Plan::read(&doc, PlanSchema::of(&self.policy)).map_err(|errors| {
            interlock_store::StoreError::Malformed(format!(
                "plan `{plan_id}` no longer reads under the policy in force: {}",
                errors
                    .iter()
                    .map(|e| format!("{}: {}", e.path, e.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        })?;
        let created_at = interlock_core::time::rfc3339(self.now());
        Ok(rollback_plan(
            &halted,
            record.revision,
            &committed,
            &created_at,
        )?)
    }

    /// Builds the rollback plan of halted plan `plan_id` and proposes it.
    pub async fn propose_rollback(&self, plan_id: &str) -> Result<Proposal, EngineError> {
        let doc = self.rollback_document(plan_id).await?;
        self.propose(&doc).await
    }

    /// A plan's `rollback_of` must name a halted revision, by its hash, of a plan
    /// with the same proposer: a rollback plan cannot point at a plan that did not
    /// run, at other bytes, or at another agent's plan.
    pub(crate) async fn check_rollback_link(
        &self,
        link: &RollbackOf,
        proposer: &str,
    ) -> Result<(), EngineError> {
        let refused = |why: String| {
            Err(EngineError::RollbackLink(format!(
                "`rollback_of` names plan `{}` revision {}: {why}",
                link.plan_id, link.revision
            )))
        };
        let Some(record) = self
            .store
            .plan_revision(&link.plan_id, link.revision)
            .await?
        else {
            return refused("there is no such revision".into());
        };
        if record.proposer != proposer {
            return refused("it is not this proposer's plan".into());
        }
        if record.status != PlanStatus::Halted {
            return refused(format!("it is {}, not HALTED", record.status.as_str()));
        }
        if record.plan_hash != link.plan_hash.to_string() {
            return refused(format!(
                "its body hashes to {}, not {}",
                record.plan_hash, link.plan_hash
            ));
        }
        Ok(())
    }
}
