//! Plans: every revision, and the status machine with compare-and-swap transitions.

use std::fmt;
use std::str::FromStr;

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// Where a plan revision is in its lifecycle. Stored as UPPERCASE text.
///
/// ```text
/// PROPOSED → APPROVED | REJECTED | EXPIRED
/// APPROVED → EXECUTING | REJECTED | EXPIRED
/// EXECUTING → SUCCEEDED | HALTED
/// PROPOSED | APPROVED | REJECTED | EXPIRED → SUPERSEDED (only by a new revision)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlanStatus {
    /// Held, waiting for reviewers.
    Proposed,
    /// Quorum reached; may be executed once.
    Approved,
    /// A reviewer rejected it.
    Rejected,
    /// Its approval window passed.
    Expired,
    /// A newer revision of the same plan replaced it.
    Superseded,
    /// Its approval was consumed and it is running.
    Executing,
    /// Every stage ran and verified.
    Succeeded,
    /// A stage failed; what committed is recorded (forward-only).
    Halted,
}

impl PlanStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [PlanStatus; 8] = [
        PlanStatus::Proposed,
        PlanStatus::Approved,
        PlanStatus::Rejected,
        PlanStatus::Expired,
        PlanStatus::Superseded,
        PlanStatus::Executing,
        PlanStatus::Succeeded,
        PlanStatus::Halted,
    ];

    /// The stored (UPPERCASE) name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Proposed => "PROPOSED",
            PlanStatus::Approved => "APPROVED",
            PlanStatus::Rejected => "REJECTED",
            PlanStatus::Expired => "EXPIRED",
            PlanStatus::Superseded => "SUPERSEDED",
            PlanStatus::Executing => "EXECUTING",
            PlanStatus::Succeeded => "SUCCEEDED",
            PlanStatus::Halted => "HALTED",
        }
    }

    /// Whether [`Store::transition`] may move a revision from `self` to `to`.
    /// `Superseded` is only ever set by [`Store::insert_plan_revision`], and
    /// nothing leaves a terminal state: a plan is forward-only.
    pub fn can_transition_to(self, to: PlanStatus) -> bool {
        use PlanStatus::*;
        matches!(
            (self, to),
            (Proposed, Approved | Rejected | Expired)
                | (Approved, Executing | Rejected | Expired)
                | (Executing, Succeeded | Halted)
        )
    }

    /// Whether a new revision may replace a current revision in this status:
    /// only before it started running.
    pub fn is_revisable(self) -> bool {
        matches!(
            self,
            PlanStatus::Proposed
                | PlanStatus::Approved
                | PlanStatus::Rejected
                | PlanStatus::Expired
        )
    }
}

impl fmt::Display for PlanStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PlanStatus {
    type Err = StoreError;

    /// Parses the stored name (case-insensitively, for CLI use).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PlanStatus::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| StoreError::InvalidInput(format!("unknown plan status {s:?}")))
    }
}

/// A plan revision to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewPlan {
    /// Stable identity of the plan across revisions.
    pub plan_id: String,
    /// `sha256:<hex>` of the plan body (what reviewers countersign).
    pub plan_hash: String,
    /// RFC 8785 (JCS) bytes of the whole plan document.
    pub document: Vec<u8>,
    /// Human title.
    pub title: String,
    /// Who proposed it (an agent identity).
    pub proposer: String,
    /// Risk label.
    pub risk: String,
}

/// A stored plan revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanRecord {
    /// Stable identity of the plan across revisions.
    pub plan_id: String,
    /// 1 for the first revision, then +1 each time.
    pub revision: i64,
    /// `sha256:<hex>` of the plan body.
    pub plan_hash: String,
    /// RFC 8785 bytes of the whole plan document.
    pub document: Vec<u8>,
    /// Human title.
    pub title: String,
    /// Who proposed it.
    pub proposer: String,
    /// Risk label.
    pub risk: String,
    /// Lifecycle status.
    pub status: PlanStatus,
    /// Unix seconds when this revision was stored.
    pub created_at: i64,
    /// Unix seconds of the last status change.
    pub updated_at: i64,
}

const PLAN_COLUMNS: &str =
    "plan_id, revision, plan_hash, document, title, proposer, risk, status, created_at, updated_at";

