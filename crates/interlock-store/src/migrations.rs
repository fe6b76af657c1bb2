//! The schema migrations of each backend, embedded at build time (`build.rs`) and
//! run by sqlx's migrator.

use std::borrow::Cow;

use sqlx::SqlSafeStr as _;
use sqlx::migrate::{Migration, MigrationType, Migrator};

use crate::location::Backend;

/// One migration file as `build.rs` embedded it.
pub(crate) struct EmbeddedMigration {
    pub(crate) version: i64,
    /// The file name's description, `_` read as a space (sqlx's rule).
    pub(crate) description: &'static str,
    pub(crate) sql: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The embedded migrations of `backend`.
fn embedded(backend: Backend) -> &'static [EmbeddedMigration] {
    match backend {
        Backend::Sqlite => SQLITE,
        Backend::Postgres => POSTGRES,
    }
}

/// sqlx's migrator over `backend`'s migrations up to `last_version` (every one:
/// `i64::MAX`). Each migration's checksum is computed from its SQL as sqlx's own
/// reader computes it, so a database migrated by any earlier build validates.
pub(crate) fn migrator(backend: Backend, last_version: i64) -> Migrator {
    Migrator::with_migrations(
        embedded(backend)
            .iter()
            .filter(|m| m.version <= last_version)
            .map(|m| {
                Migration::new(
                    m.version,
                    Cow::Borrowed(m.description),
                    MigrationType::Simple,
                    m.sql.into_sql_str(),
                    // sqlx's rule for a migration outside a transaction.
                    m.sql.starts_with("-- no-transaction"),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The embedded migrations are what sqlx's own reader of the directories
    /// makes of them (the reader `sqlx::migrate!` used): versions, descriptions,
    /// types, transaction flags and checksums. A database that an earlier build
    /// migrated is checked against these checksums when it opens.
    #[tokio::test]
    async fn migrations_match_sqlx_s_own_reading() {
        for (backend, dir) in [
            (Backend::Sqlite, "migrations/sqlite"),
            (Backend::Postgres, "migrations/postgres"),
        ] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let read = Migrator::new(dir.as_path()).await.unwrap();
            let embedded = migrator(backend, i64::MAX);
            assert!(!read.migrations.is_empty(), "{dir:?} has migrations");
            assert_eq!(read.migrations.len(), embedded.migrations.len(), "{dir:?}");
            for (r, e) in read.migrations.iter().zip(embedded.migrations.iter()) {
                assert_eq!(
                    (r.version, &r.description, r.migration_type, r.no_tx),
                    (e.version, &e.description, e.migration_type, e.no_tx),
                    "{dir:?}"
                );
                assert_eq!(r.sql.as_str(), e.sql.as_str(), "{dir:?} {}", r.version);
                assert_eq!(r.checksum, e.checksum, "{dir:?} {}", r.version);
            }
        }
    }
}
