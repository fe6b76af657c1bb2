//! The admin API's rows (issue 20 items 3 and 4): admin tokens (hashed),
//! per-key settings and per-key monthly usage. Every change an admin makes
//! goes through [`AdminChange`], applied as a [`crate::StateChange`] in the
//! transaction of its log leaf.

use crate::DbRow;
use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{ApiKeyKind, Store, StoreError};

/// What an admin token may do is decided by its scope (the table is the
/// gateway's `admin::Permission`); stored by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdminScope {
    Owner,
    Operator,
    SecurityReviewer,
    Auditor,
}

impl AdminScope {
    pub const ALL: [AdminScope; 4] = [
        AdminScope::Owner,
        AdminScope::Operator,
        AdminScope::SecurityReviewer,
        AdminScope::Auditor,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AdminScope::Owner => "owner",
            AdminScope::Operator => "operator",
            AdminScope::SecurityReviewer => "security_reviewer",
            AdminScope::Auditor => "auditor",
        }
    }

    pub fn parse(s: &str) -> Option<AdminScope> {
        AdminScope::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// A stored admin token (its hash; the token itself is never stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminTokenRecord {
    pub token_hash: String,
    pub name: String,
    pub scope: AdminScope,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// A key's settings beside its role and shadow flag. `None`: no limit (or,
/// for the response policy, the gateway's `[calls]` settings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySettings {
    pub rate_per_minute: Option<i64>,
    pub monthly_quota: Option<i64>,
    pub max_response_bytes: Option<i64>,
    pub max_array_items: Option<i64>,
    /// A JSON object (`{"pii", "secrets", "injection"}`), opaque here.
    pub response_policy: Option<String>,
    /// The alert sinks (by name, from gateway.toml) that receive this key's
    /// events: a JSON array of names, opaque here (the gateway checks them).
    pub alert_sinks: Option<String>,
    /// The minimum severity of this key's events those sinks receive
    /// (`info` … `critical`; the gateway checks it).
    pub alert_min_severity: Option<String>,
    /// The key's limits on the LLM proxy (issue 42): a JSON object
    /// (`{"models", "rate_per_minute", "monthly_quota"}`), opaque here.
    pub llm_limits: Option<String>,
    /// The key's prompt policy on the LLM proxy: a JSON object
    /// (`{"blocked_keywords", "blocked_topics", "max_chars", "fail_mode",
    /// "on_hit", "keep_prompt_text"}`), opaque here.
    pub llm_policy: Option<String>,
}

/// An active agent key's alert routing ([`Store::key_alert_routes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyAlertRoute {
    /// The key's agent name (what its events' `agent` says).
    pub agent: String,
    /// [`KeySettings::alert_sinks`].
    pub sinks: String,
    pub min_severity: Option<String>,
}

/// One admin change, applied with its leaf.
#[derive(Clone, Debug)]
pub enum AdminChange {
    /// A new admin token.
    AddToken {
        token_hash: String,
        name: String,
        scope: AdminScope,
        now: i64,
    },
    /// Revoke an active admin token (refused if it is not active).
    RevokeToken { token_hash: String, now: i64 },
    /// A new API key with its settings.
    AddKey {
        key_hash: String,
        kind: ApiKeyKind,
        name: String,
        role: String,
        shadow: bool,
        settings: KeySettings,
        now: i64,
    },
    /// An active key's role, shadow flag and settings replaced (refused if
    /// the key is revoked or unknown).
    UpdateKey {
        key_hash: String,
        role: String,
        shadow: bool,
        settings: KeySettings,
        now: i64,
    },
    /// An active key revoked.
    RevokeKey { key_hash: String, now: i64 },
    /// An active key replaced by a new one of the same kind, name, role,
    /// shadow flag and settings, which also takes over its usage (so a
    /// rotation does not reset a quota); the old one revoked.
    RotateKey {
        old_hash: String,
        new_hash: String,
        now: i64,
    },
}

fn token_from_row(row: &DbRow) -> Result<AdminTokenRecord, StoreError> {
    let scope: String = row.try_get("scope").ctx("admin token")?;
    Ok(AdminTokenRecord {
        token_hash: row.try_get("token_hash").ctx("admin token")?,
        name: row.try_get("name").ctx("admin token")?,
        scope: AdminScope::parse(&scope)
            .ok_or_else(|| StoreError::Malformed(format!("unknown admin scope {scope:?}")))?,
        created_at: row.try_get("created_at").ctx("admin token")?,
        revoked_at: row.try_get("revoked_at").ctx("admin token")?,
    })
}

