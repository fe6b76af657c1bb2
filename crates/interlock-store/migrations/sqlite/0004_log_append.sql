-- Interlock schema, version 4: the log's one-statement append.
--
-- A group commit appends a batch of leaves and the checkpoint for the size
-- after them. Written as one INSERT into this view, the whole batch is one
-- statement, so SQLite runs it as one transaction (autocommit: it takes the
-- write lock before reading, like BEGIN IMMEDIATE, and commits with fsync),
-- and the log's writer pays one request to the database per commit instead of
-- one per statement. Rows are applied in order: `leaf` rows (n = index,
-- hash = leaf hash, body = entry bytes), then at most one `checkpoint` row
-- (n = size, hash = root, body = signed note); `at` is the unix time.
--
-- The triggers refuse — aborting the statement, so nothing of the batch is
-- written — a leaf whose index is not the next one (no gap, no overlap, even
-- against another process's writer) and a checkpoint whose size is not the
-- log size at that point. The base tables stay plain: this view is the
-- append path, not a constraint on everything that writes them.
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
