//! Tree hash and proof *generation* (RFC 6962 §2.1, RFC 9162 §2.1.3.1 / §2.1.4.1).
//!
//! The free functions work over a slice of leaf hashes and recompute what they
//! need; [`Tree`] keeps every complete subtree hash so that roots and proofs at
//! any earlier size cost `O(log n)` hashes.

use crate::hash::{Hash, empty_root, node_hash};
use crate::proof::ProofError;

/// Inputs at least this large are hashed on several threads by [`root`].
pub const PARALLEL_ROOT_THRESHOLD: usize = 1 << 16;

/// The Merkle Tree Hash (MTH) over a list of leaf hashes.
///
/// Level by level: pairing adjacent nodes and carrying an odd last node up
/// unchanged yields exactly RFC 6962's left-balanced tree (split at the
/// largest power of two `< n`), because after `j` levels node `i` is the MTH
/// of leaves `[i·2^j, min((i+1)·2^j, n))`. That locality also lets large
/// inputs (≥ [`PARALLEL_ROOT_THRESHOLD`]) be cut into power-of-two chunks
/// whose roots are computed on scoped threads (one per available core) and
/// then reduced the same way; see [`root_sequential`] for one thread.
pub fn root(leaves: &[Hash]) -> Hash {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if threads < 2 || leaves.len() < PARALLEL_ROOT_THRESHOLD {
        return root_sequential(leaves);
    }
    let chunk = leaves.len().div_ceil(threads).next_power_of_two();
    let chunk_roots: Vec<Hash> = std::thread::scope(|s| {
        let handles: Vec<_> = leaves
            .chunks(chunk)
            .map(|c| s.spawn(move || root_sequential(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    root_sequential(&chunk_roots)
}

/// [`root`] on the calling thread only, in a single buffer of `⌈n/2⌉` hashes.
pub fn root_sequential(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            // First level reads from `leaves`; later levels reduce `buf` in place.
            let mut buf: Vec<Hash> = leaves
                .chunks(2)
                .map(|pair| match pair {
                    [l, r] => node_hash(l, r),
                    [single] => *single,
                    _ => unreachable!("chunks(2) yields 1 or 2 items"),
                })
                .collect();
            debug_assert_eq!(buf.len(), n.div_ceil(2));
            let mut len = buf.len();
            while len > 1 {
                let half = len / 2;
                for i in 0..half {
                    buf[i] = node_hash(&buf[2 * i], &buf[2 * i + 1]);
                }
                if len % 2 == 1 {
                    buf[half] = buf[len - 1];
                    len = half + 1;
                } else {
                    len = half;
                }
            }
            buf[0]
        }
    }
}

/// Largest power of two strictly smaller than `n` (`n >= 2`).
pub(crate) fn split_point(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// `PATH(index, D[0..size])` (RFC 6962 §2.1.1), ordered leaf to root, using
/// `mth(start, end)` to get the hash of the leaf range `[start, end)`.
pub(crate) fn inclusion_path(index: u64, size: u64, mth: &dyn Fn(u64, u64) -> Hash) -> Vec<Hash> {
    let mut proof = Vec::new();
    let (mut lo, mut hi) = (0u64, size);
    // Walk from the root down to the leaf; the siblings come out root-first.
    while hi - lo > 1 {
        let k = split_point(hi - lo);
        if index - lo < k {
            proof.push(mth(lo + k, hi));
            hi = lo + k;
        } else {
            proof.push(mth(lo, lo + k));
            lo += k;
        }
    }
    proof.reverse();
    proof
}

/// `PROOF(m, D[0..n])` = `SUBPROOF(m, D[n], true)` (RFC 6962 §2.1.2), for `0 < m < n`.
pub(crate) fn consistency_path(m: u64, n: u64, mth: &dyn Fn(u64, u64) -> Hash) -> Vec<Hash> {
    let mut proof = Vec::new();
    let (mut lo, mut hi, mut m, mut whole) = (0u64, n, m, true);
    loop {
        let size = hi - lo;
        if m == size {
            if !whole {
                proof.push(mth(lo, hi));
            }
            break;
        }
        let k = split_point(size);
        if m <= k {
            proof.push(mth(lo + k, hi));
            hi = lo + k;
        } else {
            proof.push(mth(lo, lo + k));
            lo += k;
            m -= k;
            whole = false;
        }
    }
    proof.reverse();
    proof
}

/// [`ProofError::SizeBeyondTree`] unless `size <= len`.
pub(crate) fn check_size(size: u64, len: u64) -> Result<(), ProofError> {
    if size > len {
        return Err(ProofError::SizeBeyondTree { size, len });
    }
    Ok(())
}

pub(crate) fn check_inclusion_args(index: u64, size: u64) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    Ok(())
}

/// `Ok(true)` if a proof must be generated, `Ok(false)` if it is empty (`old == new`).
pub(crate) fn check_consistency_args(old: u64, new: u64) -> Result<bool, ProofError> {
    if old > new {
        return Err(ProofError::SizeOrder {
            size1: old,
            size2: new,
        });
    }
    if old == 0 {
        return Err(ProofError::EmptyOldTree);
    }
    Ok(old < new)
}

fn len_u64(leaves: &[Hash]) -> u64 {
    leaves.len() as u64
}

fn slice_mth(leaves: &[Hash]) -> impl Fn(u64, u64) -> Hash + '_ {
    |lo, hi| root_sequential(&leaves[lo as usize..hi as usize])
}

/// Inclusion proof for leaf `index` in the tree of all `leaves`.
///
/// Recomputes the sibling subtree hashes: `O(n)` hashes. For repeated proofs
/// over a large log keep a [`Tree`], which answers in `O(log² n)`.
pub fn inclusion_proof(leaves: &[Hash], index: u64) -> Result<Vec<Hash>, ProofError> {
    let size = len_u64(leaves);
    check_inclusion_args(index, size)?;
    Ok(inclusion_path(index, size, &slice_mth(leaves)))
}

/// Consistency proof from the tree of the first `old_size` leaves to the tree
/// of all `leaves`. Empty when the sizes are equal; an error for `old_size == 0`
/// (a proof from the empty tree is meaningless and verifiers reject it).
/// `O(n)` hashes, like [`inclusion_proof`].
pub fn consistency_proof(leaves: &[Hash], old_size: u64) -> Result<Vec<Hash>, ProofError> {
    let size = len_u64(leaves);
    if !check_consistency_args(old_size, size)? {
        return Ok(Vec::new());
    }
    Ok(consistency_path(old_size, size, &slice_mth(leaves)))
}

/// An in-memory append-only Merkle tree that keeps all leaf hashes and every
/// complete (perfect, aligned) subtree hash: about `2n` hashes of memory,
/// `O(1)` amortised hashes per [`push`](Tree::push), `O(log n)` per root or
/// proof hash at any earlier size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    /// `levels[h][i]` is the hash of leaves `[i·2^h, (i+1)·2^h)`; `levels[0]` are the leaves.
    levels: Vec<Vec<Hash>>,
}

impl Tree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tree holding `leaves`, in order.
    pub fn from_leaves(leaves: &[Hash]) -> Self {
        let mut t = Self::new();
        t.extend(leaves.iter().copied());
        t
    }

    /// Appends a leaf hash; returns its index.
    pub fn push(&mut self, leaf_hash: Hash) -> u64 {
        if self.levels.is_empty() {
            self.levels.push(Vec::new());
        }
        self.levels[0].push(leaf_hash);
        let index = self.levels[0].len() as u64 - 1;
        let mut h = 0;
        while self.levels[h].len().is_multiple_of(2) {
            let n = self.levels[h].len();
            let parent = node_hash(&self.levels[h][n - 2], &self.levels[h][n - 1]);
            if self.levels.len() == h + 1 {
                self.levels.push(Vec::new());
            }
            self.levels[h + 1].push(parent);
            h += 1;
        }
        index
    }

    /// Number of leaves.
    pub fn len(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// True if the tree has no leaves.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every leaf hash, in order.
    pub fn leaves(&self) -> &[Hash] {
        self.levels.first().map_or(&[], Vec::as_slice)
    }

    /// The leaf hash at `index`, if any.
    pub fn leaf(&self, index: u64) -> Option<Hash> {
        self.levels
            .first()?
            .get(usize::try_from(index).ok()?)
            .copied()
    }

    /// The current root.
    pub fn root(&self) -> Hash {
        self.range_hash(0, self.len())
    }

    /// The root of the tree made of the first `size` leaves.
    pub fn root_at(&self, size: u64) -> Result<Hash, ProofError> {
        self.check_size(size)?;
        Ok(self.range_hash(0, size))
    }

    /// Inclusion proof for leaf `index` in the tree of the first `size` leaves.
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(size)?;
        check_inclusion_args(index, size)?;
        Ok(inclusion_path(index, size, &|lo, hi| {
            self.range_hash(lo, hi)
        }))
    }

    /// Consistency proof from size `old` to size `new` (`0 < old <= new <= len`).
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(new)?;
        if !check_consistency_args(old, new)? {
            return Ok(Vec::new());
        }
        Ok(consistency_path(old, new, &|lo, hi| {
            self.range_hash(lo, hi)
        }))
    }

    fn check_size(&self, size: u64) -> Result<(), ProofError> {
        check_size(size, self.len())
    }

    /// The stored root of the perfect subtree of leaves
    /// `[index·2^height, (index+1)·2^height)`, which must be complete.
    pub(crate) fn perfect_subtree(&self, height: u32, index: u64) -> Hash {
        self.levels[height as usize][index as usize]
    }

    /// MTH of leaves `[lo, hi)`, from stored perfect subtrees where possible.
    pub(crate) fn range_hash(&self, lo: u64, hi: u64) -> Hash {
        let n = hi - lo;
        if n == 0 {
            return empty_root();
        }
        if n.is_power_of_two() && lo.is_multiple_of(n) {
            let h = n.trailing_zeros() as usize;
            return self.levels[h][(lo >> h) as usize];
        }
        let k = split_point(n);
        node_hash(&self.range_hash(lo, lo + k), &self.range_hash(lo + k, hi))
    }
}

impl Extend<Hash> for Tree {
    fn extend<I: IntoIterator<Item = Hash>>(&mut self, iter: I) {
        for h in iter {
            self.push(h);
        }
    }
}

impl FromIterator<Hash> for Tree {
    fn from_iter<I: IntoIterator<Item = Hash>>(iter: I) -> Self {
        let mut t = Tree::new();
        t.extend(iter);
        t
    }
}