fn settings_from_row(row: &DbRow) -> Result<KeySettings, StoreError> {
    Ok(KeySettings {
        rate_per_minute: row.try_get("rate_per_minute").ctx("key settings")?,
        monthly_quota: row.try_get("monthly_quota").ctx("key settings")?,
        max_response_bytes: row.try_get("max_response_bytes").ctx("key settings")?,
        max_array_items: row.try_get("max_array_items").ctx("key settings")?,
        response_policy: row.try_get("response_policy").ctx("key settings")?,
        alert_sinks: row.try_get("alert_sinks").ctx("key settings")?,
        alert_min_severity: row.try_get("alert_min_severity").ctx("key settings")?,
        llm_limits: row.try_get("llm_limits").ctx("key settings")?,
        llm_policy: row.try_get("llm_policy").ctx("key settings")?,
    })
}

impl Store {
    /// The admin token with this hash (active or not).
    pub async fn admin_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<AdminTokenRecord>, StoreError> {
        sqlx::query("SELECT * FROM admin_tokens WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.pool())
            .await
            .ctx("admin token")?
            .as_ref()
            .map(token_from_row)
            .transpose()
    }

    /// Every admin token, oldest first.
    pub async fn admin_tokens(&self) -> Result<Vec<AdminTokenRecord>, StoreError> {
        sqlx::query("SELECT * FROM admin_tokens ORDER BY created_at, name")
            .fetch_all(self.pool())
            .await
            .ctx("admin token")?
            .iter()
            .map(token_from_row)
            .collect()
    }

    /// A key's settings (defaults when it has none stored).
    pub async fn key_settings(&self, key_hash: &str) -> Result<KeySettings, StoreError> {
        Ok(
            sqlx::query("SELECT * FROM key_settings WHERE key_hash = $1")
                .bind(key_hash)
                .fetch_optional(self.pool())
                .await
                .ctx("key settings")?
                .as_ref()
                .map(settings_from_row)
                .transpose()?
                .unwrap_or_default(),
        )
    }

    /// Every active agent key that names alert sinks: its agent name, the
    /// sinks and the minimum severity (for alert delivery's routing).
    pub async fn key_alert_routes(&self) -> Result<Vec<KeyAlertRoute>, StoreError> {
        let rows = sqlx::query(
            "SELECT k.name, s.alert_sinks, s.alert_min_severity FROM api_keys k \
             JOIN key_settings s ON s.key_hash = k.key_hash \
             WHERE k.kind = 'agent' AND k.revoked_at IS NULL AND s.alert_sinks IS NOT NULL \
             ORDER BY k.created_at",
        )
        .fetch_all(self.pool())
        .await
        .ctx("key alert routes")?;
        rows.iter()
            .map(|r| {
                Ok(KeyAlertRoute {
                    agent: r.try_get(0).ctx("key alert routes")?,
                    sinks: r.try_get(1).ctx("key alert routes")?,
                    min_severity: r.try_get(2).ctx("key alert routes")?,
                })
            })
            .collect()
    }

    /// The calls counted for a key in `month` (`YYYY-MM`).
    pub async fn key_usage(&self, key_hash: &str, month: &str) -> Result<i64, StoreError> {
        Ok(
            sqlx::query("SELECT calls FROM key_usage WHERE key_hash = $1 AND month = $2")
                .bind(key_hash)
                .bind(month)
                .fetch_optional(self.pool())
                .await
                .ctx("key usage")?
                .map(|r| r.try_get::<i64, _>("calls"))
                .transpose()
                .ctx("key usage")?
                .unwrap_or(0),
        )
    }

    /// Takes one token from a key's rate bucket shared through the database
    /// (team mode: every gateway on it draws from the same bucket): a GCRA
    /// of `per_minute` calls a minute with a burst of as many, at `now_ms`.
    /// `Ok(None)`: taken; `Ok(Some(ms))`: none free, one will be in `ms`.
    ///
    /// One conditional upsert moves the bucket's theoretical arrival time
    /// on by one emission interval only if that leaves it within the burst,
    /// so concurrent takers (here or in another gateway) never share a token.
    pub async fn take_rate_token(
        &self,
        key_hash: &str,
        per_minute: i64,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        if per_minute <= 0 {
            return Err(StoreError::InvalidInput(format!(
                "a rate of {per_minute} calls a minute"
            )));
        }
        let interval = (60_000 / per_minute).max(1);
        let tolerance = interval * (per_minute - 1);
        // The arrival time in force: the stored one, unless it is behind the
        // clock (the bucket refilled) or further ahead than calls can push it
        // (`tolerance + interval`): then the wall clock stepped back since
        // (issue 44 — an NTP step of hours refused every call of the key for
        // hours), and the bucket starts afresh from now.
        let taken = sqlx::query(
            "INSERT INTO key_rate (key_hash, tat_ms) VALUES ($1, $2 + $3) \
             ON CONFLICT (key_hash) DO UPDATE SET \
             tat_ms = (CASE WHEN key_rate.tat_ms > $2 AND key_rate.tat_ms <= $2 + $4 + $3 \
                       THEN key_rate.tat_ms ELSE $2 END) + $3 \
             WHERE (CASE WHEN key_rate.tat_ms > $2 AND key_rate.tat_ms <= $2 + $4 + $3 \
                    THEN key_rate.tat_ms ELSE $2 END) - $2 <= $4 \
             RETURNING tat_ms",
        )
        .bind(key_hash)
        .bind(now_ms)
        .bind(interval)
        .bind(tolerance)
        .fetch_optional(self.pool())
        .await
        .ctx("key rate")?;
        if taken.is_some() {
            return Ok(None);
        }
        let tat: i64 = sqlx::query_scalar("SELECT tat_ms FROM key_rate WHERE key_hash = $1")
            .bind(key_hash)
            .fetch_one(self.pool())
            .await
            .ctx("key rate")?;
        Ok(Some((tat.max(now_ms) - tolerance - now_ms).max(1)))
    }

    /// Counts one call against a key's `quota` for `month`, atomically:
    /// `Ok(Some(n))` the call is the n-th of the month, `Ok(None)` the
    /// quota is used up (nothing is counted then).
    pub async fn count_call(
        &self,
        key_hash: &str,
        month: &str,
        quota: i64,
    ) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query(
            "INSERT INTO key_usage (key_hash, month, calls) SELECT $1, $2, 1 WHERE $3 > 0 \
             ON CONFLICT (key_hash, month) DO UPDATE SET calls = key_usage.calls + 1 \
             WHERE key_usage.calls < $4 RETURNING calls",
        )
        .bind(key_hash)
        .bind(month)
        .bind(quota)
        .bind(quota)
        .fetch_optional(self.pool())
        .await
        .ctx("key usage")?;
        row.map(|r| r.try_get::<i64, _>("calls"))
            .transpose()
            .ctx("key usage")
    }
}

