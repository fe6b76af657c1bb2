//! `GET /api/v1/log/witnesses` (issue 43): who witnesses this log, and how far
//! each has cosigned it — with the cosigned checkpoint and its cosignature
//! line, so the reviewer's browser verifies each against the witness's key
//! itself rather than trusting this answer.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::extract::ApiError;
use crate::gateway::Gateway;
use crate::reviewer::key::reviewer;

pub async fn witnesses(
    State(gw): State<Gateway>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let storage = |e: interlock_store::StoreError| {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
    };
    let log = gw.engine().log();
    let latest = gw
        .engine()
        .store()
        .latest_cosignatures()
        .await
        .map_err(storage)?;
    let witnesses: Vec<_> = gw
        .config()
        .log
        .witnesses
        .iter()
        .map(|w| {
            let name = interlock_merkle::CosignatureVerifier::from_vkey(&w.key)
                .map(|v| v.name)
                .unwrap_or_default();
            let cosigned = latest
                .iter()
                .find(|(c, _)| c.witness == name)
                .map(|(c, note)| {
                    json!({
                        "size": c.size,
                        "received_at": c.received_at,
                        "checkpoint": note,
                        "line": c.line,
                    })
                });
            json!({
                "name": name,
                "key": w.key,
                "url": w.url,
                "cosigned": cosigned,
            })
        })
        .collect();
    Ok(Json(json!({
        "origin": log.origin(),
        "size": log.sealed_size(),
        "witnesses": witnesses,
    })))
}
