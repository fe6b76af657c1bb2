//! The leaves of the log's complete tiles, read from the store when a proof
//! or a verified entry needs them (the tree in memory holds only the tiles'
//! roots: `interlock_merkle::TiledTree`), each checked against its root
//! before anything is computed from it.

use std::collections::{HashMap, VecDeque};

use interlock_merkle::{Hash, TILE_WIDTH, TiledError, TiledTree};
use interlock_store::{Store, StoreError};

use crate::error::LogError;

/// How many tiles' leaf hashes (8 KiB each) a cache keeps.
const TILE_CACHE: usize = 64;

/// The leaf hashes of recently read complete tiles, at most [`TILE_CACHE`];
/// the one read longest ago goes first.
#[derive(Default)]
pub(crate) struct TileCache {
    pub(crate) leaves: HashMap<u64, Vec<Hash>>,
    order: VecDeque<u64>,
}

impl TileCache {
    fn insert(&mut self, tile: u64, leaves: Vec<Hash>) {
        if self.leaves.insert(tile, leaves).is_none() {
            self.order.push_back(tile);
        }
        while self.order.len() > TILE_CACHE {
            if let Some(old) = self.order.pop_front() {
                self.leaves.remove(&old);
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
    compute: impl Fn(&TiledTree, &HashMap<u64, Vec<Hash>>) -> Result<T, TiledError>,
) -> Result<T, LogError> {
    // Two rounds suffice (a complete tile never changes); a third would mean
    // the store changed under the computation.
    for _ in 0..3 {
        let wanted: Vec<(u64, Option<Hash>)> = match holder.with_tree(|tree| {
            let tiles = cache.lock().unwrap_or_else(|e| e.into_inner());
            compute(tree, &tiles.leaves).map_err(|e| match e {
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
            let leaves = read_tile(store, tile, root).await?;
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(tile, leaves);
        }
    }
    Err(LogError::CheckpointMismatch(
        "the log's tiles kept changing while a proof was computed".into(),
    ))
}

/// The leaf hashes of complete tile `tile`, checked against `root`.
async fn read_tile(store: &Store, tile: u64, root: Option<Hash>) -> Result<Vec<Hash>, LogError> {
    let start = tile * TILE_WIDTH;
    let leaves = match store.leaf_hashes_in(start..start + TILE_WIDTH).await {
        Ok(leaves) => leaves,
        Err(StoreError::Malformed(_)) => return Err(LogError::TileMismatch { tile }),
        Err(e) => return Err(e.into()),
    };
    if root.is_none() || Some(interlock_merkle::root_sequential(&leaves)) != root {
        return Err(LogError::TileMismatch { tile });
    }
    Ok(leaves)
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
