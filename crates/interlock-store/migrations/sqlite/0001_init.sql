-- Interlock schema, version 1.
--
-- Written in the portable subset of SQL that SQLite and PostgreSQL share, so a
-- Postgres migration set can follow with the same tables and meaning: TEXT,
-- BIGINT and BLOB columns (BYTEA on Postgres), CHECK constraints instead of
-- enums, composite natural keys instead of AUTOINCREMENT / SERIAL surrogates,
-- and unix-second BIGINT timestamps instead of dialect-specific time types.

-- Every revision of every plan. The current revision of a plan is the one with
-- the highest `revision`; earlier ones are kept (SUPERSEDED, or in whatever
-- terminal state they reached) so a reviewer can diff against them and an
-- auditor can see what was approved when.
CREATE TABLE plans (
    plan_id    TEXT   NOT NULL,
    revision   BIGINT NOT NULL CHECK (revision >= 1),
    plan_hash  TEXT   NOT NULL,
    -- RFC 8785 (JCS) bytes of the whole plan document.
    document   BLOB   NOT NULL,
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

-- Signed decisions (DSSE envelopes) about one plan revision. The primary key
-- (approver_key_id, nonce) is what makes a replayed statement fail to insert.
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
    envelope        BLOB   NOT NULL,
    created_at      BIGINT NOT NULL,
    consumed_at     BIGINT NULL,
    PRIMARY KEY (approver_key_id, nonce),
    FOREIGN KEY (plan_id, revision) REFERENCES plans (plan_id, revision)
);
CREATE INDEX approvals_plan ON approvals (plan_id, revision);

-- The registry of trusted approver public keys.
CREATE TABLE approver_keys (
    key_id     TEXT   NOT NULL PRIMARY KEY,
    public_key BLOB   NOT NULL,
    identity   TEXT   NOT NULL,
    label      TEXT   NOT NULL,
    added_at   BIGINT NOT NULL,
    revoked_at BIGINT NULL
);

-- The Merkle log's leaves: leaf_hash = SHA-256(0x00 || data), computed by
-- interlock-merkle, never here.
CREATE TABLE log_leaves (
    idx         BIGINT NOT NULL PRIMARY KEY CHECK (idx >= 0),
    leaf_hash   BLOB   NOT NULL,
    data        BLOB   NOT NULL,
    appended_at BIGINT NOT NULL
);

-- Signed checkpoints (C2SP signed notes) of the log, one per tree size.
CREATE TABLE log_checkpoints (
    size       BIGINT NOT NULL PRIMARY KEY CHECK (size >= 0),
    root       BLOB   NOT NULL,
    note       TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

-- Small facts about this database: the log's origin and verifier key, etc.
CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
