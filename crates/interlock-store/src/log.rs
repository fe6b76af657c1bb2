//! The Merkle log's rows: leaves, signed checkpoints and metadata.
//!
//! The store treats hashes, roots and notes as opaque: `interlock-log`
//! computes and checks them with `interlock-merkle`. What the store enforces
//! is shape: leaves are appended gap-free, with their checkpoint, atomically.

use std::ops::Range;
use std::sync::OnceLock;
use std::time::Duration;

use sqlx::Row as _;

use crate::appender::{AppendError, Flush};
use crate::error::SqlxResultExt as _;
use crate::{BUSY_TIMEOUT, Backend, Store, StoreError, now_millis, to_hash, to_i64, to_u64};

/// One log leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafRow {
    /// Position in the log, from 0.
    pub idx: u64,
    /// RFC 6962 leaf hash of `data`.
    pub leaf_hash: [u8; 32],
    /// The entry bytes (JCS JSON).
    pub data: Vec<u8>,
    /// Unix seconds when appended.
    pub appended_at: i64,
}

/// One complete tile of the log, as stored: its root and its leaf hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogTile {
    /// RFC 6962 root of the tile's leaves.
    pub root: [u8; 32],
    /// The tile's leaf hashes, in order.
    pub leaf_hashes: Vec<[u8; 32]>,
}

/// One signed checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRow {
    /// Tree size it commits to.
    pub size: u64,
    /// RFC 6962 root at `size`.
    pub root: [u8; 32],
    /// The C2SP signed note (checkpoint body + signature lines).
    pub note: String,
    /// Unix seconds when stored.
    pub created_at: i64,
}

/// Multi-row INSERT chunk sizes, largest first, for the locked append: a
/// batch is split greedily into these, so only this many distinct statements
/// are ever prepared (and cached), while a 4096-entry batch costs 16
/// statement executions, not 4096.
const CHUNKS: [usize; 5] = [256, 64, 16, 4, 1];

/// The most rows (leaves plus the checkpoint) appended by one statement
/// through the `log_append` view: a full log batch (4,096 entries) and its
/// checkpoint, at 4 bound values a row, well under SQLite's 32,766 variables
/// per statement. Larger batches take the transaction path.
const MAX_STATEMENT_ROWS: usize = 4097;

/// Appends of up to this many rows keep their prepared statement cached on
/// the appender connection (one per batch size: group commits are mostly
/// small); larger, rarer ones are prepared for the occasion.
pub(crate) const CACHED_STATEMENT_ROWS: usize = 33;

/// What the `log_append` triggers say when they refuse a row
/// (`migrations/sqlite/0004_log_append.sql`, re-created as they were in `0005`).
const REFUSED_LEAF: &str = "log_append: leaf index does not continue the log";
const REFUSED_CHECKPOINT: &str = "log_append: checkpoint size is not the log size";

/// The one statement that appends `leaves` leaves and, if `checkpoint`, the
/// checkpoint after them, through the `log_append` view.
pub(crate) fn append_sql(leaves: usize, checkpoint: bool) -> String {
    const LEAF: &str = "('leaf', ?, ?, ?, ?)";
    const CHECKPOINT: &str = "('checkpoint', ?, ?, ?, ?)";
    let mut s = String::with_capacity(64 + (leaves + 1) * (CHECKPOINT.len() + 2));
    s.push_str("INSERT INTO log_append (kind, n, hash, body, at) VALUES ");
    for i in 0..leaves {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(LEAF);
    }
    if checkpoint {
        if leaves > 0 {
            s.push_str(", ");
        }
        s.push_str(CHECKPOINT);
    }
    s
}

fn insert_leaves_sql(chunk: usize) -> &'static str {
    static SQL: OnceLock<Vec<String>> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        CHUNKS
            .iter()
            .map(|&n| {
                let mut s = String::from(
                    "INSERT INTO log_leaves (idx, leaf_hash, data, appended_at) VALUES ",
                );
                for i in 0..n {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    let b = 4 * i;
                    s.push_str(&format!("(${}, ${}, ${}, ${})", b + 1, b + 2, b + 3, b + 4));
                }
                s
            })
            .collect()
    });
    let pos = CHUNKS
        .iter()
        .position(|&n| n == chunk)
        .expect("chunk is one of CHUNKS");
    &all[pos]
}

fn checkpoint_from_row(row: &crate::DbRow) -> Result<CheckpointRow, StoreError> {
    let size: i64 = row.try_get("size").ctx("checkpoint")?;
    let root: Vec<u8> = row.try_get("root").ctx("checkpoint")?;
    Ok(CheckpointRow {
        size: to_u64(size, "checkpoint size")?,
        root: to_hash(&root, &format!("root of checkpoint at size {size}"))?,
        note: row.try_get("note").ctx("checkpoint")?,
        created_at: row.try_get("created_at").ctx("checkpoint")?,
    })
}

/// A batch's own indices must be consecutive.
fn check_contiguous(leaves: &[LeafRow]) -> Result<(), StoreError> {
    for pair in leaves.windows(2) {
        if pair[1].idx != pair[0].idx + 1 {
            return Err(StoreError::LeafIndexMismatch {
                expected: pair[0].idx + 1,
                got: pair[1].idx,
            });
        }
    }
    Ok(())
}

