-- Issue 16 item 1: effective-permission probes. One row per probed server:
-- `observed` is the last run of its declared probes (a JSON array of runs: tool,
-- arguments hash, outcome, the result's SHA-256, verdict — never the result's
-- text), `baseline` the runs adopted when a reviewer last approved the server
-- (what later runs are compared with), `findings` the findings of the last run
-- (a JSON array of probe-finding records, docs/schemas/probe-finding.schema.json).
CREATE TABLE server_probes (
    server      TEXT   NOT NULL PRIMARY KEY,
    observed    BLOB   NOT NULL,
    findings    BLOB   NOT NULL,
    observed_at BIGINT NOT NULL,
    baseline    BLOB   NULL,
    baseline_at BIGINT NULL
);
