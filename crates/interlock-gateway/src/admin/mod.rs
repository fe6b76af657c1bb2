//! The owner's face: the local admin socket (`<data dir>/admin.sock`, file
//! permissions: only the machine's owner) and the admin API over HTTP
//! (`/api/v1/admin/…`, admin tokens).
//!
//! - [`socket`]: the admin socket's requests — keys and tokens minted, sign-in
//!   links issued, servers added, synced and removed.
//! - [`decisions`]: the owner's decisions, signed by the host's keychain key.
//! - [`api`]: API keys' settings and admin tokens over HTTP.

pub mod api;
pub mod decisions;
pub mod socket;

pub use socket::{
    AdminError, Answer, CONNECT_BACKUP_KEY_PREFIX, OwnerServices, Request, SigninIssuer,
    TokenStore, bind, request, serve, socket_path,
};

/// The admin API's routes: `/api/v1/admin/…` (admin tokens only).
pub fn routes() -> axum::Router<crate::gateway::Gateway> {
    use axum::routing::{get, patch, post};
    axum::Router::new()
        .route("/api/v1/admin/whoami", get(api::whoami))
        .route("/api/v1/admin/keys", get(api::keys).post(api::create_key))
        .route("/api/v1/admin/keys/{id}", patch(api::update_key))
        .route("/api/v1/admin/keys/{id}/rotate", post(api::rotate_key))
        .route("/api/v1/admin/keys/{id}/revoke", post(api::revoke_key))
        .route(
            "/api/v1/admin/tokens",
            get(api::tokens).post(api::create_token),
        )
        .route("/api/v1/admin/tokens/{id}/revoke", post(api::revoke_token))
}
