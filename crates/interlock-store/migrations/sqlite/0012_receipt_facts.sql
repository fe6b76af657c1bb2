-- Interlock schema, version 12: what each receipt is about, for finding
-- receipts (issue 18: the receipts view, its export and the overview).
--
-- One row per log leaf: the facts a reviewer filters and counts by, taken
-- from the leaf's statement by the layer that reads leaves (interlock-log;
-- the store treats leaves as opaque) and written after the leaf, off the
-- log's append path. They are derived data: a receipt's content is always
-- read from `log_leaves`, and an export is verified against the signed tree,
-- so a row here can only decide *which* receipts are shown, never what they
-- say. Rows are keyed by the leaf index, so indexing twice (two processes
-- catching up at once) inserts nothing twice.
CREATE TABLE receipt_facts (
    idx      INTEGER NOT NULL PRIMARY KEY CHECK (idx >= 0),
    at       BIGINT  NOT NULL, -- the predicate's time (Unix seconds)
    kind     TEXT    NOT NULL, -- the predicate's type (`tool.call`, `plan.approved`, ...)
    plan_id  TEXT,
    server   TEXT,
    agent    TEXT,
    tool     TEXT,
    verdict  TEXT,             -- a tool call's verdict (`allowed`, `held`, `blocked`, ...)
    shadow   INTEGER           -- 1 when the call came from a shadow-mode key
);

-- Paging is newest first by index (keyset: `idx < cursor`); each filter has
-- an index that ends in `idx`, so a filtered page reads only its rows.
-- The overview's counts read only this index (it covers every column they
-- group by); it also serves time filters.
CREATE INDEX receipt_facts_counts ON receipt_facts (at, kind, server, agent, verdict, shadow);
CREATE INDEX receipt_facts_kind ON receipt_facts (kind, idx);
CREATE INDEX receipt_facts_plan ON receipt_facts (plan_id, idx);
CREATE INDEX receipt_facts_server ON receipt_facts (server, idx);
CREATE INDEX receipt_facts_agent ON receipt_facts (agent, idx);
CREATE INDEX receipt_facts_tool ON receipt_facts (tool, idx);
