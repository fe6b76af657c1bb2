//! The gateway's state: hashed API keys, and upstream servers with their pinned
//! (baseline) and observed surfaces.
//!
//! Surfaces, drift and blocked-tool maps are opaque JCS bytes here; what they
//! mean is `interlock-surface`'s business and what to do about them the
//! gateway's.

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// Which HTTP surface a key opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiKeyKind {
    /// An agent: the MCP endpoint only.
    Agent,
    /// A reviewer: the reviewer API only.
    Reviewer,
}

impl ApiKeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyKind::Agent => "agent",
            ApiKeyKind::Reviewer => "reviewer",
        }
    }

    fn parse(s: &str) -> Result<ApiKeyKind, StoreError> {
        match s {
            "agent" => Ok(ApiKeyKind::Agent),
            "reviewer" => Ok(ApiKeyKind::Reviewer),
            other => Err(StoreError::Malformed(format!("api key kind {other:?}"))),
        }
    }
}

/// A stored API key: its hash and whom it names. The key itself is never stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeyRecord {
    /// `sha256:<hex>` of the key's bytes.
    pub key_hash: String,
    pub kind: ApiKeyKind,
    /// The agent or reviewer identity the key names.
    pub name: String,
    /// The role (agents) — what the key may do at the gateway.
    pub role: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// Shadow mode: decide and log every call, hold and block nothing.
    pub shadow: bool,
}

fn api_key_from_row(row: &DbRow) -> Result<ApiKeyRecord, StoreError> {
    let kind: String = row.try_get("kind").ctx("api key")?;
    Ok(ApiKeyRecord {
        key_hash: row.try_get("key_hash").ctx("api key")?,
        kind: ApiKeyKind::parse(&kind)?,
        name: row.try_get("name").ctx("api key")?,
        role: row.try_get("role").ctx("api key")?,
        created_at: row.try_get("created_at").ctx("api key")?,
        revoked_at: row.try_get("revoked_at").ctx("api key")?,
        shadow: row.try_get::<i64, _>("shadow").ctx("api key")? != 0,
    })
}

/// Where a server stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerStatus {
    /// Seen, never approved: none of its tools are served.
    Pending,
    /// Its baseline is approved; tools are served unless blocked by drift.
    Trusted,
    /// Drift with server scope: nothing is served until re-approved.
    Quarantined,
    /// A reviewer refused it.
    Rejected,
}

impl ServerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerStatus::Pending => "PENDING",
            ServerStatus::Trusted => "TRUSTED",
            ServerStatus::Quarantined => "QUARANTINED",
            ServerStatus::Rejected => "REJECTED",
        }
    }

    pub fn parse(s: &str) -> Option<ServerStatus> {
        Some(match s {
            "PENDING" => ServerStatus::Pending,
            "TRUSTED" => ServerStatus::Trusted,
            "QUARANTINED" => ServerStatus::Quarantined,
            "REJECTED" => ServerStatus::Rejected,
            _ => return None,
        })
    }
}

/// One upstream server's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerRecord {
    pub name: String,
    pub status: ServerStatus,
    pub baseline_hash: Option<String>,
    /// JCS bytes of the approved surface.
    pub baseline: Option<Vec<u8>>,
    pub observed_hash: Option<String>,
    /// JCS bytes of the surface listed last.
    pub observed: Option<Vec<u8>>,
    /// JSON bytes of the drift (an array) between baseline and observed.
    pub drift: Vec<u8>,
    /// JSON bytes of `{tool: "hold" | "quarantine"}`.
    pub blocked_tools: Vec<u8>,
    /// Bumped by every write (compare-and-swap token).
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

