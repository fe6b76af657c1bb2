//! Receipts: every log leaf is an in-toto Statement v1 whose subjects are the
//! digests the decision is about, vouched for by its inclusion in a checkpoint
//! the gateway's log key signed (older logs' leaves are DSSE envelopes signed
//! by that key, and still verify); export bundles carry the leaves — a
//! contiguous range tied to the checkpoint by one range proof, other receipts
//! by inclusion proofs sharing a node table —, the signed checkpoints with
//! consistency proofs and the trust policy, and [`verify_bundle`] checks one
//! offline; a single receipt travels as a C2SP tlog-proof. Pure: no I/O, no async.
//!
//! * [`leaf`]: the statement and leaf format ([`seal`], [`open_leaf`], [`derive_subjects`]).
//! * [`bundle`]: the export bundle ([`Bundle`], [`BundleBuilder`]).
//! * [`verify`]: offline verification ([`verify_bundle`], [`VerifyReport`]).
//! * [`tlog`]: one receipt as a C2SP tlog-proof file ([`receipt_tlog_proof`], [`verify_tlog_proof`]).
//! * [`summary`]: a receipt decoded for a reader ([`summarize`]).
//! * [`reading`]: a receipt as an auditor reads it ([`Reading`]: who, what, when, why, verdict).
//! * [`report`]: an export's `report.html` and `summary.csv` ([`html_report`], [`csv_summary`]).
//! * [`claims`]: what an auditor asks of the log ([`claims::drift_window_claim`]).
//! * [`error`]: [`ReceiptError`], one variant per thing that can be wrong.
#![forbid(unsafe_code)]

pub mod bundle;
pub mod claims;
pub mod error;
pub mod event;
pub mod format_names;
pub mod leaf;
pub mod reading;
pub mod report;
pub mod summary;
pub mod tlog;
pub mod verify;

pub use bundle::{
    ApproverKey, BUNDLE_VERSION, BUNDLE_VERSION_V1, Bundle, BundleBuilder, BundleReceipt,
    BundleSurface, BundleVersion, EarlierCheckpoint, IndexRange, Trust,
};
pub use error::ReceiptError;
pub use leaf::{
    CanonicalPredicate, LeafFormat, LeafSeal, OpenedLeaf, PAYLOAD_TYPE, PREDICATE_TYPE,
    STATEMENT_TYPE, derive_subjects, open_leaf, open_leaf_unverified, seal, seal_canonical,
    seal_statement,
};
pub use reading::{Reading, read as read_receipt};
pub use report::{csv_summary, html_report, readings};
pub use summary::{ReceiptSummary, summarize};
pub use tlog::{TlogProofReport, receipt_tlog_proof, verify_tlog_proof};
pub use verify::{ReceiptLine, VerifyOptions, VerifyReport, verify_bundle};
