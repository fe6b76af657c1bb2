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

/// Why a key may not go on now.
pub(crate) enum Refusal {
    /// Its settings could not be read: refused, failing closed.
    Unreadable(interlock_store::StoreError),
    /// Over its rate or quota.
    Limited(crate::sessions::limits::Limited),
}

/// The key's settings, once this request is within its rate and quota (and
/// counted against them, unless `resuming`: a held call's retry is the same
/// call). Tool calls and content reads alike go through here (issue 39 item
/// 11), so a key over its limit gets nothing by reading instead of calling.
pub(crate) async fn admit(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    resuming: bool,
) -> Result<Arc<KeySettings>, Refusal> {
    let limits = &gw.0.key_limits;
    let store = gw.engine().store();
    let settings = limits
        .settings(store, &agent.key_hash)
        .await
        .map_err(Refusal::Unreadable)?;
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
    .map_err(Refusal::Unreadable)?;
    match limited {
        None => Ok(settings),
        Some(l) => Err(Refusal::Limited(l)),
    }
}

/// The message of a request refused because its key's limits are unreadable.
pub(crate) fn unreadable(e: &interlock_store::StoreError) -> String {
    format!("the gateway refused the request: its limits could not be read: {e}")
}

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
    match admit(gw, agent, resuming).await {
        Ok(settings) => Ok(settings),
        Err(Refusal::Unreadable(e)) => Err(Stop::Internal(unreadable(&e))),
        Err(Refusal::Limited(l)) => {
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

/// The JSON-RPC error refusing a request over its key's limit, with the
/// retry time (a tool call's and a read's alike).
pub(crate) fn limited_answer(id: &RawValue, limited: &crate::sessions::limits::Limited) -> Vec<u8> {
    let secs = limited.retry_after_secs;
    let data = match &limited.limit {
        crate::sessions::limits::Limit::Rate { per_minute } => json!({
            "limit": "rate", "rate_per_minute": per_minute, "retry_after_secs": secs,
        }),
        crate::sessions::limits::Limit::Quota { quota, month } => json!({
            "limit": "quota", "monthly_quota": quota, "month": month, "retry_after_secs": secs,
        }),
        crate::sessions::limits::Limit::InFlight { max } => json!({
            "limit": "in_flight", "calls_in_flight_per_key": max, "retry_after_secs": secs,
        }),
    };
    jsonrpc::error_with_data(
        Some(id),
        code::RATE_LIMITED,
        &limited.message(),
        Some(&data),
    )
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
    let answer = limited_answer(id, &limited);
    let secs = limited.retry_after_secs;
    let outcome = Outcome::Refused {
        message: limited.message(),
    };
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
