//! "Guard a coding agent's own tools" on the reviewer API (issue 40 item 1):
//! the review UI's Settings lists the coding agents with hooks (Claude Code,
//! Cursor, Codex, Gemini CLI), each with a diff of what installing
//! Interlock's hooks in its user settings would write. Installing and undoing
//! are the owner's, as connecting a client is ([`super::clients`]): the hook
//! rewrites a file in the owner's home that their agent runs, and undoing
//! takes the guard away, so a reviewer key — which proves neither who holds it
//! nor that a person confirmed — is refused with how the owner does it.
//!
//! Safety: reviewer keys only, from this machine only; a client is named by
//! its slug from the installer's fixed table, never a path; the diff has the
//! installed agent key and any secret in the file masked by the host.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

use crate::connector::{ConnectorError, HookInstaller, OnUnreachable};
use crate::extract::{ApiError, Param, Query};
use crate::gateway::Gateway;

fn installer(gw: &Gateway) -> Result<std::sync::Arc<dyn HookInstaller>, ApiError> {
    gw.hook_installer().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_available",
            "this gateway does not install hooks (run `interlock hooks install` on its machine)"
                .into(),
        )
    })
}

#[derive(serde::Deserialize)]
pub struct HooksQuery {
    /// `deny` (the default) or `ask`: what the previewed hook does when the
    /// gateway cannot answer.
    on_unreachable: Option<String>,
}

/// The `on_unreachable` a query asks for.
fn on_unreachable(q: &HooksQuery) -> Result<OnUnreachable, ApiError> {
    match q.on_unreachable.as_deref() {
        None => Ok(OnUnreachable::Deny),
        Some(s) => OnUnreachable::parse(s).ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("on_unreachable must be `deny` or `ask`, not {s:?}"),
            )
        }),
    }
}

/// `GET /api/v1/hooks[?on_unreachable=deny|ask]`: changes nothing.
pub async fn list(
    State(gw): State<Gateway>,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: HeaderMap,
    Query(q): Query<HooksQuery>,
) -> Result<Json<Value>, ApiError> {
    crate::reviewer::key::reviewer(&gw, &headers).await?;
    crate::peer::from_this_machine(peer.as_deref())?;
    let on_unreachable = on_unreachable(&q)?;
    Ok(Json(installer(&gw)?.hooks(on_unreachable).await?))
}

/// `POST /api/v1/hooks/{client}/install`: refused, an owner action.
pub async fn install(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    owner_action(&gw, &headers, &slug, false).await
}

/// `POST /api/v1/hooks/{client}/undo`: refused, an owner action.
pub async fn undo(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    owner_action(&gw, &headers, &slug, true).await
}

/// The refusal naming what the owner runs instead (module doc). A reviewer
/// key is still required, so nobody else learns which clients exist.
async fn owner_action(
    gw: &Gateway,
    headers: &HeaderMap,
    slug: &str,
    undo: bool,
) -> Result<Json<Value>, ApiError> {
    crate::reviewer::key::reviewer(gw, headers).await?;
    if !installer(gw)?.knows(slug) {
        return Err(ConnectorError::UnknownClient(slug.to_owned()).into());
    }
    let (what, command) = if undo {
        (
            "removing a coding agent's hooks takes away the check before each of its tool uses",
            format!("interlock hooks install {slug} --undo"),
        )
    } else {
        (
            "installing a coding agent's hooks rewrites its settings in this machine's home",
            format!("interlock hooks install {slug} --yes"),
        )
    };
    Err(super::clients::owner_refusal(what, &command))
}