fn server_from_row(row: &DbRow) -> Result<ServerRecord, StoreError> {
    let status: String = row.try_get("status").ctx("server")?;
    Ok(ServerRecord {
        name: row.try_get("name").ctx("server")?,
        status: ServerStatus::parse(&status)
            .ok_or_else(|| StoreError::Malformed(format!("server status {status:?}")))?,
        baseline_hash: row.try_get("baseline_hash").ctx("server")?,
        baseline: row.try_get("baseline").ctx("server")?,
        observed_hash: row.try_get("observed_hash").ctx("server")?,
        observed: row.try_get("observed").ctx("server")?,
        drift: row.try_get("drift").ctx("server")?,
        blocked_tools: row.try_get("blocked_tools").ctx("server")?,
        version: row.try_get("version").ctx("server")?,
        created_at: row.try_get("created_at").ctx("server")?,
        updated_at: row.try_get("updated_at").ctx("server")?,
    })
}

/// A server row's new contents (everything but name, version and times).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerUpdate {
    pub status: ServerStatus,
    pub baseline_hash: Option<String>,
    pub baseline: Option<Vec<u8>>,
    pub observed_hash: Option<String>,
    pub observed: Option<Vec<u8>>,
    pub drift: Vec<u8>,
    pub blocked_tools: Vec<u8>,
}

impl Store {
    /// Stores a new API key's hash. A second key with the same hash is
    /// [`StoreError::Duplicate`].
    pub async fn add_api_key(
        &self,
        key_hash: &str,
        kind: ApiKeyKind,
        name: &str,
        role: &str,
    ) -> Result<ApiKeyRecord, StoreError> {
        if name.trim().is_empty() {
            return Err(StoreError::InvalidInput("the key's name is empty".into()));
        }
        let now = now_secs();
        sqlx::query(
            "INSERT INTO api_keys (key_hash, kind, name, role, created_at, revoked_at) \
             VALUES ($1, $2, $3, $4, $5, NULL)",
        )
        .bind(key_hash)
        .bind(kind.as_str())
        .bind(name)
        .bind(role)
        .bind(now)
        .execute(self.pool())
        .await
        .ctx("api key")?;
        Ok(ApiKeyRecord {
            key_hash: key_hash.to_owned(),
            kind,
            name: name.to_owned(),
            role: role.to_owned(),
            created_at: now,
            revoked_at: None,
            shadow: false,
        })
    }

    /// The key with this hash, revoked or not.
    pub async fn api_key(&self, key_hash: &str) -> Result<Option<ApiKeyRecord>, StoreError> {
        sqlx::query("SELECT * FROM api_keys WHERE key_hash = $1")
            .bind(key_hash)
            .fetch_optional(self.pool())
            .await
            .ctx("api key")?
            .as_ref()
            .map(api_key_from_row)
            .transpose()
    }

    /// Every key of one kind, oldest first, revoked ones included.
    pub async fn api_keys(&self, kind: ApiKeyKind) -> Result<Vec<ApiKeyRecord>, StoreError> {
        sqlx::query("SELECT * FROM api_keys WHERE kind = $1 ORDER BY created_at, name")
            .bind(kind.as_str())
            .fetch_all(self.pool())
            .await
            .ctx("api key")?
            .iter()
            .map(api_key_from_row)
            .collect()
    }

    /// One server.
    pub async fn server(&self, name: &str) -> Result<Option<ServerRecord>, StoreError> {
        sqlx::query("SELECT * FROM servers WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await
            .ctx("server")?
            .as_ref()
            .map(server_from_row)
            .transpose()
    }

    /// Every server, by name.
    pub async fn servers(&self) -> Result<Vec<ServerRecord>, StoreError> {
        sqlx::query("SELECT * FROM servers ORDER BY name")
            .fetch_all(self.pool())
            .await
            .ctx("server")?
            .iter()
            .map(server_from_row)
            .collect()
    }

    /// Creates a server row at version 1; [`StoreError::Duplicate`] if it exists.
    pub async fn insert_server(
        &self,
        name: &str,
        row: &ServerUpdate,
    ) -> Result<ServerRecord, StoreError> {
        let now = now_secs();
        sqlx::query(
            "INSERT INTO servers (name, status, baseline_hash, baseline, observed_hash, observed, \
             drift, blocked_tools, version, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10)",
        )
        .bind(name)
        .bind(row.status.as_str())
        .bind(&row.baseline_hash)
        .bind(&row.baseline)
        .bind(&row.observed_hash)
        .bind(&row.observed)
        .bind(&row.drift)
        .bind(&row.blocked_tools)
        .bind(now)
        .bind(now)
        .execute(self.pool())
        .await
        .map_err(|e| match StoreError::from_sqlx(e, "server") {
            StoreError::Duplicate { .. } => StoreError::Duplicate {
                what: format!("server {name}"),
            },
            other => other,
        })?;
        self.server(name)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("server {name}"),
            })
    }

    /// Replaces a server row if it is still at `expected_version` (compare and
    /// swap); returns the new row, or `None` if someone else wrote first.
    pub async fn update_server(
        &self,
        name: &str,
        expected_version: i64,
        row: &ServerUpdate,
    ) -> Result<Option<ServerRecord>, StoreError> {
        if !update_server_in(self.pool(), name, expected_version, row).await? {
            return Ok(None);
        }
        self.server(name).await
    }
}

