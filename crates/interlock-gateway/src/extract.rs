//! The reviewer API's request extractors: axum's `Json`, `Path` and `Query`,
//! with their rejections answered in the API's own error shape
//! (`{"error": {"code": "invalid", "message": …}}`, with axum's status and
//! explanation) instead of a plain-text body a client has to special-case;
//! and that error shape itself, [`ApiError`], with what each lower error maps to.

use axum::Json;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use interlock_engine::EngineError;
use serde::de::DeserializeOwned;
use serde_json::json;

use interlock_trust::pins::PinError;

/// An API error: a status and `{"error": {"code", "message"}}`.
pub struct ApiError(
    pub(crate) StatusCode,
    pub(crate) &'static str,
    pub(crate) String,
);

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: String) -> ApiError {
        ApiError(status, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.0,
            Json(json!({"error": {"code": self.1, "message": self.2}})),
        )
            .into_response()
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let (status, code) = match &e {
            EngineError::NoSuchPlan(_) => (StatusCode::NOT_FOUND, "not_found"),
            // The plan changed since the reviewer saw it: the same answer as a
            // changed server surface, so clients can reload and review again.
            EngineError::Decision(interlock_core::DecisionError::PlanHashMismatch { .. }) => {
                (StatusCode::CONFLICT, "changed")
            }
            EngineError::WrongState { .. }
            | EngineError::AlreadyStarted(_)
            | EngineError::NotApproved(_) => (StatusCode::CONFLICT, "wrong_state"),
            // One-shot and ordered: a statement already used, or older than the
            // subject's latest decision, conflicts with what is recorded.
            EngineError::Replay => (StatusCode::CONFLICT, "replayed"),
            EngineError::Stale { .. } => (StatusCode::CONFLICT, "stale"),
            EngineError::Decision(_) | EngineError::SelfApproval(_) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "decision_refused")
            }
            EngineError::Invalid(_) | EngineError::NotAnObject => {
                (StatusCode::BAD_REQUEST, "invalid")
            }
            // A halted plan with nothing to compensate, or a `rollback_of` that
            // names no halted plan of the proposer.
            EngineError::Rollback(_) | EngineError::RollbackLink(_) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "no_rollback")
            }
            EngineError::Store(interlock_store::StoreError::NotPlanOwner { .. }) => {
                (StatusCode::FORBIDDEN, "not_owner")
            }
            EngineError::Store(interlock_store::StoreError::PlanLocked { .. }) => {
                (StatusCode::CONFLICT, "wrong_state")
            }
            EngineError::Store(_) | EngineError::Log(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "storage")
            }
            #[allow(unreachable_patterns)]
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError(status, code, e.to_string())
    }
}

impl From<PinError> for ApiError {
    fn from(e: PinError) -> ApiError {
        match e {
            PinError::Engine(e) => e.into(),
            PinError::NoSuchServer(_) => {
                ApiError(StatusCode::NOT_FOUND, "not_found", e.to_string())
            }
            PinError::SurfaceChanged { .. }
            | PinError::NothingObserved { .. }
            | PinError::NoSuchTool { .. }
            | PinError::Contended(_)
            | PinError::GrantForAnotherDefinition { .. } => {
                ApiError(StatusCode::CONFLICT, "changed", e.to_string())
            }
            PinError::ToolNeedsServer { .. } => {
                ApiError(StatusCode::CONFLICT, "server_not_approved", e.to_string())
            }
            PinError::NotAServerStatement(_)
            | PinError::NotAToolStatement(_)
            | PinError::BadSurface { .. } => {
                ApiError(StatusCode::BAD_REQUEST, "invalid", e.to_string())
            }
            PinError::Store(_) => {
                ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
            }
        }
    }
}

impl From<interlock_trust::envelopes::WideningError> for ApiError {
    fn from(e: interlock_trust::envelopes::WideningError) -> ApiError {
        use interlock_trust::envelopes::WideningError as W;
        match e {
            W::Engine(e) => e.into(),
            W::Store(e) => e.into(),
            W::Log(_) => ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()),
            W::NotFixed { .. } => ApiError(StatusCode::NOT_FOUND, "not_found", e.to_string()),
            W::Changed { .. } => ApiError(StatusCode::CONFLICT, "changed", e.to_string()),
            W::NotAnEnvelopeStatement(_)
            | W::NotAnApproval { .. }
            | W::NotAFinding { .. }
            | W::Widen(_) => ApiError(StatusCode::BAD_REQUEST, "invalid", e.to_string()),
        }
    }
}

impl From<interlock_store::StoreError> for ApiError {
    fn from(e: interlock_store::StoreError) -> ApiError {
        ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
    }
}

/// A JSON request body (`Content-Type: application/json`).
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Body(v)),
            Err(r) => Err(ApiError::new(r.status(), "invalid", r.body_text())),
        }
    }
}

/// Path parameters.
pub struct Param<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Param<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(Param(v)),
            Err(r) => Err(ApiError::new(r.status(), "invalid", r.body_text())),
        }
    }
}

/// Query-string parameters.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(Query(v)),
            Err(r) => Err(ApiError::new(r.status(), "invalid", r.body_text())),
        }
    }
}
