//! Inclusion and consistency proof *verification*.
//!
//! * [`verify_inclusion`]: RFC 9162 §2.1.3.2.
//! * [`verify_consistency`]: RFC 9162 §2.1.4.2.
//! * [`verify_subtree_inclusion`] / [`verify_subtree_consistency`]: subtree
//!   proofs of the Merkle Tree Certificates draft (draft-ietf-plants-merkle-tree-certs,
//!   "Verifying a Subtree Inclusion/Consistency Proof"), which the
//!   transparency-dev/merkle test vectors also cover.
//!
//! Before walking a proof its exact expected length is computed (the
//! transparency-dev/merkle decomposition into "inner" and "border" parts), so a
//! proof of the wrong length is reported as [`ProofError::WrongProofSize`]
//! rather than as a root mismatch.
//!
//! The `*_bytes` variants take hashes as byte slices of any length and apply
//! the same rules (a hash that must be used and is not 32 bytes is an error);
//! the typed variants delegate to them. The precondition order matches the
//! transparency-dev/merkle vectors: sizes are checked first, then the
//! degenerate cases (`size1 == size2`: empty proof and byte-equal roots), and
//! only then are hash lengths checked.

use crate::hash::{Hash, empty_root, node_hash, to_hex};

/// Why a proof could not be generated or did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The leaf index is not inside the tree (or subtree).
    #[error("leaf index {index} is out of range for tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    /// A consistency proof was asked for or given with `size1 > size2`.
    #[error("old tree size {size1} is larger than new tree size {size2}")]
    SizeOrder { size1: u64, size2: u64 },
    /// A consistency proof from the empty tree: meaningless, always rejected.
    #[error("consistency proof from the empty tree (size 0) is meaningless")]
    EmptyOldTree,
    /// A requested tree size is beyond the leaves held by a [`crate::Tree`].
    #[error("tree size {size} is beyond the {len} leaves held")]
    SizeBeyondTree { size: u64, len: u64 },
    /// The proof does not have the number of hashes the sizes/index require.
    #[error("proof has {got} hashes, expected {expected}")]
    WrongProofSize { expected: usize, got: usize },
    /// A leaf hash or root is not 32 bytes.
    #[error("{what} is {len} bytes long, expected 32")]
    WrongHashLength { what: &'static str, len: usize },
    /// A proof element is not 32 bytes.
    #[error("proof element {position} is {len} bytes long, expected 32")]
    WrongProofElementLength { position: usize, len: usize },
    /// The root recomputed from the proof differs from the expected root.
    #[error("root mismatch: expected {}, computed {}", to_hex(.expected), to_hex(.computed))]
    RootMismatch {
        expected: Vec<u8>,
        computed: Vec<u8>,
    },
    /// Consistency: the old root (or subtree root) recomputed from the proof differs.
    #[error("old root mismatch: expected {}, computed {}", to_hex(.expected), to_hex(.computed))]
    OldRootMismatch {
        expected: Vec<u8>,
        computed: Vec<u8>,
    },
    /// `[start, end)` is not a subtree: it must be non-empty and `start` a
    /// multiple of the smallest power of two `>= end - start`.
    #[error("[{start}, {end}) is not a valid subtree")]
    InvalidSubtree { start: u64, end: u64 },
    /// A range proof was asked for or given for an empty range, or one
    /// that ends beyond the tree.
    #[error("[{start}, {end}) is not a non-empty range of a tree of size {size}")]
    InvalidRange { start: u64, end: u64, size: u64 },
    /// The subtree ends beyond the tree.
    #[error("subtree end {end} is beyond tree size {size}")]
    SubtreeBeyondTree { end: u64, size: u64 },
}

fn to_hash(bytes: &[u8], what: &'static str) -> Result<Hash, ProofError> {
    bytes.try_into().map_err(|_| ProofError::WrongHashLength {
        what,
        len: bytes.len(),
    })
}

fn to_hashes<P: AsRef<[u8]>>(proof: &[P]) -> Result<Vec<Hash>, ProofError> {
    proof
        .iter()
        .enumerate()
        .map(|(position, p)| {
            let p = p.as_ref();
            p.try_into()
                .map_err(|_| ProofError::WrongProofElementLength {
                    position,
                    len: p.len(),
                })
        })
        .collect()
}

fn check_len(got: usize, expected: usize) -> Result<(), ProofError> {
    if got != expected {
        return Err(ProofError::WrongProofSize { expected, got });
    }
    Ok(())
}