/// The index the next leaf must take, read inside the write transaction.
async fn next_index(tx: &mut crate::Tx) -> Result<u64, StoreError> {
    let next: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves")
        .fetch_one(&mut **tx)
        .await
        .ctx("log leaf")?;
    to_u64(next, "log size")
}

/// Inserts `leaves` (which must start at `next`) and `checkpoint` (which must
/// be for the size after them) in the caller's write transaction.
async fn insert_batch(
    tx: &mut crate::Tx,
    next: u64,
    leaves: &[LeafRow],
    checkpoint: Option<&CheckpointRow>,
) -> Result<(), StoreError> {
    if let Some(first) = leaves.first()
        && first.idx != next
    {
        return Err(StoreError::LeafIndexMismatch {
            expected: next,
            got: first.idx,
        });
    }
    let new_size = next + leaves.len() as u64;
    if let Some(cp) = checkpoint
        && cp.size != new_size
    {
        return Err(StoreError::CheckpointSizeMismatch {
            expected: new_size,
            got: cp.size,
        });
    }
    let mut rest = leaves;
    while !rest.is_empty() {
        let chunk = *CHUNKS
            .iter()
            .find(|&&n| n <= rest.len())
            .expect("CHUNKS ends with 1");
        let (now, later) = rest.split_at(chunk);
        let mut q = sqlx::query(insert_leaves_sql(chunk));
        for leaf in now {
            q = q
                .bind(to_i64(leaf.idx, "leaf index")?)
                .bind(leaf.leaf_hash.as_slice())
                .bind(leaf.data.as_slice())
                .bind(leaf.appended_at);
        }
        q.execute(&mut **tx).await.ctx("log leaf")?;
        rest = later;
    }
    if let Some(cp) = checkpoint {
        sqlx::query(
            "INSERT INTO log_checkpoints (size, root, note, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(to_i64(cp.size, "checkpoint size")?)
        .bind(cp.root.as_slice())
        .bind(&cp.note)
        .bind(cp.created_at)
        .execute(&mut **tx)
        .await
        .map_err(|e| match StoreError::from_sqlx(e, "checkpoint") {
            StoreError::Duplicate { .. } => StoreError::Duplicate {
                what: format!("checkpoint at size {}", cp.size),
            },
            other => other,
        })?;
    }
    Ok(())
}

/// The checkpoint with the largest size, read through `ex` (the pool, or a
/// transaction for a consistent snapshot).
/// [`Store::log_size`] on any executor.
pub(crate) async fn log_size_in<'c, E>(ex: E) -> Result<u64, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let next: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves")
        .fetch_one(ex)
        .await
        .ctx("log leaf")?;
    to_u64(next, "log size")
}

/// [`Store::checkpoints`] on any executor.
pub(crate) async fn checkpoints_in<'c, E>(ex: E) -> Result<Vec<CheckpointRow>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    sqlx::query("SELECT size, root, note, created_at FROM log_checkpoints ORDER BY size")
        .fetch_all(ex)
        .await
        .ctx("checkpoint")?
        .iter()
        .map(checkpoint_from_row)
        .collect()
}

/// [`Store::get_meta`] on any executor.
pub(crate) async fn get_meta_in<'c, E>(ex: E, key: &str) -> Result<Option<String>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
        .bind(key)
        .fetch_optional(ex)
        .await
        .ctx("meta")
}

async fn latest_checkpoint<'c, E>(ex: E) -> Result<Option<CheckpointRow>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    sqlx::query(
        "SELECT size, root, note, created_at FROM log_checkpoints ORDER BY size DESC LIMIT 1",
    )
    .fetch_optional(ex)
    .await
    .ctx("checkpoint")?
    .as_ref()
    .map(checkpoint_from_row)
    .transpose()
}

/// The leaf hashes from index `from` on, read through `ex`. A gap (including
/// a first index other than `from`) is [`StoreError::Malformed`].
async fn leaf_hashes_from<'c, E>(ex: E, from: u64) -> Result<Vec<[u8; 32]>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let rows: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT idx, leaf_hash FROM log_leaves WHERE idx >= $1 ORDER BY idx")
            .bind(to_i64(from, "leaf index")?)
            .fetch_all(ex)
            .await
            .ctx("log leaf")?;
    gap_free_hashes(from, &rows)
}

/// The hashes of `(idx, leaf_hash)` rows read in index order from `from`;
/// [`StoreError::Malformed`] at the first index that does not follow.
fn gap_free_hashes(from: u64, rows: &[(i64, Vec<u8>)]) -> Result<Vec<[u8; 32]>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for (expected, (idx, hash)) in (from..).zip(rows) {
        if u64::try_from(*idx).ok() != Some(expected) {
            return Err(StoreError::Malformed(format!(
                "log leaf index {idx} found where {expected} was expected (a leaf is missing)"
            )));
        }
        out.push(to_hash(hash, &format!("leaf hash of entry {idx}"))?);
    }
    Ok(out)
}

/// How long [`Store::log_seal_requested_within`] trusts what it last read of
/// the seal request file.
pub const SEAL_FILE_LOOK_EVERY: Duration = Duration::from_millis(5);

