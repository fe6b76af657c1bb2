//! Interlock's storage: plans (every revision), signed approval statements,
//! the approver key registry, and the Merkle log's leaves, checkpoints and
//! metadata — in one SQL database (a SQLite file by default).
//!
//! Why a crate of its own: it is the *only* place in Interlock that speaks
//! SQL, so the rules that make the guarantees hold (one transaction per
//! decision, compare-and-swap status changes, one-shot approval consumption,
//! gap-free log appends) live in one reviewable file each, and a Postgres
//! backend can follow by re-implementing this API over the same schema.
//!
//! Durability: the SQLite file is opened in WAL mode with `synchronous=FULL`,
//! so a call that returned `Ok` survives power loss or `SIGKILL`. Every write
//! takes the database write lock at the start of its transaction
//! (`BEGIN IMMEDIATE`), so concurrent writers — tasks in this process or other
//! processes on the same file — queue on the busy timeout instead of failing
//! on a stale snapshot.
//!
//! The store computes no hashes and checks no signatures: those come from
//! `interlock-merkle` / `interlock-core` in the layers above; here they are
//! opaque bytes and strings.

#![forbid(unsafe_code)]

mod admin;
mod alerts;
mod appender;
mod approvals;
mod change;
mod decisions;
mod envelopes;
mod error;
mod gateway;
mod keys;
mod lease;
mod log;
mod plans;
mod probes;
mod receipts;
mod snapshot;
mod surfaces;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

pub use admin::{AdminChange, AdminScope, AdminTokenRecord, KeyAlertRoute, KeySettings};
pub use alerts::{AlertCursor, DeadLetter};
pub use appender::Flush;
pub use approvals::{ApprovalDecision, ApprovalRecord, NewApproval};
pub use change::StateChange;
pub use decisions::{ClaimOutcome, DecisionClaim};
pub use envelopes::{EnvelopeRow, EnvelopeState};
pub use error::{DriverError, StoreError};
pub use gateway::{
    ApiKeyKind, ApiKeyRecord, ServerRecord, ServerStatus, ServerUpdate, StandingRecord,
};
pub use keys::{ApproverKey, NewApproverKey};
pub use lease::ExecutionLease;
pub use log::{CheckpointRow, LeafRow};
pub use plans::{NewPlan, PlanRecord, PlanStatus};
pub use probes::ProbeState;
pub use receipts::{ReceiptCount, ReceiptFacts, ReceiptFilter};
pub use snapshot::Snapshot;
pub use surfaces::ApprovedSurface;

use error::SqlxResultExt as _;

/// How long a writer waits for another writer's lock before failing with
/// [`StoreError::Busy`]. Long, because writes are short and a refused write
/// is worse than a slow one.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections in the pool. Readers run in parallel under WAL; writers
/// serialize on the database lock whatever this number is.
const MAX_CONNECTIONS: u32 = 8;

/// A handle on the database. Cheap to clone (a connection pool inside); all
/// clones share the pool.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// The connection [`append_batch`](Store::append_batch) writes the log
    /// through (`appender.rs`: synchronous SQLite on the log writer's
    /// thread), opened on first use with the pool's settings. An async lock
    /// because a batch that finds the database locked by another writer
    /// waits for it on the blocking pool, holding the connection.
    appender: Arc<tokio::sync::Mutex<Option<appender::Appender>>>,
}

