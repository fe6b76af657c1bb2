-- Issue 20 item 3: the admin API.
--
-- Admin tokens: bearer tokens of their own (`ila_…`), never API keys, each of
-- one scope (owner, operator, security_reviewer, auditor). Only the SHA-256 of
-- a token is stored, as for API keys.
CREATE TABLE admin_tokens (
    token_hash TEXT   NOT NULL PRIMARY KEY,
    name       TEXT   NOT NULL,
    scope      TEXT   NOT NULL CHECK (scope IN ('owner', 'operator', 'security_reviewer', 'auditor')),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);

-- Per-key settings beside role and shadow (which stay on api_keys): the rate
-- per minute, the monthly quota, the response caps and the response policy
-- (a JSON object; NULL: the gateway's [calls] settings). NULL: no limit.
CREATE TABLE key_settings (
    key_hash           TEXT   NOT NULL PRIMARY KEY,
    rate_per_minute    BIGINT NULL,
    monthly_quota      BIGINT NULL,
    max_response_bytes BIGINT NULL,
    max_array_items    BIGINT NULL,
    response_policy    TEXT   NULL,
    updated_at         BIGINT NOT NULL
);

-- Issue 20 item 4: calls counted per key and calendar month (UTC, `YYYY-MM`),
-- for the monthly quota; durable, so a restart does not reset it.
CREATE TABLE key_usage (
    key_hash TEXT   NOT NULL,
    month    TEXT   NOT NULL,
    calls    BIGINT NOT NULL,
    PRIMARY KEY (key_hash, month)
);