impl Store {
    /// Appends `leaves` (and the checkpoint for the resulting size, if any)
    /// in one transaction: all of it is durable when this returns `Ok`, and
    /// none of it if it fails. The leaves' indices must continue the stored
    /// log exactly ([`StoreError::LeafIndexMismatch`] otherwise) and the
    /// checkpoint's size must be the log size after them
    /// ([`StoreError::CheckpointSizeMismatch`]).
    ///
    /// This is the log's hot path (one call per group commit), so it costs
    /// one request to SQLite: the whole batch is **one statement**, an
    /// `INSERT` into the `log_append` view whose triggers check each index
    /// against the stored log and write the rows
    /// (`migrations/sqlite/0004_log_append.sql`; the tables are keyed by their rowid
    /// since `0005`, so a commit touches few pages). One statement is one transaction
    /// — atomic, taking the write lock before it reads, committed with
    /// `fsync` (WAL, `synchronous=FULL`) before it returns — and it runs on
    /// a connection kept for appends, so there is no pool checkout either.
    /// A batch too large for one statement is appended in an explicit
    /// transaction instead.
    pub async fn append_batch(
        &self,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
    ) -> Result<(), StoreError> {
        self.append_batch_flushed(leaves, checkpoint, Flush::Now)
            .await
    }

    /// [`append_batch`](Self::append_batch), committed but with its `fsync`
    /// left to a later commit or [`flush_log`](Self::flush_log) when `flush`
    /// is [`Flush::Deferred`] — on SQLite only: a Postgres commit is flushed
    /// before it returns whatever `flush` says (see below).
    pub async fn append_batch_flushed(
        &self,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
        flush: Flush,
    ) -> Result<(), StoreError> {
        if leaves.is_empty() && checkpoint.is_none() {
            return Ok(());
        }
        // Check the batch's own shape before taking the write lock.
        check_contiguous(leaves)?;
        if let (Some(first), Some(cp)) = (leaves.first(), checkpoint) {
            let new_size = first.idx + leaves.len() as u64;
            if cp.size != new_size {
                return Err(StoreError::CheckpointSizeMismatch {
                    expected: new_size,
                    got: cp.size,
                });
            }
        }
        let rows = leaves.len() + usize::from(checkpoint.is_some());
        if self.backend() == Backend::Postgres || rows > MAX_STATEMENT_ROWS {
            // Postgres: one transaction under the write lock (a round trip
            // per statement over a socket, no thread hand-off to save), the
            // next index checked in it as SQLite's triggers check it.
            //
            // A `Flush::Deferred` batch is flushed before it returns here
            // all the same (`synchronous_commit = on`): an asynchronous
            // commit lives in the server's WAL buffers, which a crash of the
            // Postgres server — a killed process, not a power cut — loses,
            // and the log's writer has already extended its tree and
            // answered over the lost leaves (issue 44: the gateway could not
            // append again, and acknowledged outcome leaves were gone).
            let mut tx = self.begin_write().await?;
            let next = next_index(&mut tx).await?;
            insert_batch(&mut tx, next, leaves, checkpoint).await?;
            tx.commit().await.ctx("log leaf")?;
            return Ok(());
        }
        let slot = self.appender.lock().await;
        self.append_on(slot, leaves, checkpoint, flush, true)
            .await
            .map(drop)
    }

    /// [`append_batch_flushed`](Self::append_batch_flushed) if it can run
    /// to its end at once, without waiting: `Ok(false)` — nothing written,
    /// nothing to undo — when it would have to wait (another append holds the
    /// connection, another process the database lock), on Postgres, or for a
    /// batch too large for one statement.
    ///
    /// For the log's appends made on the appender's own task: it has no
    /// await point once the write has started, so a caller dropped midway
    /// cannot leave a committed batch that it never saw (the log's tree is
    /// extended only by whoever saw the commit).
    pub async fn try_append_batch_now(
        &self,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
        flush: Flush,
    ) -> Result<bool, StoreError> {
        let rows = leaves.len() + usize::from(checkpoint.is_some());
        if self.backend() == Backend::Postgres
            || rows > MAX_STATEMENT_ROWS
            || (leaves.is_empty() && checkpoint.is_none())
        {
            return Ok(false);
        }
        check_contiguous(leaves)?;
        let Ok(slot) = self.appender.try_lock() else {
            return Ok(false);
        };
        self.append_on(slot, leaves, checkpoint, flush, false).await
    }

