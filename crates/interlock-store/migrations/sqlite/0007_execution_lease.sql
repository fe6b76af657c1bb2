-- Issue 15: executions survive a crash. A plan moves to EXECUTING together with
-- a lease naming the process that runs it; that process renews `heartbeat_at`
-- while it runs and records each committed stage. A plan left EXECUTING whose
-- lease went stale (its process died) is found, halted with an `executor.lost`
-- leaf naming what committed, and never run again.
CREATE TABLE execution_leases (
    plan_id      TEXT    NOT NULL,
    revision     INTEGER NOT NULL,
    owner        TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    -- The ids of the stages that committed so far, one per line (stage ids
    -- are identifiers: no newlines).
    committed    TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (plan_id, revision)
) WITHOUT ROWID;
