//! Everything that can be wrong with a leaf, a receipt or a bundle, each named.

use interlock_core::decision::KeyId;

use crate::format_names::{BUNDLE_VERSION, BUNDLE_VERSION_V1, PAYLOAD_TYPE};

/// Why a leaf could not be sealed or opened, or why a bundle (or one of its
/// receipts) failed verification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    // --- sealing -----------------------------------------------------------
    #[error("invalid predicate: {0}")]
    InvalidPredicate(String),
    #[error("signing failed: {0}")]
    Signing(String),

    // --- one leaf / one receipt ---------------------------------------------
    #[error("malformed leaf: {0}")]
    MalformedLeaf(String),
    #[error("the leaf is not in canonical (JCS) form")]
    NonCanonicalLeaf,
    #[error("wrong payload type `{0}` (expected `{PAYLOAD_TYPE}`)")]
    WrongPayloadType(String),
    #[error(
        "the leaf is signed by key {signer}, not by the bundle's log key {log}: a receipt from a different log, or a swapped log key"
    )]
    WrongLogKey { signer: KeyId, log: KeyId },
    #[error(
        "the log key's signature over the statement does not verify: the statement or its signature was altered"
    )]
    BadLogSignature,
    #[error("malformed statement: {0}")]
    MalformedStatement(String),
    #[error("the statement payload is not in canonical (JCS) form")]
    NonCanonicalPayload,
    #[error("the statement's subjects do not match its facts: a subject was swapped or edited")]
    SubjectMismatch,
    #[error("the receipt at index {index} carries statement number {seq}: renumbered")]
    SeqMismatch { index: u64, seq: u64 },
    #[error("malformed inclusion proof: {0}")]
    MalformedProof(String),
    #[error(
        "the inclusion proof for index {index} does not verify against the latest checkpoint (size {size}): {reason}"
    )]
    BadInclusion {
        index: u64,
        size: u64,
        reason: String,
    },
    #[error("tlog-proof: {0}")]
    TlogProof(String),
    #[error("no verified checkpoint to check the inclusion proof against")]
    NoCheckpoint,
    #[error("the proof refers to node {reference} of a node table of {nodes}")]
    BadNodeReference { reference: u64, nodes: usize },
    #[error("receipt {index} is outside the bundle's range but carries no inclusion proof")]
    MissingProof { index: u64 },
    #[error(
        "receipt {index} is inside the bundle's range, which vouches for it, but carries a proof of its own"
    )]
    ProofInsideRange { index: u64 },
    #[error(
        "not vouched for: the leaves of the range {from}..={to} it belongs to do not recompute the signed root"
    )]
    RangeNotVouched { from: u64, to: u64 },
    #[error("a signed decision's receipt carries no approver statement")]
    ApprovalMissing,
    #[error("malformed approver statement: {0}")]
    ApprovalMalformed(String),
    #[error(
        "the approval is signed by key {0}, which is not among the bundle's trusted approver keys"
    )]
    UntrustedApprover(KeyId),
    #[error("the approver's signature (key {0}) does not verify")]
    BadApprovalSignature(KeyId),
    #[error("the approval is for {what} `{signed}`, but the receipt records `{recorded}`")]
    ApprovalMismatch {
        what: &'static str,
        signed: String,
        recorded: String,
    },

    // --- the bundle as a whole ---------------------------------------------
    #[error("malformed bundle: {0}")]
    MalformedBundle(String),
    #[error(
        "unsupported bundle version `{0}` (expected `{BUNDLE_VERSION}` or `{BUNDLE_VERSION_V1}`)"
    )]
    UnsupportedVersion(String),
    #[error("the bundle's log key `{vkey}` does not parse: {reason}")]
    BadLogKey { vkey: String, reason: String },
    #[error("the pinned log key `{vkey}` does not parse: {reason}")]
    BadPinnedKey { vkey: String, reason: String },
    #[error("the bundle's log key is not the pinned one (bundle: `{bundle}`, pinned: `{pinned}`)")]
    NotPinned { bundle: String, pinned: String },
    #[error("the latest checkpoint does not verify with the bundle's log key: {0}")]
    BadCheckpoint(String),
    // --- witnesses (issue 43) -------------------------------------------------
    #[error("witness key `{vkey}` is not a cosignature verifier key: {reason}")]
    BadWitnessKey { vkey: String, reason: String },
    #[error("witness {witness}: {reason}")]
    BadCosignature { witness: String, reason: String },
    #[error(
        "the checkpoint carries a cosignature by {witness}, whose key was not given: pass it with --witness, or the line was altered"
    )]
    UnknownCosigner { witness: String },
    #[error(
        "the checkpoint is cosigned by {have} of the witnesses given; at least {need} required"
    )]
    TooFewWitnesses { have: usize, need: usize },
    #[error("checkpoint {which} is for log `{found}`, not the bundle's origin `{expected}`")]
    OriginMismatch {
        which: String,
        found: String,
        expected: String,
    },
    #[error("earlier checkpoint {position} does not verify: {reason}")]
    BadEarlierCheckpoint { position: usize, reason: String },
    #[error(
        "earlier checkpoint {position} has size {size}, larger than the latest checkpoint's {latest}: an older checkpoint is passed off as the latest"
    )]
    OlderPassedOffAsNewer {
        position: usize,
        size: u64,
        latest: u64,
    },
    #[error(
        "earlier checkpoint {position} (size {size}) is not consistent with the latest (size {latest}): {reason}"
    )]
    Inconsistent {
        position: usize,
        size: u64,
        latest: u64,
        reason: String,
    },
    #[error("receipt {index} comes after receipt {previous}: receipts are reordered")]
    Reordered { previous: u64, index: u64 },
    #[error("receipt {index} appears more than once")]
    Duplicate { index: u64 },
    #[error("invalid range {from}..={to}")]
    BadRange { from: u64, to: u64 },
    #[error("receipt {index} is outside the claimed range {from}..={to}")]
    OutsideRange { index: u64, from: u64, to: u64 },
    #[error("receipt {index} of the claimed range {from}..={to} is missing: a receipt was dropped")]
    Dropped { index: u64, from: u64, to: u64 },
    #[error("{count} more receipts of the claimed range {from}..={to} are missing")]
    DroppedMore { count: u64, from: u64, to: u64 },
    #[error(
        "the range {from}..={to} ends beyond the latest checkpoint (size {size}): it cannot be tied to it"
    )]
    RangeBeyondCheckpoint { from: u64, to: u64, size: u64 },
    #[error(
        "the leaves of the range {from}..={to} do not recompute the root of the latest checkpoint (size {size}): a leaf in it was edited, dropped, added or moved, or the range proof altered ({reason})"
    )]
    RangeMismatch {
        from: u64,
        to: u64,
        size: u64,
        reason: String,
    },
    #[error("node {position} of the node table is referenced by no receipt")]
    UnreferencedNode { position: usize },
    #[error("the bundle's surface {hash}: {reason}")]
    MalformedSurface { hash: String, reason: String },
    #[error(
        "the bundle's surface {hash} hashes to {computed}: its tools or instructions were altered"
    )]
    SurfaceHashMismatch { hash: String, computed: String },
    #[error(
        "the bundle's surface {hash} is named by no verified receipt: nothing vouches that a reviewer approved it"
    )]
    UnanchoredSurface { hash: String },
    #[error("trusted approver key entry {position}: {reason}")]
    MalformedApproverKey { position: usize, reason: String },
    #[error("trusted approver key {key_id} ({identity}) is not the id of its public key")]
    ApproverKeyIdMismatch { key_id: String, identity: String },
    #[error("trusted approver key {0} is listed more than once")]
    DuplicateApproverKey(KeyId),
    #[error(
        "trusted approver key {key_id} ({identity}) is not backed by an approver.registered receipt in the bundle: an added or swapped key"
    )]
    UnbackedApproverKey { key_id: KeyId, identity: String },
}