    /// The SQLite append on the kept connection. With `wait`, a batch that
    /// finds another writer holding the lock waits on the blocking pool;
    /// without, it returns `Ok(false)` having written nothing.
    async fn append_on(
        &self,
        mut slot: tokio::sync::MutexGuard<'_, Option<crate::appender::Appender>>,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
        flush: Flush,
        wait: bool,
    ) -> Result<bool, StoreError> {
        let mut appender = match slot.take() {
            Some(a) => a,
            None => self.connect_appender()?,
        };
        // The common case runs here, on the log writer's thread, and never
        // waits for a lock; a batch that finds another writer holding it
        // waits on the blocking pool, with the full busy timeout.
        appender.set_busy_timeout(Duration::ZERO)?;
        let mut result = appender.append(leaves, checkpoint, flush);
        if !wait && result.as_ref().is_err_and(AppendError::is_busy) {
            *slot = Some(appender);
            return Ok(false);
        }
        if result.as_ref().is_err_and(AppendError::is_busy) {
            let (leaves, checkpoint) = (leaves.to_vec(), checkpoint.cloned());
            let waited = tokio::task::spawn_blocking(move || {
                let r = appender
                    .set_busy_timeout(BUSY_TIMEOUT)
                    .map_err(AppendError::Input)
                    .and_then(|()| appender.append(&leaves, checkpoint.as_ref(), flush));
                (appender, r)
            })
            .await
            .map_err(|e| StoreError::Database(Box::new(e)))?;
            (appender, result) = waited;
        }
        let e = match result {
            Ok(()) => {
                *slot = Some(appender);
                return Ok(true);
            }
            Err(AppendError::Input(e)) => {
                *slot = Some(appender);
                return Err(e);
            }
            Err(AppendError::Sqlite(e)) => e,
        };
        // Refused by a trigger: the statement (so the whole batch) was
        // aborted. Read the next index for the error.
        let refused = match &e {
            rusqlite::Error::SqliteFailure(_, Some(m))
                if m.contains(REFUSED_LEAF) || m.contains(REFUSED_CHECKPOINT) =>
            {
                Some(m.clone())
            }
            _ => None,
        };
        if let Some(message) = refused {
            let next = appender.next_index();
            *slot = Some(appender);
            let expected = to_u64(next?, "log size")?;
            return Err(match (leaves.first(), checkpoint) {
                // (Only if the stored log moved between the Rust-side check
                // and the statement's, which the triggers make harmless.)
                (Some(_), Some(cp)) if !message.contains(REFUSED_LEAF) => {
                    StoreError::CheckpointSizeMismatch {
                        expected: expected + leaves.len() as u64,
                        got: cp.size,
                    }
                }
                (Some(first), _) => StoreError::LeafIndexMismatch {
                    expected,
                    got: first.idx,
                },
                (None, cp) => StoreError::CheckpointSizeMismatch {
                    expected,
                    got: cp.map_or(0, |c| c.size),
                },
            });
        }
        match (StoreError::from_rusqlite(e, "log leaf"), checkpoint) {
            // The leaves continue the log (the triggers let them through),
            // so only the checkpoint can already exist.
            (StoreError::Duplicate { .. }, Some(cp)) => {
                *slot = Some(appender);
                Err(StoreError::Duplicate {
                    what: format!("checkpoint at size {}", cp.size),
                })
            }
            // Not a refusal of the request: the next append starts on a
            // fresh connection rather than on one that may be broken
            // (nothing needs undoing: the failed statement was its own
            // transaction). Dropping this one closes it.
            (err, _) => Err(err),
        }
    }

    /// The file beside a SQLite database (`<db>-seal-wanted`) whose
    /// modification time says that a log writer waits for another writer's
    /// checkpoint. A file, not a row: asking must not need the database lock
    /// the busy writer keeps taking.
    fn seal_request_file(&self) -> Option<std::path::PathBuf> {
        let mut p = self.location().file()?.to_owned().into_os_string();
        p.push("-seal-wanted");
        Some(p.into())
    }

