//! The reviewer API's alerts (issue 21): `GET /api/v1/alerts`, every sink's
//! lag, last error and dead letters.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::api::reviewer;
use crate::extract::ApiError;
use crate::gateway::Gateway;

/// `GET /api/v1/alerts`: the configured sinks and their delivery state.
pub async fn list(State(gw): State<Gateway>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let sinks = super::status(&gw).await?;
    Ok(Json(json!({ "sinks": sinks })))
}
