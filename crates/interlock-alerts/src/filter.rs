//! Which events a sink receives: categories, a minimum severity, servers and
//! agents. Parsed from `[[alerts.sinks]]` in `gateway.toml`.

use serde::{Deserialize, Serialize};

use crate::event::{AlertEvent, Category};
use crate::severity::Severity;

/// A sink's filter. Empty lists mean "any"; a non-empty `servers` (or
/// `agents`) list passes only events that name one of them, so an event about
/// no server at all (a plan's decision) does not pass a server filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    /// The categories sent; empty: every category but `internal`.
    pub events: Vec<Category>,
    /// Events below this severity are not sent (default `info`: all).
    pub min_severity: Option<Severity>,
    pub servers: Vec<String>,
    pub agents: Vec<String>,
}

impl Filter {
    /// [`Filter::matches`] without the minimum severity: PagerDuty's resolve
    /// events (a low-severity decision settling a high-severity incident).
    pub fn matches_any_severity(&self, e: &AlertEvent) -> bool {
        Filter {
            min_severity: None,
            ..self.clone()
        }
        .matches(e)
    }

    pub fn matches(&self, e: &AlertEvent) -> bool {
        let category = if self.events.is_empty() {
            e.category != Category::Internal
        } else {
            self.events.contains(&e.category)
        };
        let severity = e.severity >= self.min_severity.unwrap_or(Severity::Info);
        let named = |list: &[String], name: &Option<String>| {
            list.is_empty() || name.as_ref().is_some_and(|n| list.iter().any(|l| l == n))
        };
        category
            && severity
            && named(&self.servers, &e.summary.server)
            && named(&self.agents, &e.summary.agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Record;
    use interlock_receipts::ReceiptSummary;

    fn event(category: Category, severity: Severity, server: Option<&str>) -> AlertEvent {
        AlertEvent {
            record: Record {
                origin: "o".into(),
                index: 0,
                leaf_hash: [0; 32],
                checkpoint_size: 1,
            },
            kind: "tool.call".into(),
            category,
            severity,
            summary: ReceiptSummary {
                server: server.map(str::to_owned),
                agent: Some("builder".into()),
                ..ReceiptSummary::default()
            },
            arguments_hash: None,
            result_hash: None,
            call_id: None,
            test: false,
            intent: None,
        }
    }

    #[test]
    fn the_default_sends_everything_but_internal_leaves() {
        let f = Filter::default();
        assert!(f.matches(&event(Category::Call, Severity::Info, None)));
        assert!(!f.matches(&event(Category::Internal, Severity::Info, None)));
    }

    #[test]
    fn severity_categories_servers_and_agents_narrow() {
        let f = Filter {
            events: vec![Category::Block, Category::Hold],
            min_severity: Some(Severity::Medium),
            servers: vec!["files".into()],
            agents: vec!["builder".into()],
        };
        assert!(f.matches(&event(Category::Block, Severity::High, Some("files"))));
        assert!(!f.matches(&event(Category::Block, Severity::High, Some("other"))));
        assert!(!f.matches(&event(Category::Block, Severity::High, None)));
        assert!(!f.matches(&event(Category::Hold, Severity::Low, Some("files"))));
        assert!(!f.matches(&event(Category::Call, Severity::High, Some("files"))));
        let g = Filter {
            agents: vec!["someone-else".into()],
            ..Filter::default()
        };
        assert!(!g.matches(&event(Category::Call, Severity::Info, Some("files"))));
    }
}
