//! Which reviewer key is calling the reviewer API, and whether its scope lets it
//! in. Every reviewer-facing handler starts here; a room of its own so the
//! handlers import it, not each other.

use axum::http::{HeaderMap, StatusCode};
use interlock_store::{ApiKeyKind, ApiKeyRecord};

use crate::auth::bearer;
use crate::extract::ApiError;
use crate::gateway::Gateway;
use crate::roles::REVIEW_ONLY_ROLE;

/// The reviewer behind a request.
pub async fn reviewer(gw: &Gateway, headers: &HeaderMap) -> Result<ApiKeyRecord, ApiError> {
    let record = any_reviewer(gw, headers).await?;
    if record.role == crate::roles::METRICS_ONLY_ROLE {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "metrics_only",
            "this key is metrics-only: it can only GET /metrics".into(),
        ));
    }
    if record.role == REVIEW_ONLY_ROLE {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "review_only",
            "this key is review-only: it can only POST /api/v1/servers/{name}/review".into(),
        ));
    }
    Ok(record)
}

/// A reviewer key of either scope.
pub(crate) async fn any_reviewer(
    gw: &Gateway,
    headers: &HeaderMap,
) -> Result<ApiKeyRecord, ApiError> {
    let Some(key) = bearer(headers) else {
        return Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a reviewer API key is required (Authorization: Bearer ilk_…; create one with `interlock reviewers add`)".into(),
        ));
    };
    match gw.authenticate(key, ApiKeyKind::Reviewer).await? {
        Some(r) => Ok(r),
        None => Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unknown or revoked reviewer API key (agent keys cannot use the reviewer API)".into(),
        )),
    }
}
