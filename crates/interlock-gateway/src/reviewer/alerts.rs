//! The reviewer API's alerts (issue 21): `GET /api/v1/alerts`, every sink's
//! lag, last error and dead letters.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::extract::ApiError;
use crate::gateway::Gateway;
use crate::reviewer::key::reviewer;

/// `POST /api/v1/alerts/{sink}/test`: one test event through the sink now.
pub async fn test(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    crate::extract::Param(name): crate::extract::Param<String>,
) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let Some(sink) = gw.config().alerts.sinks.iter().find(|s| s.name == name) else {
        return Err(ApiError(
            axum::http::StatusCode::NOT_FOUND,
            "not_found",
            format!("no alert sink is named `{name}`"),
        ));
    };
    let outcome =
        crate::alerts::send_test(sink, gw.engine().store(), gw.engine().log().origin()).await?;
    Ok(Json(json!(outcome)))
}

/// `POST /api/v1/alerts/{sink}/redeliver`: the sink's dead letters sent
/// again (an operator action, recorded as an `admin.action` leaf naming the
/// reviewer key). 200 with what was sent, also when the receiver refused one
/// (`refused`, `error`).
pub async fn redeliver(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    crate::extract::Param(name): crate::extract::Param<String>,
) -> Result<Json<Value>, ApiError> {
    let who = reviewer(&gw, &headers).await?;
    let Some(sink) = gw.config().alerts.sinks.iter().find(|s| s.name == name) else {
        return Err(ApiError(
            axum::http::StatusCode::NOT_FOUND,
            "not_found",
            format!("no alert sink is named `{name}`"),
        ));
    };
    let by = json!({"reviewer": who.name, "key_hash": who.key_hash});
    let outcome = crate::alerts::redeliver::redeliver(sink, gw.engine(), by).await?;
    Ok(Json(json!(outcome)))
}

/// `GET /api/v1/alerts`: the configured sinks and their delivery state.
pub async fn list(State(gw): State<Gateway>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let sinks = crate::alerts::status(&gw).await?;
    Ok(Json(json!({ "sinks": sinks })))
}
