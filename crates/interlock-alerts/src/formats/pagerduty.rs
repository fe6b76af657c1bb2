//! PagerDuty Events API v2: one event per `POST` to
//! `https://events.pagerduty.com/v2/enqueue`, `Content-Type: application/json`,
//! the integration's routing key in the body (PagerDuty's "Events API v2
//! Overview"). PagerDuty answers `202`.
//!
//! What needs a human triggers an incident; the decision that settles it
//! resolves it, through the same `dedup_key`:
//! - a held call (a plan waits) → `interlock:plan:<id>`, resolved by the
//!   plan's decision (approved, rejected, expired);
//! - a drift or quarantine of a server → `interlock:server:<name>`, resolved by
//!   the server's approval;
//! - anything else → `interlock:leaf:<origin>#<index>` (a block stays open
//!   until someone resolves it in PagerDuty).

use serde_json::{Value, json};

use super::WireRequest;
use super::links::review_link;
use crate::event::{AlertEvent, Category};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Trigger(String),
    Resolve(String),
}

/// What `event` does to an incident.
pub fn action(e: &AlertEvent) -> Action {
    if e.test {
        return Action::Trigger("interlock:test".into());
    }
    let s = &e.summary;
    match (e.kind.as_str(), &s.plan_id, &s.server) {
        ("plan.approved" | "plan.rejected" | "plan.decision" | "plan.expired", Some(p), _) => {
            Action::Resolve(format!("interlock:plan:{p}"))
        }
        ("server.approved", _, Some(server)) => {
            Action::Resolve(format!("interlock:server:{server}"))
        }
        _ => match (e.category, &s.plan_id, &s.server) {
            (Category::Hold, Some(p), _) => Action::Trigger(format!("interlock:plan:{p}")),
            (Category::Drift | Category::Quarantine, _, Some(server)) => {
                Action::Trigger(format!("interlock:server:{server}"))
            }
            _ => Action::Trigger(format!(
                "interlock:leaf:{}#{}",
                e.record.origin, e.record.index
            )),
        },
    }
}

pub fn body(e: &AlertEvent, routing_key: &str, source: &str, review_url: Option<&str>) -> Value {
    match action(e) {
        Action::Resolve(dedup) => json!({
            "routing_key": routing_key,
            "event_action": "resolve",
            "dedup_key": dedup,
        }),
        Action::Trigger(dedup) => {
            let summary: String = e.headline().chars().take(1024).collect();
            let mut v = json!({
                "routing_key": routing_key,
                "event_action": "trigger",
                "dedup_key": dedup,
                "payload": {
                    "summary": summary,
                    "source": source,
                    "severity": e.severity.pagerduty(),
                    "timestamp": e.time_rfc3339(),
                    "class": e.kind,
                    "custom_details": e.to_json(),
                },
                "client": "Interlock",
            });
            if let Some(c) = &e.summary.server {
                v["payload"]["component"] = c.clone().into();
            }
            if let Some(g) = &e.summary.agent {
                v["payload"]["group"] = g.clone().into();
            }
            if let Some(base) = review_url {
                v["links"] =
                    json!([{ "href": review_link(base, e), "text": "Review in Interlock" }]);
            }
            v
        }
    }
}

pub fn request(
    e: &AlertEvent,
    routing_key: &str,
    source: &str,
    review_url: Option<&str>,
) -> WireRequest {
    WireRequest {
        first_index: e.record.index,
        last_index: e.record.index,
        events: 1,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: serde_json::to_vec(&body(e, routing_key, source, review_url))
            .expect("JSON serializes"),
        url_suffix: None,
    }
}
