//! `decide`: record a reviewer's signed statement and move the plan accordingly.

use std::collections::BTreeSet;

use interlock_core::canon::{self, Digest, Map};
use interlock_core::decision::{ApprovalStatement, Expectation, verify_decision};
use interlock_core::{Decision, DecisionError, DsseEnvelope, RiskLevel};
use interlock_store::{
    ApprovalDecision, ClaimOutcome, DecisionClaim, NewApproval, PlanRecord, PlanStatus,
    StateChange, StoreError,
};

use crate::engine::{Engine, int};
use crate::error::EngineError;

/// The reason of a plan's move to REJECTED made for a rejection recorded by
/// a process that stopped before making it.
const RECOVERED_REJECTION: &str = "rejected (recovered: the process that recorded the rejection stopped before it moved the plan)";

/// Where a plan stands after a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionOutcome {
    pub plan_id: String,
    pub revision: i64,
    pub decision: Decision,
    pub status: PlanStatus,
    /// Distinct approvers whose approvals are valid now.
    pub approvals: u32,
    pub approvals_required: u32,
    pub log_index: u64,
}

impl Engine {
    /// Records a signed decision. It must be signed by a trusted approver key that
    /// is not the proposer's, about the plan's *current* hash, under the policy in
    /// force, inside its validity window, and never seen before.
    pub async fn decide(&self, envelope: &DsseEnvelope) -> Result<DecisionOutcome, EngineError> {
        // Read the (not yet trusted) statement only to find which plan it is about;
        // everything in it is checked against that plan below.
        let claimed = canon::parse_json(&envelope.payload)
            .map_err(|e| DecisionError::Malformed(e.to_string()))
            .and_then(|v| ApprovalStatement::from_value(&v))?;
        let plan = self.plan(&claimed.plan_id).await?;
        let allowed = match claimed.decision {
            Decision::Approve => plan.status == PlanStatus::Proposed,
            Decision::Reject => matches!(plan.status, PlanStatus::Proposed | PlanStatus::Approved),
        };
        // The refusal of this decision of a plan in `status`.
        let wrong_state = |status: PlanStatus| {
            let approving = claimed.decision == Decision::Approve;
            EngineError::WrongState {
                plan_id: plan.plan_id.clone(),
                status: status.as_str().to_owned(),
                action: if approving { "approving" } else { "rejecting" },
                needed: if approving {
                    "PROPOSED"
                } else {
                    "PROPOSED or APPROVED"
                },
            }
        };
        if !allowed {
            return Err(wrong_state(plan.status));
        }
        // A rejection on record whose move a stopped process never made is
        // a veto all the same: made now, and nothing more is decided.
        if self.finish_recorded_rejection(&plan).await? {
            return Err(wrong_state(PlanStatus::Rejected));
        }
        // Likewise a quorum on record whose move was never made: an approval
        // more would be a second decision of a decided plan.
        if claimed.decision == Decision::Approve && self.finish_reached_quorum(&plan).await? {
            return Err(wrong_state(PlanStatus::Approved));
        }
        let (trusted, records) = self.trusted_approvers().await?;
        let statement = verify_decision(envelope, &trusted, &self.expectation(&plan)?)?;
        let identity = records
            .iter()
            .find(|r| r.key_id == statement.approver_key_id.to_string())
            .map(|r| r.identity.clone())
            // A key that verified is a trusted row's; never an empty identity.
            .ok_or(EngineError::Decision(DecisionError::UnknownKey(
                statement.approver_key_id,
            )))?;
        if identity == plan.proposer {
            return Err(EngineError::SelfApproval(identity));
        }
        self.claim(&statement).await?;
        let envelope_json = serde_json::to_vec(&envelope.to_json()).expect("JSON serializes");
        let statement_value = canon::from_serde_json(&envelope.to_json())
            .map_err(|e| DecisionError::Malformed(e.to_string()))?;
        let mut m = Map::new();
        m.insert("plan_id".into(), plan.plan_id.as_str().into());
        m.insert("revision".into(), int(plan.revision));
        m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
        m.insert("decision".into(), statement.decision.name().into());
        m.insert(
            "approver_key_id".into(),
            statement.approver_key_id.to_string().into(),
        );
        m.insert("approver".into(), identity.as_str().into());
        m.insert("reason".into(), statement.reason.as_str().into());
        m.insert("statement".into(), statement_value);
        // The statement is stored in the same transaction as the leaf that
        // records it.
        let change = StateChange::InsertApproval(NewApproval {
            plan_id: plan.plan_id.clone(),
            revision: plan.revision,
            plan_hash: plan.plan_hash.clone(),
            decision: match statement.decision {
                Decision::Approve => ApprovalDecision::Approve,
                Decision::Reject => ApprovalDecision::Reject,
            },
            reason: statement.reason.clone(),
            approver_key_id: statement.approver_key_id.to_string(),
            nonce: hex::encode(statement.nonce),
            not_before: statement.not_before,
            expires_at: statement.expires_at,
            envelope: envelope_json,
        });
        let appended = match self.record_with_change("plan.decision", m, change).await {
            Ok(a) => a,
            Err(EngineError::Log(interlock_log::LogError::WriteFailed(e)))
                if matches!(*e, StoreError::Duplicate { .. }) =>
            {
                return Err(EngineError::Replay);
            }
            Err(e) => return Err(e),
        };
        let risk = RiskLevel::from_name(&plan.risk).unwrap_or(RiskLevel::Critical);
        let required = self.policy.approvals_required(risk);
        let (approvals, _) = self.valid_approvals(&plan).await?;
        let status = match statement.decision {
            Decision::Reject => {
                let from = plan.status;
                self.transition(&plan, from, PlanStatus::Rejected, &statement.reason)
                    .await?;
                PlanStatus::Rejected
            }
            Decision::Approve if approvals >= required => {
                // Losing this race means a concurrent decision already moved it.
                self.transition(
                    &plan,
                    PlanStatus::Proposed,
                    PlanStatus::Approved,
                    "quorum reached",
                )
                .await?;
                self.plan(&plan.plan_id).await?.status
            }
            Decision::Approve => PlanStatus::Proposed,
        };
        Ok(DecisionOutcome {
            plan_id: plan.plan_id,
            revision: plan.revision,
            decision: statement.decision,
            status,
            approvals,
            approvals_required: required,
            log_index: appended.index,
        })
    }

