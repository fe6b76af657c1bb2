//! The right edge of an RFC 6962 tree ([`Frontier`]): what it takes to extend
//! a tree by more leaves and compute the new root, without the tree itself.

use crate::hash::{Hash, empty_root, node_hash};
use crate::tree::Tree;

/// The most nodes a frontier holds: one per bit of a `u64` size.
const MAX_NODES: usize = u64::BITS as usize;

/// The right edge of an RFC 6962 tree: the roots of its maximal perfect
/// subtrees, largest (leftmost) first, one per set bit of its size.
///
/// A tree of size `n = 2^a + 2^b + …` (`a > b > …`) is, by RFC 6962's
/// left-balanced split, the perfect subtree of its first `2^a` leaves, then
/// that of the next `2^b`, and so on; its root folds those subtree roots from
/// the right. Appending a leaf merges the subtrees it completes, like a binary
/// increment. So a frontier extends a tree in `O(log n)` memory and `O(1)`
/// amortised hashes per leaf, and gives the extended root in `O(log n)` hashes,
/// without touching or cloning the [`Tree`] it was taken from: a log writer
/// computes (and signs) the root of a batch beside its tree and extends the tree
/// only once the batch is durable.
///
/// Pushing never allocates: the node list is sized for any `u64` tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    /// The perfect subtree roots, largest first (`size.count_ones()` of them).
    nodes: Vec<Hash>,
}

impl Default for Frontier {
    fn default() -> Self {
        Self::new()
    }
}

impl Frontier {
    /// The frontier of the empty tree.
    pub fn new() -> Frontier {
        Frontier {
            size: 0,
            nodes: Vec::with_capacity(MAX_NODES),
        }
    }

    /// The frontier of `tree`, from the perfect subtree roots it stores:
    /// `O(log n)`, no hashing.
    pub fn of(tree: &Tree) -> Frontier {
        let size = tree.len();
        let mut nodes = Vec::with_capacity(MAX_NODES);
        let mut start = 0u64;
        for height in (0..u64::BITS).rev() {
            let width = 1u64 << height;
            if size & width != 0 {
                nodes.push(tree.perfect_subtree(height, start >> height));
                start += width;
            }
        }
        Frontier { size, nodes }
    }

    /// A frontier from its parts: `nodes` are the perfect subtree roots of a
    /// tree of `size` leaves, largest first (one per set bit of `size`).
    pub(crate) fn from_parts(size: u64, mut nodes: Vec<Hash>) -> Frontier {
        debug_assert_eq!(nodes.len(), size.count_ones() as usize);
        nodes.reserve(MAX_NODES.saturating_sub(nodes.len()));
        Frontier { size, nodes }
    }

    /// The number of leaves of the tree this is the frontier of.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The roots of the tree's maximal perfect subtrees, largest (leftmost)
    /// first: one per set bit of [`size`](Frontier::size), none for the empty
    /// tree.
    pub fn nodes(&self) -> &[Hash] {
        &self.nodes
    }

    /// Appends a leaf hash, merging the perfect subtrees it completes.
    pub fn push(&mut self, leaf_hash: Hash) {
        let mut node = leaf_hash;
        let mut bits = self.size;
        while bits & 1 == 1 {
            let left = self.nodes.pop().expect("one node per set bit");
            node = node_hash(&left, &node);
            bits >>= 1;
        }
        self.nodes.push(node);
        self.size += 1;
    }

    /// The RFC 6962 root (Merkle Tree Hash) of the tree: the perfect subtree
    /// roots folded from the right; the empty tree's hash if it has no leaf.
    pub fn root(&self) -> Hash {
        let mut it = self.nodes.iter().rev();
        let Some(&last) = it.next() else {
            return empty_root();
        };
        it.fold(last, |right, left| node_hash(left, &right))
    }
}

impl Extend<Hash> for Frontier {
    fn extend<I: IntoIterator<Item = Hash>>(&mut self, iter: I) {
        for h in iter {
            self.push(h);
        }
    }
}

impl From<&Tree> for Frontier {
    fn from(tree: &Tree) -> Frontier {
        Frontier::of(tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::leaf_hash;
    use crate::tree::root;

    fn leaves(n: u64) -> Vec<Hash> {
        (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect()
    }

    /// The frontier of every tree up to 300 leaves reproduces its root, holds
    /// one node per set bit of its size, and extending it leaf by leaf
    /// reproduces the root of the extended tree.
    #[test]
    fn frontier_matches_tree_roots() {
        let all = leaves(340);
        for n in 0..=300u64 {
            let tree = Tree::from_leaves(&all[..n as usize]);
            let mut f = Frontier::of(&tree);
            assert_eq!(f.size(), n);
            assert_eq!(f.nodes().len(), n.count_ones() as usize, "size {n}");
            assert_eq!(f.root(), tree.root(), "size {n}");
            for m in n + 1..=n + 40 {
                f.push(all[m as usize - 1]);
                assert_eq!(f.root(), root(&all[..m as usize]), "{n}+{m}");
            }
        }
        let big = Tree::from_leaves(&all);
        assert_eq!(Frontier::of(&big).root(), big.root());
    }

    /// Extending by batches of every size agrees with the tree extended by the
    /// same batches: same root, and the same frontier as one taken afresh.
    #[test]
    fn batches_agree_with_the_tree() {
        let all = leaves(1200);
        for batch in [1usize, 2, 3, 5, 8, 31, 64, 100, 257] {
            let mut tree = Tree::new();
            let mut f = Frontier::new();
            for chunk in all.chunks(batch) {
                f.extend(chunk.iter().copied());
                tree.extend(chunk.iter().copied());
                assert_eq!(f.size(), tree.len());
                assert_eq!(f.root(), tree.root(), "batch {batch}, size {}", f.size());
                assert_eq!(f, Frontier::of(&tree), "batch {batch}, size {}", f.size());
            }
        }
    }

    #[test]
    fn the_empty_tree() {
        let f = Frontier::new();
        assert_eq!(f, Frontier::of(&Tree::new()));
        assert_eq!(f, Frontier::default());
        assert_eq!((f.size(), f.nodes()), (0, &[][..]));
        assert_eq!(f.root(), empty_root());
    }

    /// A size of `2^k − 1` holds the most nodes for its magnitude; pushing one
    /// leaf folds them all into one, with no allocation on the way.
    #[test]
    fn nodes_merge_like_a_binary_increment() {
        let all = leaves(256);
        let mut f = Frontier::from(&Tree::from_leaves(&all[..255]));
        assert_eq!(f.nodes().len(), 8);
        let capacity = f.nodes.capacity();
        f.push(all[255]);
        assert_eq!(f.nodes(), &[root(&all)]);
        assert_eq!(f.nodes.capacity(), capacity);
        assert!(capacity >= MAX_NODES);
    }
}
