//! Signed approval statements and their one-shot consumption.

use std::fmt;
use std::str::FromStr;

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// What a statement decided. Stored lowercase, as `interlock-core` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApprovalDecision {
    /// The reviewer approves the plan hash.
    Approve,
    /// The reviewer rejects it.
    Reject,
}

impl ApprovalDecision {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Reject => "reject",
        }
    }
}

impl fmt::Display for ApprovalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalDecision {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "approve" => Ok(ApprovalDecision::Approve),
            "reject" => Ok(ApprovalDecision::Reject),
            _ => Err(StoreError::InvalidInput(format!("unknown decision {s:?}"))),
        }
    }
}

/// A verified decision statement to store. The store does not verify it:
/// the engine does, with `interlock-core`, before calling
/// [`Store::insert_approval`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewApproval {
    /// The plan decided on.
    pub plan_id: String,
    /// Its revision.
    pub revision: i64,
    /// The plan hash the statement binds.
    pub plan_hash: String,
    /// Approve or reject.
    pub decision: ApprovalDecision,
    /// The reviewer's reason.
    pub reason: String,
    /// `ed25519:<hex>` of the signing key.
    pub approver_key_id: String,
    /// The statement's nonce (hex). With the key id, unique forever.
    pub nonce: String,
    /// Unix seconds; the statement is not valid before.
    pub not_before: i64,
    /// Unix seconds, exclusive; the statement is not valid from then on.
    pub expires_at: i64,
    /// The DSSE envelope, JSON bytes, exactly as received.
    pub envelope: Vec<u8>,
}

/// A stored decision statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// The plan decided on.
    pub plan_id: String,
    /// Its revision.
    pub revision: i64,
    /// The plan hash the statement binds.
    pub plan_hash: String,
    /// Approve or reject.
    pub decision: ApprovalDecision,
    /// The reviewer's reason.
    pub reason: String,
    /// `ed25519:<hex>` of the signing key.
    pub approver_key_id: String,
    /// The statement's nonce.
    pub nonce: String,
    /// Unix seconds.
    pub not_before: i64,
    /// Unix seconds, exclusive.
    pub expires_at: i64,
    /// The DSSE envelope JSON bytes.
    pub envelope: Vec<u8>,
    /// Unix seconds when stored.
    pub created_at: i64,
    /// Unix seconds when an execution consumed it; `None` while unused.
    pub consumed_at: Option<i64>,
}

fn approval_from_row(row: &DbRow) -> Result<ApprovalRecord, StoreError> {
    let decision: String = row.try_get("decision").ctx("approval")?;
    let decision = decision
        .parse()
        .map_err(|_| StoreError::Malformed(format!("approval decision {decision:?} is unknown")))?;
    Ok(ApprovalRecord {
        plan_id: row.try_get("plan_id").ctx("approval")?,
        revision: row.try_get("revision").ctx("approval")?,
        plan_hash: row.try_get("plan_hash").ctx("approval")?,
        decision,
        reason: row.try_get("reason").ctx("approval")?,
        approver_key_id: row.try_get("approver_key_id").ctx("approval")?,
        nonce: row.try_get("nonce").ctx("approval")?,
        not_before: row.try_get("not_before").ctx("approval")?,
        expires_at: row.try_get("expires_at").ctx("approval")?,
        envelope: row.try_get("envelope").ctx("approval")?,
        created_at: row.try_get("created_at").ctx("approval")?,
        consumed_at: row.try_get("consumed_at").ctx("approval")?,
    })
}

fn check_new_approval(a: &NewApproval) -> Result<(), StoreError> {
    let bad = |m: String| Err(StoreError::InvalidInput(m));
    if a.approver_key_id.is_empty() {
        return bad("approver_key_id is empty".into());
    }
    if a.nonce.is_empty() {
        return bad("nonce is empty".into());
    }
    if a.envelope.is_empty() {
        return bad("envelope is empty".into());
    }
    if a.expires_at <= a.not_before {
        return bad(format!(
            "expires_at ({}) is not after not_before ({})",
            a.expires_at, a.not_before
        ));
    }
    Ok(())
}

impl Store {
    /// Stores a decision statement. A second statement with the same
    /// `(approver_key_id, nonce)` — a replay — fails with
    /// [`StoreError::Duplicate`]; an unknown plan revision with
    /// [`StoreError::NotFound`].
    pub async fn insert_approval(&self, a: &NewApproval) -> Result<(), StoreError> {
        insert_approval_in(self.pool(), a).await
    }
}

