//! The LLM proxy's learned fingerprints (issue 42): judge verdicts kept by
//! the fingerprint of the request they judged, until they expire.

use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError};

/// A judge's verdict, learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnedVerdict {
    /// `sha256:<hex>` of the request's normalized texts.
    pub fingerprint: String,
    pub is_unsafe: bool,
    pub category: String,
    pub reason: String,
    pub learned_at: i64,
    pub expires_at: i64,
}

impl Store {
    /// Keeps `v` (a newer verdict on the same fingerprint replaces it).
    pub async fn learn_fingerprint(&self, v: &LearnedVerdict) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO llm_fingerprints \
             (fingerprint, is_unsafe, category, reason, learned_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (fingerprint) DO UPDATE SET is_unsafe = excluded.is_unsafe, \
             category = excluded.category, reason = excluded.reason, \
             learned_at = excluded.learned_at, expires_at = excluded.expires_at",
        )
        .bind(&v.fingerprint)
        .bind(i64::from(v.is_unsafe))
        .bind(&v.category)
        .bind(&v.reason)
        .bind(v.learned_at)
        .bind(v.expires_at)
        .execute(self.pool())
        .await
        .ctx("learn fingerprint")?;
        Ok(())
    }

    /// The verdicts not expired at `now` (unix seconds), newest first, at
    /// most `limit`; the expired ones are deleted.
    pub async fn learned_fingerprints(
        &self,
        now: i64,
        limit: u32,
    ) -> Result<Vec<LearnedVerdict>, StoreError> {
        sqlx::query("DELETE FROM llm_fingerprints WHERE expires_at <= $1")
            .bind(now)
            .execute(self.pool())
            .await
            .ctx("forget expired fingerprints")?;
        let rows = sqlx::query(
            "SELECT fingerprint, is_unsafe, category, reason, learned_at, expires_at \
             FROM llm_fingerprints ORDER BY learned_at DESC, fingerprint LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await
        .ctx("learned fingerprints")?;
        rows.iter()
            .map(|r| {
                Ok(LearnedVerdict {
                    fingerprint: r.try_get("fingerprint").ctx("fingerprint")?,
                    is_unsafe: r.try_get::<i64, _>("is_unsafe").ctx("fingerprint")? != 0,
                    category: r.try_get("category").ctx("fingerprint")?,
                    reason: r.try_get("reason").ctx("fingerprint")?,
                    learned_at: r.try_get("learned_at").ctx("fingerprint")?,
                    expires_at: r.try_get("expires_at").ctx("fingerprint")?,
                })
            })
            .collect()
    }
}
