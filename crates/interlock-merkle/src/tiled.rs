//! A Merkle tree that keeps only its upper part in memory ([`TiledTree`]):
//! the roots of its complete *tiles* (aligned runs of [`TILE_WIDTH`] leaves)
//! and the leaves of the last, incomplete tile. The leaves of complete tiles
//! stay in storage and are brought in, one tile at a time, by the caller
//! ([`TileSource`]) when a proof or a leaf needs them. The trees of the last
//! few completed tiles may be kept ([`TiledTree::from_parts_keeping`]): the
//! newest entries are the ones most asked about, and a log stores their
//! leaves from them.
//!
//! Why: a [`Tree`] holds every leaf and node, about 99 bytes a leaf, and is
//! rebuilt from every stored leaf hash when a log opens: at 10 million entries
//! that is 15–20 s and most of a gigabyte on every start (issue 45). A tiled
//! tree of the same log holds 40 thousand tile roots (2.5 MB) and opens from
//! them; a proof reads at most two tiles (2 × 8 KiB of hashes).
//!
//! The split is exact: by RFC 6962's left-balanced shape, the hash of any
//! tile-aligned range `[a·W, b·W)` equals the Merkle Tree Hash of the tile
//! roots `a..b` (the largest power of two below `(b−a)·W` is `W` times the
//! largest below `b−a`), so the upper levels are an ordinary [`Tree`] over
//! tile roots, and every other range is cut, by the same rule, into aligned
//! runs and pieces inside one tile.
//!
//! Architecture invariant: nothing here reads storage. What a computation
//! lacks it names ([`TiledError::MissingTiles`]); the caller reads those tiles,
//! checks each against its root ([`TiledTree::tile_matches`]) and asks again.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::BuildHasher;

use crate::frontier::Frontier;
use crate::hash::{Hash, empty_root, node_hash};
use crate::proof::ProofError;
use crate::range::range_path;
use crate::tree::{
    Tree, check_consistency_args, check_inclusion_args, check_size, consistency_path,
    inclusion_path, split_point,
};

/// Height of a tile: a tile's root is a perfect subtree of this height.
pub const TILE_HEIGHT: u32 = 8;

/// Leaves in a complete tile (`2^TILE_HEIGHT`).
pub const TILE_WIDTH: u64 = 1 << TILE_HEIGHT;

/// Where complete tiles come from: `Some` with the tree of all
/// [`TILE_WIDTH`] leaves of tile `tile` (checked by the caller against its
/// root, [`TiledTree::tile_matches`]), or `None` if it is not at hand (the
/// computation then reports it as missing).
pub trait TileSource {
    /// The tree of complete tile `tile`, if at hand.
    fn tile(&self, tile: u64) -> Option<&Tree>;
}

/// No tiles at hand: for what needs none (roots at the current size, leaves
/// of the last tile), or to learn which tiles a computation needs.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTiles;

impl TileSource for NoTiles {
    fn tile(&self, _tile: u64) -> Option<&Tree> {
        None
    }
}

impl<S: BuildHasher> TileSource for HashMap<u64, Tree, S> {
    fn tile(&self, tile: u64) -> Option<&Tree> {
        self.get(&tile)
    }
}

/// Why a [`TiledTree`] computation could not answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TiledError {
    /// The sizes or index asked for are not valid for this tree.
    #[error(transparent)]
    Proof(#[from] ProofError),
    /// These complete tiles' leaves are needed and the source lacked them
    /// (ascending, no repeats): read them, check them, and ask again.
    #[error("the leaves of tiles {0:?} are needed")]
    MissingTiles(Vec<u64>),
}

/// An append-only RFC 6962 tree holding the roots of its complete tiles and
/// the leaves (with their perfect subtrees) of its last, incomplete tile.
///
/// Roots at the current size, the [`Frontier`], pushes and tile roots need no
/// storage; a root at an earlier size inside a complete tile, a proof and a
/// leaf of a complete tile need that tile's leaves from a [`TileSource`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TiledTree {
    /// A tree whose leaves are the roots of the complete tiles.
    tiles: Tree,
    /// The leaves of the incomplete last tile (fewer than [`TILE_WIDTH`]).
    tail: Tree,
    /// The trees of the last completed tiles, oldest first: at most
    /// `keep_recent`, and always the ones just before the tail.
    recent: VecDeque<Tree>,
    keep_recent: usize,
}

impl TiledTree {
    /// The empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tree of complete tiles with roots `tile_roots`, followed by the
    /// leaves `tail` (any number: whole tiles among them are completed).
    pub fn from_parts(tile_roots: &[Hash], tail: &[Hash]) -> Self {
        Self::from_parts_keeping(tile_roots, tail, 0)
    }

