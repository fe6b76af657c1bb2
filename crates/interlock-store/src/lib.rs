//! Interlock's storage: plans (every revision), signed approval statements,
//! the approver key registry, and the Merkle log's leaves, checkpoints and
//! metadata — in one SQL database: a SQLite file by default, or a Postgres
//! database a team's gateways share (issue 20).
//!
//! Why a crate of its own: it is the *only* place in Interlock that speaks
//! SQL, so the rules that make the guarantees hold (one transaction per
//! decision, compare-and-swap status changes, one-shot approval consumption,
//! gap-free log appends) live in one reviewable file each, written once for
//! both backends (see [`Db`]).
//!
//! Durability: the SQLite file is opened in WAL mode with `synchronous=FULL`,
//! and Postgres commits with `synchronous_commit = on`, so a call that
//! returned `Ok` survives power loss or `SIGKILL`. Every write takes the
//! store's write lock at the start of its transaction ([`Store::begin_write`]:
//! `BEGIN IMMEDIATE`, or an advisory lock on Postgres), so concurrent writers
//! — tasks in this process or other processes on the same database — queue
//! on the busy timeout instead of failing on a stale snapshot.
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
mod llm;
mod location;
mod log;
mod migrations;
mod owner_only;
mod plans;
mod probes;
mod receipts;
mod snapshot;
mod sql;
mod surfaces;
#[cfg(feature = "testing")]
pub mod testing;
mod witness;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::AnyConnection;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Executor as _};

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
pub use llm::LearnedVerdict;
pub use location::{Backend, StoreLocation};
pub use log::{CheckpointRow, LeafRow, LogTile};
pub use plans::{NewPlan, PlanRecord, PlanStatus};
pub use probes::ProbeState;
pub use receipts::{ReceiptCount, ReceiptFacts, ReceiptFilter};
pub use snapshot::Snapshot;
pub use surfaces::ApprovedSurface;
pub use witness::{CheckpointCosignature, WitnessRefusal, WitnessedCheckpoint};

use error::SqlxResultExt as _;

/// The database every query of this crate runs on: sqlx's `Any` driver, so
/// one statement text (numbered `$N` placeholders, SQL both dialects read)
/// serves SQLite and Postgres. The few statements that differ branch on
/// [`Backend`].
pub(crate) type Db = sqlx::Any;
/// A row of [`Db`].
pub(crate) type DbRow = sqlx::any::AnyRow;
/// A transaction on [`Db`].
pub(crate) type Tx = sqlx::Transaction<'static, Db>;

/// How long a writer waits for another writer's lock before failing with
/// [`StoreError::Busy`]. Long, because writes are short and a refused write
/// is worse than a slow one.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections in a SQLite pool. Readers run in parallel under WAL; writers
/// serialize on the database lock whatever this number is.
const MAX_CONNECTIONS: u32 = 8;

/// Connections in a Postgres pool: each is a server process, so a few more
/// than SQLite's let readers and the writer overlap on the network.
const MAX_PG_CONNECTIONS: u32 = 16;

/// The key of the Postgres advisory lock every write transaction takes
/// first ([`Store::begin_write`]): the same serialization SQLite's database
/// lock gives, across every gateway sharing the database. Any fixed number
/// works; this one spells "ILOCK" in ASCII.
const PG_WRITE_LOCK: i64 = 0x49_4c_4f_43_4b;

/// The Postgres channel decisions are announced on (`StateChange::apply`).
pub(crate) const CHANGES_CHANNEL: &str = "interlock_changes";

/// The Postgres channel a log writer asks the other gateways' writers on to
/// sign their next commits (`Store::request_log_seal`).
pub(crate) const SEAL_CHANNEL: &str = "interlock_seal";

/// What sqlx's `Any` driver calls a Postgres connection.
pub(crate) const POSTGRES_BACKEND_NAME: &str = "PostgreSQL";

/// A handle on the database. Cheap to clone (a connection pool inside); all
/// clones share the pool.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    location: StoreLocation,
    /// SQLite only: the connection [`append_batch`](Store::append_batch)
    /// writes the log through (`appender.rs`: synchronous SQLite on the log
    /// writer's thread), opened on first use with the pool's settings. An
    /// async lock because a batch that finds the database locked by another
    /// writer waits for it on the blocking pool, holding the connection.
    appender: Arc<tokio::sync::Mutex<Option<appender::Appender>>>,
    /// Postgres only: when a log writer last asked for sealed commits (see
    /// [`Store::request_log_seal`]), in Unix milliseconds.
    seal_requested_ms: Arc<std::sync::atomic::AtomicI64>,
    /// SQLite only: the seal request file's modification time as last read,
    /// and when it was read (see [`Store::log_seal_requested_within`]).
    seal_file_seen: Arc<std::sync::Mutex<Option<SealFileSeen>>>,
    /// Counts the decisions committed by any process on the database that
    /// this process has heard of (Postgres: LISTEN on [`CHANGES_CHANNEL`];
    /// SQLite: never moves, readers poll).
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// When the seal request file was last looked at, and its modification time
/// then (`None`: there was none).
#[derive(Clone, Copy, Debug)]
struct SealFileSeen {
    at: std::time::Instant,
    modified: Option<std::time::SystemTime>,
}

