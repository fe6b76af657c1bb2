//! `GET /metrics` (issue 21): who may scrape — a reviewer key of the full
//! scope, or a metrics-only key, which reaches nothing else — and the
//! gateway's numbers ([`crate::metrics`]) in the OpenMetrics text format
//! Prometheus asks for, or the Prometheus text format (0.0.4) for anyone else.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use interlock_store::ApiKeyKind;

use crate::auth::bearer;
use crate::extract::ApiError;
use crate::gateway::Gateway;
use crate::metrics::Exposition;

/// `GET /metrics`.
pub async fn serve(State(gw): State<Gateway>, headers: HeaderMap) -> Result<Response, ApiError> {
    let unauthorized = || {
        ApiError(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a reviewer or metrics-only API key is required (Authorization: Bearer ilk_…; \
             `interlock reviewers add NAME --scope metrics`)"
                .into(),
        )
    };
    let key = bearer(&headers).ok_or_else(unauthorized)?;
    let record = gw
        .authenticate(key, ApiKeyKind::Reviewer)
        .await?
        .ok_or_else(unauthorized)?;
    if record.role == crate::roles::REVIEW_ONLY_ROLE {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "review_only",
            "this key is review-only: it cannot read metrics".into(),
        ));
    }
    let m = gw.metrics();
    for s in crate::alerts::status(&gw).await? {
        m.set_sink(crate::metrics::SinkGauges {
            name: s.name,
            lag: s.lag,
            delivered: s.delivered,
            dead_letters: s.dead_letters,
            retrying: s.attempts > 0,
        });
    }
    if let Some((state, failures)) = crate::llm::judge::breaker(&gw.config().llm) {
        m.set_llm_judge(state, failures);
    }
    let format = Exposition::negotiate(headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
    let text = m
        .encode(format)
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, "metrics", e.to_string()))?;
    Ok(([(header::CONTENT_TYPE, format.content_type())], text).into_response())
}