fn bit_len(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Proof length for leaf `index` in a tree of `size`: (inner, border) where the
/// inner part ends where the paths to `index` and `size - 1` meet.
fn decomp_inclusion(index: u64, size: u64) -> (usize, usize) {
    let inner = bit_len(index ^ (size - 1));
    let border = (index >> inner).count_ones();
    (inner as usize, border as usize)
}

fn lsb(x: u64) -> bool {
    x & 1 == 1
}

/// RFC 9162 §2.1.3.2 (`index < size`, proof already length-checked).
fn root_from_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
) -> Result<Hash, ProofError> {
    let (mut fn_, mut sn) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if sn == 0 {
            return Err(ProofError::WrongProofSize {
                expected: 0,
                got: proof.len(),
            });
        }
        if lsb(fn_) || fn_ == sn {
            r = node_hash(p, &r);
            while !lsb(fn_) && fn_ != 0 {
                fn_ >>= 1;
                sn >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        let (inner, border) = decomp_inclusion(index, size);
        return Err(ProofError::WrongProofSize {
            expected: inner + border,
            got: proof.len(),
        });
    }
    Ok(r)
}

fn expect_root(computed: Hash, expected: &[u8]) -> Result<(), ProofError> {
    if computed.as_slice() != expected {
        return Err(ProofError::RootMismatch {
            expected: expected.to_vec(),
            computed: computed.to_vec(),
        });
    }
    Ok(())
}

/// Verifies that `leaf` is at `index` in the tree of `size` leaves with `root`.
pub fn verify_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    verify_inclusion_bytes(index, size, leaf, proof, root)
}

/// [`verify_inclusion`] over hashes given as byte slices of any length.
pub fn verify_inclusion_bytes<P: AsRef<[u8]>>(
    index: u64,
    size: u64,
    leaf: &[u8],
    proof: &[P],
    root: &[u8],
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    let leaf = to_hash(leaf, "leaf hash")?;
    let (inner, border) = decomp_inclusion(index, size);
    check_len(proof.len(), inner + border)?;
    let proof = to_hashes(proof)?;
    let root = to_hash(root, "root")?;
    expect_root(root_from_inclusion(index, size, &leaf, &proof)?, &root)
}

/// Verifies that the tree of `size1` leaves with `root1` is a prefix of the
/// tree of `size2` leaves with `root2`. Requires `0 < size1 <= size2`; for
/// `size1 == size2` the proof must be empty and the roots equal.
pub fn verify_consistency(
    size1: u64,
    size2: u64,
    proof: &[Hash],
    root1: &Hash,
    root2: &Hash,
) -> Result<(), ProofError> {
    verify_consistency_bytes(size1, size2, proof, root1, root2)
}