    /// Moves to APPROVED each PROPOSED plan whose valid approvals reach its
    /// quorum. The deciding approval's leaf and row commit together; the
    /// transition follows in a transaction of its own, so a process killed
    /// between the two leaves a plan approved in all but its status (issue
    /// 44's fault campaign found one). A gateway runs this when it starts.
    /// Returns the plans moved.
    pub async fn apply_reached_quorums(&self) -> Result<Vec<String>, EngineError> {
        let mut moved = Vec::new();
        for plan in self.plans(Some(PlanStatus::Proposed)).await? {
            if self.finish_reached_quorum(&plan).await? {
                moved.push(plan.plan_id);
            }
        }
        Ok(moved)
    }

    /// Whether `plan`, PROPOSED, has approvals on record that reach its
    /// quorum; if so, it is moved to APPROVED now. A decision whose move a
    /// Postgres crash cut (the fault campaign's crash over a decision) left
    /// the plan PROPOSED while its gateway ran on, so the reviewer's retry
    /// recorded a second approval of it: the retry now finds the quorum,
    /// makes the move and is refused as late.
    pub(crate) async fn finish_reached_quorum(
        &self,
        plan: &PlanRecord,
    ) -> Result<bool, EngineError> {
        if plan.status != PlanStatus::Proposed {
            return Ok(false);
        }
        let risk = RiskLevel::from_name(&plan.risk).unwrap_or(RiskLevel::Critical);
        let required = self.policy.approvals_required(risk);
        let (approvals, _) = self.valid_approvals(plan).await?;
        if approvals == 0 || approvals < required {
            return Ok(false);
        }
        let reason = "quorum reached (recovered: the process that recorded the deciding \
                      approval stopped before it moved the plan)";
        self.transition(plan, PlanStatus::Proposed, PlanStatus::Approved, reason)
            .await?;
        Ok(true)
    }

