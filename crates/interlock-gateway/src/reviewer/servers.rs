//! The reviewer API's servers routes (issue 20 item 5): add a server, see
//! what its removal signs, remove it with a signed removal. What each does
//! to the running gateway is [`crate::server_changes`].

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse as _;
use interlock_core::DsseEnvelope;
use serde_json::json;

use crate::extract::{ApiError, Body, Param};
use crate::gateway::Gateway;
use crate::server_changes::removal_subject;
use crate::server_file::{NewServer, ServerChangeError};

impl From<ServerChangeError> for ApiError {
    fn from(e: ServerChangeError) -> ApiError {
        use ServerChangeError as E;
        match e {
            E::Pin(p) => p.into(),
            E::Engine(p) => p.into(),
            E::Store(p) => p.into(),
            E::Invalid(_) | E::NotARemoval(_) | E::NotApproved => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid", e.to_string())
            }
            E::Exists(_) | E::StaleRow(_) | E::Changed { .. } | E::RequestExists(_) => {
                ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string())
            }
            E::TooManyRequests => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too_many", e.to_string())
            }
            E::NoSuchServer(_) | E::NoSuchRequest(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "not_found", e.to_string())
            }
            E::NotFromThisMachine => {
                ApiError::new(StatusCode::FORBIDDEN, "not_this_machine", e.to_string())
            }
            E::UnconfinedIsTheOwners => {
                ApiError::new(StatusCode::FORBIDDEN, "owner_only", e.to_string())
            }
            E::File(_) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "failed", e.to_string()),
        }
    }
}

/// `POST /api/v1/servers`: `{name, url}` adds an HTTP server, pending
/// review; `{name, command, args}` only *requests* a stdio server (202,
/// `REQUESTED`): it runs a program as the gateway's user, which is the
/// machine owner's to allow (`interlock servers confirm NAME`), not a
/// reviewer key's (issue 39 item 1). Requests come from this machine only.
pub async fn add(
    State(gw): State<Gateway>,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: HeaderMap,
    Body(body): Body<serde_json::Value>,
) -> Result<axum::response::Response, ApiError> {
    let caller = crate::reviewer::key::reviewer(&gw, &headers).await?;
    let new: NewServer = serde_json::from_value(body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("expected {{name, command, args}} or {{name, url}}: {e}"),
        )
    })?;
    if new.command.is_some() && crate::peer::from_this_machine(peer.as_deref()).is_err() {
        return Err(ServerChangeError::NotFromThisMachine.into());
    }
    // A reviewer key (a browser's, a tunnel's) may add a sandboxed program,
    // never an unconfined one (issue 38).
    if new.sandbox.is_off() {
        return Err(ServerChangeError::UnconfinedIsTheOwners.into());
    }
    let by = format!("reviewer:{}", caller.name);
    if new.command.is_some() {
        let index = gw.request_server(&new, &by).await?;
        return Ok((
            StatusCode::ACCEPTED,
            Json(json!({
                "name": new.name,
                "status": "REQUESTED",
                "leaf": index,
                "confirm": format!("interlock servers confirm {}", new.name),
            })),
        )
            .into_response());
    }
    let index = gw.add_server(&new, &by).await?;
    Ok(Json(json!({"name": new.name, "status": "PENDING", "leaf": index})).into_response())
}

/// `GET /api/v1/servers/requests`: the programs reviewers asked to run that
/// wait for the machine's owner, oldest first.
pub async fn requests(
    State(gw): State<Gateway>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    crate::reviewer::key::reviewer(&gw, &headers).await?;
    Ok(Json(json!({"requests": gw.server_requests()})))
}

/// `GET /api/v1/servers/{name}/removal`: what a removal of the server signs.
pub async fn removal(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(name): Param<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    crate::reviewer::key::reviewer(&gw, &headers).await?;
    let (subject, hash) = gw.removal_terms(&name).await?;
    Ok(Json(json!({"subject": subject, "hash": hash.to_string()})))
}

/// `POST /api/v1/servers/{name}/removal`: a DSSE envelope around a signed
/// approval of `server-removal:<name>` at its removal hash.
pub async fn remove(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(name): Param<String>,
    Body(body): Body<serde_json::Value>,
) -> Result<Json<serde_json::Value>, ApiError> {
    crate::reviewer::key::reviewer(&gw, &headers).await?;
    let env = DsseEnvelope::from_json(&body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("not a DSSE envelope: {e}"),
        )
    })?;
    let claimed = interlock_core::decision::ApprovalStatement::claimed_by(&env).ok();
    if claimed.as_ref().map(|s| s.plan_id.as_str()) != Some(removal_subject(&name).as_str()) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("the statement is not about removing server {name:?}"),
        ));
    }
    let index = gw.remove_server(&env).await?;
    Ok(Json(json!({"name": name, "removed": true, "leaf": index})))
}