fn plan_from_row(row: &DbRow) -> Result<PlanRecord, StoreError> {
    let status: String = row.try_get("status").ctx("plan")?;
    let status = status.parse().map_err(|_| {
        StoreError::Malformed(format!("plan status {status:?} is not a known status"))
    })?;
    Ok(PlanRecord {
        plan_id: row.try_get("plan_id").ctx("plan")?,
        revision: row.try_get("revision").ctx("plan")?,
        plan_hash: row.try_get("plan_hash").ctx("plan")?,
        document: row.try_get("document").ctx("plan")?,
        title: row.try_get("title").ctx("plan")?,
        proposer: row.try_get("proposer").ctx("plan")?,
        risk: row.try_get("risk").ctx("plan")?,
        status,
        created_at: row.try_get("created_at").ctx("plan")?,
        updated_at: row.try_get("updated_at").ctx("plan")?,
    })
}

fn check_new_plan(p: &NewPlan) -> Result<(), StoreError> {
    let bad = |m: &str| Err(StoreError::InvalidInput(m.to_owned()));
    if p.plan_id.trim().is_empty() {
        return bad("plan_id is empty");
    }
    if p.plan_hash.is_empty() {
        return bad("plan_hash is empty");
    }
    if p.document.is_empty() {
        return bad("plan document is empty");
    }
    Ok(())
}

impl Store {
    /// Stores `plan` as the next revision of its plan id (1 if new), status
    /// PROPOSED, in one transaction: the revision number is `max + 1` read
    /// under the write lock, and the previous current revision becomes
    /// SUPERSEDED. Refuses with [`StoreError::PlanLocked`] if the current
    /// revision is EXECUTING, SUCCEEDED or HALTED (or already SUPERSEDED,
    /// which only a hand-edited database shows), and with
    /// [`StoreError::NotPlanOwner`] if the plan id was first proposed by
    /// another identity: a plan id belongs to its first proposer, so nobody else
    /// can supersede what a reviewer is looking at (checked under the same write
    /// lock as the insert).
    pub async fn insert_plan_revision(&self, plan: &NewPlan) -> Result<PlanRecord, StoreError> {
        check_new_plan(plan)?;
        let now = now_secs();
        let mut tx = self.begin_write().await?;
        let owner: Option<String> = sqlx::query_scalar(
            "SELECT proposer FROM plans WHERE plan_id = $1 ORDER BY revision ASC LIMIT 1",
        )
        .bind(&plan.plan_id)
        .fetch_optional(&mut *tx)
        .await
        .ctx("plan")?;
        if let Some(owner) = owner
            && owner != plan.proposer
        {
            return Err(StoreError::NotPlanOwner {
                plan_id: plan.plan_id.clone(),
                owner,
                proposer: plan.proposer.clone(),
            });
        }
        let current: Option<(i64, String)> = sqlx::query_as(
            "SELECT revision, status FROM plans WHERE plan_id = $1 ORDER BY revision DESC LIMIT 1",
        )
        .bind(&plan.plan_id)
        .fetch_optional(&mut *tx)
        .await
        .ctx("plan")?;
        let revision = match current {
            None => 1,
            Some((rev, status)) => {
                let status: PlanStatus = status.parse().map_err(|_| {
                    StoreError::Malformed(format!("plan status {status:?} is not a known status"))
                })?;
                if !status.is_revisable() {
                    return Err(StoreError::PlanLocked {
                        plan_id: plan.plan_id.clone(),
                        revision: rev,
                        status,
                    });
                }
                sqlx::query(
                    "UPDATE plans SET status = 'SUPERSEDED', updated_at = $1 \
                     WHERE plan_id = $2 AND revision = $3",
                )
                .bind(now)
                .bind(&plan.plan_id)
                .bind(rev)
                .execute(&mut *tx)
                .await
                .ctx("plan")?;
                rev + 1
            }
        };
        sqlx::query(
            "INSERT INTO plans (plan_id, revision, plan_hash, document, title, proposer, risk, \
             status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'PROPOSED', $8, $9)",
        )
        .bind(&plan.plan_id)
        .bind(revision)
        .bind(&plan.plan_hash)
        .bind(&plan.document)
        .bind(&plan.title)
        .bind(&plan.proposer)
        .bind(&plan.risk)
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await
        .ctx("plan revision")?;
        tx.commit().await.ctx("plan")?;
        tracing::debug!(plan_id = %plan.plan_id, revision, "plan revision stored");
        Ok(PlanRecord {
            plan_id: plan.plan_id.clone(),
            revision,
            plan_hash: plan.plan_hash.clone(),
            document: plan.document.clone(),
            title: plan.title.clone(),
            proposer: plan.proposer.clone(),
            risk: plan.risk.clone(),
            status: PlanStatus::Proposed,
            created_at: now,
            updated_at: now,
        })
    }

