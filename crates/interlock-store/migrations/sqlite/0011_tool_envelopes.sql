-- Issue 16 item 2: each served tool's behavioural envelope. While `learning`,
-- the row is rewritten as calls are observed (so a restart keeps what was
-- learned); once `fixed` — in the same transaction as the `tool.envelope_fixed`
-- leaf — it changes only by a reviewer's widening, a compare-and-swap on
-- `hash` committed with its `tool.envelope_widened` leaf.
CREATE TABLE tool_envelopes (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('learning', 'fixed')),
    -- JCS bytes of the envelope (interlock_envelope::Envelope::to_value).
    envelope BLOB NOT NULL,
    -- `sha256:<hex>` of those bytes.
    hash TEXT NOT NULL,
    learning_since INTEGER NOT NULL,
    fixed_at INTEGER NULL,
    PRIMARY KEY (server, tool)
);