/// The compare-and-swap of one server row, on any executor (the pool, or the
/// transaction that also appends the change's log leaf); whether it changed a row.
/// Deletes a server's row (at `expected_version`; `None`: there must be no
/// row), its probe state and its tools' envelopes, inside `tx`. False if the
/// row is not as expected (nothing is deleted then).
pub(crate) async fn remove_server_in(
    tx: &mut crate::Tx,
    name: &str,
    expected_version: Option<i64>,
) -> Result<bool, StoreError> {
    let as_expected = match expected_version {
        Some(v) => {
            sqlx::query("DELETE FROM servers WHERE name = $1 AND version = $2")
                .bind(name)
                .bind(v)
                .execute(&mut **tx)
                .await
                .ctx("server")?
                .rows_affected()
                == 1
        }
        None => sqlx::query("SELECT 1 FROM servers WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut **tx)
            .await
            .ctx("server")?
            .is_none(),
    };
    if !as_expected {
        return Ok(false);
    }
    for q in [
        "DELETE FROM server_probes WHERE server = $1",
        "DELETE FROM tool_envelopes WHERE server = $1",
    ] {
        sqlx::query(q)
            .bind(name)
            .execute(&mut **tx)
            .await
            .ctx("server")?;
    }
    Ok(true)
}

pub(crate) async fn update_server_in<'c, E>(
    ex: E,
    name: &str,
    expected_version: i64,
    row: &ServerUpdate,
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    {
        let done = sqlx::query(
            "UPDATE servers SET status = $1, baseline_hash = $2, baseline = $3, observed_hash = $4, \
             observed = $5, drift = $6, blocked_tools = $7, version = version + 1, updated_at = $8 \
             WHERE name = $9 AND version = $10",
        )
        .bind(row.status.as_str())
        .bind(&row.baseline_hash)
        .bind(&row.baseline)
        .bind(&row.observed_hash)
        .bind(&row.observed)
        .bind(&row.drift)
        .bind(&row.blocked_tools)
        .bind(now_secs())
        .bind(name)
        .bind(expected_version)
        .execute(ex)
        .await
        .ctx("server")?;
        Ok(done.rows_affected() == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: ServerStatus) -> ServerUpdate {
        ServerUpdate {
            status,
            baseline_hash: None,
            baseline: None,
            observed_hash: Some("sha256:00".into()),
            observed: Some(b"{}".to_vec()),
            drift: b"[]".to_vec(),
            blocked_tools: b"{}".to_vec(),
        }
    }

    #[tokio::test]
    async fn server_updates_are_compare_and_swap() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).await.unwrap();
        let first = store
            .insert_server("fs", &row(ServerStatus::Pending))
            .await
            .unwrap();
        assert_eq!(first.version, 1);
        let second = store
            .update_server("fs", 1, &row(ServerStatus::Trusted))
            .await
            .unwrap()
            .expect("version 1 is current");
        assert_eq!((second.version, second.status), (2, ServerStatus::Trusted));
        // A writer still holding version 1 loses.
        assert!(
            store
                .update_server("fs", 1, &row(ServerStatus::Rejected))
                .await
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            store.insert_server("fs", &row(ServerStatus::Pending)).await,
            Err(StoreError::Duplicate { .. })
        ));
    }

    #[tokio::test]
    async fn api_keys_are_found_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).await.unwrap();
        store
            .add_api_key("sha256:aa", ApiKeyKind::Agent, "builder", "developer")
            .await
            .unwrap();
        let k = store.api_key("sha256:aa").await.unwrap().unwrap();
        assert_eq!((k.name.as_str(), k.kind), ("builder", ApiKeyKind::Agent));
        assert!(store.api_key("sha256:bb").await.unwrap().is_none());
        assert!(k.revoked_at.is_none());
    }
}