    /// Moves to REJECTED each PROPOSED or APPROVED plan whose current
    /// revision has a rejection on record. A rejection's leaf and row commit
    /// together and the plan's move follows in a transaction of its own, so a
    /// process killed between the two left the plan PROPOSED — or APPROVED,
    /// and runnable — with its veto on the log (issue 44's desktop campaign
    /// found one). A gateway runs this when it starts, before it looks for
    /// reached quorums; a decision or an execution of such a plan makes the
    /// move first ([`Engine::finish_recorded_rejection`]). Returns the plans
    /// moved.
    pub async fn apply_recorded_rejections(&self) -> Result<Vec<String>, EngineError> {
        let mut moved = Vec::new();
        for status in [PlanStatus::Proposed, PlanStatus::Approved] {
            for plan in self.plans(Some(status)).await? {
                if self.recorded_rejection(&plan).await?.is_some()
                    && self
                        .transition(&plan, status, PlanStatus::Rejected, RECOVERED_REJECTION)
                        .await?
                {
                    moved.push(plan.plan_id);
                }
            }
        }
        Ok(moved)
    }

    /// Whether `plan`, PROPOSED or APPROVED, has a rejection of its current
    /// revision on record; if so, it is moved to REJECTED now (by this call,
    /// or already by another).
    pub(crate) async fn finish_recorded_rejection(
        &self,
        plan: &PlanRecord,
    ) -> Result<bool, EngineError> {
        if !matches!(plan.status, PlanStatus::Proposed | PlanStatus::Approved)
            || self.recorded_rejection(plan).await?.is_none()
        {
            return Ok(false);
        }
        self.transition(plan, plan.status, PlanStatus::Rejected, RECOVERED_REJECTION)
            .await?;
        Ok(true)
    }

    /// A rejection of `plan`'s current revision on record: its row is stored
    /// only with the leaf of a verified statement, so it vetoes whatever its
    /// date.
    async fn recorded_rejection(
        &self,
        plan: &PlanRecord,
    ) -> Result<Option<interlock_store::ApprovalRecord>, EngineError> {
        Ok(self
            .store
            .approvals_for(&plan.plan_id, plan.revision)
            .await?
            .into_iter()
            .find(|a| a.decision == ApprovalDecision::Reject))
    }

    /// What a statement about `plan` must say, now.
    pub(crate) fn expectation<'a>(
        &'a self,
        plan: &'a PlanRecord,
    ) -> Result<Expectation<'a>, EngineError> {
        let plan_hash: Digest = plan.plan_hash.parse().map_err(|_| {
            StoreError::Malformed(format!("plan `{}` has a malformed hash", plan.plan_id))
        })?;
        Ok(Expectation {
            audience: self.log.origin(),
            plan_id: &plan.plan_id,
            plan_hash,
            policy_digest: self.policy.digest(),
            now: self.now(),
        })
    }

    /// Distinct trusted approver *identities* whose unconsumed approvals of this
    /// revision verify now, and whether any approval failed only because its
    /// window has passed. Identities, not keys: one person with a desktop key and
    /// a browser key is one approver, so quorum cannot be met by one person.
    pub(crate) async fn valid_approvals(
        &self,
        plan: &PlanRecord,
    ) -> Result<(u32, bool), EngineError> {
        let (trusted, records) = self.trusted_approvers().await?;
        let expect = self.expectation(plan)?;
        let mut approvers = BTreeSet::<String>::new();
        let mut expired = false;
        for a in self
            .store
            .approvals_for(&plan.plan_id, plan.revision)
            .await?
        {
            if a.decision != ApprovalDecision::Approve || a.consumed_at.is_some() {
                continue;
            }
            let envelope = serde_json::from_slice(&a.envelope)
                .map_err(|e| DecisionError::Malformed(e.to_string()))
                .and_then(|j| DsseEnvelope::from_json(&j));
            match envelope.and_then(|e| verify_decision(&e, &trusted, &expect)) {
                Ok(st) => {
                    let key_id = st.approver_key_id.to_string();
                    // A trusted key always has a record (both come from one read);
                    // its identity is what counts.
                    if let Some(r) = records.iter().find(|r| r.key_id == key_id) {
                        approvers.insert(r.identity.clone());
                    }
                }
                Err(DecisionError::Expired { .. }) => expired = true,
                Err(_) => {}
            }
        }
        Ok((approvers.len() as u32, expired))
    }
}

