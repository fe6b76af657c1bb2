//! The decision ledger: every signed decision's `(key, nonce)` and issue time, for
//! every subject (a plan id, `server:<name>`, `standing:<id>`).
//!
//! Why: a decision must be one-shot and ordered. A statement already recorded is a
//! replay; an approval issued before the subject's latest recorded decision would
//! undo a newer one (a withheld or re-posted approval after a rejection). Both are
//! checked and the statement recorded in one write transaction, so two racing
//! posts of the same statement cannot both pass.
//!
//! A rejection is never refused for its date: it can only withhold, and dates
//! are wall-clock time, which steps. A reviewer's veto signed after the clock
//! stepped back by hours reads as older than the approval it overrides, and was
//! refused as stale for as long as the step (issue 44's clock campaign).

use sqlx::Row;

use crate::error::SqlxResultExt as _;
use crate::{ApprovalDecision, Store, StoreError, now_secs};

/// A decision about to be recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionClaim {
    pub approver_key_id: String,
    /// Hex, as in the statement.
    pub nonce: String,
    pub subject: String,
    pub decision: ApprovalDecision,
    /// The statement's `issued_at` (Unix seconds).
    pub issued_at: i64,
}

/// What the ledger said about a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// Recorded: the statement is new and not older than the subject's latest.
    Recorded,
    /// This `(key, nonce)` was recorded before: a replay.
    Replayed,
    /// The subject has a decision issued later than this approval.
    Stale { latest_issued_at: i64 },
}

impl Store {
    /// Checks and records one decision, atomically (see the module docs). Ties
    /// (the same second) are allowed: two reviewers deciding together are not a
    /// replay.
    pub async fn claim_decision(&self, c: &DecisionClaim) -> Result<ClaimOutcome, StoreError> {
        let mut tx = self.begin_write().await?;
        let used =
            sqlx::query("SELECT 1 FROM decision_ledger WHERE approver_key_id = $1 AND nonce = $2")
                .bind(&c.approver_key_id)
                .bind(&c.nonce)
                .fetch_optional(&mut *tx)
                .await
                .ctx("decision ledger")?;
        if used.is_some() {
            return Ok(ClaimOutcome::Replayed);
        }
        let latest: Option<i64> =
            sqlx::query("SELECT MAX(issued_at) AS latest FROM decision_ledger WHERE subject = $1")
                .bind(&c.subject)
                .fetch_one(&mut *tx)
                .await
                .ctx("decision ledger")?
                .try_get("latest")
                .ctx("decision ledger")?;
        if let Some(latest) = latest
            && latest > c.issued_at
            && c.decision == ApprovalDecision::Approve
        {
            return Ok(ClaimOutcome::Stale {
                latest_issued_at: latest,
            });
        }
        sqlx::query(
            "INSERT INTO decision_ledger \
             (approver_key_id, nonce, subject, decision, issued_at, recorded_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&c.approver_key_id)
        .bind(&c.nonce)
        .bind(&c.subject)
        .bind(c.decision.as_str())
        .bind(c.issued_at)
        .bind(now_secs())
        .execute(&mut *tx)
        .await
        .ctx("decision ledger")?;
        tx.commit().await.ctx("decision ledger")?;
        Ok(ClaimOutcome::Recorded)
    }
}
