-- Issue 42 (the LLM proxy's per-key settings, set through the admin API): a key's
-- limits on the proxy — a JSON object {models, rate_per_minute, monthly_quota} —
-- and its prompt policy — {blocked_keywords, blocked_topics, max_chars, fail_mode,
-- on_hit, keep_prompt_text}. Opaque to the store; the gateway checks both.
-- NULL: the gateway's [llm] settings alone.
ALTER TABLE key_settings ADD COLUMN llm_limits TEXT NULL;
ALTER TABLE key_settings ADD COLUMN llm_policy TEXT NULL;
