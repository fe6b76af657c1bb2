//! Range proofs: a contiguous run of leaves tied to a tree root without a
//! proof per leaf.
//!
//! A bundle that holds every leaf of `[start, end)` of a tree of `size` leaves
//! does not need `end − start` inclusion proofs (`O(n log n)` hashes on the
//! wire): the verifier recomputes the tree over the leaves it holds and needs,
//! for the rest of the tree, only the roots of the largest RFC 6962 subtrees
//! that lie wholly outside the range. Walking the tree from its root (RFC 6962
//! §2.1: split `[lo, hi)` at the largest power of two `k < hi − lo`), a node
//! wholly outside `[start, end)` is one proof hash, a node wholly inside is
//! computed from the leaves, and a node that straddles a boundary is split.
//!
//! What that leaves, in order:
//!
//! * left of `start`: the perfect subtrees of `[0, start)` by the set bits of
//!   `start` (the tree's *frontier* at size `start`, [`crate::Frontier`]): no
//!   node that ends at or before `start` can straddle, so the walk stops at
//!   exactly those — at most `popcount(start)` hashes;
//! * right of `end`: the subtrees covering `[end, size)` that an RFC 9162
//!   §2.1.4 consistency proof from `end` to `size` carries for the leaves after
//!   `end` — at most `⌈log₂ size⌉` hashes, none when `end == size`.
//!
//! So `[0, size)` needs no hash at all (the root is recomputed), and any range
//! needs `O(log size)`: a proof is a consistency proof's right part plus a
//! frontier, with the range's own leaves in the middle. The hashes are listed
//! left to right, in the order the walk meets them; the verifier knows from
//! `start`, `end` and `size` alone which node each one is, so a proof of the
//! wrong length is [`ProofError::WrongProofSize`], not a root mismatch.

use crate::hash::{Hash, node_hash};
use crate::proof::ProofError;
use crate::tree::{Tree, root};

