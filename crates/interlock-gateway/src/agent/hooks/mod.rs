//! Coding agents' hooks (issue 40): `POST /hooks/v1/{client}` with the
//! agent's key. Claude Code, Cursor, Codex and Gemini CLI report each use of
//! their own tools (a shell command, a file edit, a fetch, an MCP tool they
//! call directly); the gateway judges it with the call path's machinery —
//! the role, native inspection, risk, shadow mode — and answers in the
//! client's own format: allow, deny with a reason the agent sees, or hold
//! (a deny that says how to retry once a reviewer approves).
//!
//! - [`judge`]: the verdict on one tool use;
//! - [`held`]: a held use as a one-stage `hook.permit` plan, waited on, and
//!   run once when the same use is retried after approval;
//! - [`leaf`]: the `hook.call` leaf every answer is written to first.
//!
//! Fail closed: a hook client treats an error status or a timeout as "no
//! objection", so every refusal here — a missing or revoked key, a body that
//! does not parse, a leaf that cannot be written — is a 200 with a deny.

mod held;
mod judge;
mod leaf;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use interlock_hooks::{Answer, Client, HookError, Phase};
use interlock_store::ApiKeyKind;
use serde::Deserialize;

use crate::gateway::Gateway;

/// `?wait=SECS`: how long a held use may wait for a reviewer in this
/// request (the command hook passes its client's timeout; at most
/// `calls.hold_secs`). Read by hand from the URI, not by the `Query`
/// extractor: its rejection of `?wait=x` is a 400, which a hook client
/// treats as "no objection" — an unreadable `wait` is the default instead.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Wait {
    wait: Option<u64>,
}

/// `POST /hooks/v1/{client}`.
pub(crate) async fn post(
    State(gw): State<Gateway>,
    Path(client): Path<String>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(client) = client.parse::<Client>() else {
        return (
            StatusCode::NOT_FOUND,
            format!(
                "no hook endpoint for client {client:?} (claude-code, cursor, codex, gemini-cli)"
            ),
        )
            .into_response();
    };
    // The event's phase and name shape the answer even when it is refused.
    let (phase, event_name) = peek(&body);
    let deny = |reason: String| reply(client, phase, &event_name, &Answer::Deny { reason });
    let Some(key) = crate::auth::bearer(&headers) else {
        return deny(
            "Interlock refused this tool use: the hook sent no agent key (Authorization: Bearer ilk_…)".into(),
        );
    };
    let agent = match gw.authenticate(key, ApiKeyKind::Agent).await {
        Ok(Some(agent)) => agent,
        Ok(None) => {
            return deny("Interlock refused this tool use: unknown or revoked agent key".into());
        }
        Err(e) => {
            return deny(format!(
                "Interlock refused this tool use: its store is unavailable: {e}"
            ));
        }
    };
    let event = match interlock_hooks::parse(client, &body) {
        Ok(event) => event,
        Err(HookError::NotAToolEvent { .. }) => {
            return reply(client, phase, &event_name, &Answer::Nothing);
        }
        Err(e) => return deny(format!("Interlock refused this tool use: {e}")),
    };
    let hold_secs = gw.config().calls.hold_secs;
    let wait = Query::<Wait>::try_from_uri(&uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let wait_secs = wait
        .wait
        .unwrap_or(client.default_timeout_secs().saturating_sub(5))
        .min(hold_secs);
    let answer = judge::judge(&gw, &agent, &event, wait_secs).await;
    reply(client, event.phase, &event.event_name, &answer)
}

/// The answer to a hook request whose body was never read whole (larger
/// than `limits.max_body_bytes`, or too slow): a deny in the client's form,
/// for a client that would take the router's 413 or 408 as "no objection".
/// `None` for a path that is not a hook endpoint (those keep their status).
pub(crate) fn unread_body(path: &str, why: &str) -> Option<Response> {
    let client = path.strip_prefix("/hooks/v1/")?.parse::<Client>().ok()?;
    // The event's name is in the body that was not read: a use about to run
    // is the case that matters, and a deny after one changes nothing.
    Some(reply(
        client,
        Phase::Before,
        "",
        &Answer::Deny {
            reason: format!("Interlock refused this tool use: {why}"),
        },
    ))
}

/// The phase and event name of a body that may not parse as a whole.
fn peek(body: &[u8]) -> (Phase, String) {
    let name = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("hook_event_name")
                .and_then(|n| n.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    (Phase::guess(&name), name)
}

fn reply(client: Client, phase: Phase, event_name: &str, answer: &Answer) -> Response {
    let body = interlock_hooks::answer(client, phase, event_name, answer);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