    /// Asks the other log writers on this database to sign their next
    /// commits.
    ///
    /// On Postgres the request is a `NOTIFY` on the seal channel, which
    /// every gateway's store listens on (sent from a task: asking must not
    /// wait; a request lost with its connection is asked again by the
    /// waiting writer).
    pub fn request_log_seal(&self) -> Result<(), StoreError> {
        let Some(file) = self.seal_request_file() else {
            let now_ms = i64::try_from(now_millis()).unwrap_or(i64::MAX);
            self.seal_requested_ms
                .store(now_ms, std::sync::atomic::Ordering::Relaxed);
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let pool = self.pool().clone();
                runtime.spawn(async move {
                    let sent = sqlx::query("SELECT 1::BIGINT FROM pg_notify($1, '')")
                        .bind(crate::SEAL_CHANNEL)
                        .execute(&pool)
                        .await;
                    if let Err(e) = sent {
                        tracing::warn!(error = %e, "cannot ask the other gateways for a checkpoint");
                    }
                });
            }
            return Ok(());
        };
        // Looked at again by this process's next commit.
        *self
            .seal_file_seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(file)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .map_err(|e| StoreError::Io(Box::new(e)))
    }

    /// Whether a log writer asked, within `window`, for commits to be signed:
    /// one atomic load (Postgres), or the seal request file's modification
    /// time (SQLite), for a commit that would otherwise go unsigned.
    ///
    /// The file is looked at once per [`SEAL_FILE_LOOK_EVERY`] at most: a
    /// `stat` a commit was 1 % of a sequential call's CPU (issue 17), and a
    /// request is noticed that much later, against a checkpoint interval of
    /// 100 ms. This process's own requests are seen at once.
    pub fn log_seal_requested_within(&self, window: Duration) -> bool {
        let Some(file) = self.seal_request_file() else {
            let asked = self
                .seal_requested_ms
                .load(std::sync::atomic::Ordering::Relaxed);
            let age_ms = i64::try_from(now_millis()).unwrap_or(i64::MAX) - asked;
            return asked > 0 && u128::try_from(age_ms).is_ok_and(|a| a < window.as_millis());
        };
        let modified = {
            let mut seen = self
                .seal_file_seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match *seen {
                Some(s) if s.at.elapsed() < SEAL_FILE_LOOK_EVERY => s.modified,
                _ => {
                    let modified = std::fs::metadata(file).and_then(|m| m.modified()).ok();
                    *seen = Some(crate::SealFileSeen {
                        at: std::time::Instant::now(),
                        modified,
                    });
                    modified
                }
            }
        };
        modified.is_some_and(|t| t.elapsed().is_ok_and(|age| age < window))
    }

    /// Makes every commit so far durable, for the log's
    /// [`Flush::Deferred`] commits when no durable commit followed them.
    ///
    /// - SQLite: `fsync`s the database's WAL file, which holds every frame
    ///   committed since the last checkpoint of it (an `fsync` covers what
    ///   any connection wrote to the file).
    /// - Postgres: commits a one-row write with `synchronous_commit = on`,
    ///   which returns once the WAL is flushed up to its commit record — and
    ///   so past every earlier commit's.
    pub async fn flush_log(&self) -> Result<(), StoreError> {
        let Some(db) = self.location().file() else {
            sqlx::query(
                "INSERT INTO meta (key, value) VALUES ('log.flushed_at', $1) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(now_millis().to_string())
            .execute(self.pool())
            .await
            .ctx("log flush")?;
            return Ok(());
        };
        let mut wal = db.to_owned().into_os_string();
        wal.push("-wal");
        match std::fs::File::open(&wal) {
            Ok(f) => f.sync_data().map_err(|e| StoreError::Io(Box::new(e))),
            // No WAL (nothing written since the last connection closed,
            // which checkpointed it into the database file): nothing to do.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::Io(Box::new(e))),
        }
    }

    /// Appends a batch built while holding the database write lock, from the
    /// log as it stands: for a writer that lost the race for the next index
    /// to another writer (another process on the same file), and must not
    /// lose it again.
    ///
    /// Takes the write lock, reads the leaf hashes from index `from` on
    /// (gap-checked, like [`log_tail`](Self::log_tail)) and the latest
    /// checkpoint, and passes them to `build`, which returns the leaves
    /// (continuing the log right after those hashes) and the checkpoint to
    /// append — or an error of its own, which rolls back and is returned as
    /// `Ok(Err(_))`. The appended leaves and checkpoint are handed back.
    ///
    /// Why under the lock: re-reading the log and re-building the batch
    /// outside it can be overtaken again by a writer that commits
    /// continuously, forever; nobody can append between this read and this
    /// write. `build` is synchronous and runs with the lock held, so other
    /// writers wait for it (within [`BUSY_TIMEOUT`](crate::BUSY_TIMEOUT)):
    /// keep it to computing and signing.
    ///
    /// With a `change`, it is applied first, in the same transaction: if its
    /// compare-and-swap fails the whole transaction rolls back
    /// ([`StoreError::ChangeRefused`]) and nothing is appended; otherwise the
    /// change and the leaves commit together (see [`StateChange`]).
    pub async fn append_batch_locked<E>(
        &self,
        from: u64,
        change: Option<&crate::StateChange>,
        build: impl FnOnce(
            Vec<[u8; 32]>,
            Option<CheckpointRow>,
        ) -> Result<(Vec<LeafRow>, Option<CheckpointRow>), E>,
    ) -> Result<Result<(Vec<LeafRow>, Option<CheckpointRow>), E>, StoreError> {
        let mut tx = self.begin_write().await?;
        if let Some(change) = change {
            change.apply(&mut tx).await?;
        }
        let next = next_index(&mut tx).await?;
        let latest = latest_checkpoint(&mut *tx).await?;
        let hashes = leaf_hashes_from(&mut *tx, from).await?;
        let (leaves, checkpoint) = match build(hashes, latest) {
            Ok(built) => built,
            // Dropping the transaction rolls it back (nothing was written).
            Err(e) => return Ok(Err(e)),
        };
        if leaves.is_empty() && checkpoint.is_none() {
            return Ok(Ok((leaves, checkpoint)));
        }
        check_contiguous(&leaves)?;
        insert_batch(&mut tx, next, &leaves, checkpoint.as_ref()).await?;
        tx.commit().await.ctx("log leaf")?;
        Ok(Ok((leaves, checkpoint)))
    }

    /// Every leaf hash in index order, for rebuilding the in-memory tree.
    /// A gap in the indices (a deleted row) is [`StoreError::Malformed`]: the
    /// tree cannot be rebuilt from a log with a hole in it.
    pub async fn leaf_hashes(&self) -> Result<Vec<[u8; 32]>, StoreError> {
        leaf_hashes_from(self.pool(), 0).await
    }

    /// The leaf hashes from index `from` on (gap-checked like
    /// [`leaf_hashes`](Self::leaf_hashes), and the first must be `from`) and
    /// the latest checkpoint, read in **one snapshot**.
    ///
    /// Why one snapshot: other processes append to the same file, and a
    /// batch's leaves and checkpoint are committed together. Read in two
    /// separate statements, a reader could see the leaves of a batch but
    /// not its checkpoint (or the checkpoint of a batch whose leaves it read
    /// before they existed) and take a healthy log for a broken one. Inside
    /// one read transaction SQLite (WAL) serves both from the same commit.
    /// A log that opens with `from = 0` or catches up with other writers
    /// from its verified size reads through this.
    pub async fn log_tail(
        &self,
        from: u64,
    ) -> Result<(Vec<[u8; 32]>, Option<CheckpointRow>), StoreError> {
        // A deferred transaction: it takes no write lock, and its snapshot
        // starts at its first read and lasts until it ends.
        let mut tx = self.pool().begin().await.ctx("transaction")?;
        let checkpoint = latest_checkpoint(&mut *tx).await?;
        let hashes = leaf_hashes_from(&mut *tx, from).await?;
        tx.commit().await.ctx("transaction")?;
        Ok((hashes, checkpoint))
    }

    /// What a log opens from, in **one snapshot** (as [`log_tail`](Self::log_tail),
    /// for the same reason): the stored tile roots (the longest gap-free run
    /// from tile 0), the leaf hashes from the first leaf no stored tile
    /// covers (`tiles × tile_width`) on, gap-checked, and the latest
    /// checkpoint. Only tiles inside the checkpoint's size are read.
    pub async fn log_tiles_and_tail(
        &self,
        tile_width: u64,
    ) -> Result<(Vec<[u8; 32]>, Vec<[u8; 32]>, Option<CheckpointRow>), StoreError> {
        let mut tx = self.pool().begin().await.ctx("transaction")?;
        let checkpoint = latest_checkpoint(&mut *tx).await?;
        // Only tiles the checkpoint signs: the leaves after it are read (an
        // opening log checks, adopts or leaves them one by one).
        let signed_tiles = checkpoint.as_ref().map_or(0, |c| c.size) / tile_width.max(1);
        let rows: Vec<(i64, Vec<u8>)> =
            sqlx::query_as("SELECT idx, root FROM log_tiles WHERE idx < $1 ORDER BY idx")
                .bind(to_i64(signed_tiles, "log tile")?)
                .fetch_all(&mut *tx)
                .await
                .ctx("log tile")?;
        let mut tiles = Vec::with_capacity(rows.len());
        for (expected, (idx, root)) in (0..).zip(rows) {
            // A tile missing from the run is rebuilt from its leaves, with
            // every stored tile after it.
            if idx != expected {
                break;
            }
            tiles.push(to_hash(&root, &format!("root of log tile {idx}"))?);
        }
        let from = (tiles.len() as u64).saturating_mul(tile_width);
        let hashes = leaf_hashes_from(&mut *tx, from).await?;
        tx.commit().await.ctx("transaction")?;
        Ok((tiles, hashes, checkpoint))
    }

    /// Stores complete tiles `start..start + tiles.len()`: each one's root
    /// and its leaf hashes (all of them, in order). A tile already stored
    /// keeps its rows: tiles are a pure function of the leaves, so two
    /// writers store the same ones.
    pub async fn put_log_tiles(&self, start: u64, tiles: &[LogTile]) -> Result<(), StoreError> {
        if tiles.is_empty() {
            return Ok(());
        }
        // No write lock of the store's: nothing here depends on what another
        // writer does meanwhile (a row already stored stays as it is).
        let mut tx = self.pool().begin().await.ctx("transaction")?;
        for (idx, tile) in (start..).zip(tiles) {
            let idx = to_i64(idx, "log tile")?;
            sqlx::query(
                "INSERT INTO log_tiles (idx, root) VALUES ($1, $2) ON CONFLICT (idx) DO NOTHING",
            )
            .bind(idx)
            .bind(&tile.root[..])
            .execute(&mut *tx)
            .await
            .ctx("log tile")?;
            sqlx::query(
                "INSERT INTO log_tile_leaves (idx, leaf_hashes) VALUES ($1, $2) \
                 ON CONFLICT (idx) DO NOTHING",
            )
            .bind(idx)
            .bind(tile.leaf_hashes.concat())
            .execute(&mut *tx)
            .await
            .ctx("log tile")?;
        }
        tx.commit().await.ctx("log tile")?;
        Ok(())
    }

    /// The stored leaf hashes of tile `tile` (`None` if not stored). Not
    /// checked here beyond their length: the log checks them against the
    /// tile's root.
    pub async fn log_tile_leaf_hashes(
        &self,
        tile: u64,
    ) -> Result<Option<Vec<[u8; 32]>>, StoreError> {
        let blob: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT leaf_hashes FROM log_tile_leaves WHERE idx = $1")
                .bind(to_i64(tile, "log tile")?)
                .fetch_optional(self.pool())
                .await
                .ctx("log tile")?;
        let Some(blob) = blob else {
            return Ok(None);
        };
        if blob.len() % 32 != 0 {
            return Err(StoreError::Malformed(format!(
                "the leaf hashes of log tile {tile} are {} bytes, not whole hashes",
                blob.len()
            )));
        }
        Ok(Some(
            blob.chunks_exact(32)
                .map(|c| c.try_into().expect("32-byte chunks"))
                .collect(),
        ))
    }

    /// Removes the stored tile roots from tile `from` on: what a log does
    /// when they do not reproduce its signed root, before it stores the ones
    /// its leaves give.
    pub async fn drop_log_tiles(&self, from: u64) -> Result<(), StoreError> {
        let from = to_i64(from, "log tile")?;
        let mut tx = self.pool().begin().await.ctx("transaction")?;
        for sql in [
            "DELETE FROM log_tiles WHERE idx >= $1",
            "DELETE FROM log_tile_leaves WHERE idx >= $1",
        ] {
            sqlx::query(sql)
                .bind(from)
                .execute(&mut *tx)
                .await
                .ctx("log tile")?;
        }
        tx.commit().await.ctx("log tile")?;
        Ok(())
    }

    /// The leaf hashes of `range`, in index order; a missing leaf is
    /// [`StoreError::Malformed`] (a tile read for a proof must be whole).
    pub async fn leaf_hashes_in(&self, range: Range<u64>) -> Result<Vec<[u8; 32]>, StoreError> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
            "SELECT idx, leaf_hash FROM log_leaves WHERE idx >= $1 AND idx < $2 ORDER BY idx",
        )
        .bind(to_i64(range.start, "leaf index")?)
        .bind(to_i64(range.end, "leaf index")?)
        .fetch_all(self.pool())
        .await
        .ctx("log leaf")?;
        let out = gap_free_hashes(range.start, &rows)?;
        if (out.len() as u64) < range.end - range.start {
            return Err(StoreError::Malformed(format!(
                "log leaves {}..{} are not all stored (a leaf is missing)",
                range.start, range.end
            )));
        }
        Ok(out)
    }

    /// The stored leaves whose indices fall in `range`, in index order (with
    /// whatever gaps the table has: the audit reads through this).
    pub async fn leaves(&self, range: Range<u64>) -> Result<Vec<LeafRow>, StoreError> {
        leaves_in(self.pool(), range).await
    }
}

