//! The registry of trusted approver public keys.

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// An approver key to register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewApproverKey {
    /// `ed25519:<64 lower-case hex digits>` (the key id `interlock-core` derives).
    pub key_id: String,
    /// The raw 32-byte Ed25519 public key.
    pub public_key: [u8; 32],
    /// Who holds it, e.g. `human:alice`.
    pub identity: String,
    /// Free-text label (machine, purpose).
    pub label: String,
}

/// A registered approver key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApproverKey {
    /// `ed25519:<hex>`.
    pub key_id: String,
    /// The raw 32-byte Ed25519 public key.
    pub public_key: [u8; 32],
    /// Who holds it.
    pub identity: String,
    /// Free-text label.
    pub label: String,
    /// Unix seconds when registered.
    pub added_at: i64,
    /// Unix seconds when revoked; `None` while trusted.
    pub revoked_at: Option<i64>,
    /// The index of the key's `approver.registered` log leaf; `None` for a row
    /// the log does not back (added outside it), which is not trusted.
    pub registered_leaf: Option<u64>,
}

impl ApproverKey {
    /// Whether the key is still trusted.
    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }
}

fn key_from_row(row: &DbRow) -> Result<ApproverKey, StoreError> {
    let public_key: Vec<u8> = row.try_get("public_key").ctx("approver key")?;
    Ok(ApproverKey {
        key_id: row.try_get("key_id").ctx("approver key")?,
        public_key: crate::to_hash(&public_key, "approver public key")?,
        identity: row.try_get("identity").ctx("approver key")?,
        label: row.try_get("label").ctx("approver key")?,
        added_at: row.try_get("added_at").ctx("approver key")?,
        revoked_at: row.try_get("revoked_at").ctx("approver key")?,
        registered_leaf: row
            .try_get::<Option<i64>, _>("registered_leaf")
            .ctx("approver key")?
            .and_then(|i| u64::try_from(i).ok()),
    })
}

fn check_key_id(key_id: &str) -> Result<(), StoreError> {
    let ok = key_id.strip_prefix("ed25519:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidInput(format!(
            "approver key id {key_id:?} is not ed25519:<64 lower-case hex digits>"
        )))
    }
}

impl Store {
    /// Registers an approver key. The same key id twice is
    /// [`StoreError::Duplicate`] (even if revoked: a revoked key stays revoked).
    pub async fn add_approver_key(&self, key: &NewApproverKey) -> Result<ApproverKey, StoreError> {
        check_key_id(&key.key_id)?;
        if key.identity.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "approver identity is empty".into(),
            ));
        }
        let now = now_secs();
        sqlx::query(
            "INSERT INTO approver_keys (key_id, public_key, identity, label, added_at, revoked_at) \
             VALUES ($1, $2, $3, $4, $5, NULL)",
        )
        .bind(&key.key_id)
        .bind(key.public_key.as_slice())
        .bind(&key.identity)
        .bind(&key.label)
        .bind(now)
        .execute(self.pool())
        .await
        .map_err(|e| match StoreError::from_sqlx(e, "approver key") {
            StoreError::Duplicate { .. } => StoreError::Duplicate {
                what: format!("approver key {}", key.key_id),
            },
            other => other,
        })?;
        tracing::info!(key_id = %key.key_id, identity = %key.identity, "approver key added");
        Ok(ApproverKey {
            key_id: key.key_id.clone(),
            public_key: key.public_key,
            identity: key.identity.clone(),
            label: key.label.clone(),
            added_at: now,
            revoked_at: None,
            registered_leaf: None,
        })
    }

    /// Registered keys, oldest first; revoked ones only if asked.
    pub async fn approver_keys(
        &self,
        include_revoked: bool,
    ) -> Result<Vec<ApproverKey>, StoreError> {
        approver_keys_in(self.pool(), include_revoked).await
    }

    /// One key, revoked or not.
    pub async fn approver_key(&self, key_id: &str) -> Result<Option<ApproverKey>, StoreError> {
        sqlx::query("SELECT * FROM approver_keys WHERE key_id = $1")
            .bind(key_id)
            .fetch_optional(self.pool())
            .await
            .ctx("approver key")?
            .as_ref()
            .map(key_from_row)
            .transpose()
    }

    /// Revokes a key: `Ok(true)` if it was active, `Ok(false)` if it was
    /// already revoked, [`StoreError::NotFound`] if unknown.
    pub async fn revoke_approver_key(&self, key_id: &str) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let revoked = sqlx::query(
            "UPDATE approver_keys SET revoked_at = $1 WHERE key_id = $2 AND revoked_at IS NULL",
        )
        .bind(now_secs())
        .bind(key_id)
        .execute(&mut *tx)
        .await
        .ctx("approver key")?
        .rows_affected()
            == 1;
        if !revoked {
            let exists: Option<(String,)> =
                sqlx::query_as("SELECT key_id FROM approver_keys WHERE key_id = $1")
                    .bind(key_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .ctx("approver key")?;
            if exists.is_none() {
                return Err(StoreError::NotFound {
                    what: format!("approver key {key_id}"),
                });
            }
        }
        tx.commit().await.ctx("approver key")?;
        if revoked {
            tracing::info!(key_id, "approver key revoked");
        }
        Ok(revoked)
    }
}

