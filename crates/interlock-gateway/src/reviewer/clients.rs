//! "Connect a client" on the reviewer API (issue 19 item 2): the review UI —
//! the desktop window's Settings and its first run — lists the AI clients
//! found on this machine and previews what connecting each would move behind
//! the gateway. Connecting and undoing are the owner's (issue 39 item 1):
//! here they are refused with how the owner does them.
//!
//! Why a trait: the work (`interlock connect`) lives in `interlock-host`,
//! which assembles this gateway; the gateway must not depend on it, so the
//! host hands its connector in ([`crate::Gateway::set_client_connector`]). A
//! gateway without one (a test's, a team gateway's) answers 404.
//!
//! Safety: only reviewer keys reach these routes (agent keys are refused by
//! [`crate::reviewer::key::reviewer`]); a client is named by its slug from the
//! connector's fixed table — never a path — so only the known clients' own
//! files under the user's home are read.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

use crate::connector::{ClientConnector, ConnectorError};
use crate::extract::{ApiError, Param};
use crate::gateway::Gateway;

impl From<ConnectorError> for ApiError {
    fn from(e: ConnectorError) -> ApiError {
        let (status, code) = match &e {
            ConnectorError::UnknownClient(_) => (StatusCode::NOT_FOUND, "not_found"),
            ConnectorError::Refused(_) => (StatusCode::CONFLICT, "refused"),
            ConnectorError::Failed(_) => (StatusCode::INTERNAL_SERVER_ERROR, "failed"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

fn connector(gw: &Gateway) -> Result<std::sync::Arc<dyn ClientConnector>, ApiError> {
    gw.client_connector().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_available",
            "this gateway does not connect clients (run `interlock connect` on its machine)".into(),
        )
    })
}

/// `GET /api/v1/clients`.
pub async fn list(
    State(gw): State<Gateway>,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    crate::reviewer::key::reviewer(&gw, &headers).await?;
    crate::peer::from_this_machine(peer.as_deref())?;
    Ok(Json(connector(&gw)?.clients().await?))
}

/// `POST /api/v1/clients/{client}/connect`: refused, an owner action
/// ([`owner_action`]).
pub async fn connect(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    owner_action(&gw, &headers, &slug, false).await
}

/// `POST /api/v1/clients/{client}/undo`: refused, an owner action
/// ([`owner_action`]).
pub async fn undo(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    owner_action(&gw, &headers, &slug, true).await
}

/// Connecting a client starts its servers as the gateway's user, and undoing
/// one removes servers with a signed decision; both rewrite a file in the
/// owner's home. A reviewer key proves neither that this is the machine's
/// owner nor that a person confirmed (a loopback peer may be an SSH tunnel, a
/// TLS proxy or another local user), so the reviewer API only says how the
/// owner does it (issue 39 item 1): `interlock connect` at this machine's
/// terminal, or the desktop app, whose native confirmation names the commands
/// ([`crate::client_changes`]). A reviewer key is still required, so the
/// refusal tells nobody else which clients exist.
async fn owner_action(
    gw: &Gateway,
    headers: &HeaderMap,
    slug: &str,
    undo: bool,
) -> Result<Json<Value>, ApiError> {
    crate::reviewer::key::reviewer(gw, headers).await?;
    let connector = connector(gw)?;
    if !connector.knows(slug) {
        return Err(ConnectorError::UnknownClient(slug.to_owned()).into());
    }
    let (why, command) = if undo {
        (
            "undoing the connect of a client removes the servers it started, by a signed decision",
            format!("interlock connect --undo {slug}"),
        )
    } else {
        (
            "connecting a client starts its MCP servers as this machine's user",
            format!("interlock connect {slug}"),
        )
    };
    Err(owner_refusal(why, &command))
}

/// The 403 `owner_action` refusal of a change only this machine's owner
/// makes: why, and the command the owner runs instead.
pub(super) fn owner_refusal(why: &str, command: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "owner_action",
        format!(
            "{why}: only this machine's owner does that — run `{command}` in a terminal on \
             this machine, or use the desktop app, which asks in a native dialog"
        ),
    )
}
