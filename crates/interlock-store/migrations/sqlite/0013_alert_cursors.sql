-- Interlock schema, version 13: alert delivery (issue 21).
--
-- Each configured sink reads committed leaves from the log and delivers them
-- at least once; its cursor is the index of the next leaf it has not
-- delivered (nor dead-lettered). The cursor only moves once a receiver
-- accepted a request (or the request was dead-lettered), so a restart
-- resumes where delivery stopped and a crash resends at most the batch in
-- flight. The leaf index is the idempotency key receivers drop repeats by.
CREATE TABLE alert_cursors (
    sink              TEXT    NOT NULL PRIMARY KEY,
    next_idx          BIGINT  NOT NULL CHECK (next_idx >= 0),
    delivered         BIGINT  NOT NULL DEFAULT 0, -- events accepted by the receiver
    attempts          INTEGER NOT NULL DEFAULT 0, -- failed tries of the request in flight
    last_error        TEXT,                       -- the latest failure, kept after recovery
    last_error_at     BIGINT,
    last_delivered_at BIGINT,
    updated_at        BIGINT  NOT NULL
);

-- Requests given up on after the sink's `max_attempts`: the leaf range they
-- carried and the last error, for a reviewer to see (Settings → Alerts) and
-- redeliver. The leaves themselves stay in the log.
CREATE TABLE alert_dead_letters (
    id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    sink      TEXT    NOT NULL,
    first_idx BIGINT  NOT NULL CHECK (first_idx >= 0),
    last_idx  BIGINT  NOT NULL CHECK (last_idx >= first_idx),
    attempts  INTEGER NOT NULL,
    error     TEXT    NOT NULL,
    at        BIGINT  NOT NULL
);
CREATE INDEX alert_dead_letters_sink ON alert_dead_letters (sink, id);
