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

/// The database of the test directory `dir` (the log tests reopen "the
/// database in `dir`" many times, as processes would): the SQLite file
/// `dir/file`, or on a Postgres run the database created for `dir` on first
/// use, whose URL is kept in `dir/file.postgres-url`.
pub async fn location_in(dir: &Path, file: &str) -> StoreLocation {
    let Some(admin) = test_postgres() else {
        return StoreLocation::File(dir.join(file));
    };
    let marker = dir.join(format!("{file}.postgres-url"));
    if let Ok(url) = std::fs::read_to_string(&marker) {
        return StoreLocation::Postgres(url);
    }
    let url = create_database(&admin).await;
    std::fs::write(&marker, &url).expect("the test directory is writable");
    StoreLocation::Postgres(url)
}

/// A plain connection to the database at `location`, as another program
/// (a tamperer, a second writer) would open it.
pub async fn raw_connection(location: &StoreLocation) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    let url = match location {
        StoreLocation::File(p) => format!("sqlite://{}", p.display()),
        StoreLocation::Postgres(url) => url.clone(),
    };
    sqlx::AnyConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("a plain connection to {location}: {e}"))
}

/// `sql` written in SQLite's dialect, for `location`'s: the few functions a
/// tamper test uses (`CAST(… AS BLOB)`, `zeroblob(n)`, `char(n)`) become
/// Postgres's on a Postgres run.
pub fn dialect(location: &StoreLocation, sql: &str) -> String {
    if location.file().is_some() {
        return sql.to_owned();
    }
    let mut out = sql
        .replace(" AS BLOB)", ", 'UTF8')")
        .replace("CAST(", "convert_to(");
    while let Some(start) = out.find("zeroblob(") {
        let rest = &out[start + "zeroblob(".len()..];
        let end = rest.find(')').expect("zeroblob(n)");
        let n = &rest[..end];
        let replacement = format!("decode(repeat('00', {n}), 'hex')");
        out = format!("{}{replacement}{}", &out[..start], &rest[end + 1..]);
    }
    out.replace("char(10)", "chr(10)")
}