/// [`verify_consistency`] over hashes given as byte slices of any length.
pub fn verify_consistency_bytes<P: AsRef<[u8]>>(
    size1: u64,
    size2: u64,
    proof: &[P],
    root1: &[u8],
    root2: &[u8],
) -> Result<(), ProofError> {
    if size1 > size2 {
        return Err(ProofError::SizeOrder { size1, size2 });
    }
    if size1 == 0 {
        return Err(ProofError::EmptyOldTree);
    }
    if size1 == size2 {
        check_len(proof.len(), 0)?;
        if root1 != root2 {
            return Err(ProofError::RootMismatch {
                expected: root2.to_vec(),
                computed: root1.to_vec(),
            });
        }
        return Ok(());
    }
    // 0 < size1 < size2. Expected length (transparency-dev/merkle decomposition):
    // the inclusion proof of leaf size1-1 in size2, minus the levels below the
    // rightmost perfect subtree of the old tree, plus that subtree's root
    // unless the old tree is itself perfect (then root1 is that root).
    let (inner, border) = decomp_inclusion(size1 - 1, size2);
    let shift = size1.trailing_zeros() as usize;
    let seeded = size1.is_power_of_two();
    check_len(proof.len(), usize::from(!seeded) + inner - shift + border)?;
    let root1 = to_hash(root1, "old root")?;
    let root2 = to_hash(root2, "new root")?;
    let proof = to_hashes(proof)?;

    // RFC 9162 §2.1.4.2.
    let (seed, rest) = if seeded {
        (root1, &proof[..])
    } else {
        (proof[0], &proof[1..])
    };
    let (mut fn_, mut sn) = (size1 - 1, size2 - 1);
    while lsb(fn_) {
        fn_ >>= 1;
        sn >>= 1;
    }
    let (mut fr, mut sr) = (seed, seed);
    for c in rest {
        if sn == 0 {
            return Err(ProofError::WrongProofSize {
                expected: proof.len() - 1,
                got: proof.len(),
            });
        }
        if lsb(fn_) || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while !lsb(fn_) && fn_ != 0 {
                fn_ >>= 1;
                sn >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(ProofError::WrongProofSize {
            expected: proof.len() + 1,
            got: proof.len(),
        });
    }
    if fr != root1 {
        return Err(ProofError::OldRootMismatch {
            expected: root1.to_vec(),
            computed: fr.to_vec(),
        });
    }
    expect_root(sr, &root2)
}

/// `[start, end)` is a subtree: non-empty, and `start` a multiple of the
/// smallest power of two `>= end - start`.
pub fn is_valid_subtree(start: u64, end: u64) -> bool {
    start < end
        && (end - start)
            .checked_next_power_of_two()
            .is_some_and(|w| start.is_multiple_of(w))
}

/// Verifies that `leaf` is at `index` in the subtree `[start, end)` whose hash is `subtree_root`.
pub fn verify_subtree_inclusion(
    index: u64,
    start: u64,
    end: u64,
    leaf: &Hash,
    proof: &[Hash],
    subtree_root: &Hash,
) -> Result<(), ProofError> {
    verify_subtree_inclusion_bytes(index, start, end, leaf, proof, subtree_root)
}

/// [`verify_subtree_inclusion`] over hashes given as byte slices of any length.
pub fn verify_subtree_inclusion_bytes<P: AsRef<[u8]>>(
    index: u64,
    start: u64,
    end: u64,
    leaf: &[u8],
    proof: &[P],
    subtree_root: &[u8],
) -> Result<(), ProofError> {
    if !is_valid_subtree(start, end) {
        return Err(ProofError::InvalidSubtree { start, end });
    }
    if index < start || index >= end {
        return Err(ProofError::IndexOutOfRange { index, size: end });
    }
    verify_inclusion_bytes(index - start, end - start, leaf, proof, subtree_root)
}

/// Verifies that the subtree `[start, end)` with hash `subtree_root` is part of
/// the tree of `size` leaves with `root`.
///
/// An empty subtree (`start == end <= size`) is trivially contained in any
/// tree: it verifies iff the proof is empty and `subtree_root` is the
/// empty-tree hash (the tree root is not constrained), as the
/// transparency-dev/merkle vectors require.
pub fn verify_subtree_consistency(
    start: u64,
    end: u64,
    size: u64,
    proof: &[Hash],
    subtree_root: &Hash,
    root: &Hash,
) -> Result<(), ProofError> {
    verify_subtree_consistency_bytes(start, end, size, proof, subtree_root, root)
}

/// [`verify_subtree_consistency`] over hashes given as byte slices of any length.
pub fn verify_subtree_consistency_bytes<P: AsRef<[u8]>>(
    start: u64,
    end: u64,
    size: u64,
    proof: &[P],
    subtree_root: &[u8],
    root: &[u8],
) -> Result<(), ProofError> {
    if end > size {
        return Err(ProofError::SubtreeBeyondTree { end, size });
    }
    if start == end {
        check_len(proof.len(), 0)?;
        let empty = empty_root();
        if subtree_root != empty.as_slice() {
            return Err(ProofError::OldRootMismatch {
                expected: subtree_root.to_vec(),
                computed: empty.to_vec(),
            });
        }
        return Ok(());
    }
    if !is_valid_subtree(start, end) {
        return Err(ProofError::InvalidSubtree { start, end });
    }
    if start == 0 && end == size {
        check_len(proof.len(), 0)?;
        if subtree_root != root {
            return Err(ProofError::RootMismatch {
                expected: root.to_vec(),
                computed: subtree_root.to_vec(),
            });
        }
        return Ok(());
    }
    // Expected length (transparency-dev/merkle decomposition).
    let expected = if end == size {
        // One left sibling per level where the subtree's ancestor is a right child.
        let level = bit_len((end - 1) ^ start);
        (start >> level).count_ones() as usize
    } else {
        let (inner, border) = decomp_inclusion(end - 1, size);
        let shift = (end - start).trailing_zeros() as usize;
        let seeded = (end - start).is_power_of_two();
        usize::from(!seeded) + inner - shift + border
    };
    check_len(proof.len(), expected)?;
    let node = to_hash(subtree_root, "subtree root")?;
    let root = to_hash(root, "root")?;
    let proof = to_hashes(proof)?;

    // MTC draft, "Verifying a Subtree Consistency Proof".
    let (mut fn_, mut sn, mut tn) = (start, end - 1, size - 1);
    if sn == tn {
        while fn_ != sn {
            fn_ >>= 1;
            sn >>= 1;
            tn >>= 1;
        }
    } else {
        while fn_ != sn && lsb(sn) {
            fn_ >>= 1;
            sn >>= 1;
            tn >>= 1;
        }
    }
    let (seed, rest) = if fn_ == sn {
        (node, &proof[..])
    } else {
        (proof[0], &proof[1..])
    };
    let (mut fr, mut sr) = (seed, seed);
    for c in rest {
        if tn == 0 {
            return Err(ProofError::WrongProofSize {
                expected: proof.len() - 1,
                got: proof.len(),
            });
        }
        if lsb(sn) || sn == tn {
            if fn_ < sn {
                fr = node_hash(c, &fr);
            }
            sr = node_hash(c, &sr);
            while !lsb(sn) {
                fn_ >>= 1;
                sn >>= 1;
                tn >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
        tn >>= 1;
    }
    if tn != 0 {
        return Err(ProofError::WrongProofSize {
            expected: proof.len() + 1,
            got: proof.len(),
        });
    }
    if fr != node {
        return Err(ProofError::OldRootMismatch {
            expected: node.to_vec(),
            computed: fr.to_vec(),
        });
    }
    expect_root(sr, &root)
}
