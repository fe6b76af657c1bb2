-- Interlock schema, version 14, on Postgres (issue 20): the tables, keys and
-- indexes SQLite reaches through migrations 0001–0014 (`../sqlite/`), in one
-- step, since no Postgres database predates it. Later versions are added to
-- both folders under the same number, so a schema version means the same
-- tables on either backend.
--
-- Differences from SQLite, each for a reason:
-- * BYTEA for blobs, BIGINT for every integer (the store reads them as i64).
-- * No `log_append` view and triggers: on SQLite they make a group commit one
--   statement; here the append runs in a transaction holding the store's
--   write lock (an advisory lock, `src/lib.rs`), and the store checks the
--   next index under it, as SQLite's triggers do.
-- * The log tables keep BIGINT primary keys (SQLite's rowid trick, 0005, is
--   SQLite's own).

CREATE TABLE plans (
    plan_id    TEXT   NOT NULL,
    revision   BIGINT NOT NULL CHECK (revision >= 1),
    plan_hash  TEXT   NOT NULL,
    document   BYTEA  NOT NULL,
    title      TEXT   NOT NULL,
    proposer   TEXT   NOT NULL,
    risk       TEXT   NOT NULL,
    status     TEXT   NOT NULL CHECK (status IN ('PROPOSED', 'APPROVED', 'REJECTED',
                   'EXPIRED', 'SUPERSEDED', 'EXECUTING', 'SUCCEEDED', 'HALTED')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (plan_id, revision)
);
CREATE INDEX plans_status ON plans (status);

CREATE TABLE approvals (
    approver_key_id TEXT   NOT NULL,
    nonce           TEXT   NOT NULL,
    plan_id         TEXT   NOT NULL,
    revision        BIGINT NOT NULL,
    plan_hash       TEXT   NOT NULL,
    decision        TEXT   NOT NULL CHECK (decision IN ('approve', 'reject')),
    reason          TEXT   NOT NULL,
    not_before      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    envelope        BYTEA  NOT NULL,
    created_at      BIGINT NOT NULL,
    consumed_at     BIGINT NULL,
    PRIMARY KEY (approver_key_id, nonce),
    FOREIGN KEY (plan_id, revision) REFERENCES plans (plan_id, revision)
);
CREATE INDEX approvals_plan ON approvals (plan_id, revision);

CREATE TABLE approver_keys (
    key_id          TEXT   NOT NULL PRIMARY KEY,
    public_key      BYTEA  NOT NULL,
    identity        TEXT   NOT NULL,
    label           TEXT   NOT NULL,
    added_at        BIGINT NOT NULL,
    revoked_at      BIGINT NULL,
    registered_leaf BIGINT NULL
);

CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE api_keys (
    key_hash   TEXT   NOT NULL PRIMARY KEY,
    kind       TEXT   NOT NULL CHECK (kind IN ('agent', 'reviewer')),
    name       TEXT   NOT NULL,
    role       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL,
    shadow     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_name ON api_keys (kind, name);

CREATE TABLE servers (
    name          TEXT   NOT NULL PRIMARY KEY,
    status        TEXT   NOT NULL CHECK (status IN ('PENDING', 'TRUSTED', 'QUARANTINED', 'REJECTED')),
    baseline_hash TEXT   NULL,
    baseline      BYTEA  NULL,
    observed_hash TEXT   NULL,
    observed      BYTEA  NULL,
    drift         BYTEA  NOT NULL,
    blocked_tools BYTEA  NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE standing_approvals (
    id              TEXT   NOT NULL PRIMARY KEY,
    role            TEXT   NOT NULL,
    tool            TEXT   NOT NULL,
    document        BYTEA  NOT NULL,
    document_hash   TEXT   NOT NULL,
    expires_at      BIGINT NOT NULL,
    approver_key_id TEXT   NOT NULL,
    envelope        BYTEA  NOT NULL,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT NULL
);
CREATE INDEX standing_role_tool ON standing_approvals (role, tool);

CREATE TABLE log_leaves (
    idx         BIGINT NOT NULL PRIMARY KEY CHECK (idx >= 0),
    leaf_hash   BYTEA  NOT NULL,
    data        BYTEA  NOT NULL,
    appended_at BIGINT NOT NULL
);

CREATE TABLE log_checkpoints (
    size       BIGINT NOT NULL PRIMARY KEY CHECK (size >= 0),
    root       BYTEA  NOT NULL,
    note       TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE decision_ledger (
    approver_key_id TEXT   NOT NULL,
    nonce           TEXT   NOT NULL,
    subject         TEXT   NOT NULL,
    decision        TEXT   NOT NULL CHECK (decision IN ('approve', 'reject')),
    issued_at       BIGINT NOT NULL,
    recorded_at     BIGINT NOT NULL,
    PRIMARY KEY (approver_key_id, nonce)
);
CREATE INDEX decision_ledger_by_subject ON decision_ledger (subject, issued_at);

CREATE TABLE execution_leases (
    plan_id      TEXT   NOT NULL,
    revision     BIGINT NOT NULL,
    owner        TEXT   NOT NULL,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    committed    TEXT   NOT NULL DEFAULT '',
    PRIMARY KEY (plan_id, revision)
);

CREATE TABLE approved_surfaces (
    hash              TEXT   NOT NULL PRIMARY KEY,
    surface           BYTEA  NOT NULL,
    server            TEXT   NOT NULL,
    first_approved_at BIGINT NOT NULL
);

CREATE TABLE server_probes (
    server      TEXT   NOT NULL PRIMARY KEY,
    observed    BYTEA  NOT NULL,
    findings    BYTEA  NOT NULL,
    observed_at BIGINT NOT NULL,
    baseline    BYTEA  NULL,
    baseline_at BIGINT NULL
);

CREATE TABLE tool_envelopes (
    server         TEXT   NOT NULL,
    tool           TEXT   NOT NULL,
    state          TEXT   NOT NULL CHECK (state IN ('learning', 'fixed')),
    envelope       BYTEA  NOT NULL,
    hash           TEXT   NOT NULL,
    learning_since BIGINT NOT NULL,
    fixed_at       BIGINT NULL,
    PRIMARY KEY (server, tool)
);

CREATE TABLE receipt_facts (
    idx     BIGINT NOT NULL PRIMARY KEY CHECK (idx >= 0),
    at      BIGINT NOT NULL,
    kind    TEXT   NOT NULL,
    plan_id TEXT,
    server  TEXT,
    agent   TEXT,
    tool    TEXT,
    verdict TEXT,
    shadow  BIGINT
);
CREATE INDEX receipt_facts_counts ON receipt_facts (at, kind, server, agent, verdict, shadow);
CREATE INDEX receipt_facts_kind ON receipt_facts (kind, idx);
CREATE INDEX receipt_facts_plan ON receipt_facts (plan_id, idx);
CREATE INDEX receipt_facts_server ON receipt_facts (server, idx);
CREATE INDEX receipt_facts_agent ON receipt_facts (agent, idx);
CREATE INDEX receipt_facts_tool ON receipt_facts (tool, idx);

CREATE TABLE alert_cursors (
    sink              TEXT   NOT NULL PRIMARY KEY,
    next_idx          BIGINT NOT NULL CHECK (next_idx >= 0),
    delivered         BIGINT NOT NULL DEFAULT 0,
    attempts          BIGINT NOT NULL DEFAULT 0,
    last_error        TEXT,
    last_error_at     BIGINT,
    last_delivered_at BIGINT,
    updated_at        BIGINT NOT NULL
);

CREATE TABLE alert_dead_letters (
    id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    sink      TEXT   NOT NULL,
    first_idx BIGINT NOT NULL CHECK (first_idx >= 0),
    last_idx  BIGINT NOT NULL CHECK (last_idx >= first_idx),
    attempts  BIGINT NOT NULL,
    error     TEXT   NOT NULL,
    at        BIGINT NOT NULL
);
CREATE INDEX alert_dead_letters_sink ON alert_dead_letters (sink, id);

CREATE TABLE admin_tokens (
    token_hash TEXT   NOT NULL PRIMARY KEY,
    name       TEXT   NOT NULL,
    scope      TEXT   NOT NULL CHECK (scope IN ('owner', 'operator', 'security_reviewer', 'auditor')),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);

CREATE TABLE key_settings (
    key_hash           TEXT   NOT NULL PRIMARY KEY,
    rate_per_minute    BIGINT NULL,
    monthly_quota      BIGINT NULL,
    max_response_bytes BIGINT NULL,
    max_array_items    BIGINT NULL,
    response_policy    TEXT   NULL,
    updated_at         BIGINT NOT NULL
);

CREATE TABLE key_usage (
    key_hash TEXT   NOT NULL,
    month    TEXT   NOT NULL,
    calls    BIGINT NOT NULL,
    PRIMARY KEY (key_hash, month)
);
