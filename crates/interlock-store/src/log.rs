//! The Merkle log's rows: leaves, signed checkpoints and metadata.
//!
//! The store treats hashes, roots and notes as opaque: `interlock-log`
//! computes and checks them with `interlock-merkle`. What the store enforces
//! is shape: leaves are appended gap-free, with their checkpoint, atomically.

use std::ops::Range;
use std::sync::OnceLock;

use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, to_hash, to_i64, to_u64};

/// One log leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafRow {
    /// Position in the log, from 0.
    pub idx: u64,
    /// RFC 6962 leaf hash of `data`.
    pub leaf_hash: [u8; 32],
    /// The entry bytes (JCS JSON).
    pub data: Vec<u8>,
    /// Unix seconds when appended.
    pub appended_at: i64,
}

/// One signed checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRow {
    /// Tree size it commits to.
    pub size: u64,
    /// RFC 6962 root at `size`.
    pub root: [u8; 32],
    /// The C2SP signed note (checkpoint body + signature lines).
    pub note: String,
    /// Unix seconds when stored.
    pub created_at: i64,
}

/// Multi-row INSERT chunk sizes, largest first. A batch is split greedily
/// into these, so only this many distinct statements are ever prepared (and
/// cached), while a 4096-entry batch costs 16 statement executions, not 4096.
const CHUNKS: [usize; 5] = [256, 64, 16, 4, 1];

fn insert_leaves_sql(chunk: usize) -> &'static str {
    static SQL: OnceLock<Vec<String>> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        CHUNKS
            .iter()
            .map(|&n| {
                let mut s = String::from(
                    "INSERT INTO log_leaves (idx, leaf_hash, data, appended_at) VALUES ",
                );
                for i in 0..n {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push_str("(?, ?, ?, ?)");
                }
                s
            })
            .collect()
    });
    let pos = CHUNKS
        .iter()
        .position(|&n| n == chunk)
        .expect("chunk is one of CHUNKS");
    &all[pos]
}

fn checkpoint_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<CheckpointRow, StoreError> {
    let size: i64 = row.try_get("size").ctx("checkpoint")?;
    let root: Vec<u8> = row.try_get("root").ctx("checkpoint")?;
    Ok(CheckpointRow {
        size: to_u64(size, "checkpoint size")?,
        root: to_hash(&root, &format!("root of checkpoint at size {size}"))?,
        note: row.try_get("note").ctx("checkpoint")?,
        created_at: row.try_get("created_at").ctx("checkpoint")?,
    })
}

impl Store {
    /// Appends `leaves` (and the checkpoint for the resulting size, if any)
    /// in one transaction: all of it is durable when this returns `Ok`, and
    /// none of it if it fails. The leaves' indices must continue the stored
    /// log exactly ([`StoreError::LeafIndexMismatch`] otherwise) and the
    /// checkpoint's size must be the log size after them
    /// ([`StoreError::CheckpointSizeMismatch`]).
    pub async fn append_batch(
        &self,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
    ) -> Result<(), StoreError> {
        if leaves.is_empty() && checkpoint.is_none() {
            return Ok(());
        }
        // Check the batch's own contiguity before taking the write lock.
        for pair in leaves.windows(2) {
            if pair[1].idx != pair[0].idx + 1 {
                return Err(StoreError::LeafIndexMismatch {
                    expected: pair[0].idx + 1,
                    got: pair[1].idx,
                });
            }
        }
        let mut tx = self.begin_write().await?;
        let next: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves")
            .fetch_one(&mut *tx)
            .await
            .ctx("log leaf")?;
        let next = to_u64(next, "log size")?;
        if let Some(first) = leaves.first()
            && first.idx != next
        {
            return Err(StoreError::LeafIndexMismatch {
                expected: next,
                got: first.idx,
            });
        }
        let new_size = next + leaves.len() as u64;
        if let Some(cp) = checkpoint
            && cp.size != new_size
        {
            return Err(StoreError::CheckpointSizeMismatch {
                expected: new_size,
                got: cp.size,
            });
        }
        let mut rest = leaves;
        while !rest.is_empty() {
            let chunk = *CHUNKS
                .iter()
                .find(|&&n| n <= rest.len())
                .expect("CHUNKS ends with 1");
            let (now, later) = rest.split_at(chunk);
            let mut q = sqlx::query(insert_leaves_sql(chunk));
            for leaf in now {
                q = q
                    .bind(to_i64(leaf.idx, "leaf index")?)
                    .bind(leaf.leaf_hash.as_slice())
                    .bind(leaf.data.as_slice())
                    .bind(leaf.appended_at);
            }
            q.execute(&mut *tx).await.ctx("log leaf")?;
            rest = later;
        }
        if let Some(cp) = checkpoint {
            sqlx::query(
                "INSERT INTO log_checkpoints (size, root, note, created_at) VALUES (?, ?, ?, ?)",
            )
            .bind(to_i64(cp.size, "checkpoint size")?)
            .bind(cp.root.as_slice())
            .bind(&cp.note)
            .bind(cp.created_at)
            .execute(&mut *tx)
            .await
            .map_err(|e| match StoreError::from_sqlx(e, "checkpoint") {
                StoreError::Duplicate { .. } => StoreError::Duplicate {
                    what: format!("checkpoint at size {}", cp.size),
                },
                other => other,
            })?;
        }
        tx.commit().await.ctx("log leaf")?;
        Ok(())
    }

