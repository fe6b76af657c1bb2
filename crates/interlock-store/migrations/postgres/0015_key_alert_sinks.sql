-- Issue 21 (per-key sinks; as ../sqlite/0015): the alert sinks that receive a key's events — a
-- JSON array of sink names from gateway.toml's [[alerts.sinks]] — and the
-- minimum severity of those events (info, low, medium, high, critical).
-- NULL: the key names no sink / the sink's own minimum.
ALTER TABLE key_settings ADD COLUMN alert_sinks TEXT NULL;
ALTER TABLE key_settings ADD COLUMN alert_min_severity TEXT NULL;
