-- Issue 45 item 5: the log's tiles (tile `idx` is the perfect subtree of leaves
-- [idx·256, (idx+1)·256)), so a log opens from one row per 256 entries instead
-- of rebuilding its tree from every leaf hash, and a proof reads one row of
-- leaf hashes instead of 256 leaves.
-- A cache of what the leaves determine, not evidence: a log checks the tree
-- the roots make against its signed checkpoint when it opens, and a tile's
-- leaf hashes against its root when it reads them; rows it cannot trust it
-- rebuilds from the leaves.
CREATE TABLE log_tiles (
    idx  INTEGER NOT NULL PRIMARY KEY CHECK (idx >= 0),
    root BLOB    NOT NULL
);
-- The tile's 256 leaf hashes, concatenated (8 KiB), apart from the roots so
-- that opening reads only the roots.
CREATE TABLE log_tile_leaves (
    idx         INTEGER NOT NULL PRIMARY KEY CHECK (idx >= 0),
    leaf_hashes BLOB    NOT NULL
);