impl Store {
    /// Opens (creating if missing) the SQLite database at `path` and its
    /// parent directory, with durability on (WAL, `synchronous=FULL`),
    /// foreign keys enforced and a busy timeout, then applies the embedded
    /// migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let open_err = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            path: path.to_owned(),
            source,
        };
        if path.as_os_str().is_empty() {
            return Err(open_err("empty path".into()));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Owner-only: the database holds what the gateway enforces, and other
            // users of the machine have no business reading or editing it
            // (docs/THREAT-MODEL.md). An existing directory is left as it is.
            let mut dir = tokio::fs::DirBuilder::new();
            dir.recursive(true);
            #[cfg(unix)]
            dir.mode(0o700);
            dir.create(parent)
                .await
                .map_err(|e| open_err(Box::new(e)))?;
        }
        let options = connect_options(path);
        let pool = SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            // A SQLite connection is a file handle on a thread of this
            // process, not a socket that can go stale: pinging it before
            // every checkout would only add a round trip to that thread.
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(|e| match StoreError::from_sqlx(e, "connection") {
                StoreError::Database(e) => open_err(e),
                other => other,
            })?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        tracing::debug!(path = %path.display(), "store opened");
        Ok(Store {
            pool,
            path: path.to_owned(),
            appender: Arc::new(tokio::sync::Mutex::new(None)),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes every connection (waiting for in-flight calls). Later calls on
    /// any clone fail.
    pub async fn close(&self) {
        self.pool.close().await;
        // Dropping the connection closes it.
        drop(self.appender.lock().await.take());
    }

    /// Opens the appender connection (see [`Store::append_batch`]): same file,
    /// same settings as the pool's connections. Refused once the store is
    /// closed.
    pub(crate) fn connect_appender(&self) -> Result<appender::Appender, StoreError> {
        if self.pool.is_closed() {
            return Err(StoreError::Database(Box::new(sqlx::Error::PoolClosed)));
        }
        appender::Appender::open(&self.path)
    }

    /// Starts a write transaction holding the database write lock from its
    /// first statement. On SQLite a deferred transaction that reads and then
    /// writes can fail with `SQLITE_BUSY_SNAPSHOT` when another connection
    /// wrote in between (the busy timeout does not help); `BEGIN IMMEDIATE`
    /// waits for the lock instead. This is the one dialect-specific statement:
    /// a Postgres backend uses `BEGIN` plus row locks.
    pub(crate) async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .ctx("transaction")
    }

    /// The durability settings in force on a connection of the pool, as
    /// SQLite reports them (for diagnostics and the tests that pin them).
    pub async fn durability(&self) -> Result<Durability, StoreError> {
        let mut c = self.pool.acquire().await.ctx("connection")?;
        let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut *c)
            .await
            .ctx("pragma")?;
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut *c)
            .await
            .ctx("pragma")?;
        let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&mut *c)
            .await
            .ctx("pragma")?;
        let busy_timeout_ms: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
            .fetch_one(&mut *c)
            .await
            .ctx("pragma")?;
        let synchronous = match synchronous {
            0 => "off",
            1 => "normal",
            2 => "full",
            3 => "extra",
            _ => "unknown",
        };
        Ok(Durability {
            journal_mode: journal_mode.to_ascii_lowercase(),
            synchronous: synchronous.to_owned(),
            foreign_keys: foreign_keys == 1,
            busy_timeout_ms,
        })
    }

    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// What [`Store::durability`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Durability {
    /// `wal` when the store's settings hold.
    pub journal_mode: String,
    /// `full` when the store's settings hold.
    pub synchronous: String,
    /// Foreign keys enforced.
    pub foreign_keys: bool,
    /// Busy timeout in milliseconds.
    pub busy_timeout_ms: i64,
}

/// The connection settings shared by every connection of the pool.
fn connect_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
}

/// Unix seconds now (0 if the clock is before 1970, which only a broken clock reports).
pub(crate) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A stored BIGINT that must be a non-negative count or index.
pub(crate) fn to_u64(v: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::Malformed(format!("{what} is negative ({v})")))
}

/// A count or index about to be stored as a BIGINT.
pub(crate) fn to_i64(v: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::InvalidInput(format!("{what} {v} exceeds 2^63-1")))
}

/// A stored 32-byte hash.
pub(crate) fn to_hash(v: &[u8], what: &str) -> Result<[u8; 32], StoreError> {
    <[u8; 32]>::try_from(v)
        .map_err(|_| StoreError::Malformed(format!("{what} is {} bytes, expected 32", v.len())))
}