    /// Every leaf hash in index order, for rebuilding the in-memory tree.
    /// A gap in the indices (a deleted row) is [`StoreError::Malformed`]: the
    /// tree cannot be rebuilt from a log with a hole in it.
    pub async fn leaf_hashes(&self) -> Result<Vec<[u8; 32]>, StoreError> {
        let rows: Vec<(i64, Vec<u8>)> =
            sqlx::query_as("SELECT idx, leaf_hash FROM log_leaves ORDER BY idx")
                .fetch_all(self.pool())
                .await
                .ctx("log leaf")?;
        let mut out = Vec::with_capacity(rows.len());
        for (expected, (idx, hash)) in rows.into_iter().enumerate() {
            if idx != expected as i64 {
                return Err(StoreError::Malformed(format!(
                    "log leaf index {idx} found where {expected} was expected (a leaf is missing)"
                )));
            }
            out.push(to_hash(&hash, &format!("leaf hash of entry {idx}"))?);
        }
        Ok(out)
    }

    /// The stored leaves whose indices fall in `range`, in index order (with
    /// whatever gaps the table has: the audit reads through this).
    pub async fn leaves(&self, range: Range<u64>) -> Result<Vec<LeafRow>, StoreError> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let lo = to_i64(range.start, "leaf index")?;
        let hi = i64::try_from(range.end).unwrap_or(i64::MAX);
        let rows: Vec<(i64, Vec<u8>, Vec<u8>, i64)> = sqlx::query_as(
            "SELECT idx, leaf_hash, data, appended_at FROM log_leaves \
             WHERE idx >= ? AND idx < ? ORDER BY idx",
        )
        .bind(lo)
        .bind(hi)
        .fetch_all(self.pool())
        .await
        .ctx("log leaf")?;
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

    /// One leaf.
    pub async fn leaf(&self, idx: u64) -> Result<Option<LeafRow>, StoreError> {
        Ok(self.leaves(idx..idx.saturating_add(1)).await?.pop())
    }

    /// The index the next leaf must take: highest stored index + 1 (0 when
    /// empty). Equals the number of leaves unless rows were deleted.
    pub async fn log_size(&self) -> Result<u64, StoreError> {
        let next: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves")
            .fetch_one(self.pool())
            .await
            .ctx("log leaf")?;
        to_u64(next, "log size")
    }

    /// The number of stored leaf rows (a full count; the audit compares it
    /// with [`log_size`](Self::log_size)).
    pub async fn leaf_count(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM log_leaves")
            .fetch_one(self.pool())
            .await
            .ctx("log leaf")?;
        to_u64(n, "leaf count")
    }

    /// Every checkpoint, by increasing size.
    pub async fn checkpoints(&self) -> Result<Vec<CheckpointRow>, StoreError> {
        sqlx::query("SELECT size, root, note, created_at FROM log_checkpoints ORDER BY size")
            .fetch_all(self.pool())
            .await
            .ctx("checkpoint")?
            .iter()
            .map(checkpoint_from_row)
            .collect()
    }

    /// The checkpoint with the largest size.
    pub async fn latest_checkpoint(&self) -> Result<Option<CheckpointRow>, StoreError> {
        sqlx::query(
            "SELECT size, root, note, created_at FROM log_checkpoints ORDER BY size DESC LIMIT 1",
        )
        .fetch_optional(self.pool())
        .await
        .ctx("checkpoint")?
        .as_ref()
        .map(checkpoint_from_row)
        .transpose()
    }

    /// A metadata value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM meta WHERE key = ?")
            .bind(key)
            .fetch_optional(self.pool())
            .await
            .ctx("meta")
    }

    /// Sets a metadata value (insert or replace).
    pub async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES (?, ?) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(self.pool())
        .await
        .ctx("meta")?;
        Ok(())
    }

    /// Sets `key` to `value` only if it has no value yet, and returns the
    /// value now stored — atomically, so two processes initialising the same
    /// database agree on one value (first writer wins).
    pub async fn get_or_init_meta(&self, key: &str, value: &str) -> Result<String, StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&mut *tx)
            .await
            .ctx("meta")?;
        let stored: String = sqlx::query_scalar("SELECT value FROM meta WHERE key = ?")
            .bind(key)
            .fetch_one(&mut *tx)
            .await
            .ctx("meta")?;
        tx.commit().await.ctx("meta")?;
        Ok(stored)
    }
}
