//! One consistent read of everything an audit checks.
//!
//! Why: an audit reads the log in pages, then the checkpoints, then the approver
//! keys. Read one by one, an append by another process between two reads looks
//! like dropped entries or an unsigned tail. A [`Snapshot`] is one read
//! transaction: under WAL its view starts at its first read and does not move
//! while it lasts, and it takes no write lock (appends go on meanwhile).

use std::ops::Range;

use crate::error::SqlxResultExt as _;
use crate::keys::approver_keys_in;
use crate::log::{checkpoints_in, get_meta_in, leaves_in, log_size_in};
use crate::{ApproverKey, CheckpointRow, LeafRow, Store, StoreError};

/// A read-only view of the database as of its first read.
pub struct Snapshot {
    tx: crate::Tx,
}

impl Store {
    /// Starts a consistent read (see the module docs).
    pub async fn snapshot(&self) -> Result<Snapshot, StoreError> {
        let tx = self.begin_read().await?;
        Ok(Snapshot { tx })
    }
}

impl Snapshot {
    /// [`Store::log_size`], as of the snapshot.
    pub async fn log_size(&mut self) -> Result<u64, StoreError> {
        log_size_in(&mut *self.tx).await
    }

    /// [`Store::leaves`], as of the snapshot.
    pub async fn leaves(&mut self, range: Range<u64>) -> Result<Vec<LeafRow>, StoreError> {
        leaves_in(&mut *self.tx, range).await
    }

    /// [`Store::checkpoints`], as of the snapshot.
    pub async fn checkpoints(&mut self) -> Result<Vec<CheckpointRow>, StoreError> {
        checkpoints_in(&mut *self.tx).await
    }

    /// [`Store::get_meta`], as of the snapshot.
    pub async fn get_meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        get_meta_in(&mut *self.tx, key).await
    }

    /// The stored roots of the log's tiles, by tile, as of the snapshot (the
    /// audit checks each against the entries it covers).
    pub async fn log_tile_roots(
        &mut self,
    ) -> Result<std::collections::BTreeMap<u64, [u8; 32]>, StoreError> {
        let rows: Vec<(i64, Vec<u8>)> =
            sqlx::query_as("SELECT idx, root FROM log_tiles ORDER BY idx")
                .fetch_all(&mut *self.tx)
                .await
                .ctx("log tile")?;
        rows.into_iter()
            .map(|(idx, root)| {
                Ok((
                    crate::to_u64(idx, "log tile")?,
                    crate::to_hash(&root, &format!("root of log tile {idx}"))?,
                ))
            })
            .collect()
    }

    /// [`Store::approver_keys`] (revoked ones too), as of the snapshot.
    pub async fn approver_keys(&mut self) -> Result<Vec<ApproverKey>, StoreError> {
        approver_keys_in(&mut *self.tx, true).await
    }
}
