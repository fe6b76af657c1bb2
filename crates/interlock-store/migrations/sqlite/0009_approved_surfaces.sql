-- Issue 16 item 7: every surface a reviewer approved is kept by its hash, so a
-- receipt can show the exact tool definitions an approval was about even after
-- the server's baseline has moved on. Written in the same transaction as the
-- approval's leaf; never updated or deleted.
CREATE TABLE approved_surfaces (
    hash TEXT PRIMARY KEY NOT NULL,
    surface BLOB NOT NULL,
    server TEXT NOT NULL,
    first_approved_at INTEGER NOT NULL
);