/// [`Store::insert_approval`] on any executor (the pool, or the transaction
/// that also appends the decision's log leaf).
pub(crate) async fn insert_approval_in<'c, E>(ex: E, a: &NewApproval) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    {
        check_new_approval(a)?;
        sqlx::query(
            "INSERT INTO approvals (approver_key_id, nonce, plan_id, revision, plan_hash, \
             decision, reason, not_before, expires_at, envelope, created_at, consumed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)",
        )
        .bind(&a.approver_key_id)
        .bind(&a.nonce)
        .bind(&a.plan_id)
        .bind(a.revision)
        .bind(&a.plan_hash)
        .bind(a.decision.as_str())
        .bind(&a.reason)
        .bind(a.not_before)
        .bind(a.expires_at)
        .bind(&a.envelope)
        .bind(now_secs())
        .execute(ex)
        .await
        .map_err(|e| match StoreError::from_sqlx(e, "approval") {
            StoreError::Duplicate { .. } => StoreError::Duplicate {
                what: format!(
                    "approval statement (key {} already used nonce {})",
                    a.approver_key_id, a.nonce
                ),
            },
            StoreError::NotFound { .. } => StoreError::NotFound {
                what: format!("plan {} revision {}", a.plan_id, a.revision),
            },
            other => other,
        })?;
        Ok(())
    }
}

impl Store {
    /// Every statement about one plan revision, oldest first.
    pub async fn approvals_for(
        &self,
        plan_id: &str,
        revision: i64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        sqlx::query(
            "SELECT approver_key_id, nonce, plan_id, revision, plan_hash, decision, reason, \
             not_before, expires_at, envelope, created_at, consumed_at \
             FROM approvals WHERE plan_id = $1 AND revision = $2 \
             ORDER BY created_at, approver_key_id, nonce",
        )
        .bind(plan_id)
        .bind(revision)
        .fetch_all(self.pool())
        .await
        .ctx("approval")?
        .iter()
        .map(approval_from_row)
        .collect()
    }

    /// Consumes the approval of a plan revision: in one transaction, moves it
    /// APPROVED → EXECUTING (compare-and-swap) and marks its unconsumed
    /// approve statements consumed. Returns `true` for exactly one caller,
    /// however many race (tasks, or processes sharing the database file):
    /// the write lock serializes them and only the first finds APPROVED.
    pub async fn start_execution(&self, plan_id: &str, revision: i64) -> Result<bool, StoreError> {
        self.start_execution_leased(plan_id, revision, None).await
    }

    /// [`start_execution`](Self::start_execution), taking the execution's lease
    /// for `(owner, now)` in the same transaction (see `lease.rs`).
    pub async fn start_execution_leased(
        &self,
        plan_id: &str,
        revision: i64,
        lease: Option<(&str, i64)>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        if !start_execution_in(&mut tx, plan_id, revision, lease).await? {
            tx.rollback().await.ctx("plan")?;
            tracing::debug!(plan_id, revision, "start_execution lost (not APPROVED)");
            return Ok(false);
        }
        tx.commit().await.ctx("plan")?;
        Ok(true)
    }
}

/// The body of [`Store::start_execution_leased`], inside `tx`: false (nothing
/// written) if the revision is not APPROVED.
pub(crate) async fn start_execution_in(
    tx: &mut crate::Tx,
    plan_id: &str,
    revision: i64,
    lease: Option<(&str, i64)>,
) -> Result<bool, StoreError> {
    {
        let now = now_secs();
        let won = sqlx::query(
            "UPDATE plans SET status = 'EXECUTING', updated_at = $1 \
             WHERE plan_id = $2 AND revision = $3 AND status = 'APPROVED'",
        )
        .bind(now)
        .bind(plan_id)
        .bind(revision)
        .execute(&mut **tx)
        .await
        .ctx("plan")?
        .rows_affected()
            == 1;
        if !won {
            return Ok(false);
        }
        let consumed = sqlx::query(
            "UPDATE approvals SET consumed_at = $1 \
             WHERE plan_id = $2 AND revision = $3 AND decision = 'approve' AND consumed_at IS NULL",
        )
        .bind(now)
        .bind(plan_id)
        .bind(revision)
        .execute(&mut **tx)
        .await
        .ctx("approval")?
        .rows_affected();
        if let Some((owner, at)) = lease {
            sqlx::query(
                "INSERT INTO execution_leases \
                 (plan_id, revision, owner, started_at, heartbeat_at, committed) \
                 VALUES ($1, $2, $3, $4, $5, '') \
                 ON CONFLICT (plan_id, revision) DO UPDATE SET owner = excluded.owner, \
                 started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, \
                 committed = excluded.committed",
            )
            .bind(plan_id)
            .bind(revision)
            .bind(owner)
            .bind(at)
            .bind(at)
            .execute(&mut **tx)
            .await
            .ctx("execution lease")?;
        }
        tracing::info!(
            plan_id,
            revision,
            consumed,
            "execution started; approvals consumed"
        );
        Ok(true)
    }
}
