//! The owner's face: the local admin socket (`<data dir>/admin.sock`, file
//! permissions: only the machine's owner) and the admin API over HTTP
//! (`/api/v1/admin/…`, admin tokens).
//!
//! - [`socket`]: the admin socket's requests — keys and tokens minted, sign-in
//!   links issued, servers added, synced and removed.
//! - [`api`]: API keys' settings and admin tokens over HTTP.

pub mod api;
pub mod socket;

pub use socket::{
    AdminError, Answer, Request, SigninIssuer, TokenStore, bind, request, serve, socket_path,
};
