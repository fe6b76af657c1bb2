-- Interlock schema, version 5: the log tables keyed by their rowid.
--
-- `idx` and `size` become INTEGER PRIMARY KEY, SQLite's rowid: the same
-- numbers, constraints and order, but no separate primary-key index beside
-- each table. A group commit then dirties two b-tree pages instead of four
-- or five (fewer WAL frames written and synced per commit, and fewer pages
-- copied back at each WAL checkpoint). On Postgres these stay BIGINT primary
-- keys.
--
-- The tables are rebuilt (the usual SQLite procedure: create, copy, drop,
-- rename) with the append view's triggers dropped around it and re-created
-- as in version 4.
DROP TRIGGER log_append_leaf;
DROP TRIGGER log_append_checkpoint;
DROP TRIGGER log_append_other;
DROP VIEW log_append;

CREATE TABLE log_leaves_v5 (
    idx         INTEGER NOT NULL PRIMARY KEY CHECK (idx >= 0),
    leaf_hash   BLOB    NOT NULL,
    data        BLOB    NOT NULL,
    appended_at BIGINT  NOT NULL
);
INSERT INTO log_leaves_v5 (idx, leaf_hash, data, appended_at)
    SELECT idx, leaf_hash, data, appended_at FROM log_leaves ORDER BY idx;
DROP TABLE log_leaves;
ALTER TABLE log_leaves_v5 RENAME TO log_leaves;

CREATE TABLE log_checkpoints_v5 (
    size       INTEGER NOT NULL PRIMARY KEY CHECK (size >= 0),
    root       BLOB    NOT NULL,
    note       TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);
INSERT INTO log_checkpoints_v5 (size, root, note, created_at)
    SELECT size, root, note, created_at FROM log_checkpoints ORDER BY size;
DROP TABLE log_checkpoints;
ALTER TABLE log_checkpoints_v5 RENAME TO log_checkpoints;

-- As in 0004_log_append.sql.
CREATE VIEW log_append (kind, n, hash, body, at) AS
    SELECT NULL, NULL, NULL, NULL, NULL WHERE 0;

CREATE TRIGGER log_append_leaf INSTEAD OF INSERT ON log_append
WHEN NEW.kind = 'leaf'
BEGIN
    SELECT RAISE(ABORT, 'log_append: leaf index does not continue the log')
    WHERE NEW.n IS NOT (SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves);
    INSERT INTO log_leaves (idx, leaf_hash, data, appended_at)
    VALUES (NEW.n, NEW.hash, NEW.body, NEW.at);
END;

CREATE TRIGGER log_append_checkpoint INSTEAD OF INSERT ON log_append
WHEN NEW.kind = 'checkpoint'
BEGIN
    SELECT RAISE(ABORT, 'log_append: checkpoint size is not the log size')
    WHERE NEW.n IS NOT (SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves);
    INSERT INTO log_checkpoints (size, root, note, created_at)
    VALUES (NEW.n, NEW.hash, NEW.body, NEW.at);
END;

CREATE TRIGGER log_append_other INSTEAD OF INSERT ON log_append
WHEN NEW.kind IS NOT 'leaf' AND NEW.kind IS NOT 'checkpoint'
BEGIN
    SELECT RAISE(ABORT, 'log_append: unknown row kind');
END;
