-- Issue 45 item 5: the roots of the log's complete tiles (tile `idx` is the
-- perfect subtree of leaves [idx·256, (idx+1)·256)), so a log opens from one
-- row per 256 entries instead of rebuilding its tree from every leaf hash.
-- A cache of what the leaves determine, not evidence: a log checks the tree
-- they make against its signed checkpoint when it opens, and each tile's
-- leaves against its root when it reads them; rows it cannot trust it
-- rebuilds from the leaves.
CREATE TABLE log_tiles (
    idx  INTEGER NOT NULL PRIMARY KEY CHECK (idx >= 0),
    root BLOB    NOT NULL
);