/// [`Store::leaves`] on any executor (the pool, or an audit's snapshot).
pub(crate) async fn leaves_in<'c, E>(ex: E, range: Range<u64>) -> Result<Vec<LeafRow>, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let lo = to_i64(range.start, "leaf index")?;
        let hi = i64::try_from(range.end).unwrap_or(i64::MAX);
        let rows: Vec<(i64, Vec<u8>, Vec<u8>, i64)> = sqlx::query_as(
            "SELECT idx, leaf_hash, data, appended_at FROM log_leaves \
             WHERE idx >= $1 AND idx < $2 ORDER BY idx",
        )
        .bind(lo)
        .bind(hi)
        .fetch_all(ex)
        .await
        .ctx("log leaf")?;
        rows.into_iter()
            .map(|(idx, hash, data, appended_at)| {
                Ok(LeafRow {
                    idx: to_u64(idx, "leaf index")?,
                    leaf_hash: to_hash(&hash, &format!("leaf hash of entry {idx}"))?,
                    data,
                    appended_at,
                })
            })
            .collect()
    }
}

impl Store {
    /// One leaf.
    pub async fn leaf(&self, idx: u64) -> Result<Option<LeafRow>, StoreError> {
        Ok(self.leaves(idx..idx.saturating_add(1)).await?.pop())
    }

