-- Interlock schema, version 3: the tool-call path.

-- Shadow mode per agent key: every call is decided and logged, nothing is held
-- or blocked.
ALTER TABLE api_keys ADD COLUMN shadow BIGINT NOT NULL DEFAULT 0;
