//! Witnesses' rows (issue 43): a witness's latest cosigned checkpoint per log
//! and the submissions it refused; a log's cosignatures from its witnesses.

use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, bytes_column, now_secs, to_hash, to_i64, to_u64};

/// The latest checkpoint a witness cosigned for one log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessedCheckpoint {
    pub origin: String,
    pub size: u64,
    pub root: [u8; 32],
    /// The signed checkpoint note as it was submitted.
    pub note: String,
    pub updated_at: i64,
}

/// A submission a witness refused as the log's misbehaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessRefusal {
    pub id: i64,
    pub origin: String,
    pub note: String,
    pub reason: String,
    pub at: i64,
}

/// One cosignature a log received for one of its checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointCosignature {
    pub size: u64,
    pub witness: String,
    /// The note signature line, with its final newline.
    pub line: String,
    pub received_at: i64,
}

fn witnessed_of(row: &crate::DbRow) -> Result<WitnessedCheckpoint, StoreError> {
    let root = bytes_column(row, "root").ctx("witnessed checkpoint")?;
    Ok(WitnessedCheckpoint {
        origin: row.try_get("origin").ctx("witnessed checkpoint")?,
        size: to_u64(row.try_get("size").ctx("witnessed checkpoint")?, "size")?,
        root: to_hash(&root, "witnessed root")?,
        note: row.try_get("note").ctx("witnessed checkpoint")?,
        updated_at: row.try_get("updated_at").ctx("witnessed checkpoint")?,
    })
}

impl Store {
    /// The latest checkpoint this witness cosigned for `origin`.
    pub async fn witnessed(&self, origin: &str) -> Result<Option<WitnessedCheckpoint>, StoreError> {
        let row = sqlx::query(
            "SELECT origin, size, root, note, updated_at FROM witness_latest WHERE origin = $1",
        )
        .bind(origin)
        .fetch_optional(self.pool())
        .await
        .ctx("witnessed checkpoint")?;
        row.as_ref().map(witnessed_of).transpose()
    }

    /// Every log this witness has cosigned for, by origin.
    pub async fn witnessed_logs(&self) -> Result<Vec<WitnessedCheckpoint>, StoreError> {
        let rows = sqlx::query(
            "SELECT origin, size, root, note, updated_at FROM witness_latest ORDER BY origin",
        )
        .fetch_all(self.pool())
        .await
        .ctx("witnessed checkpoints")?;
        rows.iter().map(witnessed_of).collect()
    }