    /// The current (highest) revision of `plan_id`.
    pub async fn current_plan(&self, plan_id: &str) -> Result<Option<PlanRecord>, StoreError> {
        let sql = format!(
            "SELECT {PLAN_COLUMNS} FROM plans WHERE plan_id = $1 ORDER BY revision DESC LIMIT 1"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(plan_id)
            .fetch_optional(self.pool())
            .await
            .ctx("plan")?
            .as_ref()
            .map(plan_from_row)
            .transpose()
    }

    /// One revision of `plan_id`.
    pub async fn plan_revision(
        &self,
        plan_id: &str,
        revision: i64,
    ) -> Result<Option<PlanRecord>, StoreError> {
        let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE plan_id = $1 AND revision = $2");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(plan_id)
            .bind(revision)
            .fetch_optional(self.pool())
            .await
            .ctx("plan")?
            .as_ref()
            .map(plan_from_row)
            .transpose()
    }

    /// Every revision of `plan_id`, oldest first.
    pub async fn plan_revisions(&self, plan_id: &str) -> Result<Vec<PlanRecord>, StoreError> {
        let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE plan_id = $1 ORDER BY revision");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(plan_id)
            .fetch_all(self.pool())
            .await
            .ctx("plan")?
            .iter()
            .map(plan_from_row)
            .collect()
    }

    /// The current revision of every plan (optionally only those in
    /// `status`), newest first.
    pub async fn list_plans(
        &self,
        status: Option<PlanStatus>,
    ) -> Result<Vec<PlanRecord>, StoreError> {
        // The filter is spliced in as a fixed string (never user text) rather
        // than `$1 IS NULL OR status = $1`, which Postgres cannot type.
        let filter = if status.is_some() {
            "AND status = $1"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {PLAN_COLUMNS} FROM plans p \
             WHERE revision = (SELECT MAX(revision) FROM plans q WHERE q.plan_id = p.plan_id) \
             {filter} ORDER BY created_at DESC, plan_id"
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(status) = status {
            q = q.bind(status.as_str());
        }
        q.fetch_all(self.pool())
            .await
            .ctx("plan")?
            .iter()
            .map(plan_from_row)
            .collect()
    }

    /// Compare-and-swap of one revision's status: sets `to` only if the
    /// revision is currently `from`; `Ok(true)` iff it changed a row. Of any
    /// number of concurrent callers with the same `from`, at most one wins.
    /// Refuses transitions the lifecycle does not allow (see [`PlanStatus`]).
    pub async fn transition(
        &self,
        plan_id: &str,
        revision: i64,
        from: PlanStatus,
        to: PlanStatus,
    ) -> Result<bool, StoreError> {
        transition_in(self.pool(), plan_id, revision, from, to).await
    }
}

/// [`Store::transition`] on any executor (the pool, or the transaction that
/// also appends the transition's log leaf).
pub(crate) async fn transition_in<'c, E>(
    ex: E,
    plan_id: &str,
    revision: i64,
    from: PlanStatus,
    to: PlanStatus,
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    if !from.can_transition_to(to) {
        return Err(StoreError::InvalidTransition { from, to });
    }
    let done = sqlx::query(
        "UPDATE plans SET status = $1, updated_at = $2 \
         WHERE plan_id = $3 AND revision = $4 AND status = $5",
    )
    .bind(to.as_str())
    .bind(now_secs())
    .bind(plan_id)
    .bind(revision)
    .bind(from.as_str())
    .execute(ex)
    .await
    .ctx("plan")?
    .rows_affected()
        == 1;
    tracing::debug!(plan_id, revision, %from, %to, done, "plan transition");
    Ok(done)
}
