//! Limit: the key's rate and monthly quota (issue 20 item 4), before anything
//! else is decided — a refused call is never assessed, forwarded or held, and
//! its refusal is logged. A held call's stateless retry is the same call, not
//! another, and is not counted again.

use std::sync::Arc;

use interlock_store::{ApiKeyRecord, KeySettings};
use serde_json::json;
use serde_json::value::RawValue;

use super::call::Origin;
use super::leaf::{Bound, CallLeaf, Outcome, Verdict, new_call_id};
use super::route::Routed;
use super::settle::append_or_refuse;
use super::stop::Stop;
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};

/// The key's settings, once the call is within its limits.
pub(crate) async fn limit(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    routed: &Routed,
    args_digest: &str,
    resuming: bool,
    origin: &Origin<'_>,
) -> Result<Arc<KeySettings>, Stop> {
    let unreadable = |e: interlock_store::StoreError| {
        Stop::Internal(format!(
            "the gateway refused the call: its limits could not be read: {e}"
        ))
    };
    let limits = &gw.0.key_limits;
    let store = gw.engine().store();
    let settings = limits
        .settings(store, &agent.key_hash)
        .await
        .map_err(unreadable)?;
    if resuming {
        return Ok(settings);
    }
    let limited = crate::sessions::limits::check(
        limits,
        store,
        &agent.key_hash,
        &settings,
        gw.engine().now(),
    )
    .await
    .map_err(unreadable)?;
    match limited {
        None => Ok(settings),
        Some(l) => {
            let at = (
                routed.server(),
                routed.tool.as_str(),
                routed.view.as_ref(),
                args_digest,
            );
            Err(Stop::Answered(
                refuse_limited(gw, agent, id, at, l, origin).await,
            ))
        }
    }
}

/// A call over its key's rate or quota: its leaf (`rate_limited` /
/// `quota_exceeded`), then the JSON-RPC error with the retry time. `at`:
/// the server, tool, its view and the arguments' hash.
async fn refuse_limited(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    (server, tool, view, arguments_hash): (&str, &str, &interlock_trust::pins::ServerView, &str),
    limited: crate::sessions::limits::Limited,
    origin: &Origin<'_>,
) -> Vec<u8> {
    let call_id = new_call_id();
    let leaf = CallLeaf {
        agent,
        server,
        tool,
        arguments_hash,
        call_id: &call_id,
        bound: Bound::of(view, tool),
        assessment: None,
        intent: None,
        envelope: &[],
    };
    let message = limited.message();
    let data = match &limited.limit {
        crate::sessions::limits::Limit::Rate { per_minute } => json!({
            "limit": "rate", "rate_per_minute": per_minute,
            "retry_after_secs": limited.retry_after_secs,
        }),
        crate::sessions::limits::Limit::Quota { quota, month } => json!({
            "limit": "quota", "monthly_quota": quota, "month": month,
            "retry_after_secs": limited.retry_after_secs,
        }),
        crate::sessions::limits::Limit::InFlight { max } => json!({
            "limit": "in_flight", "calls_in_flight_per_key": max,
            "retry_after_secs": limited.retry_after_secs,
        }),
    };
    let answer = jsonrpc::error_with_data(Some(id), code::RATE_LIMITED, &message, Some(&data));
    let secs = limited.retry_after_secs;
    let outcome = Outcome::Refused { message };
    match append_or_refuse(gw, id, &leaf, &Verdict::Limited(limited), &outcome, None).await {
        Ok(_) => {
            if let Some(l) = origin.limited {
                let _ = l.set(secs);
            }
            answer
        }
        Err(refusal) => refusal,
    }
}
