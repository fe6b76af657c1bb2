//! Finding receipts (issue 18): the `receipt_facts` table, one row of
//! filterable facts per log leaf, and the queries over it — a filtered page
//! of leaves (keyset-paged, newest first), the indices of a filtered export,
//! and counts per time bucket for the overview.
//!
//! The facts are written by the layer that reads leaves (`interlock-log`),
//! which catches the table up with the log before it asks; this module only
//! stores and selects them, and treats them as opaque strings.

use crate::sql::SqlBuilder;

use crate::error::SqlxResultExt as _;
use crate::log::LeafRow;
use crate::{Store, StoreError, to_hash, to_i64, to_u64};

/// What a receipt is about: the facts a reviewer filters and counts by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiptFacts {
    /// The leaf's index in the log.
    pub idx: u64,
    /// The predicate's time (Unix seconds).
    pub at: i64,
    /// The predicate's type (`tool.call`, `plan.approved`, ...).
    pub kind: String,
    pub plan_id: Option<String>,
    pub server: Option<String>,
    pub agent: Option<String>,
    pub tool: Option<String>,
    /// A tool call's verdict (`allowed`, `held`, `blocked`, ...).
    pub verdict: Option<String>,
    /// Whether the call came from a shadow-mode key.
    pub shadow: Option<bool>,
}

/// Which receipts: every set member narrows the selection (all of them must
/// match). Times are Unix seconds, `since` inclusive and `until` exclusive;
/// indices are inclusive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiptFilter {
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub from_index: Option<u64>,
    pub to_index: Option<u64>,
    pub plan_id: Option<String>,
    pub server: Option<String>,
    pub agent: Option<String>,
    pub tool: Option<String>,
    pub kind: Option<String>,
}

impl ReceiptFilter {
    /// Whether it filters on anything but the index range.
    pub fn filters_content(&self) -> bool {
        self.since.is_some()
            || self.until.is_some()
            || self.plan_id.is_some()
            || self.server.is_some()
            || self.agent.is_some()
            || self.tool.is_some()
            || self.kind.is_some()
    }

    /// Appends ` AND ...` for each member to a query over `receipt_facts`
    /// aliased `f`.
    fn push_where(&self, q: &mut SqlBuilder) -> Result<(), StoreError> {
        if let Some(t) = self.since {
            q.push(" AND f.at >= ").bind(t)?;
        }
        if let Some(t) = self.until {
            q.push(" AND f.at < ").bind(t)?;
        }
        if let Some(i) = self.from_index {
            q.push(" AND f.idx >= ").bind(to_i64(i, "receipt index")?)?;
        }
        if let Some(i) = self.to_index {
            q.push(" AND f.idx <= ")
                .bind(i64::try_from(i).unwrap_or(i64::MAX))?;
        }
        for (column, value) in [
            ("plan_id", &self.plan_id),
            ("server", &self.server),
            ("agent", &self.agent),
            ("tool", &self.tool),
            ("kind", &self.kind),
        ] {
            if let Some(v) = value {
                q.push(format_args!(" AND f.{column} = ")).bind(v.clone())?;
            }
        }
        Ok(())
    }
}

/// One bucket of the overview's series: how many receipts of `kind` (and, for
/// tool calls, `verdict`) `agent` caused on `server` in the bucket starting
/// at `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptCount {
    /// The bucket's start (Unix seconds, a multiple of the bucket width).
    pub start: i64,
    pub kind: String,
    pub server: Option<String>,
    pub agent: Option<String>,
    pub verdict: Option<String>,
    pub shadow: bool,
    pub count: u64,
}

/// One `GROUP BY` row of [`Store::receipt_counts`]: bucket start, kind,
/// server, agent, verdict, shadow flag, count.
type CountRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    i64,
);

fn opt_i64_bool(v: Option<bool>) -> Option<i64> {
    v.map(i64::from)
}

impl Store {
    /// The index the receipt facts are to be caught up from: one past the
    /// highest indexed leaf (0 when none is).
    pub async fn receipt_facts_next(&self) -> Result<u64, StoreError> {
        let next: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM receipt_facts")
            .fetch_one(self.pool())
            .await
            .ctx("receipt facts")?;
        to_u64(next, "receipt facts")
    }

