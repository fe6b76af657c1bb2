//! Per-key sinks (issue 21): an agent key's settings name the sinks (from
//! gateway.toml) that receive its events, with an optional minimum severity
//! (`KeySettings::alert_sinks`, `alert_min_severity`, set through the admin
//! API). A sink with `keys_only = true` receives only the events of keys
//! that name it; any other sink keeps its own filter for everyone, and for
//! the events of a key that names it applies the key's minimum severity
//! instead of its own.
//!
//! Events name their agent (the key's name), not the key: every active key
//! of that name routes its events, and when several name the same sink the
//! lowest minimum wins (a key may ask for more of its events, never hide
//! another key's).

use std::collections::HashMap;

use interlock_alerts::{AlertEvent, Severity};
use interlock_store::{KeyAlertRoute, Store, StoreError};

/// Agent name → sink name → the key's minimum severity (`None`: the sink's).
#[derive(Clone, Debug, Default)]
pub struct KeyRoutes(HashMap<String, HashMap<String, Option<Severity>>>);

impl KeyRoutes {
    /// The routes of every active agent key that names a sink.
    pub async fn load(store: &Store) -> Result<KeyRoutes, StoreError> {
        Ok(KeyRoutes::from_rows(store.key_alert_routes().await?))
    }

    fn from_rows(rows: Vec<KeyAlertRoute>) -> KeyRoutes {
        let mut out: HashMap<String, HashMap<String, Option<Severity>>> = HashMap::new();
        for r in rows {
            // Written by the admin API, which checks both; a row that does
            // not parse routes nothing rather than guessing.
            let Ok(sinks) = serde_json::from_str::<Vec<String>>(&r.sinks) else {
                tracing::warn!("alerts: key {:?}: unreadable alert_sinks", r.agent);
                continue;
            };
            let min = r
                .min_severity
                .as_deref()
                .and_then(|s| serde_json::from_value::<Severity>(s.into()).ok());
            let per_agent = out.entry(r.agent).or_default();
            for sink in sinks {
                per_agent
                    .entry(sink)
                    .and_modify(|m| {
                        *m = match (*m, min) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            _ => None,
                        }
                    })
                    .or_insert(min);
            }
        }
        KeyRoutes(out)
    }

    /// `Some(min)` when the key behind `e` names `sink` (with its minimum
    /// severity, if it set one); `None` when no key of that agent does.
    pub fn route(&self, sink: &str, e: &AlertEvent) -> Option<Option<Severity>> {
        let agent = e.summary.agent.as_deref()?;
        self.0.get(agent)?.get(sink).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(agent: &str, sinks: &str, min: Option<&str>) -> KeyAlertRoute {
        KeyAlertRoute {
            agent: agent.into(),
            sinks: sinks.into(),
            min_severity: min.map(str::to_owned),
        }
    }

    fn event(agent: Option<&str>) -> AlertEvent {
        let mut e = AlertEvent::test_event(
            interlock_alerts::Record {
                origin: "o".into(),
                index: 1,
                leaf_hash: [0; 32],
                checkpoint_size: 2,
            },
            1,
        );
        e.summary.agent = agent.map(str::to_owned);
        e
    }

    #[test]
    fn the_lowest_minimum_of_keys_sharing_a_name_wins_and_a_bad_row_routes_nothing() {
        let routes = KeyRoutes::from_rows(vec![
            row("builder", r#"["pager","siem"]"#, Some("high")),
            row("builder", r#"["pager"]"#, Some("medium")),
            row("tester", "not json", Some("low")),
        ]);
        let b = event(Some("builder"));
        assert_eq!(routes.route("pager", &b), Some(Some(Severity::Medium)));
        assert_eq!(routes.route("siem", &b), Some(Some(Severity::High)));
        assert_eq!(routes.route("chat", &b), None);
        assert_eq!(routes.route("pager", &event(Some("tester"))), None);
        assert_eq!(
            routes.route("pager", &event(None)),
            None,
            "no agent, no key"
        );
    }
}
