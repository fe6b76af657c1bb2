//! Helpers shared by the log tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Value};
use interlock_log::{CheckpointSigner, Log, LogOptions};
use interlock_store::{Store, StoreError, StoreLocation};
use sqlx::Connection as _;

pub const ORIGIN: &str = "test.interlock.example/log";

pub fn key() -> SigningKey {
    SigningKey::from_bytes(&[1u8; 32])
}

pub fn signer() -> CheckpointSigner {
    Arc::new(key())
}

pub fn db(dir: &Path) -> PathBuf {
    dir.join("log.sqlite")
}

/// The database of `dir`: the SQLite file [`db`], or on a Postgres run
/// (`$INTERLOCK_TEST_POSTGRES`) the database created for `dir`.
pub async fn location(dir: &Path) -> StoreLocation {
    interlock_store::testing::location_in(dir, "log.sqlite").await
}

/// Opens the store of `dir` (as another process would, when called again).
pub async fn open_store(dir: &Path) -> Result<Store, StoreError> {
    Store::connect(&location(dir).await).await
}

pub fn event(n: u64) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "decision".into());
    m.insert("n".into(), Value::from(format!("event-{n}")));
    Value::Object(m)
}

/// A plan transition of plan `p{n % 3}`: what the export tests select by plan.
pub fn plan_entry(n: u64) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "plan.transition".into());
    m.insert("plan_id".into(), Value::from(format!("p{}", n % 3)));
    m.insert(
        "plan_hash".into(),
        Value::from(format!("sha256:{:064x}", n % 3)),
    );
    Value::Object(m)
}

/// Options that sign a checkpoint with every commit, for tests that place
/// checkpoints exactly.
pub fn every_commit() -> LogOptions {
    LogOptions {
        checkpoint_interval: std::time::Duration::ZERO,
        ..LogOptions::default()
    }
}

/// A log of 40 entries written as four batches: checkpoints at 10, 20, 30, 40
/// (one per commit: the tamper matrix places checkpoints exactly).
pub async fn forty(dir: &Path) {
    let store = open_store(dir).await.unwrap();
    let log = Log::open_with(store.clone(), signer(), ORIGIN, every_commit())
        .await
        .unwrap();
    for b in 0..4 {
        let batch = (0..10).map(|i| event(b * 10 + i)).collect();
        log.append_many(batch).await.unwrap();
    }
    log.close().await;
    store.close().await;
}

/// A plain connection to the database, to tamper with it.
pub async fn raw(dir: &Path) -> sqlx::AnyConnection {
    interlock_store::testing::raw_connection(&location(dir).await).await
}

/// Runs `sql` (SQLite's dialect, translated on a Postgres run) on a plain
/// connection.
pub async fn exec(dir: &Path, sql: &'static str) {
    let sql = interlock_store::testing::dialect(&location(dir).await, sql);
    let mut c = raw(dir).await;
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .execute(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
}