    /// Stores facts, in one transaction; a leaf already indexed (by another
    /// process catching up at the same time) is left as it is.
    pub async fn insert_receipt_facts(&self, facts: &[ReceiptFacts]) -> Result<(), StoreError> {
        if facts.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        // 9 values a row: 100 rows a statement stays far below SQLite's
        // bound-variable limit. (Its placeholders are bare `?` on SQLite:
        // numbered ones made binding quadratic in the row count, see
        // `SqlBuilder`.)
        for chunk in facts.chunks(100) {
            let mut q = SqlBuilder::new(
                "INSERT INTO receipt_facts \
                 (idx, at, kind, plan_id, server, agent, tool, verdict, shadow) VALUES ",
                self.backend(),
            );
            for (i, f) in chunk.iter().enumerate() {
                q.push(if i == 0 { "(" } else { ", (" });
                q.bind(to_i64(f.idx, "receipt index")?)?.push(", ");
                q.bind(f.at)?.push(", ");
                q.bind(f.kind.clone())?.push(", ");
                q.bind(f.plan_id.clone())?.push(", ");
                q.bind(f.server.clone())?.push(", ");
                q.bind(f.agent.clone())?.push(", ");
                q.bind(f.tool.clone())?.push(", ");
                q.bind(f.verdict.clone())?.push(", ");
                q.bind(opt_i64_bool(f.shadow))?.push(")");
            }
            // A leaf's facts are written once; a catch-up that overlaps
            // another's keeps the first.
            q.push(" ON CONFLICT (idx) DO NOTHING");
            let (sql, args) = q.finish();
            sqlx::query_with(sql, args)
                .execute(&mut *tx)
                .await
                .ctx("receipt facts")?;
        }
        tx.commit().await.ctx("receipt facts")?;
        Ok(())
    }

    /// One page of the receipts `filter` selects, newest first: at most
    /// `limit` leaves with an index below `before` (the previous page's last
    /// index: a keyset cursor, so a page costs the same wherever it is).
    pub async fn receipts_page(
        &self,
        filter: &ReceiptFilter,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<LeafRow>, StoreError> {
        let mut q = SqlBuilder::new(
            "SELECT l.idx, l.leaf_hash, l.data, l.appended_at \
             FROM receipt_facts f JOIN log_leaves l ON l.idx = f.idx WHERE 1 = 1",
            self.backend(),
        );
        filter.push_where(&mut q)?;
        if let Some(b) = before {
            q.push(" AND f.idx < ")
                .bind(i64::try_from(b).unwrap_or(i64::MAX))?;
        }
        q.push(" ORDER BY f.idx DESC LIMIT ")
            .bind(i64::from(limit))?;
        let (sql, args) = q.finish();
        let rows: Vec<(i64, Vec<u8>, Vec<u8>, i64)> = sqlx::query_as_with(sql, args)
            .fetch_all(self.pool())
            .await
            .ctx("receipt facts")?;
        rows.into_iter()
            .map(|(idx, hash, data, appended_at)| {
                Ok(LeafRow {
                    idx: to_u64(idx, "leaf index")?,
                    leaf_hash: to_hash(&hash, &format!("leaf hash of entry {idx}"))?,
                    data,
                    appended_at,
                })
            })
            .collect()
    }

    /// The indices of every receipt `filter` selects, in increasing order
    /// (an export's selection).
    pub async fn receipt_indices(&self, filter: &ReceiptFilter) -> Result<Vec<u64>, StoreError> {
        let mut q = SqlBuilder::new(
            "SELECT f.idx FROM receipt_facts f WHERE 1 = 1",
            self.backend(),
        );
        filter.push_where(&mut q)?;
        q.push(" ORDER BY f.idx");
        let (sql, args) = q.finish();
        let rows: Vec<i64> = sqlx::query_scalar_with(sql, args)
            .fetch_all(self.pool())
            .await
            .ctx("receipt facts")?;
        rows.into_iter()
            .map(|i| to_u64(i, "receipt index"))
            .collect()
    }

    /// Receipts counted per `bucket`-second interval from `since` on, per
    /// kind, server, agent, verdict and shadow flag: the overview's series,
    /// computed by SQLite (`GROUP BY`), not by reading leaves.
    pub async fn receipt_counts(
        &self,
        since: i64,
        bucket: i64,
    ) -> Result<Vec<ReceiptCount>, StoreError> {
        if bucket <= 0 {
            return Err(StoreError::Malformed(format!(
                "a time bucket must be positive, not {bucket} s"
            )));
        }
        let rows: Vec<CountRow> = sqlx::query_as(
            "SELECT (at - $1) / $2 * $2 + $1 AS start, kind, server, agent, verdict, \
                 COALESCE(shadow, 0), COUNT(*) FROM receipt_facts WHERE at >= $1 \
                 GROUP BY start, kind, server, agent, verdict, COALESCE(shadow, 0) \
                 ORDER BY start",
        )
        .bind(since)
        .bind(bucket)
        .fetch_all(self.pool())
        .await
        .ctx("receipt facts")?;
        rows.into_iter()
            .map(|(start, kind, server, agent, verdict, shadow, count)| {
                Ok(ReceiptCount {
                    start,
                    kind,
                    server,
                    agent,
                    verdict,
                    shadow: shadow.unwrap_or(0) != 0,
                    count: to_u64(count, "receipt count")?,
                })
            })
            .collect()
    }
}