    /// [`from_parts`](Self::from_parts), keeping the trees of the last
    /// `recent` tiles completed from here on (those `tail` completes too).
    pub fn from_parts_keeping(tile_roots: &[Hash], tail: &[Hash], recent: usize) -> Self {
        let mut t = TiledTree {
            tiles: Tree::from_leaves(tile_roots),
            tail: Tree::new(),
            recent: VecDeque::with_capacity(recent),
            keep_recent: recent,
        };
        t.extend(tail.iter().copied());
        t
    }

    /// A tree holding `leaves`, in order.
    pub fn from_leaves(leaves: &[Hash]) -> Self {
        Self::from_parts(&[], leaves)
    }

    /// Appends a leaf hash; returns its index. Completing a tile moves its
    /// root up and empties the tail.
    pub fn push(&mut self, leaf_hash: Hash) -> u64 {
        let index = self.len();
        self.tail.push(leaf_hash);
        if self.tail.len() == TILE_WIDTH {
            let done = std::mem::take(&mut self.tail);
            self.tiles.push(done.root());
            if self.keep_recent > 0 {
                if self.recent.len() == self.keep_recent {
                    self.recent.pop_front();
                }
                self.recent.push_back(done);
            }
        }
        index
    }

    /// Number of leaves.
    pub fn len(&self) -> u64 {
        self.tiles.len() * TILE_WIDTH + self.tail.len()
    }

    /// True if the tree has no leaves.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of complete tiles.
    pub fn complete_tiles(&self) -> u64 {
        self.tiles.len()
    }

    /// The root of complete tile `tile`.
    pub fn tile_root(&self, tile: u64) -> Option<Hash> {
        self.tiles.leaf(tile)
    }

    /// The tree of complete tile `tile`, if it is one of the recent ones kept.
    pub fn recent_tile(&self, tile: u64) -> Option<&Tree> {
        let first = self.tiles.len() - self.recent.len() as u64;
        let at = tile.checked_sub(first)?;
        self.recent.get(usize::try_from(at).ok()?)
    }

    /// Whether `tile_tree` is exactly complete tile `tile`: all its leaves,
    /// and its root the tile's root. How a caller checks what it read from
    /// storage before trusting it.
    pub fn tile_matches(&self, tile: u64, tile_tree: &Tree) -> bool {
        tile_tree.len() == TILE_WIDTH && self.tile_root(tile) == Some(tile_tree.root())
    }

    /// The current root: `O(log n)` hashes, no tiles needed.
    pub fn root(&self) -> Hash {
        self.frontier().root()
    }

    /// The frontier (right edge) at the current size: `O(log n)`, no hashing.
    pub fn frontier(&self) -> Frontier {
        let upper = Frontier::of(&self.tiles);
        let lower = Frontier::of(&self.tail);
        let mut nodes = upper.nodes().to_vec();
        nodes.extend_from_slice(lower.nodes());
        Frontier::from_parts(self.len(), nodes)
    }

    /// The leaf hash at `index`.
    pub fn leaf(&self, index: u64, tiles: &impl TileSource) -> Result<Hash, TiledError> {
        check_inclusion_args(index, self.len())?;
        self.answer(tiles, |r| r.range_hash(index, index + 1))
    }

    /// The root of the tree made of the first `size` leaves.
    pub fn root_at(&self, size: u64, tiles: &impl TileSource) -> Result<Hash, TiledError> {
        self.check_size(size)?;
        self.answer(tiles, |r| r.range_hash(0, size))
    }

    /// Inclusion proof for leaf `index` in the tree of the first `size`
    /// leaves: needs the tile holding `index` (and the one `size` ends
    /// inside, if it is complete).
    pub fn inclusion_proof(
        &self,
        index: u64,
        size: u64,
        tiles: &impl TileSource,
    ) -> Result<Vec<Hash>, TiledError> {
        self.check_size(size)?;
        check_inclusion_args(index, size)?;
        self.answer(tiles, |r| {
            inclusion_path(index, size, &|lo, hi| r.range_hash(lo, hi))
        })
    }

    /// Consistency proof from size `old` to size `new` (`0 < old <= new <=
    /// len`): needs the complete tiles `old` and `new` end inside.
    pub fn consistency_proof(
        &self,
        old: u64,
        new: u64,
        tiles: &impl TileSource,
    ) -> Result<Vec<Hash>, TiledError> {
        self.check_size(new)?;
        if !check_consistency_args(old, new)? {
            return Ok(Vec::new());
        }
        self.answer(tiles, |r| {
            consistency_path(old, new, &|lo, hi| r.range_hash(lo, hi))
        })
    }

