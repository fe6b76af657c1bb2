//! "Connect a client" on the reviewer API (issue 19 item 2): the review UI —
//! the desktop window's Settings and its first run — lists the AI clients
//! found on this machine, previews what connecting each would move behind the
//! gateway, connects and undoes.
//!
//! Why a trait: the work (`interlock connect`) lives in `interlock-host`,
//! which assembles this gateway; the gateway must not depend on it, so the
//! host hands its connector in ([`crate::Gateway::set_client_connector`]). A
//! gateway without one (a test's, a team gateway's) answers 404.
//!
//! Safety: only reviewer keys reach these routes (agent keys are refused by
//! [`crate::reviewer::key::reviewer`]); a client is named by its slug from the
//! connector's fixed table — never a path — so only the known clients' own
//! files under the user's home can be touched; every connect and undo is
//! logged: its intent (durable) before the client's file is touched, then its
//! outcome, both naming the reviewer key that asked.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::connector::{ClientConnector, ConnectorError};
use crate::extract::{ApiError, Param};
use crate::gateway::Gateway;
use interlock_trust::events::EventType;

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

/// `POST /api/v1/clients/{client}/connect`.
pub async fn connect(
    State(gw): State<Gateway>,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    change(&gw, peer, &headers, &slug, Change::Connect).await
}

/// `POST /api/v1/clients/{client}/undo`.
pub async fn undo(
    State(gw): State<Gateway>,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: HeaderMap,
    Param(slug): Param<String>,
) -> Result<Json<Value>, ApiError> {
    change(&gw, peer, &headers, &slug, Change::Undo).await
}

/// What a reviewer asks of a client's config file.
#[derive(Clone, Copy)]
enum Change {
    Connect,
    Undo,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::Connect => "connect",
            Change::Undo => "undo",
        }
    }

    /// The outcome leaf's kind when it went through.
    fn done(self) -> EventType {
        match self {
            Change::Connect => EventType::ClientConnected,
            Change::Undo => EventType::ClientUndone,
        }
    }
}

/// Connects or undoes a client for a reviewer on this machine. Evidence
/// before effect: the intent leaf is durable before the connector touches
/// the client's file (a process killed midway leaves the intent without an
/// outcome, which says the file may have changed); the outcome leaf follows,
/// whether it went through or was refused.
async fn change(
    gw: &Gateway,
    peer: Option<axum::Extension<crate::peer::Peer>>,
    headers: &HeaderMap,
    slug: &str,
    change: Change,
) -> Result<Json<Value>, ApiError> {
    let reviewer = crate::reviewer::key::reviewer(gw, headers).await?;
    crate::peer::from_this_machine(peer.as_deref())?;
    let connector = connector(gw)?;
    if !connector.knows(slug) {
        return Err(ConnectorError::UnknownClient(slug.to_owned()).into());
    }
    let mut intent = interlock_canon::Map::new();
    intent.insert("client".into(), slug.into());
    intent.insert("reviewer".into(), reviewer.name.as_str().into());
    intent.insert("change".into(), change.name().into());
    let intent_index = gw
        .engine()
        .record(EventType::ClientChangeIntent.as_str(), intent.clone())
        .await?
        .index;
    let outcome = match change {
        Change::Connect => connector.connect(slug).await,
        Change::Undo => connector.undo(slug).await,
    };
    let mut leaf = intent;
    let index = i64::try_from(intent_index)
        .ok()
        .and_then(|i| interlock_canon::Value::try_from(i).ok())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "failed",
                "log index out of range".into(),
            )
        })?;
    leaf.insert("intent_index".into(), index);
    match outcome {
        Ok(done) => {
            let result = interlock_canon::from_serde_json(&json!(done)).map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "failed", e.to_string())
            })?;
            leaf.insert("result".into(), result);
            gw.engine().record(change.done().as_str(), leaf).await?;
            Ok(Json(done))
        }
        Err(e) => {
            leaf.insert("error".into(), e.to_string().into());
            gw.engine()
                .record(EventType::ClientChangeRefused.as_str(), leaf)
                .await?;
            Err(e.into())
        }
    }
}
