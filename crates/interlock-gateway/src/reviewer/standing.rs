//! Standing approvals on the reviewer API: the list, a signed grant, its
//! revocation, and the scopes a held call may be approved for (each wider
//! scope a standing approval document ready to sign). The decisions are
//! `interlock_trust::{standing, scopes}`'s; this room only maps HTTP to them.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use interlock_canon as canon;
use interlock_trust::scopes::{self, HeldCall};
use interlock_trust::standing;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::extract::{ApiError, Body, Param};
use crate::gateway::Gateway;
use crate::reviewer::api::envelope;
use crate::reviewer::key::reviewer;

type ApiResult = Result<Json<Value>, ApiError>;

/// The routes of this room.
pub fn routes() -> Router<Gateway> {
    Router::new()
        .route("/api/v1/standing", get(list).post(grant))
        .route("/api/v1/standing/{id}/revoke", post(revoke))
        .route("/api/v1/plans/{id}/scopes", get(held_call_scopes))
}

/// `GET /api/v1/standing`: standing approvals, newest first.
pub async fn list(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let list = gw.engine().store().standing(None).await?;
    let now = gw.engine().now();
    Ok(Json(json!({"standing": list.iter().map(|s| json!({
        "id": s.id,
        "role": s.role,
        "tool": s.tool,
        "document": canon::parse_json(&s.document).map(|d| canon::to_serde_json(&d)).unwrap_or(Value::Null),
        "expires_at": s.expires_at,
        "approver_key_id": s.approver_key_id,
        "active": s.revoked_at.is_none() && s.created_at <= now && s.expires_at > now,
        "revoked_at": s.revoked_at,
    })).collect::<Vec<_>>()})))
}

#[derive(Deserialize)]
pub struct StandingGrant {
    /// `{role, tool, shape, expires_at}`.
    document: Value,
    /// A signed approval of `standing:<id>` at the document's hash.
    envelope: Value,
}

/// `POST /api/v1/standing`: grant one (a signed statement about the document).
pub async fn grant(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Body(body): Body<StandingGrant>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let env = envelope(&body.envelope)?;
    let doc = canon::from_serde_json(&body.document)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, "invalid", format!("document: {e}")))?;
    let s = standing::grant_for_approved(gw.engine(), gw.events(), &gw.tool_prefixes(), &doc, &env)
        .await?;
    Ok(Json(
        json!({"id": s.id, "role": s.role, "tool": s.tool, "expires_at": s.expires_at}),
    ))
}

/// `GET /api/v1/plans/{id}/scopes`: what a held call may be approved for —
/// once, for its session, for an hour, for its exact arguments — each wider
/// scope with the standing approval document to sign beside the plan
/// approval (`POST /api/v1/standing`).
pub async fn held_call_scopes(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let plan = gw.engine().plan(&id).await?;
    let prefixes = gw.tool_prefixes();
    let offers = scopes::offers(&HeldCall {
        engine: gw.engine(),
        prefixes: &prefixes,
        plan_id: &id,
        memo: gw.held_memo(&id),
    })
    .await?;
    Ok(Json(json!({
        "plan_id": id,
        "plan_hash": plan.plan_hash,
        "scopes": offers.iter().map(scope_offer_json).collect::<Vec<_>>(),
    })))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct StandingRevoke {
    reason: Option<String>,
}

/// `POST /api/v1/standing/{id}/revoke` (body `{reason?}`): stops a standing
/// approval now. Logged with the reviewer key's name.
pub async fn revoke(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
    body: axum::body::Bytes,
) -> ApiResult {
    let who = reviewer(&gw, &headers).await?;
    // An empty body is allowed; anything else must be the JSON object, so a
    // reason is never dropped for want of a Content-Type.
    let body: StandingRevoke = if body.iter().all(u8::is_ascii_whitespace) {
        StandingRevoke::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("the body must be {{\"reason\": \"…\"}}: {e}"),
            )
        })?
    };
    let reason = body
        .reason
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "revoked in the review UI".to_owned());
    if reason.len() > 1000 {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "invalid",
            "a reason is at most 1000 bytes".into(),
        ));
    }
    let by = format!("reviewer:{}", who.name);
    if standing::revoke(gw.engine(), gw.events(), &id, &by, &reason).await? {
        Ok(Json(json!({"id": id, "revoked": true, "by": by})))
    } else {
        Err(ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no active standing approval {id:?}"),
        ))
    }
}

/// One scope a held call may be approved for, as the reviewer API shows it.
fn scope_offer_json(o: &scopes::Offer) -> Value {
    json!({
        "scope": o.scope.as_str(),
        "label": o.scope.label(),
        "grant": o.grant.as_ref().map(|g| json!({
            "id": g.id,
            "subject": g.subject,
            "document": interlock_canon::to_serde_json(&g.document),
            "document_hash": g.document_hash.to_string(),
            "expires_at": g.expires_at,
            "summary": g.summary,
        })),
    })
}

impl From<scopes::ScopeError> for ApiError {
    fn from(e: scopes::ScopeError) -> ApiError {
        use scopes::ScopeError as S;
        match e {
            S::Engine(e) => e.into(),
            S::Store(e) => e.into(),
            S::NotHeldCall(_) => ApiError(StatusCode::NOT_FOUND, "not_found", e.to_string()),
            S::Decided { .. } => ApiError(StatusCode::CONFLICT, "wrong_state", e.to_string()),
        }
    }
}
