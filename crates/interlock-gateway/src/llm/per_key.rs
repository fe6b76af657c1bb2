//! An agent key's own settings on the LLM proxy (issue 42), read from its
//! stored settings (`llm_limits`, `llm_policy`, set through the admin API)
//! through the same short cache as its tool-call limits, and its requests
//! counted against its own rate and quota — apart from its tool calls,
//! under the key `llm:<key hash>` in the same buckets and monthly counts.

use interlock_llm::key::{KeyLimits, KeyPolicy};
use interlock_store::{ApiKeyRecord, KeySettings};

use crate::gateway::Gateway;
use crate::sessions::limits::Limited;

/// A key's settings on the proxy.
pub(crate) struct PerKey {
    pub limits: KeyLimits,
    pub policy: KeyPolicy,
}

/// The key's settings; an error (the store, or a stored object this build
/// cannot read) refuses its requests: they fail closed.
pub(crate) async fn read(gw: &Gateway, agent: &ApiKeyRecord) -> Result<PerKey, String> {
    let s =
        gw.0.key_limits
            .settings(gw.engine().store(), &agent.key_hash)
            .await
            .map_err(|e| format!("its settings could not be read: {e}"))?;
    let parse = |text: &Option<String>| -> Result<serde_json::Value, String> {
        text.as_deref().map_or(Ok(serde_json::Value::Null), |t| {
            serde_json::from_str(t).map_err(|e| format!("its stored settings are unreadable: {e}"))
        })
    };
    Ok(PerKey {
        limits: KeyLimits::from_json(&parse(&s.llm_limits)?).map_err(|e| e.0)?,
        policy: KeyPolicy::from_json(&parse(&s.llm_policy)?).map_err(|e| e.0)?,
    })
}

/// Counts one request against the key's rate and quota on the proxy; the
/// refusal when it is over either.
pub(crate) async fn admit(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    limits: &KeyLimits,
) -> Result<Option<Limited>, String> {
    if limits.rate_per_minute.is_none() && limits.monthly_quota.is_none() {
        return Ok(None);
    }
    let counted = KeySettings {
        rate_per_minute: limits.rate_per_minute,
        monthly_quota: limits.monthly_quota,
        ..KeySettings::default()
    };
    crate::sessions::limits::check(
        &gw.0.key_limits,
        gw.engine().store(),
        &format!("llm:{}", agent.key_hash),
        &counted,
        gw.engine().now(),
    )
    .await
    .map_err(|e| format!("its limits could not be counted: {e}"))
}
