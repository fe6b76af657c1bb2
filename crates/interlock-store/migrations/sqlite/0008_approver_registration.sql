-- Issue 15: an approver key is trusted only when the log records its registration.
-- `registered_leaf` is the index of the key's `approver.registered` leaf, written
-- in the same transaction as that leaf (the row and its evidence commit
-- together). A row added outside the log has none, and is not trusted; rows
-- from before this migration are matched to their leaves by the engine once.
ALTER TABLE approver_keys ADD COLUMN registered_leaf INTEGER NULL;
