//! [`LogError`].

use std::sync::Arc;

use interlock_merkle::{NoteError, ProofError};
use interlock_store::StoreError;

/// Why a log operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Receipts could not be exported (e.g. nothing is signed yet).
    #[error("cannot export receipts: {0}")]
    Export(String),
    /// An entry could not be sealed into a signed receipt (a signing failure).
    #[error("cannot seal the entry into a signed receipt: {0}")]
    Sealing(String),
    /// A store call failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The audit's entry checker (a blocking thread) stopped before it had
    /// checked every entry: a bug, reported rather than a partial audit.
    #[error("the audit's entry checker stopped: {0}")]
    AuditChecker(String),
    /// The batch this append was part of could not be written, or its
    /// commit was not confirmed: it is not acknowledged (every waiter of the
    /// batch gets this error). A commit that reached the database though its
    /// answer was lost (a connection cut) is kept on the log, never undone.
    #[error("append failed; its batch is not acknowledged: {0}")]
    WriteFailed(Arc<StoreError>),
    /// The state change meant to commit with the entry lost its
    /// compare-and-swap: neither the change nor the entry was stored.
    #[error("{0}; nothing was logged")]
    ChangeRefused(String),
    /// Signing the batch's checkpoint failed: nothing was stored.
    #[error("signing the checkpoint failed; no entry of its batch was stored: {0}")]
    Signing(NoteError),
    /// The log's signer cannot sign checkpoints for its key (its signatures
    /// do not verify with the public key it reports, or it fails): refused
    /// when the log is opened.
    #[error("the log's signer is unusable: {0}")]
    Signer(#[source] NoteError),
    /// The origin is not a valid signed-note key name.
    #[error("invalid log origin {origin:?}: {source}")]
    InvalidOrigin {
        /// The origin given.
        origin: String,
        /// Why.
        #[source]
        source: NoteError,
    },
    /// The database belongs to a log with another origin.
    #[error("database holds log {stored:?}, not {given:?}")]
    OriginMismatch {
        /// The stored origin.
        stored: String,
        /// The origin given to `Log::open`.
        given: String,
    },
    /// The database's log was signed with another key: continuing it with
    /// this signer would let a different key extend someone else's log.
    #[error("database log key {stored} differs from this signer's key {ours}")]
    KeyMismatch {
        /// The verifier key recorded in the database.
        stored: String,
        /// This signer's verifier key.
        ours: String,
    },
    /// The latest stored checkpoint does not verify with the log key.
    #[error("the checkpoint at size {size} does not verify: {source}")]
    CheckpointSignature {
        /// Its size.
        size: u64,
        /// Why.
        #[source]
        source: NoteError,
    },
    /// The stored leaves do not reproduce the latest signed checkpoint.
    #[error("the stored log does not match its latest signed checkpoint: {0}")]
    CheckpointMismatch(String),
    /// An entry was not a JSON object.
    #[error("a log entry must be a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// An entry already had the `seq` field the log assigns.
    #[error("a log entry must not carry \"seq\": the log assigns it")]
    SeqPresent,
    /// An entry's canonical form exceeds the size limit.
    #[error("log entry is {size} bytes, over the {max}-byte limit")]
    EntryTooLarge {
        /// Canonical size.
        size: usize,
        /// Limit.
        max: usize,
    },
    /// A stored entry is not valid canonical JSON.
    #[error("stored entry {index} is malformed: {reason}")]
    MalformedEntry {
        /// Its index.
        index: u64,
        /// Why.
        reason: String,
    },
    /// The stored leaf hashes of a tile (256 entries) do not reproduce the
    /// tile root the verified log holds: the database was edited (or lost a
    /// row) after the log opened. Nothing is answered from them.
    #[error(
        "the stored entries {}..{} do not reproduce the tree the signed log commits to \
         (a row was edited or removed): audit the log",
        .tile * interlock_merkle::TILE_WIDTH,
        (.tile + 1) * interlock_merkle::TILE_WIDTH
    )]
    TileMismatch {
        /// The tile (entries `tile·256 .. (tile+1)·256`).
        tile: u64,
    },
    /// An index or size beyond the durable log.
    #[error("index/size {requested} is beyond the log size {size}")]
    OutOfRange {
        /// Requested index or size.
        requested: u64,
        /// Durable log size.
        size: u64,
    },
    /// A proof could not be built.
    #[error("proof: {0}")]
    Proof(#[from] ProofError),
    /// Another writer (another process, or another `Log` on the same
    /// database) changed the log beyond the `size` entries this `Log` had
    /// verified, and what the store holds now is not a well-formed extension
    /// signed by the log key (`source` says what does not verify). It is not
    /// adopted and nothing is appended after it: the log must be audited.
    #[error(
        "the log was changed by another writer beyond the {size} entries verified here, and \
         the change is not a valid signed extension of the log (audit it): {source}"
    )]
    ForeignAppend {
        /// Entries this `Log` had verified (they are unaffected).
        size: u64,
        /// Why the change does not verify.
        #[source]
        source: Arc<LogError>,
    },
    /// The log was closed (or its writer task stopped).
    #[error("the log is closed")]
    Closed,
}
