//! Interlock's tamper-evident log: every decision becomes an RFC 6962 Merkle
//! leaf in the store, and every write commits a signed C2SP checkpoint with it.
//!
//! * [`Log`]: the writer. Appends are *group-committed*: one task drains
//!   every waiting append, assigns indices, seals each entry into a signed
//!   receipt (`interlock_receipts::seal`: a DSSE envelope of an in-toto
//!   statement, which is the leaf), extends the in-memory tree (its tiles'
//!   roots and last leaves: `interlock_merkle::TiledTree`), signs
//!   one checkpoint for the new size and writes leaves + checkpoint in a
//!   single durable transaction, then acknowledges every waiter. An append is
//!   acknowledged only once durable; many concurrent appenders share one
//!   `fsync`, which is where the throughput comes from.
//!   Several processes (and several `Log`s) may append to one database:
//!   a batch that finds its index taken by another writer adopts that
//!   writer's entries once their signed checkpoint verifies against this
//!   log's tree, re-seals itself after them and is written again under the
//!   database lock (see [`Log`]); [`Log::refresh`] catches a reader up.
//! * [`audit`]: recomputes everything from storage alone and names each
//!   edited, reordered, dropped or forked entry, and each checkpoint that
//!   fails.
//! * [`export`]: receipt bundles for auditors (a contiguous range by its range
//!   proof, filtered receipts through a shared node table), and one receipt as a
//!   C2SP tlog-proof ([`export_tlog_proof`]).
//! * [`LogSigner`]: the log key (it signs every receipt and checkpoint), as a
//!   trait so a keychain-backed key can replace the in-memory one.
//!
//! All hashing and signing math is `interlock-merkle`, `interlock-canon` and
//! `interlock-receipts`; all SQL is `interlock-store`.

#![forbid(unsafe_code)]

mod audit;
mod claims;
mod error;
mod export;
mod log;
mod receipts;
mod signer;
mod tail;
mod tiles;

pub use audit::{AuditProblem, AuditReport, PENDING_SECS, audit};
pub use claims::drift_window_claim_of;
pub use error::LogError;
pub use export::{ExportFilter, META_LAST_EXPORT, export, export_tlog_proof};
pub use log::{
    ADOPTED_BACKLOG, Appended, Durability, Log, LogOptions, MAX_BATCH, MAX_ENTRY_BYTES,
    META_ORIGIN, META_VKEY,
};
pub use receipts::{
    EventEvidence, ExportFiles, ReceiptEntry, UNREADABLE, event_evidence, export_files, facts_of,
    facts_of_summary, index_receipts, receipts_page, tlog_proof_file,
};
pub use signer::{CheckpointSigner, LogSigner};
pub use tail::{LeafTail, RECENT_LEAVES, TAIL_CHUNK};
