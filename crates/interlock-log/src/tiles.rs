//! The leaves of the log's complete tiles, read from the store when a proof
//! or a verified entry needs them (the tree in memory holds only the tiles'
//! roots: `interlock_merkle::TiledTree`), each checked against its root
//! before anything is computed from it.

use std::collections::{HashMap, VecDeque};

use interlock_merkle::{Hash, TILE_WIDTH, TiledError, TiledTree, Tree};
use interlock_store::{LogTile, Store, StoreError};

use crate::error::LogError;

/// How many tiles (16 KiB each, as trees) a cache keeps.
const TILE_CACHE: usize = 64;

/// How many of the last completed tiles a log's tree keeps whole: what is
/// asked about most, and where the tiles it stores are taken from (2 MiB).
pub(crate) const RECENT_TILES: usize = 128;

/// The trees of recently read complete tiles, at most [`TILE_CACHE`]; the
/// one read longest ago goes first.
#[derive(Default)]
pub(crate) struct TileCache {
    pub(crate) tiles: HashMap<u64, Tree>,
    order: VecDeque<u64>,
}

impl TileCache {
    fn insert(&mut self, tile: u64, tree: Tree) {
        if self.tiles.insert(tile, tree).is_none() {
            self.order.push_back(tile);
        }
        while self.order.len() > TILE_CACHE {
            if let Some(old) = self.order.pop_front() {
                self.tiles.remove(&old);
            }
        }
    }
}

/// Whatever lends a tiled tree for a moment: a log's lives behind a lock that
/// must not be held across the store's reads.
pub(crate) trait HoldsTree {
    /// Runs `f` with the tree.
    fn with_tree<R>(&self, f: impl FnOnce(&TiledTree) -> R) -> R;
}

impl HoldsTree for TiledTree {
    fn with_tree<R>(&self, f: impl FnOnce(&TiledTree) -> R) -> R {
        f(self)
    }
}

/// Computes over a tiled tree, reading the tiles it lacks from `store`.
///
/// `compute` runs with the tree `holder` lends and the cached tiles; each
/// tile it names as missing is read, checked against the tree's root for it
/// ([`LogError::TileMismatch`] if its leaves do not reproduce it), cached,
/// and `compute` runs again.
pub(crate) async fn with_tiles<T>(
    store: &Store,
    cache: &std::sync::Mutex<TileCache>,
    holder: &(impl HoldsTree + ?Sized),
    compute: impl Fn(&TiledTree, &HashMap<u64, Tree>) -> Result<T, TiledError>,
) -> Result<T, LogError> {
    // Two rounds suffice (a complete tile never changes); a third would mean
    // the store changed under the computation.
    for _ in 0..3 {
        let wanted: Vec<(u64, Option<Hash>)> = match holder.with_tree(|tree| {
            let tiles = cache.lock().unwrap_or_else(|e| e.into_inner());
            compute(tree, &tiles.tiles).map_err(|e| match e {
                TiledError::MissingTiles(missing) => {
                    Ok(missing.iter().map(|&t| (t, tree.tile_root(t))).collect())
                }
                TiledError::Proof(e) => Err(e),
            })
        }) {
            Ok(answer) => return Ok(answer),
            Err(Err(e)) => return Err(e.into()),
            Err(Ok(wanted)) => wanted,
        };
        for (tile, root) in wanted {
            let tree = read_tile(store, tile, root).await?;
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(tile, tree);
        }
    }
    Err(LogError::CheckpointMismatch(
        "the log's tiles kept changing while a proof was computed".into(),
    ))
}

/// Complete tile `tile`, checked against `root`: from its stored leaf
/// hashes (one row), or, if they are not stored or do not reproduce the
/// root, from its 256 leaves' rows.
async fn read_tile(store: &Store, tile: u64, root: Option<Hash>) -> Result<Tree, LogError> {
    let matches = |t: &Tree| t.len() == TILE_WIDTH && Some(t.root()) == root;
    // A row cut short is as untrusted as a wrong one: the leaf rows decide.
    let stored = match store.log_tile_leaf_hashes(tile).await {
        Err(StoreError::Malformed(_)) => None,
        other => other?,
    };
    if let Some(hashes) = stored {
        let tree = Tree::from_leaves(&hashes);
        if matches(&tree) {
            return Ok(tree);
        }
    }
    let start = tile * TILE_WIDTH;
    let tree = match store.leaf_hashes_in(start..start + TILE_WIDTH).await {
        Ok(leaves) => Tree::from_leaves(&leaves),
        Err(StoreError::Malformed(_)) => return Err(LogError::TileMismatch { tile }),
        Err(e) => return Err(e.into()),
    };
    if !matches(&tree) {
        return Err(LogError::TileMismatch { tile });
    }
    Ok(tree)
}

/// The tiles `from..to` of `tree` to store: each one's root and leaf hashes,
/// from the recent tiles `tree` keeps, or else read back (and checked) from
/// the leaves' rows. Stops at the first it cannot have.
pub(crate) async fn tiles_to_store(
    store: &Store,
    holder: &(impl HoldsTree + ?Sized),
    from: u64,
    to: u64,
) -> Vec<LogTile> {
    let mut out = Vec::new();
    for tile in from..to {
        let (root, kept) = holder.with_tree(|t| {
            let kept = t.recent_tile(tile).map(|r| r.leaves().to_vec());
            (t.tile_root(tile), kept)
        });
        let Some(root) = root else { break };
        let leaf_hashes = match kept {
            Some(hashes) => hashes,
            None => match read_tile(store, tile, Some(root)).await {
                Ok(t) => t.leaves().to_vec(),
                Err(_) => break,
            },
        };
        out.push(LogTile { root, leaf_hashes });
    }
    out
}

/// The stored log's tree for a reader without a [`crate::Log`] (an export):
/// the stored tile roots and the leaf hashes after them, checked to
/// reproduce `root` at `size` (the latest checkpoint's); if they do not,
/// the tree of every stored leaf hash, as the tile roots are only a cache.
/// Either way the reader's proofs are checked by whoever verifies them.
pub(crate) async fn stored_tree(
    store: &Store,
    cache: &std::sync::Mutex<TileCache>,
    size: u64,
    root: Hash,
) -> Result<TiledTree, LogError> {
    let (tiles, hashes, _) = store.log_tiles_and_tail(TILE_WIDTH).await?;
    if !tiles.is_empty() {
        let tree = TiledTree::from_parts(&tiles, &hashes);
        if tree.len() >= size
            && with_tiles(store, cache, &tree, |t, c| t.root_at(size, c)).await? == root
        {
            return Ok(tree);
        }
    }
    Ok(TiledTree::from_leaves(&store.leaf_hashes().await?))
}
