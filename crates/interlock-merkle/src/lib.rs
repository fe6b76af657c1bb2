//! RFC 6962 Merkle log primitives and C2SP signed-note / tlog-checkpoint
//! checkpoints signed with Ed25519. Pure: no I/O, no async.
//!
//! * [`hash`]: leaf, node and empty-tree hashes.
//! * [`tree`]: tree roots and proof generation ([`root`], [`inclusion_proof`],
//!   [`consistency_proof`], [`Tree`]).
//! * [`frontier`]: a tree's right edge ([`Frontier`]), to extend it by more
//!   leaves and get the new root without the tree.
//! * [`tiled`]: a tree holding only its tiles' roots and last leaves
//!   ([`TiledTree`]); the rest of its leaves are read a tile at a time.
//! * [`range`]: range proofs ([`verify_range`]): a contiguous run of leaves tied
//!   to a root with `O(log n)` hashes instead of a proof per leaf.
//! * [`proof`]: proof verification ([`verify_inclusion`], [`verify_consistency`],
//!   and the Merkle Tree Certificates subtree proofs).
//! * [`note`]: C2SP signed notes with Ed25519 keys.
//! * [`checkpoint`]: C2SP tlog-checkpoint bodies, [`sign_checkpoint`], [`open_checkpoint`].
//! * [`cosignature`]: C2SP tlog-cosignature v1 (Ed25519): witnesses' cosignatures.
//! * [`witness_request`]: the C2SP tlog-witness `add-checkpoint` request body.
//! * [`tlog_proof`]: C2SP tlog-proof files ([`TlogProof`]): one entry's receipt as text.
//!
//! # Why hand-written
//!
//! The existing Rust implementations of these formats, Cloudflare's
//! `signed_note` 0.2 and `tlog_tiles` 0.2 (ports of Go's sumdb), are built on
//! `ed25519-dalek` 2, `sha2` 0.10 and `base64` 0.21: their key and signature
//! types are not those of the `ed25519-dalek` 3 used across this workspace, so
//! callers would need conversions and a second crypto stack would be compiled
//! in. The algorithms are short, specified (RFC 9162 §2.1.3–2.1.4, the MTC
//! draft for subtrees, C2SP signed-note and tlog-checkpoint) and checked here
//! against the transparency-dev/merkle vectors and the Go sumdb note
//! known-answer test, so they are implemented directly.

#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod cosignature;
pub mod frontier;
pub mod hash;
pub mod note;
pub mod proof;
pub mod range;
pub mod tiled;
pub mod tlog_proof;
pub mod tree;
pub mod witness_request;

pub use checkpoint::{
    Checkpoint, CheckpointError, open_checkpoint, sign_checkpoint, sign_checkpoint_with,
};
pub use cosignature::{
    ALG_COSIGNATURE_V1, Cosignature, CosignatureSigner, CosignatureVerifier, WitnessVerdict,
    cosignature_key_id, cosignature_message, parse_cosignature_lines, witness_report,
};
pub use frontier::Frontier;
pub use hash::{HASH_LEN, Hash, empty_root, leaf_hash, node_hash};
pub use note::{
    ForeignSignature, MAX_SIGNATURES, NoteError, NoteSignature, NoteSigner, NoteVerifier,
    SignedNote, key_id,
};
pub use proof::{
    ProofError, is_valid_subtree, verify_consistency, verify_consistency_bytes, verify_inclusion,
    verify_inclusion_bytes, verify_subtree_consistency, verify_subtree_consistency_bytes,
    verify_subtree_inclusion, verify_subtree_inclusion_bytes,
};
pub use range::{range_proof_len, root_from_range, verify_range};
pub use tiled::{NoTiles, TILE_HEIGHT, TILE_WIDTH, TileSource, TiledError, TiledTree};
pub use tlog_proof::{TLOG_PROOF_EXTENSION, TLOG_PROOF_HEADER, TlogProof, TlogProofError};
pub use tree::{
    PARALLEL_ROOT_THRESHOLD, Tree, consistency_proof, inclusion_proof, root, root_sequential,
};
pub use witness_request::{AddCheckpoint, AddCheckpointError, MAX_PROOF_LINES};