/// A signed standing approval, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandingRecord {
    pub id: String,
    pub role: String,
    pub tool: String,
    /// JCS bytes of `{role, tool, shape, expires_at}`.
    pub document: Vec<u8>,
    pub document_hash: String,
    pub expires_at: i64,
    pub approver_key_id: String,
    pub envelope: Vec<u8>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

fn standing_from_row(row: &DbRow) -> Result<StandingRecord, StoreError> {
    Ok(StandingRecord {
        id: row.try_get("id").ctx("standing approval")?,
        role: row.try_get("role").ctx("standing approval")?,
        tool: row.try_get("tool").ctx("standing approval")?,
        document: row.try_get("document").ctx("standing approval")?,
        document_hash: row.try_get("document_hash").ctx("standing approval")?,
        expires_at: row.try_get("expires_at").ctx("standing approval")?,
        approver_key_id: row.try_get("approver_key_id").ctx("standing approval")?,
        envelope: row.try_get("envelope").ctx("standing approval")?,
        created_at: row.try_get("created_at").ctx("standing approval")?,
        revoked_at: row.try_get("revoked_at").ctx("standing approval")?,
    })
}

impl Store {
    /// Standing approvals, newest first; only those active at `now` if given:
    /// not revoked, granted at or before `now` and expiring after it. Granted
    /// at or before: a clock stepped back to before a grant was made must not
    /// find it in force (issue 44), as an approval signed later than the
    /// clock is not valid yet.
    pub async fn standing(
        &self,
        active_at: Option<i64>,
    ) -> Result<Vec<StandingRecord>, StoreError> {
        let rows =
            match active_at {
                Some(now) => sqlx::query(
                    "SELECT * FROM standing_approvals WHERE revoked_at IS NULL AND expires_at > $1 \
                 AND created_at <= $1 ORDER BY created_at DESC",
                )
                .bind(now)
                .fetch_all(self.pool())
                .await,
                None => {
                    sqlx::query("SELECT * FROM standing_approvals ORDER BY created_at DESC")
                        .fetch_all(self.pool())
                        .await
                }
            }
            .ctx("standing approval")?;
        rows.iter().map(standing_from_row).collect()
    }
}

/// Stores a standing approval inside the transaction of its
/// `standing.granted` leaf (issue 44: a grant stored on its own, then its
/// leaf, left an approval in force with no receipt when the process stopped
/// between the two).
pub(crate) async fn add_standing_in(
    tx: &mut crate::Tx,
    s: &StandingRecord,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO standing_approvals (id, role, tool, document, document_hash, expires_at, \
         approver_key_id, envelope, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL)",
    )
    .bind(&s.id)
    .bind(&s.role)
    .bind(&s.tool)
    .bind(&s.document)
    .bind(&s.document_hash)
    .bind(s.expires_at)
    .bind(&s.approver_key_id)
    .bind(&s.envelope)
    .bind(s.created_at)
    .execute(&mut **tx)
    .await
    .map_err(|e| match StoreError::from_sqlx(e, "standing approval") {
        StoreError::Duplicate { .. } => StoreError::Duplicate {
            what: format!("standing approval {}", s.id),
        },
        other => other,
    })?;
    Ok(())
}

/// Revokes an active standing approval inside the transaction of its
/// `standing.revoked` leaf; `false` if none is active under `id`.
pub(crate) async fn revoke_standing_in(
    tx: &mut crate::Tx,
    id: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE standing_approvals SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(id)
    .execute(&mut **tx)
    .await
    .ctx("standing approval")?;
    Ok(done.rows_affected() == 1)
}
