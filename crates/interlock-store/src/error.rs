//! [`StoreError`]: every way a store call can fail, typed so callers can tell a
//! refused request (duplicate, conflict, bad input) from a broken disk.

use crate::PlanStatus;

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database (its file or directory, or its server) could not be
    /// created, reached or opened.
    #[error("cannot open database {location}: {source}")]
    Open {
        /// The file or (password-free) URL that was being opened.
        location: String,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The Postgres server could not be reached over TLS as the URL's
    /// `sslmode` asks (issue 39 item 13): it offers no TLS, or its
    /// certificate is not signed by a trusted CA (`sslrootcert`, or the OS's
    /// roots) or not for the host the URL names. Its own variant so a
    /// deployment tells "the server is not who it should be" from "the
    /// server is down"; no query was sent.
    #[error(
        "cannot open database {location} over TLS (check sslmode, sslrootcert and the host \
         the server's certificate names): {source}"
    )]
    Tls {
        /// The (password-free) URL that was being opened.
        location: String,
        /// The TLS failure, as the driver reports it.
        #[source]
        source: DriverError,
    },
    /// The embedded schema migrations failed to apply.
    #[error("database schema migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The disk is full, read-only, or an I/O error occurred (on Postgres,
    /// the connection to the server was lost): the write is not
    /// acknowledged.
    #[error(
        "storage I/O error (disk full, read-only or failing, or the database server unreachable?): {0}"
    )]
    Io(#[source] DriverError),
    /// Another writer held the database lock for longer than the busy timeout.
    #[error("database is busy (locked by another writer beyond the timeout): {0}")]
    Busy(#[source] DriverError),
    /// The database file is damaged or is not a database.
    #[error("database file is corrupt or not a database: {0}")]
    CorruptFile(#[source] DriverError),
    /// A row with the same unique key already exists (e.g. a replayed approval
    /// nonce, an approver key added twice).
    #[error("duplicate {what}")]
    Duplicate {
        /// What was duplicated, for humans.
        what: String,
    },
    /// A referenced row does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was missing, for humans.
        what: String,
    },
    /// A new revision was offered for a plan whose current revision has
    /// already started running (or finished): history must not be rewritten.
    #[error("plan {plan_id} revision {revision} is {status}; it cannot be revised")]
    PlanLocked {
        /// The plan.
        plan_id: String,
        /// Its current revision.
        revision: i64,
        /// The status that forbids a new revision.
        status: PlanStatus,
    },
    /// A revision was offered for a plan id that another identity proposed first.
    #[error("plan {plan_id} belongs to {owner}; {proposer} cannot propose a revision of it")]
    NotPlanOwner {
        /// The plan.
        plan_id: String,
        /// The identity that proposed its first revision.
        owner: String,
        /// Who offered this revision.
        proposer: String,
    },
    /// A state change meant to commit with its log leaf found its row moved
    /// (compare-and-swap lost): neither the change nor the leaf was written.
    #[error("the change was not applied: {what}")]
    ChangeRefused {
        /// What moved, for humans.
        what: String,
    },
    /// A status change that the plan lifecycle does not allow.
    #[error("invalid plan transition {from} -> {to}")]
    InvalidTransition {
        /// From status.
        from: PlanStatus,
        /// To status.
        to: PlanStatus,
    },
    /// Log leaves must continue the stored log exactly: no gap, no overlap.
    #[error("log leaf index {got} does not continue the log (next index is {expected})")]
    LeafIndexMismatch {
        /// The index the next leaf must have.
        expected: u64,
        /// The index offered.
        got: u64,
    },
    /// A checkpoint written with a batch must be for the log size after it.
    #[error("checkpoint for size {got} does not match the log size {expected} after the batch")]
    CheckpointSizeMismatch {
        /// The log size after the batch.
        expected: u64,
        /// The checkpoint's size.
        got: u64,
    },
    /// An argument was rejected before touching the database.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A stored value cannot be read back as what it should be (an unknown
    /// status, a hash of the wrong length, a negative index): the database
    /// was edited outside Interlock or is damaged.
    #[error("stored data is malformed: {0}")]
    Malformed(String),
    /// Any other database error.
    #[error("database error: {0}")]
    Database(#[source] DriverError),
}

/// The database driver's own error, kept as the source of a [`StoreError`].
/// (Most calls go through sqlx; the log's appends through rusqlite, see
/// `appender.rs`.)
pub type DriverError = Box<dyn std::error::Error + Send + Sync>;

// SQLite primary result codes (the low byte of an extended code).
const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_READONLY: i64 = 8;
const SQLITE_IOERR: i64 = 10;
const SQLITE_CORRUPT: i64 = 11;
const SQLITE_FULL: i64 = 13;
const SQLITE_CANTOPEN: i64 = 14;
const SQLITE_NOTADB: i64 = 26;
// Extended constraint codes (sqlx reports these as unique / foreign key violations).
const SQLITE_CONSTRAINT_FOREIGNKEY: i64 = 787;
const SQLITE_CONSTRAINT_PRIMARYKEY: i64 = 1555;
const SQLITE_CONSTRAINT_UNIQUE: i64 = 2067;

impl StoreError {
    /// Classifies a driver error; `what` names the row kind for constraint errors.
    pub(crate) fn from_sqlx(e: sqlx::Error, what: &str) -> StoreError {
        if let sqlx::Error::Io(_) = e {
            return StoreError::Io(Box::new(e));
        }
        let Some(db) = e.as_database_error() else {
            return StoreError::Database(Box::new(e));
        };
        match db.kind() {
            sqlx::error::ErrorKind::UniqueViolation => {
                return StoreError::Duplicate {
                    what: what.to_owned(),
                };
            }
            sqlx::error::ErrorKind::ForeignKeyViolation => {
                return StoreError::NotFound {
                    what: format!("row referenced by {what}"),
                };
            }
            _ => {}
        }
        if let Some(state) = db
            .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
            .map(|pg| pg.code().to_owned())
        {
            return StoreError::by_sqlstate(&state, Box::new(e));
        }
        let code = db.code().and_then(|c| c.parse::<i64>().ok());
        StoreError::by_code(code, Box::new(e))
    }

    /// Classifies an error of the log's append connection (rusqlite) the
    /// way [`from_sqlx`](Self::from_sqlx) classifies the pool's.
    pub(crate) fn from_rusqlite(e: rusqlite::Error, what: &str) -> StoreError {
        let code = match &e {
            rusqlite::Error::SqliteFailure(f, _) => Some(i64::from(f.extended_code)),
            _ => None,
        };
        match code {
            Some(SQLITE_CONSTRAINT_PRIMARYKEY | SQLITE_CONSTRAINT_UNIQUE) => {
                StoreError::Duplicate {
                    what: what.to_owned(),
                }
            }
            Some(SQLITE_CONSTRAINT_FOREIGNKEY) => StoreError::NotFound {
                what: format!("row referenced by {what}"),
            },
            _ => StoreError::by_code(code, Box::new(e)),
        }
    }

    /// Sorts a SQLite result code (extended or primary) into the storage
    /// failures callers tell apart.
    fn by_code(code: Option<i64>, e: DriverError) -> StoreError {
        match code.map(|c| c & 0xff) {
            Some(SQLITE_BUSY | SQLITE_LOCKED) => StoreError::Busy(e),
            Some(SQLITE_READONLY | SQLITE_IOERR | SQLITE_FULL | SQLITE_CANTOPEN) => {
                StoreError::Io(e)
            }
            Some(SQLITE_CORRUPT | SQLITE_NOTADB) => StoreError::CorruptFile(e),
            _ => StoreError::Database(e),
        }
    }

    /// Sorts a Postgres SQLSTATE (Appendix A of its manual) into the same
    /// storage failures as [`by_code`](Self::by_code).
    fn by_sqlstate(state: &str, e: DriverError) -> StoreError {
        match state {
            // lock_not_available (lock_timeout), serialization_failure,
            // deadlock_detected: another writer held on too long.
            "55P03" | "40001" | "40P01" => StoreError::Busy(e),
            // disk_full, io_error, read_only_sql_transaction, and class 08
            // (the connection to the server failed).
            "53100" | "58030" | "25006" => StoreError::Io(e),
            s if s.starts_with("08") => StoreError::Io(e),
            // data_corrupted, index_corrupted.
            "XX001" | "XX002" => StoreError::CorruptFile(e),
            _ => StoreError::Database(e),
        }
    }

    /// True for errors that say nothing about the request and everything
    /// about the storage (I/O, full disk, lock timeout, corruption).
    pub fn is_storage_failure(&self) -> bool {
        matches!(
            self,
            StoreError::Io(_) | StoreError::Busy(_) | StoreError::CorruptFile(_)
        )
    }
}

/// Shorthand used by every query: classify with a row-kind label.
pub(crate) trait SqlxResultExt<T> {
    fn ctx(self, what: &str) -> Result<T, StoreError>;
}

impl<T> SqlxResultExt<T> for Result<T, sqlx::Error> {
    fn ctx(self, what: &str) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::from_sqlx(e, what))
    }
}