/// Largest power of two strictly smaller than `n` (`n >= 2`).
fn split_point(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

pub(crate) fn check_range(start: u64, end: u64, size: u64) -> Result<(), ProofError> {
    if start >= end || end > size {
        return Err(ProofError::InvalidRange { start, end, size });
    }
    Ok(())
}

/// The number of hashes a range proof of `[start, end)` in a tree of `size`
/// leaves holds (see the module docs).
pub fn range_proof_len(start: u64, end: u64, size: u64) -> Result<usize, ProofError> {
    check_range(start, end, size)?;
    fn count(lo: u64, hi: u64, start: u64, end: u64) -> usize {
        if hi <= start || lo >= end {
            return 1;
        }
        if start <= lo && hi <= end {
            return 0;
        }
        let k = split_point(hi - lo);
        count(lo, lo + k, start, end) + count(lo + k, hi, start, end)
    }
    Ok(count(0, size, start, end))
}

/// The walk of the module docs: `outside(lo, hi)` gives the hash of a node
/// wholly outside the range, `inside(lo, hi)` that of a node wholly inside.
pub(crate) fn walk(
    (lo, hi): (u64, u64),
    (start, end): (u64, u64),
    outside: &mut dyn FnMut(u64, u64) -> Result<Hash, ProofError>,
    inside: &dyn Fn(u64, u64) -> Hash,
) -> Result<Hash, ProofError> {
    if hi <= start || lo >= end {
        return outside(lo, hi);
    }
    if start <= lo && hi <= end {
        return Ok(inside(lo, hi));
    }
    let k = split_point(hi - lo);
    let left = walk((lo, lo + k), (start, end), outside, inside)?;
    let right = walk((lo + k, hi), (start, end), outside, inside)?;
    Ok(node_hash(&left, &right))
}

impl Tree {
    /// The range proof of leaves `[start, end)` in the tree of the first
    /// `size` leaves: the hashes that, with those leaves, recompute its root.
    pub fn range_proof(&self, start: u64, end: u64, size: u64) -> Result<Vec<Hash>, ProofError> {
        crate::tree::check_size(size, self.len())?;
        range_path(start, end, size, &|lo, hi| self.range_hash(lo, hi))
    }
}

/// The range proof of `[start, end)` in a tree of `size` leaves, with
/// `mth(lo, hi)` giving the hash of the leaves `[lo, hi)`.
pub(crate) fn range_path(
    start: u64,
    end: u64,
    size: u64,
    mth: &dyn Fn(u64, u64) -> Hash,
) -> Result<Vec<Hash>, ProofError> {
    check_range(start, end, size)?;
    let mut proof = Vec::new();
    walk(
        (0, size),
        (start, end),
        &mut |lo, hi| {
            let h = mth(lo, hi);
            proof.push(h);
            Ok(h)
        },
        // The inside is the verifier's to recompute; any value will do here.
        &|_, _| [0; 32],
    )?;
    Ok(proof)
}

/// The root of the tree of `size` leaves recomputed from `leaves` (the leaf
/// hashes of `[start, start + leaves.len())`, in order) and their range proof.
///
/// The subtrees wholly inside the range are hashed with [`root`], on several
/// threads when they are large: for `[0, size)` this is the whole cost.
pub fn root_from_range(
    start: u64,
    size: u64,
    leaves: &[Hash],
    proof: &[Hash],
) -> Result<Hash, ProofError> {
    let end = start.saturating_add(leaves.len() as u64);
    let expected = range_proof_len(start, end, size)?;
    if proof.len() != expected {
        return Err(ProofError::WrongProofSize {
            expected,
            got: proof.len(),
        });
    }
    let mut next = proof.iter();
    walk(
        (0, size),
        (start, end),
        &mut |_, _| {
            next.next().copied().ok_or(ProofError::WrongProofSize {
                expected,
                got: proof.len(),
            })
        },
        &|lo, hi| root(&leaves[(lo - start) as usize..(hi - start) as usize]),
    )
}

/// Verifies that `leaves` are the leaf hashes of `[start, start + leaves.len())`
/// of the tree of `size` leaves with `root`.
pub fn verify_range(
    start: u64,
    size: u64,
    leaves: &[Hash],
    proof: &[Hash],
    expected_root: &Hash,
) -> Result<(), ProofError> {
    let computed = root_from_range(start, size, leaves, proof)?;
    if &computed != expected_root {
        return Err(ProofError::RootMismatch {
            expected: expected_root.to_vec(),
            computed: computed.to_vec(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::leaf_hash;

    fn leaves(n: u64) -> Vec<Hash> {
        (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect()
    }

    /// Every range of every tree up to 40 leaves: the proof has the predicted
    /// length, recomputes the root, and fails for a changed, dropped, swapped
    /// or shifted leaf and for any flipped proof bit.
    #[test]
    fn every_range_of_small_trees() {
        let all = leaves(40);
        for size in 1..=40u64 {
            let tree = Tree::from_leaves(&all[..size as usize]);
            let r = tree.root();
            for start in 0..size {
                for end in start + 1..=size {
                    let p = tree.range_proof(start, end, size).unwrap();
                    assert_eq!(p.len(), range_proof_len(start, end, size).unwrap());
                    let held = &all[start as usize..end as usize];
                    verify_range(start, size, held, &p, &r).unwrap();
                    // Left of the range: the frontier of the tree at `start`.
                    let left = start.count_ones() as usize;
                    assert_eq!(
                        &p[..left],
                        crate::Frontier::of(&Tree::from_leaves(&all[..start as usize])).nodes(),
                        "{start}..{end} of {size}"
                    );
                    if end == size {
                        assert_eq!(p.len(), left);
                    } else {
                        // Right of the range: nodes a consistency proof from
                        // `end` to `size` carries, in its order.
                        let c = tree.consistency_proof(end, size).unwrap();
                        let mut rest = c.iter();
                        assert!(
                            p[left..].iter().all(|h| rest.any(|x| x == h)),
                            "{start}..{end} of {size}"
                        );
                    }
                    let mut edited = held.to_vec();
                    edited[0][0] ^= 1;
                    assert!(verify_range(start, size, &edited, &p, &r).is_err());
                    if held.len() > 1 {
                        let mut swapped = held.to_vec();
                        swapped.swap(0, 1);
                        assert!(verify_range(start, size, &swapped, &p, &r).is_err());
                        assert!(verify_range(start, size, &held[1..], &p, &r).is_err());
                    }
                    if start > 0 {
                        assert!(verify_range(start - 1, size, held, &p, &r).is_err());
                    }
                    for i in 0..p.len() {
                        let mut bad = p.clone();
                        bad[i][31] ^= 0x80;
                        assert!(verify_range(start, size, held, &bad, &r).is_err());
                    }
                }
            }
        }
    }

    #[test]
    fn the_whole_tree_needs_no_proof() {
        let all = leaves(1000);
        let tree = Tree::from_leaves(&all);
        assert!(tree.range_proof(0, 1000, 1000).unwrap().is_empty());
        verify_range(0, 1000, &all, &[], &tree.root()).unwrap();
        // Against a later checkpoint, only the right edge is carried.
        let p = tree.range_proof(0, 600, 1000).unwrap();
        assert_eq!(p.len(), range_proof_len(0, 600, 1000).unwrap());
        verify_range(0, 1000, &all[..600], &p, &tree.root()).unwrap();
    }

    #[test]
    fn bad_ranges_are_refused() {
        let tree = Tree::from_leaves(&leaves(10));
        for (s, e, n) in [(3, 3, 10), (5, 4, 10), (0, 11, 10)] {
            assert_eq!(
                range_proof_len(s, e, n),
                Err(ProofError::InvalidRange {
                    start: s,
                    end: e,
                    size: n
                })
            );
        }
        assert!(matches!(
            tree.range_proof(0, 5, 11),
            Err(ProofError::SizeBeyondTree { .. })
        ));
        assert!(matches!(
            root_from_range(0, 10, &leaves(10), &[[0; 32]]),
            Err(ProofError::WrongProofSize {
                expected: 0,
                got: 1
            })
        ));
        assert!(root_from_range(0, 10, &[], &[]).is_err());
    }
}