impl Store {
    /// Opens (creating if missing) the SQLite database at `path` and its
    /// parent directory, with durability on (WAL, `synchronous=FULL`),
    /// foreign keys enforced and a busy timeout, then applies the embedded
    /// migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        Store::connect(&StoreLocation::File(path.to_owned())).await
    }

    /// Opens the store at `location`: a SQLite file (as [`Store::open`]) or
    /// a Postgres database (`postgres://…`; it must exist — the store
    /// creates its tables, not the database), and applies that backend's
    /// embedded migrations.
    pub async fn connect(location: &StoreLocation) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let open_err = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            location: location.to_string(),
            source,
        };
        let pool = match location {
            StoreLocation::File(path) => {
                let url = location::sqlite_url(path).map_err(|e| open_err(e.into()))?;
                owner_only::prepare(path)
                    .await
                    .map_err(|e| open_err(Box::new(e)))?;
                probe_sqlite(&url)
                    .await
                    .map_err(|e| open_err(Box::new(e)))?;
                AnyPoolOptions::new()
                    .max_connections(MAX_CONNECTIONS)
                    // A SQLite connection is a file handle on a thread of this
                    // process, not a socket that can go stale: pinging it before
                    // every checkout would only add a round trip to that thread.
                    .test_before_acquire(false)
                    // A connection whose COMMIT failed on a full disk or an
                    // I/O error (SQLite then rolls the transaction back itself)
                    // is still counted in a transaction by sqlx: its ROLLBACK
                    // fails, and every later BEGIN on it is refused ("non-zero
                    // transaction depth"), so each decision that drew it
                    // failed until a restart (issue 44,
                    // `regression_issue_44_a_full_disk_does_not_leave_decisions_failing`).
                    // Such a connection is closed instead of reused; reading
                    // the count costs nothing.
                    .before_acquire(|conn, _| {
                        Box::pin(async move { Ok(transaction_depth::<sqlx::Any>(conn) == 0) })
                    })
                    .after_connect(|conn, _| Box::pin(sqlite_settings(conn)))
                    .connect(&url)
                    .await
            }
            StoreLocation::Postgres(url) => {
                AnyPoolOptions::new()
                    .max_connections(MAX_PG_CONNECTIONS)
                    .after_connect(|conn, _| Box::pin(postgres_settings(conn)))
                    .connect(url)
                    .await
            }
        }
        .map_err(|e| {
            // A TLS failure (no TLS offered, an unverified certificate) is
            // told apart from an unreachable server: the first is an attack
            // or a misconfigured CA, and retrying will not help.
            let e = match tls_failure(e) {
                Ok(source) => {
                    return StoreError::Tls {
                        location: location.to_string(),
                        source,
                    };
                }
                Err(e) => e,
            };
            match StoreError::from_sqlx(e, "connection") {
                StoreError::Database(e) | StoreError::Io(e) => open_err(e),
                other => other,
            }
        })?;
        migrations::migrator(location.backend(), i64::MAX)
            .run(&pool)
            .await?;
        tracing::debug!(store = %location, "store opened");
        let changes = Arc::new(tokio::sync::watch::Sender::new(0));
        let seal_requested_ms = Arc::new(std::sync::atomic::AtomicI64::new(0));
        if let StoreLocation::Postgres(url) = location {
            tokio::spawn(listen_for_changes(
                url.clone(),
                pool.clone(),
                Arc::downgrade(&changes),
                Arc::downgrade(&seal_requested_ms),
            ));
        }
        Ok(Store {
            pool,
            location: location.clone(),
            appender: Arc::new(tokio::sync::Mutex::new(None)),
            seal_requested_ms,
            seal_file_seen: Arc::default(),
            changes,
        })
    }

    /// Moves whenever a decision (a server's, a plan's, a key's, an
    /// envelope's: any [`StateChange`]) commits on the database, in this
    /// process or in another gateway on the same Postgres database — so a
    /// cache can reload at once rather than at its next poll. On SQLite it
    /// never moves: other processes' decisions are found by polling.
    pub fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Where the store is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// Which database the store is on.
    pub fn backend(&self) -> Backend {
        self.location.backend()
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
    /// closed. SQLite only.
    pub(crate) fn connect_appender(&self) -> Result<appender::Appender, StoreError> {
        if self.pool.is_closed() {
            return Err(StoreError::Database(Box::new(sqlx::Error::PoolClosed)));
        }
        match &self.location {
            StoreLocation::File(path) => appender::Appender::open(path),
            StoreLocation::Postgres(_) => Err(StoreError::InvalidInput(
                "the SQLite appender on a Postgres store".to_owned(),
            )),
        }
    }

    /// Starts a write transaction holding the store's write lock from its
    /// first statement, so every read-then-write in it (compare-and-swap
    /// status changes, the log's next index) sees no other writer between
    /// the two.
    ///
    /// - SQLite: a deferred transaction that reads and then writes can fail
    ///   with `SQLITE_BUSY_SNAPSHOT` when another connection wrote in
    ///   between (the busy timeout does not help); `BEGIN IMMEDIATE` takes
    ///   the database lock first and waits for it instead.
    /// - Postgres: `BEGIN`, then a transaction-scoped advisory lock
    ///   ([`PG_WRITE_LOCK`]) that every writer takes — in this process or in
    ///   another gateway on the same database — waited for up to the
    ///   connection's `lock_timeout` ([`BUSY_TIMEOUT`]), released at commit
    ///   or rollback. Writes are serialized exactly as on SQLite, so the
    ///   store's rules hold unchanged across gateways.
    pub(crate) async fn begin_write(&self) -> Result<Tx, StoreError> {
        match self.backend() {
            Backend::Sqlite => self
                .pool
                .begin_with("BEGIN IMMEDIATE")
                .await
                .ctx("transaction"),
            Backend::Postgres => {
                let mut tx = self.pool.begin().await.ctx("transaction")?;
                sqlx::query("SELECT 1::BIGINT FROM pg_advisory_xact_lock($1)")
                    .bind(PG_WRITE_LOCK)
                    .execute(&mut *tx)
                    .await
                    .ctx("write lock")?;
                Ok(tx)
            }
        }
    }

    /// Starts a read-only transaction whose view does not move while it
    /// lasts (SQLite under WAL: from its first read; Postgres: repeatable
    /// read). It takes no write lock.
    pub(crate) async fn begin_read(&self) -> Result<Tx, StoreError> {
        match self.backend() {
            Backend::Sqlite => self.pool.begin().await.ctx("transaction"),
            Backend::Postgres => self
                .pool
                .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await
                .ctx("transaction"),
        }
    }

    /// The durability settings in force on a connection of the pool, as
    /// the database reports them (for diagnostics and the tests that pin
    /// them). On Postgres the journal is always a WAL and foreign keys are
    /// always enforced; `synchronous` is `synchronous_commit` and the busy
    /// timeout is `lock_timeout`.
    pub async fn durability(&self) -> Result<Durability, StoreError> {
        let mut c = self.pool.acquire().await.ctx("connection")?;
        if self.backend() == Backend::Postgres {
            let synchronous: String =
                sqlx::query_scalar("SELECT current_setting('synchronous_commit')")
                    .fetch_one(&mut *c)
                    .await
                    .ctx("setting")?;
            let lock_timeout_ms: String =
                sqlx::query_scalar("SELECT setting FROM pg_settings WHERE name = 'lock_timeout'")
                    .fetch_one(&mut *c)
                    .await
                    .ctx("setting")?;
            return Ok(Durability {
                journal_mode: "wal".to_owned(),
                synchronous: if synchronous == "on" {
                    "full".to_owned()
                } else {
                    synchronous
                },
                foreign_keys: true,
                busy_timeout_ms: lock_timeout_ms.parse().unwrap_or(-1),
            });
        }
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

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

/// Listens on [`CHANGES_CHANNEL`] and [`SEAL_CHANNEL`] while the store is
/// open: counts each decision into `changes`, and notes each seal request's
/// time in `seal_requested_ms`. It holds them weakly and stops within a
/// second once every handle of the store is dropped or the pool is closed
/// (so a dropped store keeps no connection open). A lost connection is
/// re-made (sqlx's listener reconnects; what was announced meanwhile is
/// missed: readers poll, and a waiting writer asks again).
async fn listen_for_changes(
    url: String,
    pool: AnyPool,
    changes: std::sync::Weak<tokio::sync::watch::Sender<u64>>,
    seal_requested_ms: std::sync::Weak<std::sync::atomic::AtomicI64>,
) {
    let open = |pool: &AnyPool| !pool.is_closed() && changes.strong_count() > 0;
    while open(&pool) {
        let mut listener = match sqlx::postgres::PgListener::connect(&url).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "listening for decisions on Postgres failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if let Err(e) = listener.listen_all([CHANGES_CHANNEL, SEAL_CHANNEL]).await {
            tracing::warn!(error = %e, "listening for decisions on Postgres failed");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        while open(&pool) {
            match tokio::time::timeout(Duration::from_secs(1), listener.try_recv()).await {
                Ok(Ok(Some(n))) if n.channel() == SEAL_CHANNEL => {
                    if let Some(asked) = seal_requested_ms.upgrade() {
                        let now = i64::try_from(now_millis()).unwrap_or(i64::MAX);
                        asked.store(now, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                Ok(Ok(Some(_))) => {
                    if let Some(changes) = changes.upgrade() {
                        changes.send_modify(|n| *n += 1);
                    }
                }
                // The connection was lost: `try_recv` reconnects on the next
                // call; decisions in between are found by polling.
                Ok(Ok(None)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "listening for decisions on Postgres failed");
                    break;
                }
                // No decision this second: check the pool is still open.
                Err(_) => {}
            }
        }
    }
}

/// The TLS failure in a connection error, or the error back if it is none.
/// The driver reports a refused TLS setup (no TLS offered, a bad
/// `sslrootcert`) as its `Tls` error, but a certificate rustls rejects
/// during the handshake as an I/O error around a `rustls::Error`: both are
/// the same failure to the store.
fn tls_failure(e: sqlx::Error) -> Result<error::DriverError, sqlx::Error> {
    match e {
        sqlx::Error::Tls(source) => Ok(source),
        sqlx::Error::Io(io) if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) => Ok(io
            .into_inner()
            .unwrap_or_else(|| "the TLS handshake failed".into())),
        other => Err(other),
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

/// The pool's SQLite settings as sqlx's own options, for tests that open a
/// second, plain SQLite connection on a store's file.
#[cfg(test)]
pub(crate) fn connect_options(path: &Path) -> sqlx::sqlite::SqliteConnectOptions {
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
}

/// Opens one connection to the SQLite file at `url` and applies its
/// settings, before the pool does. Why: the pool retries a connection whose
/// settings fail (a file that is not a database, a read-only one) until its
/// acquire timeout, 30 s, and then reports only that it timed out; this
/// names the cause at once (`regression_issue_45_a_file_that_is_not_a_database_is_named_at_once`).
async fn probe_sqlite(url: &str) -> Result<(), sqlx::Error> {
    use sqlx::Connection as _;
    let mut conn = AnyConnection::connect(url).await?;
    let settings = sqlite_settings(&mut conn).await;
    let _ = conn.close().await;
    settings
}

/// The settings every SQLite connection of the pool runs with: WAL,
/// `synchronous=FULL` (a returned commit survives power loss), foreign keys
/// enforced, and the busy timeout.
async fn sqlite_settings(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    conn.execute("PRAGMA journal_mode = WAL").await?;
    conn.execute("PRAGMA synchronous = FULL").await?;
    conn.execute("PRAGMA foreign_keys = ON").await?;
    conn.execute(sqlx::AssertSqlSafe(format!(
        "PRAGMA busy_timeout = {}",
        BUSY_TIMEOUT.as_millis()
    )))
    .await?;
    Ok(())
}

/// The settings every Postgres connection of the pool runs with: a lock
/// wait as long as SQLite's busy timeout, and commits flushed before they
/// return (the server's default, set here so a server configured otherwise
/// does not weaken the log's contract).
async fn postgres_settings(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    conn.execute(sqlx::AssertSqlSafe(format!(
        "SET lock_timeout = {}",
        BUSY_TIMEOUT.as_millis()
    )))
    .await?;
    conn.execute("SET synchronous_commit = on").await?;
    Ok(())
}

/// Unix seconds now (0 if the clock is before 1970, which only a broken clock reports).
pub(crate) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A BLOB column that older releases may have written as TEXT on SQLite
/// (sqlx's `Any` rows keep a value's stored type, so `Vec<u8>` alone would
/// refuse it): the bytes either way.
pub(crate) fn bytes_column(row: &DbRow, column: &str) -> Result<Vec<u8>, sqlx::Error> {
    use sqlx::Row as _;
    match row.try_get::<Vec<u8>, _>(column) {
        Err(sqlx::Error::ColumnDecode { .. }) => {
            row.try_get::<String, _>(column).map(String::into_bytes)
        }
        other => other,
    }
}

/// Unix milliseconds now (0 if the clock is before 1970).
pub(crate) fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
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

/// sqlx's count of transactions open on `conn` (0 between transactions).
fn transaction_depth<DB: sqlx::Database>(conn: &DB::Connection) -> usize {
    use sqlx_core::transaction::TransactionManager as _;
    DB::TransactionManager::get_transaction_depth(conn)
}
