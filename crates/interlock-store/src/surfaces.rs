//! Approved surfaces kept by their hash (issue 16 item 7).
//!
//! Why: a server's row holds only its current baseline, so after a re-approval
//! the definitions an earlier receipt vouched for would be gone. Each surface a
//! reviewer approves is kept here, written with the approval's leaf (see
//! [`crate::StateChange::Server`]), and never changed: the hash is of the bytes.

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// One kept surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovedSurface {
    /// `sha256:…` of the surface (`interlock_surface::surface_hash`).
    pub hash: String,
    /// Its canonical JSON, as the server row held it.
    pub surface: Vec<u8>,
    /// The server it was first approved for.
    pub server: String,
    /// Unix seconds.
    pub first_approved_at: i64,
}

/// Keeps `surface` under `hash` (a surface approved again keeps its first row).
pub(crate) async fn keep_surface_in<'c, E>(
    ex: E,
    hash: &str,
    surface: &[u8],
    server: &str,
) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    sqlx::query(
        "INSERT INTO approved_surfaces (hash, surface, server, first_approved_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING",
    )
    .bind(hash)
    .bind(surface)
    .bind(server)
    .bind(now_secs())
    .execute(ex)
    .await
    .ctx("approved surface")?;
    Ok(())
}

impl Store {
    /// The approved surface with this hash, if a reviewer ever approved one.
    pub async fn approved_surface(
        &self,
        hash: &str,
    ) -> Result<Option<ApprovedSurface>, StoreError> {
        use sqlx::Row as _;
        let row = sqlx::query(
            "SELECT hash, surface, server, first_approved_at FROM approved_surfaces WHERE hash = $1",
        )
        .bind(hash)
        .fetch_optional(self.pool())
        .await
        .ctx("approved surface")?;
        Ok(row.map(|r| ApprovedSurface {
            hash: r.get("hash"),
            surface: r.get("surface"),
            server: r.get("server"),
            first_approved_at: r.get("first_approved_at"),
        }))
    }
}
