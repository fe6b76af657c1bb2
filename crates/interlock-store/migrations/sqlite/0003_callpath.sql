-- Interlock schema, version 3: the tool-call path.

-- Shadow mode per agent key: every call is decided and logged, nothing is held
-- or blocked.
ALTER TABLE api_keys ADD COLUMN shadow BIGINT NOT NULL DEFAULT 0;

-- Standing approvals: "this role may call this tool with arguments of this
-- shape until expires_at", signed by a reviewer. `document` is the JCS bytes of
-- {role, tool, shape, expires_at}; `id` is derived from its hash; the envelope is
-- the reviewer's signed statement about `standing:<id>` at that hash.
CREATE TABLE standing_approvals (
    id              TEXT   NOT NULL PRIMARY KEY,
    role            TEXT   NOT NULL,
    tool            TEXT   NOT NULL,
    document        BLOB   NOT NULL,
    document_hash   TEXT   NOT NULL,
    expires_at      BIGINT NOT NULL,
    approver_key_id TEXT   NOT NULL,
    envelope        BLOB   NOT NULL,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT NULL
);
CREATE INDEX standing_role_tool ON standing_approvals (role, tool);