    /// The range proof of leaves `[start, end)` in the tree of the first
    /// `size` leaves (see [`crate::range`]): needs the complete tiles
    /// `start`, `end` and `size` fall inside.
    pub fn range_proof(
        &self,
        start: u64,
        end: u64,
        size: u64,
        tiles: &impl TileSource,
    ) -> Result<Vec<Hash>, TiledError> {
        self.check_size(size)?;
        self.answer(tiles, |r| {
            range_path(start, end, size, &|lo, hi| r.range_hash(lo, hi))
        })?
        .map_err(TiledError::Proof)
    }

    fn check_size(&self, size: u64) -> Result<(), ProofError> {
        check_size(size, self.len())
    }

    /// Runs `compute` over this tree and `tiles`; if any tile was missing the
    /// result is discarded and the missing tiles are named.
    fn answer<T, S: TileSource>(
        &self,
        tiles: &S,
        compute: impl FnOnce(&Ranges<'_, S>) -> T,
    ) -> Result<T, TiledError> {
        let ranges = Ranges {
            tree: self,
            tiles,
            missing: RefCell::new(BTreeSet::new()),
        };
        let out = compute(&ranges);
        let missing = ranges.missing.into_inner();
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(TiledError::MissingTiles(missing.into_iter().collect()))
        }
    }
}

/// Range hashes over a [`TiledTree`] and a [`TileSource`], noting the tiles
/// the source lacked (their ranges hash as the empty root meanwhile, and the
/// result is thrown away).
struct Ranges<'a, S> {
    tree: &'a TiledTree,
    tiles: &'a S,
    missing: RefCell<BTreeSet<u64>>,
}

impl<S: TileSource> Ranges<'_, S> {
    /// The Merkle Tree Hash of leaves `[lo, hi)` (`hi <= len`).
    fn range_hash(&self, lo: u64, hi: u64) -> Hash {
        if lo == hi {
            return empty_root();
        }
        let complete = self.tree.tiles.len() * TILE_WIDTH;
        if lo.is_multiple_of(TILE_WIDTH) && hi.is_multiple_of(TILE_WIDTH) && hi <= complete {
            return self.tree.tiles.range_hash(lo / TILE_WIDTH, hi / TILE_WIDTH);
        }
        let tile = lo / TILE_WIDTH;
        if (hi - 1) / TILE_WIDTH != tile {
            let k = split_point(hi - lo);
            return node_hash(&self.range_hash(lo, lo + k), &self.range_hash(lo + k, hi));
        }
        let base = tile * TILE_WIDTH;
        if lo >= complete {
            return self.tree.tail.range_hash(lo - base, hi - base);
        }
        match self
            .tree
            .recent_tile(tile)
            .or_else(|| self.tiles.tile(tile))
        {
            Some(t) if t.len() == TILE_WIDTH => t.range_hash(lo - base, hi - base),
            _ => {
                self.missing.borrow_mut().insert(tile);
                empty_root()
            }
        }
    }
}

