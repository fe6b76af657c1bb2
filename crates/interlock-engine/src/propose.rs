//! `propose`: validate a plan document, hash it, hold it for review.

use interlock_core::canon::{self, Digest, Value};
use interlock_core::{RiskLevel, validate};
use interlock_store::NewPlan;

use crate::engine::{Engine, int};
use crate::error::EngineError;
use crate::events::EventKind;

/// A plan held for review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub plan_id: String,
    pub revision: i64,
    pub plan_hash: Digest,
    pub risk: RiskLevel,
    /// Distinct approvers this plan needs (from the policy's quorum for its risk).
    pub approvals_required: u32,
    pub log_index: u64,
}

impl Engine {
    /// Validates `doc` against every invariant of the policy in force, stores it as a
    /// new revision in state PROPOSED (superseding a previous, not yet executed
    /// revision of the same `plan_id`), logs it and announces it.
    pub async fn propose(&self, doc: &Value) -> Result<Proposal, EngineError> {
        if doc.as_object().is_none() {
            return Err(EngineError::NotAnObject);
        }
        let valid = validate(doc, &self.policy).map_err(EngineError::Invalid)?;
        let plan = &valid.plan;
        if let Some(link) = &plan.body.rollback_of {
            self.check_rollback_link(link, &plan.proposer).await?;
        }
        let record = self
            .store
            .insert_plan_revision(&NewPlan {
                plan_id: plan.plan_id.clone(),
                plan_hash: valid.hash.to_string(),
                document: canon::canonical_bytes(doc),
                title: plan.title.clone(),
                proposer: plan.proposer.clone(),
                risk: valid.risk.level.name().to_owned(),
            })
            .await?;
        let appended = self
            .append(
                "plan.proposed",
                [
                    ("plan_id", plan.plan_id.as_str().into()),
                    ("revision", int(record.revision)),
                    ("plan_hash", valid.hash.to_string().into()),
                    ("title", plan.title.as_str().into()),
                    ("proposer", plan.proposer.as_str().into()),
                    ("risk", valid.risk.level.name().into()),
                    ("policy_digest", self.policy.digest().to_string().into()),
                ],
            )
            .await?;
        self.announce(EventKind::Proposed, &record, appended.index);
        Ok(Proposal {
            plan_id: record.plan_id,
            revision: record.revision,
            plan_hash: valid.hash,
            risk: valid.risk.level,
            approvals_required: self.policy.approvals_required(valid.risk.level),
            log_index: appended.index,
        })
    }
}
