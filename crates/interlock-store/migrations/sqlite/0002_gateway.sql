-- Interlock schema, version 2: the gateway's state.
-- Same portable subset as 0001 (TEXT / BIGINT / BLOB, CHECK constraints).

-- API keys for the gateway's HTTP surfaces. Only the SHA-256 of a key is kept
-- (`sha256:<hex>`): a stolen database file does not let anyone call the gateway.
-- `kind` separates the two surfaces: an agent key reaches /mcp only, a reviewer
-- key reaches the reviewer API only (which still accepts decisions only as
-- signed statements).
CREATE TABLE api_keys (
    key_hash   TEXT   NOT NULL PRIMARY KEY,
    kind       TEXT   NOT NULL CHECK (kind IN ('agent', 'reviewer')),
    name       TEXT   NOT NULL,
    role       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);
CREATE INDEX api_keys_name ON api_keys (kind, name);

-- Upstream MCP servers and their pinned surfaces. `baseline` is the surface a
-- reviewer approved (JCS bytes, see interlock-surface), `observed` the one the
-- server listed last; `drift` is the JSON array of classified differences between
-- them (empty when they are equal). `version` is bumped by every write, so a
-- reviewer's approval of what they saw is a compare-and-swap.
CREATE TABLE servers (
    name          TEXT   NOT NULL PRIMARY KEY,
    status        TEXT   NOT NULL CHECK (status IN ('PENDING', 'TRUSTED', 'QUARANTINED', 'REJECTED')),
    baseline_hash TEXT   NULL,
    baseline      BLOB   NULL,
    observed_hash TEXT   NULL,
    observed      BLOB   NULL,
    drift         BLOB   NOT NULL,
    -- JSON object: tool name -> "hold" | "quarantine", for tools not served as listed.
    blocked_tools BLOB   NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
