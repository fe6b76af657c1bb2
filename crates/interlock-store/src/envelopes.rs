//! Tools' behavioural envelopes (issue 16 item 2): opaque JCS bytes and their
//! hash here; what they mean is `interlock-envelope`'s business.

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError};

/// Whether an envelope is still being learned or is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvelopeState {
    Learning,
    Fixed,
}

impl EnvelopeState {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeState::Learning => "learning",
            EnvelopeState::Fixed => "fixed",
        }
    }
}

/// One tool's envelope row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeRow {
    pub server: String,
    pub tool: String,
    pub state: EnvelopeState,
    /// JCS bytes of the envelope.
    pub envelope: Vec<u8>,
    /// `sha256:<hex>` of `envelope`.
    pub hash: String,
    /// When learning started (Unix seconds).
    pub learning_since: i64,
    pub fixed_at: Option<i64>,
}

fn envelope_from_row(row: &DbRow) -> Result<EnvelopeRow, StoreError> {
    let state: String = row.try_get("state").ctx("envelope")?;
    Ok(EnvelopeRow {
        server: row.try_get("server").ctx("envelope")?,
        tool: row.try_get("tool").ctx("envelope")?,
        state: match state.as_str() {
            "learning" => EnvelopeState::Learning,
            "fixed" => EnvelopeState::Fixed,
            other => return Err(StoreError::Malformed(format!("envelope state {other:?}"))),
        },
        envelope: row.try_get("envelope").ctx("envelope")?,
        hash: row.try_get("hash").ctx("envelope")?,
        learning_since: row.try_get("learning_since").ctx("envelope")?,
        fixed_at: row.try_get("fixed_at").ctx("envelope")?,
    })
}

impl Store {
    /// One tool's envelope, if any was stored.
    pub async fn envelope(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<Option<EnvelopeRow>, StoreError> {
        sqlx::query("SELECT * FROM tool_envelopes WHERE server = $1 AND tool = $2")
            .bind(server)
            .bind(tool)
            .fetch_optional(self.pool())
            .await
            .ctx("envelope")?
            .as_ref()
            .map(envelope_from_row)
            .transpose()
    }

    /// Every stored envelope, by server and tool.
    pub async fn envelopes(&self) -> Result<Vec<EnvelopeRow>, StoreError> {
        sqlx::query("SELECT * FROM tool_envelopes ORDER BY server, tool")
            .fetch_all(self.pool())
            .await
            .ctx("envelope")?
            .iter()
            .map(envelope_from_row)
            .collect()
    }

    /// Stores what has been learned so far; never touches a fixed envelope
    /// (whether it wrote).
    pub async fn save_learning_envelope(
        &self,
        server: &str,
        tool: &str,
        envelope: &[u8],
        hash: &str,
        learning_since: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO tool_envelopes (server, tool, state, envelope, hash, learning_since) \
             VALUES ($1, $2, 'learning', $3, $4, $5) \
             ON CONFLICT (server, tool) DO UPDATE SET envelope = excluded.envelope, \
             hash = excluded.hash WHERE tool_envelopes.state = 'learning'",
        )
        .bind(server)
        .bind(tool)
        .bind(envelope)
        .bind(hash)
        .bind(learning_since)
        .execute(self.pool())
        .await
        .ctx("envelope")?;
        Ok(done.rows_affected() == 1)
    }
}

/// Fixes a learning (or never stored) envelope, in a change's transaction.
pub(crate) async fn fix_envelope_in<'c, E>(
    ex: E,
    server: &str,
    tool: &str,
    envelope: &[u8],
    hash: &str,
    now: i64,
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let done = sqlx::query(
        "INSERT INTO tool_envelopes (server, tool, state, envelope, hash, learning_since, fixed_at) \
         VALUES ($1, $2, 'fixed', $3, $4, $5, $6) \
         ON CONFLICT (server, tool) DO UPDATE SET state = 'fixed', envelope = excluded.envelope, \
         hash = excluded.hash, fixed_at = excluded.fixed_at WHERE tool_envelopes.state = 'learning'",
    )
    .bind(server)
    .bind(tool)
    .bind(envelope)
    .bind(hash)
    .bind(now)
    .bind(now)
    .execute(ex)
    .await
    .ctx("envelope")?;
    Ok(done.rows_affected() == 1)
}

/// Replaces a fixed envelope still at `expected_hash` (compare-and-swap).
pub(crate) async fn widen_envelope_in<'c, E>(
    ex: E,
    server: &str,
    tool: &str,
    expected_hash: &str,
    envelope: &[u8],
    hash: &str,
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let done = sqlx::query(
        "UPDATE tool_envelopes SET envelope = $1, hash = $2 \
         WHERE server = $3 AND tool = $4 AND state = 'fixed' AND hash = $5",
    )
    .bind(envelope)
    .bind(hash)
    .bind(server)
    .bind(tool)
    .bind(expected_hash)
    .execute(ex)
    .await
    .ctx("envelope")?;
    Ok(done.rows_affected() == 1)
}