impl Extend<Hash> for TiledTree {
    fn extend<I: IntoIterator<Item = Hash>>(&mut self, iter: I) {
        for h in iter {
            self.push(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::leaf_hash;

    fn leaves(n: u64) -> Vec<Hash> {
        (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect()
    }

    /// Every tile of `all`, as a source.
    fn source(all: &[Hash]) -> HashMap<u64, Tree> {
        all.chunks(TILE_WIDTH as usize)
            .enumerate()
            .filter(|(_, c)| c.len() as u64 == TILE_WIDTH)
            .map(|(i, c)| (i as u64, Tree::from_leaves(c)))
            .collect()
    }

    /// Sizes around tile and power-of-two edges.
    const SIZES: [u64; 12] = [1, 2, 255, 256, 257, 511, 512, 513, 767, 1024, 1025, 1300];

    #[test]
    fn roots_frontiers_and_leaves_agree_with_the_whole_tree() {
        for n in SIZES {
            let all = leaves(n);
            let whole = Tree::from_leaves(&all);
            let tiled = TiledTree::from_leaves(&all);
            assert_eq!(tiled.len(), n);
            assert_eq!(tiled.root(), whole.root(), "root at {n}");
            assert_eq!(tiled.frontier(), Frontier::of(&whole), "frontier at {n}");
            let src = source(&all);
            for size in [1, n / 3 + 1, n - 1, n].into_iter().filter(|&s| s >= 1) {
                assert_eq!(
                    tiled.root_at(size, &src),
                    whole.root_at(size).map_err(Into::into)
                );
            }
            for i in [0, n / 2, n - 1] {
                assert_eq!(tiled.leaf(i, &src), Ok(all[i as usize]));
            }
        }
    }

    #[test]
    fn proofs_agree_with_the_whole_tree() {
        let all = leaves(1300);
        let whole = Tree::from_leaves(&all);
        let src = source(&all);
        for size in SIZES {
            let tiled = TiledTree::from_leaves(&all[..size as usize]);
            for index in [0, 1, size / 2, size.saturating_sub(2), size - 1] {
                assert_eq!(
                    tiled.inclusion_proof(index, size, &src),
                    whole.inclusion_proof(index, size).map_err(Into::into),
                    "inclusion of {index} in {size}"
                );
            }
            for (start, end) in [(0, size), (1, size / 2 + 1), (size / 3, size - size / 5)] {
                if start < end {
                    assert_eq!(
                        tiled.range_proof(start, end, size, &src),
                        whole.range_proof(start, end, size).map_err(Into::into),
                        "range {start}..{end} in {size}"
                    );
                }
            }
            for old in [1, 255, 256, 257, size / 2 + 1, size] {
                if old > size {
                    continue;
                }
                assert_eq!(
                    tiled.consistency_proof(old, size, &src),
                    whole.consistency_proof(old, size).map_err(Into::into),
                    "consistency {old} → {size}"
                );
            }
        }
    }

    #[test]
    fn a_proof_names_the_tiles_it_lacks_and_reads_no_others() {
        let all = leaves(1300);
        let tiled = TiledTree::from_leaves(&all);
        // Leaf 300 is in tile 1; size 1300 ends in the tail (tile 5 is incomplete).
        assert_eq!(
            tiled.inclusion_proof(300, 1300, &NoTiles),
            Err(TiledError::MissingTiles(vec![1]))
        );
        // Size 700 ends inside complete tile 2; leaf 10 is in tile 0.
        assert_eq!(
            tiled.inclusion_proof(10, 700, &NoTiles),
            Err(TiledError::MissingTiles(vec![0, 2]))
        );
        assert_eq!(
            tiled.consistency_proof(300, 1300, &NoTiles),
            Err(TiledError::MissingTiles(vec![1]))
        );
        // The tail and the current root need nothing.
        assert!(tiled.inclusion_proof(1299, 1300, &NoTiles).is_ok());
        assert!(tiled.root_at(1280, &NoTiles).is_ok());
    }

    #[test]
    fn a_tile_whose_leaves_do_not_reproduce_its_root_is_refused() {
        let all = leaves(600);
        let tiled = TiledTree::from_leaves(&all);
        let tile = |l: &[Hash]| Tree::from_leaves(l);
        assert!(tiled.tile_matches(1, &tile(&all[256..512])));
        let mut edited = all[256..512].to_vec();
        edited[7] = leaf_hash(b"edited");
        assert!(!tiled.tile_matches(1, &tile(&edited)));
        assert!(
            !tiled.tile_matches(1, &tile(&all[256..511])),
            "a short tile"
        );
        assert!(
            !tiled.tile_matches(2, &tile(&all[512..600])),
            "the incomplete tile"
        );
    }

    #[test]
    fn sizes_and_indices_out_of_range_are_errors_not_panics() {
        let tiled = TiledTree::from_leaves(&leaves(300));
        assert!(matches!(
            tiled.inclusion_proof(300, 300, &NoTiles),
            Err(TiledError::Proof(ProofError::IndexOutOfRange { .. }))
        ));
        assert!(matches!(
            tiled.root_at(301, &NoTiles),
            Err(TiledError::Proof(ProofError::SizeBeyondTree { .. }))
        ));
        assert!(matches!(
            tiled.consistency_proof(0, 10, &NoTiles),
            Err(TiledError::Proof(ProofError::EmptyOldTree))
        ));
        // A source whose tile is short is treated as lacking it.
        let short: HashMap<u64, Tree> = [(0, Tree::from_leaves(&leaves(10)))].into();
        assert_eq!(
            tiled.leaf(3, &short),
            Err(TiledError::MissingTiles(vec![0]))
        );
    }

    #[test]
    fn the_recent_tiles_kept_answer_without_a_source() {
        let all = leaves(1300);
        let whole = Tree::from_leaves(&all);
        let tiled = TiledTree::from_parts_keeping(&[], &all, 2);
        // Tiles 3 and 4 are kept; 0–2 are not.
        assert!(tiled.recent_tile(2).is_none());
        assert_eq!(tiled.recent_tile(4).map(Tree::root), tiled.tile_root(4));
        assert_eq!(
            tiled.inclusion_proof(900, 1300, &NoTiles),
            whole.inclusion_proof(900, 1300).map_err(Into::into)
        );
        assert_eq!(
            tiled.inclusion_proof(600, 1300, &NoTiles),
            Err(TiledError::MissingTiles(vec![2]))
        );
    }

    #[test]
    fn parts_reopen_the_same_tree() {
        let all = leaves(1000);
        let tiled = TiledTree::from_leaves(&all);
        let roots: Vec<Hash> = (0..tiled.complete_tiles())
            .map(|t| tiled.tile_root(t).unwrap())
            .collect();
        let reopened = TiledTree::from_parts(&roots, &all[768..]);
        assert_eq!(reopened, tiled);
    }
}