/// A verified decision about something other than a plan (an upstream server's
/// surface), with the approver's registered identity.
#[derive(Clone, Debug)]
pub struct VerifiedDecision {
    pub statement: ApprovalStatement,
    pub identity: String,
}

impl Engine {
    /// Records a verified statement in the decision ledger: one-shot (its key and
    /// nonce never seen before) and ordered (an approval not issued before the
    /// subject's latest decision; a rejection is taken whatever its date). A refusal is itself logged (`decision.refused`), so an attempt to
    /// replay or roll back a decision leaves evidence.
    async fn claim(&self, statement: &ApprovalStatement) -> Result<(), EngineError> {
        let issued_at = statement
            .issued_at
            .ok_or(EngineError::Decision(DecisionError::NoAudience))?;
        let outcome = self
            .store
            .claim_decision(&DecisionClaim {
                approver_key_id: statement.approver_key_id.to_string(),
                nonce: hex::encode(statement.nonce),
                subject: statement.plan_id.clone(),
                decision: match statement.decision {
                    Decision::Approve => ApprovalDecision::Approve,
                    Decision::Reject => ApprovalDecision::Reject,
                },
                issued_at,
            })
            .await?;
        let refusal = match outcome {
            ClaimOutcome::Recorded => return Ok(()),
            ClaimOutcome::Replayed => ("replayed", EngineError::Replay),
            ClaimOutcome::Stale { latest_issued_at } => (
                "stale",
                EngineError::Stale {
                    subject: statement.plan_id.clone(),
                    issued_at,
                    latest_issued_at,
                },
            ),
        };
        self.append(
            "decision.refused",
            [
                ("subject", statement.plan_id.as_str().into()),
                ("subject_hash", statement.plan_hash.to_string().into()),
                ("decision", statement.decision.name().into()),
                (
                    "approver_key_id",
                    statement.approver_key_id.to_string().into(),
                ),
                ("nonce", hex::encode(statement.nonce).into()),
                ("issued_at", int(issued_at)),
                ("why", refusal.0.into()),
                ("message", refusal.1.to_string().into()),
            ],
        )
        .await?;
        Err(refusal.1)
    }

    /// Accepts a signed decision about `subject` (e.g. `server:fs`) at exactly
    /// `subject_hash`, with the same rules as a plan decision: a trusted key, a
    /// strict signature over the canonical statement, this gateway as audience,
    /// the policy in force, the validity window, and the decision ledger (one-shot,
    /// not older than the subject's latest decision). The caller applies it (with
    /// its own compare-and-swap on `subject_hash`) and logs it.
    pub async fn accept_subject_decision(
        &self,
        envelope: &DsseEnvelope,
        subject: &str,
        subject_hash: Digest,
    ) -> Result<VerifiedDecision, EngineError> {
        let (trusted, records) = self.trusted_approvers().await?;
        let statement = verify_decision(
            envelope,
            &trusted,
            &Expectation {
                audience: self.log.origin(),
                plan_id: subject,
                plan_hash: subject_hash,
                policy_digest: self.policy.digest(),
                now: self.now(),
            },
        )?;
        let identity = records
            .iter()
            .find(|r| r.key_id == statement.approver_key_id.to_string())
            .map(|r| r.identity.clone())
            // A key that verified is a trusted row's; never an empty identity.
            .ok_or(EngineError::Decision(DecisionError::UnknownKey(
                statement.approver_key_id,
            )))?;
        self.claim(&statement).await?;
        Ok(VerifiedDecision {
            statement,
            identity,
        })
    }
}