    /// Checks a submission against the latest cosigned checkpoint of
    /// `origin` and, if `decide` accepts it, records what it returns as the
    /// new latest — in one write transaction, so two submissions at once
    /// cannot both pass the check against the same state (the spec's
    /// rollback race). `decide` sees the current latest (`None` before the
    /// first) and returns the new one with a value for the caller (the
    /// cosignature), or its refusal, which changes nothing.
    pub async fn witness_advance<T, E>(
        &self,
        origin: &str,
        decide: impl FnOnce(Option<&WitnessedCheckpoint>) -> Result<(WitnessedCheckpoint, T), E>,
    ) -> Result<Result<T, E>, StoreError> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "SELECT origin, size, root, note, updated_at FROM witness_latest WHERE origin = $1",
        )
        .bind(origin)
        .fetch_optional(&mut *tx)
        .await
        .ctx("witnessed checkpoint")?;
        let current = row.as_ref().map(witnessed_of).transpose()?;
        let (next, answer) = match decide(current.as_ref()) {
            Ok(accepted) => accepted,
            Err(refused) => return Ok(Err(refused)),
        };
        if next.origin != origin || current.as_ref().is_some_and(|c| next.size < c.size) {
            return Err(StoreError::Malformed(format!(
                "a witness may only move {origin} forward"
            )));
        }
        sqlx::query(
            "INSERT INTO witness_latest (origin, size, root, note, updated_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (origin) DO UPDATE SET \
             size = excluded.size, root = excluded.root, note = excluded.note, \
             updated_at = excluded.updated_at",
        )
        .bind(origin)
        .bind(to_i64(next.size, "size")?)
        .bind(next.root.to_vec())
        .bind(&next.note)
        .bind(now_secs())
        .execute(&mut *tx)
        .await
        .ctx("witnessed checkpoint")?;
        tx.commit().await.ctx("witnessed checkpoint")?;
        Ok(Ok(answer))
    }

    /// Keeps a submission the witness refused as the log's misbehaviour.
    pub async fn witness_refused(
        &self,
        origin: &str,
        note: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO witness_refusals (origin, note, reason, at) VALUES ($1, $2, $3, $4)",
        )
        .bind(origin)
        .bind(note)
        .bind(reason)
        .bind(now_secs())
        .execute(self.pool())
        .await
        .ctx("witness refusal")?;
        Ok(())
    }

    /// The refused submissions for `origin`, oldest first.
    pub async fn witness_refusals(&self, origin: &str) -> Result<Vec<WitnessRefusal>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, origin, note, reason, at FROM witness_refusals WHERE origin = $1 ORDER BY id",
        )
        .bind(origin)
        .fetch_all(self.pool())
        .await
        .ctx("witness refusals")?;
        rows.iter()
            .map(|r| {
                Ok(WitnessRefusal {
                    id: r.try_get("id").ctx("witness refusal")?,
                    origin: r.try_get("origin").ctx("witness refusal")?,
                    note: r.try_get("note").ctx("witness refusal")?,
                    reason: r.try_get("reason").ctx("witness refusal")?,
                    at: r.try_get("at").ctx("witness refusal")?,
                })
            })
            .collect()
    }

    /// Keeps `witness`'s cosignature `line` of the checkpoint at `size`
    /// (a newer line from the same witness for the same size replaces it).
    pub async fn add_cosignature(
        &self,
        size: u64,
        witness: &str,
        line: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO checkpoint_cosignatures (size, witness, line, received_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (size, witness) DO UPDATE SET \
             line = excluded.line, received_at = excluded.received_at",
        )
        .bind(to_i64(size, "checkpoint size")?)
        .bind(witness)
        .bind(line)
        .bind(now_secs())
        .execute(self.pool())
        .await
        .ctx("cosignature")?;
        Ok(())
    }

    /// Each witness's newest cosignature (of the largest checkpoint it
    /// cosigned), with that checkpoint's signed note, by witness name.
    pub async fn latest_cosignatures(
        &self,
    ) -> Result<Vec<(CheckpointCosignature, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT c.size, c.witness, c.line, c.received_at, k.note \
             FROM checkpoint_cosignatures c JOIN log_checkpoints k ON k.size = c.size \
             WHERE c.size = (SELECT MAX(d.size) FROM checkpoint_cosignatures d WHERE d.witness = c.witness) \
             ORDER BY c.witness",
        )
        .fetch_all(self.pool())
        .await
        .ctx("cosignatures")?;
        rows.iter()
            .map(|r| {
                Ok((
                    CheckpointCosignature {
                        size: to_u64(r.try_get("size").ctx("cosignature")?, "size")?,
                        witness: r.try_get("witness").ctx("cosignature")?,
                        line: r.try_get("line").ctx("cosignature")?,
                        received_at: r.try_get("received_at").ctx("cosignature")?,
                    },
                    r.try_get("note").ctx("cosignature")?,
                ))
            })
            .collect()
    }

    /// The cosignatures of the checkpoint at `size`, by witness name.
    pub async fn cosignatures(&self, size: u64) -> Result<Vec<CheckpointCosignature>, StoreError> {
        let rows = sqlx::query(
            "SELECT size, witness, line, received_at FROM checkpoint_cosignatures \
             WHERE size = $1 ORDER BY witness",
        )
        .bind(to_i64(size, "checkpoint size")?)
        .fetch_all(self.pool())
        .await
        .ctx("cosignatures")?;
        rows.iter()
            .map(|r| {
                Ok(CheckpointCosignature {
                    size: to_u64(r.try_get("size").ctx("cosignature")?, "size")?,
                    witness: r.try_get("witness").ctx("cosignature")?,
                    line: r.try_get("line").ctx("cosignature")?,
                    received_at: r.try_get("received_at").ctx("cosignature")?,
                })
            })
            .collect()
    }
}
