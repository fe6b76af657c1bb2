-- Issue 20 item 4: per-key rate buckets shared by every gateway on the database
-- (team mode). One row per key: its GCRA "theoretical arrival time" in Unix
-- milliseconds (the time the bucket is next empty of debt). A call is let
-- through, and the time moved on by one emission interval, by one conditional
-- upsert, so gateways taking tokens at once cannot both take the last one.
CREATE TABLE key_rate (
    key_hash TEXT   NOT NULL PRIMARY KEY,
    tat_ms   BIGINT NOT NULL
);
