-- Issue 42: the LLM proxy's learned fingerprints. The judge's verdict on a
-- request, kept under the request's normalized fingerprint until it
-- expires, so the same request is not judged again: an unsafe one is stopped
-- at once, a safe one skips the judge.
CREATE TABLE llm_fingerprints (
    fingerprint TEXT   NOT NULL PRIMARY KEY,
    is_unsafe   BIGINT NOT NULL CHECK (is_unsafe IN (0, 1)),
    category    TEXT   NOT NULL,
    reason      TEXT   NOT NULL,
    learned_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX llm_fingerprints_expiry ON llm_fingerprints (expires_at);