/// [`Store::approver_keys`] on any executor (the pool, or an audit's snapshot).
pub(crate) async fn approver_keys_in<'c, E>(
    ex: E,
    include_revoked: bool,
) -> Result<Vec<ApproverKey>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let sql = if include_revoked {
        "SELECT * FROM approver_keys ORDER BY added_at, key_id"
    } else {
        "SELECT * FROM approver_keys WHERE revoked_at IS NULL ORDER BY added_at, key_id"
    };
    sqlx::query(sql)
        .fetch_all(ex)
        .await
        .ctx("approver key")?
        .iter()
        .map(key_from_row)
        .collect()
}

impl Store {
    /// Records which log leaf registers `key_id` (for rows from before
    /// `0008_approver_registration.sql`, matched to their leaves once).
    pub async fn set_registered_leaf(&self, key_id: &str, leaf: u64) -> Result<(), StoreError> {
        sqlx::query("UPDATE approver_keys SET registered_leaf = $1 WHERE key_id = $2 AND registered_leaf IS NULL")
            .bind(i64::try_from(leaf).unwrap_or(i64::MAX))
            .bind(key_id)
            .execute(self.pool())
            .await
            .ctx("approver key")?;
        Ok(())
    }
}

/// Inserts a key row whose `registered_leaf` is the index the log's next leaf
/// takes: run inside the write transaction that appends exactly that leaf
/// (a [`StateChange::AddApproverKey`](crate::StateChange)).
pub(crate) async fn add_approver_key_in(
    tx: &mut crate::Tx,
    key: &NewApproverKey,
) -> Result<(), StoreError> {
    check_key_id(&key.key_id)?;
    if key.identity.trim().is_empty() {
        return Err(StoreError::InvalidInput(
            "approver identity is empty".into(),
        ));
    }
    sqlx::query(
        "INSERT INTO approver_keys \
         (key_id, public_key, identity, label, added_at, revoked_at, registered_leaf) \
         VALUES ($1, $2, $3, $4, $5, NULL, (SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves))",
    )
    .bind(&key.key_id)
    .bind(key.public_key.as_slice())
    .bind(&key.identity)
    .bind(&key.label)
    .bind(now_secs())
    .execute(&mut **tx)
    .await
    .map_err(|e| match StoreError::from_sqlx(e, "approver key") {
        StoreError::Duplicate { .. } => StoreError::Duplicate {
            what: format!("approver key {}", key.key_id),
        },
        other => other,
    })?;
    Ok(())
}
