//! Stores for tests, on the backend the test run asks for (issue 20: the
//! store, log, engine and gateway suites run on SQLite and on Postgres,
//! parameterized, not copied).
//!
//! A run on Postgres sets [`TEST_POSTGRES_ENV`] to a server's admin URL
//! (`scripts/pg-cluster start` prints one); every store a test asks for is
//! then a database of its own, created on that server, so tests running at
//! once never see each other's rows. Without it, a SQLite file in the test's
//! directory, as the product's default.
//!
//! Behind the `testing` feature: nothing here is part of the product.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::Connection as _;

use crate::{Store, StoreLocation};

/// The environment variable naming the Postgres server tests run on.
pub const TEST_POSTGRES_ENV: &str = "INTERLOCK_TEST_POSTGRES";

/// The Postgres admin URL of this test run, if it runs on Postgres.
pub fn test_postgres() -> Option<String> {
    std::env::var(TEST_POSTGRES_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// Where a new store for a test goes: a fresh database on the test run's
/// Postgres server, or the SQLite file `file` (as the product would put it).
pub async fn fresh_location(file: &Path) -> StoreLocation {
    match test_postgres() {
        Some(admin) => StoreLocation::Postgres(create_database(&admin).await),
        None => StoreLocation::File(file.to_owned()),
    }
}

/// [`fresh_location`] from synchronous code (a test that drives processes),
/// on a thread and runtime of its own so it also works inside one.
pub fn fresh_location_blocking(file: &Path) -> StoreLocation {
    let file = file.to_owned();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the test's database")
            .block_on(fresh_location(&file))
    })
    .join()
    .expect("creating the test's database")
}

/// A new, migrated store for a test at [`fresh_location`].
pub async fn open_fresh(file: &Path) -> Store {
    Store::connect(&fresh_location(file).await)
        .await
        .expect("the test's store opens")
}

/// Creates an empty database on the server `admin` names and returns its URL.
async fn create_database(admin: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!(
        "interlock_test_{}_{}_{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let mut conn = sqlx::PgConnection::connect(admin)
        .await
        .unwrap_or_else(|e| panic!("{TEST_POSTGRES_ENV} server unreachable: {e}"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    let _ = conn.close().await;
    let mut url = url::Url::parse(admin).expect("the admin URL parses");
    url.set_path(&format!("/{name}"));
    url.into()
}
