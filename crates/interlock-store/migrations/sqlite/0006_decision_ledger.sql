-- Issue 15: every signed decision is one-shot and ordered, for every subject
-- (plans, servers, standing grants). `approvals` already makes a plan statement
-- one-shot; a server or standing-grant decision was recorded nowhere but the log,
-- so a past `server.approved` envelope could be posted again after a rejection.
--
-- (approver_key_id, nonce) is what makes a replayed statement fail to insert;
-- (subject, issued_at) is what makes a statement older than the subject's latest
-- decision refusable.
CREATE TABLE decision_ledger (
    approver_key_id TEXT    NOT NULL,
    nonce           TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    decision        TEXT    NOT NULL CHECK (decision IN ('approve', 'reject')),
    issued_at       INTEGER NOT NULL,
    recorded_at     INTEGER NOT NULL,
    PRIMARY KEY (approver_key_id, nonce)
) WITHOUT ROWID;

CREATE INDEX decision_ledger_by_subject ON decision_ledger (subject, issued_at);