async fn upsert_settings(
    tx: &mut crate::Tx,
    key_hash: &str,
    s: &KeySettings,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO key_settings (key_hash, rate_per_minute, monthly_quota, max_response_bytes, \
         max_array_items, response_policy, alert_sinks, alert_min_severity, llm_limits, \
         llm_policy, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (key_hash) DO UPDATE SET rate_per_minute = excluded.rate_per_minute, \
         monthly_quota = excluded.monthly_quota, max_response_bytes = excluded.max_response_bytes, \
         max_array_items = excluded.max_array_items, response_policy = excluded.response_policy, \
         alert_sinks = excluded.alert_sinks, alert_min_severity = excluded.alert_min_severity, \
         llm_limits = excluded.llm_limits, llm_policy = excluded.llm_policy, \
         updated_at = excluded.updated_at",
    )
    .bind(key_hash)
    .bind(s.rate_per_minute)
    .bind(s.monthly_quota)
    .bind(s.max_response_bytes)
    .bind(s.max_array_items)
    .bind(&s.response_policy)
    .bind(&s.alert_sinks)
    .bind(&s.alert_min_severity)
    .bind(&s.llm_limits)
    .bind(&s.llm_policy)
    .bind(now)
    .execute(&mut **tx)
    .await
    .ctx("key settings")?;
    Ok(())
}

