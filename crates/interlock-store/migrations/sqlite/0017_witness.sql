-- Issue 43: witnesses (C2SP tlog-witness / tlog-cosignature).
--
-- A witness keeps, per log origin, the latest checkpoint it cosigned; it
-- moves only forward, checked and replaced in one write transaction, so two
-- submissions cannot roll it back. A submission it refused as inconsistent
-- (a fork, a rollback, a bad proof) is kept as evidence of the log's misbehaviour.
CREATE TABLE witness_latest (
    origin     TEXT   NOT NULL PRIMARY KEY,
    size       BIGINT NOT NULL CHECK (size >= 0),
    root       BLOB  NOT NULL,
    note       TEXT   NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE witness_refusals (
    id     INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    origin TEXT   NOT NULL,
    note   TEXT   NOT NULL,
    reason TEXT   NOT NULL,
    at     BIGINT NOT NULL
);

-- A log's side: the cosignatures witnesses returned for its checkpoints, one
-- line per witness and checkpoint, carried in the bundles it exports.
CREATE TABLE checkpoint_cosignatures (
    size        BIGINT NOT NULL CHECK (size >= 0),
    witness     TEXT   NOT NULL,
    line        TEXT   NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (size, witness)
);