    /// The index the next leaf must take: highest stored index + 1 (0 when
    /// empty). Equals the number of leaves unless rows were deleted.
    pub async fn log_size(&self) -> Result<u64, StoreError> {
        log_size_in(self.pool()).await
    }

    /// The number of stored leaf rows (a full count; the audit compares it
    /// with [`log_size`](Self::log_size)).
    pub async fn leaf_count(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM log_leaves")
            .fetch_one(self.pool())
            .await
            .ctx("log leaf")?;
        to_u64(n, "leaf count")
    }

    /// Every checkpoint, by increasing size.
    pub async fn checkpoints(&self) -> Result<Vec<CheckpointRow>, StoreError> {
        checkpoints_in(self.pool()).await
    }

    /// The checkpoint with the largest size.
    pub async fn latest_checkpoint(&self) -> Result<Option<CheckpointRow>, StoreError> {
        latest_checkpoint(self.pool()).await
    }

    /// A metadata value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        get_meta_in(self.pool(), key).await
    }

    /// Sets a metadata value (insert or replace).
    pub async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(self.pool())
        .await
        .ctx("meta")?;
        Ok(())
    }

    /// Sets `key` to `value` only if it has no value yet, and returns the
    /// value now stored — atomically, so two processes initialising the same
    /// database agree on one value (first writer wins).
    pub async fn get_or_init_meta(&self, key: &str, value: &str) -> Result<String, StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&mut *tx)
            .await
            .ctx("meta")?;
        let stored: String = sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
            .bind(key)
            .fetch_one(&mut *tx)
            .await
            .ctx("meta")?;
        tx.commit().await.ctx("meta")?;
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(idx: u64) -> LeafRow {
        LeafRow {
            idx,
            leaf_hash: [idx as u8; 32],
            data: vec![idx as u8],
            appended_at: 1,
        }
    }

    fn cp(size: u64) -> CheckpointRow {
        CheckpointRow {
            size,
            root: [size as u8; 32],
            note: format!("cp {size}"),
            created_at: 1,
        }
    }

    async fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        (dir, s)
    }

    #[tokio::test]
    async fn the_appender_connection_is_durable() {
        let (_d, s) = open().await;
        let c = s.connect_appender().unwrap();
        assert_eq!(c.durability(), ("wal".to_owned(), 2));
    }

    /// The append path never waits for a lock on the log writer's thread:
    /// a batch that finds another writer (another process) holding the
    /// database lock waits for it on the blocking pool and lands once the
    /// lock is released, after that writer's rows.
    #[tokio::test]
    async fn an_append_waits_for_another_writers_lock_off_the_writers_thread() {
        use sqlx::Connection as _;
        let (dir, s) = open().await;
        s.append_batch(&[leaf(0)], Some(&cp(1))).await.unwrap();
        let mut other = sqlx::SqliteConnection::connect_with(&crate::connect_options(
            &dir.path().join("db.sqlite"),
        ))
        .await
        .unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut other)
            .await
            .unwrap();
        sqlx::query("INSERT INTO meta (key, value) VALUES ('held', 'yes')")
            .execute(&mut other)
            .await
            .unwrap();
        let appending = tokio::spawn({
            let s = s.clone();
            async move { s.append_batch(&[leaf(1)], Some(&cp(2))).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!appending.is_finished(), "the append waits for the lock");
        sqlx::query("COMMIT").execute(&mut other).await.unwrap();
        appending.await.unwrap().unwrap();
        assert_eq!(
            s.log_tail(0).await.unwrap(),
            (vec![[0; 32], [1; 32]], Some(cp(2)))
        );
        assert_eq!(s.get_meta("held").await.unwrap().as_deref(), Some("yes"));
    }

    /// Version 5 rebuilds the log tables on their rowid: a database written
    /// by version 4 keeps every row, and appends go on from it.
    #[tokio::test]
    async fn the_rowid_rebuild_keeps_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        {
            let pool = sqlx::SqlitePool::connect_with(crate::connect_options(&path))
                .await
                .unwrap();
            let v4 = crate::migrations::migrator(crate::Backend::Sqlite, 4);
            v4.run(&pool).await.unwrap();
            for i in 0..3u64 {
                let l = leaf(i);
                sqlx::query("INSERT INTO log_leaves VALUES ($1, $2, $3, $4)")
                    .bind(i as i64)
                    .bind(l.leaf_hash.as_slice())
                    .bind(l.data)
                    .bind(l.appended_at)
                    .execute(&pool)
                    .await
                    .unwrap();
            }
            sqlx::query("INSERT INTO log_checkpoints VALUES (3, $1, 'cp 3', 1)")
                .bind([3u8; 32].as_slice())
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        let s = Store::open(&path).await.unwrap();
        let indexes: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' \
             AND tbl_name IN ('log_leaves', 'log_checkpoints')",
        )
        .fetch_one(s.pool())
        .await
        .unwrap();
        assert_eq!(indexes, 0, "the log tables are keyed by their rowid");
        assert_eq!(
            s.leaves(0..3).await.unwrap(),
            vec![leaf(0), leaf(1), leaf(2)]
        );
        assert_eq!(s.latest_checkpoint().await.unwrap(), Some(cp(3)));
        s.append_batch(&[leaf(3)], Some(&cp(4))).await.unwrap();
        assert!(matches!(
            s.append_batch(&[leaf(3)], None).await,
            Err(StoreError::LeafIndexMismatch {
                expected: 4,
                got: 3
            })
        ));
        assert_eq!(s.log_tail(0).await.unwrap().0.len(), 4);
    }

    #[test]
    fn the_append_statement_lists_leaves_then_the_checkpoint() {
        assert_eq!(
            append_sql(2, true),
            "INSERT INTO log_append (kind, n, hash, body, at) VALUES \
             ('leaf', ?, ?, ?, ?), ('leaf', ?, ?, ?, ?), ('checkpoint', ?, ?, ?, ?)"
        );
        assert_eq!(
            append_sql(0, true),
            "INSERT INTO log_append (kind, n, hash, body, at) VALUES ('checkpoint', ?, ?, ?, ?)"
        );
    }

    #[tokio::test]
    async fn log_tail_reads_from_an_index_with_its_checkpoint() {
        let (_d, s) = open().await;
        assert_eq!(s.log_tail(0).await.unwrap(), (vec![], None));
        let first: Vec<_> = (0..5).map(leaf).collect();
        s.append_batch(&first, Some(&cp(5))).await.unwrap();
        let (hashes, latest) = s.log_tail(3).await.unwrap();
        assert_eq!(hashes, vec![[3; 32], [4; 32]]);
        assert_eq!(latest, Some(cp(5)));
        assert_eq!(s.log_tail(5).await.unwrap(), (vec![], Some(cp(5))));
        // A hole right at (or after) `from` is not a tail.
        sqlx::query("DELETE FROM log_leaves WHERE idx = 3")
            .execute(s.pool())
            .await
            .unwrap();
        assert!(matches!(s.log_tail(3).await, Err(StoreError::Malformed(_))));
        assert!(matches!(s.log_tail(2).await, Err(StoreError::Malformed(_))));
        assert_eq!(s.log_tail(4).await.unwrap().0, vec![[4; 32]]);
    }

    #[tokio::test]
    async fn locked_append_builds_from_the_current_log() {
        let (_d, s) = open().await;
        s.append_batch(&[leaf(0), leaf(1)], Some(&cp(2)))
            .await
            .unwrap();
        // Another writer appended 2..4 since this one saw size 2.
        s.append_batch(&[leaf(2), leaf(3)], Some(&cp(4)))
            .await
            .unwrap();
        let built = s
            .append_batch_locked(2, None, |tail, latest| {
                assert_eq!(tail, vec![[2; 32], [3; 32]]);
                assert_eq!(latest, Some(cp(4)));
                Ok::<_, ()>((vec![leaf(4)], Some(cp(5))))
            })
            .await
            .unwrap();
        assert_eq!(built, Ok((vec![leaf(4)], Some(cp(5)))));
        assert_eq!(s.log_size().await.unwrap(), 5);
        // The builder's own refusal rolls back and is handed back.
        let refused = s
            .append_batch_locked(5, None, |_, _| Err::<(Vec<LeafRow>, _), _>("no"))
            .await
            .unwrap();
        assert_eq!(refused, Err("no"));
        // A batch that does not continue the log is refused like any other.
        let err = s
            .append_batch_locked(5, None, |_, _| Ok::<_, ()>((vec![leaf(7)], Some(cp(8)))))
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::LeafIndexMismatch {
                    expected: 5,
                    got: 7
                }
            ),
            "{err:?}"
        );
        assert_eq!(s.log_size().await.unwrap(), 5);
        assert_eq!(s.latest_checkpoint().await.unwrap(), Some(cp(5)));
    }
}