impl AdminChange {
    /// Applies the change inside `tx`; false when the row is not as the
    /// change expects (a revoked or unknown key or token).
    pub(crate) async fn apply(&self, tx: &mut crate::Tx) -> Result<bool, StoreError> {
        match self {
            AdminChange::AddToken {
                token_hash,
                name,
                scope,
                now,
            } => {
                sqlx::query(
                    "INSERT INTO admin_tokens (token_hash, name, scope, created_at, revoked_at) \
                     VALUES ($1, $2, $3, $4, NULL)",
                )
                .bind(token_hash)
                .bind(name)
                .bind(scope.as_str())
                .bind(now)
                .execute(&mut **tx)
                .await
                .ctx("admin token")?;
                Ok(true)
            }
            AdminChange::RevokeToken { token_hash, now } => Ok(sqlx::query(
                "UPDATE admin_tokens SET revoked_at = $1 WHERE token_hash = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(token_hash)
            .execute(&mut **tx)
            .await
            .ctx("admin token")?
            .rows_affected()
                == 1),
            AdminChange::AddKey {
                key_hash,
                kind,
                name,
                role,
                shadow,
                settings,
                now,
            } => {
                sqlx::query(
                    "INSERT INTO api_keys (key_hash, kind, name, role, created_at, revoked_at, shadow) \
                     VALUES ($1, $2, $3, $4, $5, NULL, $6)",
                )
                .bind(key_hash)
                .bind(kind.as_str())
                .bind(name)
                .bind(role)
                .bind(now)
                .bind(i64::from(*shadow))
                .execute(&mut **tx)
                .await
                .ctx("api key")?;
                upsert_settings(tx, key_hash, settings, *now).await?;
                Ok(true)
            }
            AdminChange::UpdateKey {
                key_hash,
                role,
                shadow,
                settings,
                now,
            } => {
                let done = sqlx::query(
                    "UPDATE api_keys SET role = $1, shadow = $2 WHERE key_hash = $3 AND revoked_at IS NULL",
                )
                .bind(role)
                .bind(i64::from(*shadow))
                .bind(key_hash)
                .execute(&mut **tx)
                .await
                .ctx("api key")?;
                if done.rows_affected() != 1 {
                    return Ok(false);
                }
                upsert_settings(tx, key_hash, settings, *now).await?;
                Ok(true)
            }
            AdminChange::RevokeKey { key_hash, now } => Ok(sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(key_hash)
            .execute(&mut **tx)
            .await
            .ctx("api key")?
            .rows_affected()
                == 1),
            AdminChange::RotateKey {
                old_hash,
                new_hash,
                now,
            } => {
                let revoked = sqlx::query(
                    "UPDATE api_keys SET revoked_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL",
                )
                .bind(now)
                .bind(old_hash)
                .execute(&mut **tx)
                .await
                .ctx("api key")?;
                if revoked.rows_affected() != 1 {
                    return Ok(false);
                }
                sqlx::query(
                    "INSERT INTO api_keys (key_hash, kind, name, role, created_at, revoked_at, shadow) \
                     SELECT $1, kind, name, role, $2, NULL, shadow FROM api_keys WHERE key_hash = $3",
                )
                .bind(new_hash)
                .bind(now)
                .bind(old_hash)
                .execute(&mut **tx)
                .await
                .ctx("api key")?;
                sqlx::query(
                    "INSERT INTO key_settings (key_hash, rate_per_minute, monthly_quota, \
                     max_response_bytes, max_array_items, response_policy, alert_sinks, \
                     alert_min_severity, llm_limits, llm_policy, updated_at) \
                     SELECT $1, rate_per_minute, monthly_quota, max_response_bytes, max_array_items, \
                     response_policy, alert_sinks, alert_min_severity, llm_limits, llm_policy, $2 \
                     FROM key_settings \
                     WHERE key_hash = $3",
                )
                .bind(new_hash)
                .bind(now)
                .bind(old_hash)
                .execute(&mut **tx)
                .await
                .ctx("key settings")?;
                sqlx::query(
                    "INSERT INTO key_usage (key_hash, month, calls) \
                     SELECT $1, month, calls FROM key_usage WHERE key_hash = $2",
                )
                .bind(new_hash)
                .bind(old_hash)
                .execute(&mut **tx)
                .await
                .ctx("key usage")?;
                Ok(true)
            }
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            AdminChange::AddToken { name, .. } => format!("admin token {name:?}"),
            AdminChange::RevokeToken { token_hash, .. } => {
                format!("admin token {token_hash} is not active")
            }
            AdminChange::AddKey { name, .. } => format!("key {name:?}"),
            AdminChange::UpdateKey { key_hash, .. }
            | AdminChange::RevokeKey { key_hash, .. }
            | AdminChange::RotateKey {
                old_hash: key_hash, ..
            } => format!("key {key_hash} is not active"),
        }
    }
}
