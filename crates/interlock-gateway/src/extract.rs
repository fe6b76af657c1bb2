//! The reviewer API's request extractors: axum's `Json`, `Path` and `Query`,
//! with their rejections answered in the API's own error shape
//! (`{"error": {"code": "invalid", "message": …}}`, with axum's status and
//! explanation) instead of a plain-text body a client has to special-case.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::api::ApiError;

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
