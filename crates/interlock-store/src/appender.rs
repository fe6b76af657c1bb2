//! The log's append connection: SQLite called synchronously, on the caller's
//! thread.
//!
//! Why not sqlx here, as everywhere else in this crate: sqlx's SQLite driver
//! runs each connection on a worker thread of its own, so every statement is
//! a hand-off to that thread and a wake-up back. The log appends on every
//! group commit, and on the gateway's sequential path that is one commit per
//! proxied call; two thread switches per call were a large share of the
//! gateway's CPU per call (see `docs/BENCHMARKS.md`). The append is one
//! statement (the `log_append` view, see [`Store::append_batch`]) that
//! costs tens of microseconds plus the `fsync`, so it runs where the log's
//! writer already is.
//!
//! Blocking: the statement blocks its thread for the commit's `fsync`. It
//! never waits for another writer's lock there: the connection's busy
//! timeout is zero on that path, and a batch that finds the database locked
//! (another process appending) is retried on tokio's blocking pool with the
//! full [`BUSY_TIMEOUT`].
//!
//! SQLite only: on Postgres the log appends through the pool (`log.rs`),
//! whose connections are sockets and need no thread of their own.
//!
//! [`Store::append_batch`]: crate::Store::append_batch

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::log::{CACHED_STATEMENT_ROWS, append_sql};
use crate::{BUSY_TIMEOUT, CheckpointRow, LeafRow, StoreError, to_i64};

/// A connection kept for log appends (`synchronous=FULL`, WAL, foreign keys
/// on, as the pool's). Opened on a database [`Store::open`](crate::Store::open)
/// has created and migrated.
pub(crate) struct Appender {
    conn: Connection,
    /// Whether the connection is at `synchronous=FULL` now (it switches to
    /// NORMAL for [`Flush::Deferred`] commits, and back).
    full: bool,
}

/// When a log commit reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    /// `fsync`ed before the commit returns (`synchronous=FULL`).
    Now,
    /// Committed — in the WAL, in the OS's page cache, so a killed process
    /// loses nothing — but not `fsync`ed (`synchronous=NORMAL`): the next
    /// [`Flush::Now`] commit, or [`Store::flush_log`](crate::Store::flush_log),
    /// makes it durable, since an `fsync` of the WAL covers every frame in it.
    Deferred,
}

impl std::fmt::Debug for Appender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Appender").finish_non_exhaustive()
    }
}

impl Appender {
    pub(crate) fn open(path: &Path) -> Result<Appender, StoreError> {
        let ctx = |e| StoreError::from_rusqlite(e, "connection");
        // The database exists (the store created and migrated it), so no
        // CREATE: a path that vanished since is an error, not a new empty log.
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(ctx)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(ctx)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::InvalidInput(format!(
                "the log's database is in journal mode {mode:?}, not WAL"
            )));
        }
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(ctx)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(ctx)?;
        // One cached statement per small batch size (see CACHED_STATEMENT_ROWS).
        conn.set_prepared_statement_cache_capacity(2 * CACHED_STATEMENT_ROWS);
        Ok(Appender { conn, full: true })
    }

    /// How long a statement waits for another writer's lock.
    pub(crate) fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(timeout)
            .map_err(|e| StoreError::from_rusqlite(e, "connection"))
    }

    /// The settings in force, as SQLite reports them: journal mode and
    /// `synchronous` (2 is FULL).
    #[cfg(test)]
    pub(crate) fn durability(&self) -> (String, i64) {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        let sync: i64 = self
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        (mode.to_ascii_lowercase(), sync)
    }

    /// Runs the one `INSERT INTO log_append …` statement for `leaves` and
    /// `checkpoint` (its own transaction, committed with `fsync` before it
    /// returns unless `flush` defers it). The caller has checked the batch's
    /// shape.
    pub(crate) fn append(
        &mut self,
        leaves: &[LeafRow],
        checkpoint: Option<&CheckpointRow>,
        flush: Flush,
    ) -> Result<(), AppendError> {
        let full = flush == Flush::Now;
        if full != self.full {
            let pragma = if full {
                "PRAGMA synchronous = FULL"
            } else {
                "PRAGMA synchronous = NORMAL"
            };
            self.conn
                .execute_batch(pragma)
                .map_err(AppendError::Sqlite)?;
            self.full = full;
        }
        let rows = leaves.len() + usize::from(checkpoint.is_some());
        let sql = append_sql(leaves.len(), checkpoint.is_some());
        if rows <= CACHED_STATEMENT_ROWS {
            let mut stmt = self
                .conn
                .prepare_cached(&sql)
                .map_err(AppendError::Sqlite)?;
            execute(&mut stmt, leaves, checkpoint)
        } else {
            // Rare large batches: prepared for the occasion, not cached.
            let mut stmt = self.conn.prepare(&sql).map_err(AppendError::Sqlite)?;
            execute(&mut stmt, leaves, checkpoint)
        }
    }

    /// The index the next leaf must have.
    pub(crate) fn next_index(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves",
                [],
                |r| r.get(0),
            )
            .map_err(|e| StoreError::from_rusqlite(e, "log leaf"))
    }
}

/// Binds every row's values to the `log_append` statement and runs it.
fn execute(
    stmt: &mut rusqlite::Statement<'_>,
    leaves: &[LeafRow],
    checkpoint: Option<&CheckpointRow>,
) -> Result<(), AppendError> {
    let mut i = 0;
    let mut bind = |v: &dyn rusqlite::ToSql| -> Result<(), AppendError> {
        i += 1;
        stmt.raw_bind_parameter(i, v).map_err(AppendError::Sqlite)
    };
    for leaf in leaves {
        bind(&to_i64(leaf.idx, "leaf index").map_err(AppendError::Input)?)?;
        bind(&leaf.leaf_hash.as_slice())?;
        bind(&leaf.data.as_slice())?;
        bind(&leaf.appended_at)?;
    }
    if let Some(cp) = checkpoint {
        bind(&to_i64(cp.size, "checkpoint size").map_err(AppendError::Input)?)?;
        bind(&cp.root.as_slice())?;
        bind(&cp.note.as_str())?;
        bind(&cp.created_at)?;
    }
    stmt.raw_execute().map_err(AppendError::Sqlite)?;
    Ok(())
}

/// Why [`Appender::append`] failed: SQLite's error (to classify, and to tell
/// a trigger's refusal or a busy lock apart), or a value that cannot be stored.
#[derive(Debug)]
pub(crate) enum AppendError {
    Sqlite(rusqlite::Error),
    Input(StoreError),
}

impl AppendError {
    /// Another writer held the database lock (only seen with a zero busy timeout).
    pub(crate) fn is_busy(&self) -> bool {
        matches!(
            self,
            AppendError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}
