//! Slack incoming webhooks: one message per event, `POST` to the webhook URL,
//! `Content-Type: application/json`, a body with `text` (the notification's
//! fallback) and Block Kit `blocks`: a header, the facts as fields, the
//! verifiable record as context, and a *Review* button linking to the review UI
//! (Slack answers `200 ok`; see Slack's "Sending messages using incoming
//! webhooks" and "Block Kit" references).
//!
//! The webhook URL is itself a credential (`https://hooks.slack.com/services/
//! T…/B…/…`): the config's `url` is its public prefix and the secret its
//! path (`T…/B…/…`), so nothing secret is written in `gateway.toml`.

use serde_json::{Value, json};

use super::WireRequest;
use super::links::review_link;
use crate::event::AlertEvent;

/// Slack's limit on a section's text and a field's text.
const TEXT_MAX: usize = 3000;
const FIELD_MAX: usize = 2000;

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// Slack's mrkdwn needs `&`, `<` and `>` escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub fn body(event: &AlertEvent, review_url: Option<&str>) -> Value {
    let s = &event.summary;
    let mut fields = Vec::new();
    let mut field = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            fields.push(json!({
                "type": "mrkdwn",
                "text": cut(&format!("*{name}*\n{}", escape(v)), FIELD_MAX),
            }));
        }
    };
    field("Severity", &Some(event.severity.as_str().to_owned()));
    field("Server", &s.server);
    field("Tool", &s.tool);
    field("Agent", &s.agent);
    field("Verdict", &s.verdict);
    field("Plan", &s.plan_id);
    field("Approver", &s.approver);
    fields.truncate(10); // Slack allows 10 fields in a section.
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": cut(&format!("Interlock: {} ({})", event.kind, event.category.as_str()), 150)}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": cut(&escape(&event.headline()), TEXT_MAX)}, "fields": fields}),
        json!({"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
            "leaf {} · leaf hash `{}` · checkpoint {} · {}",
            event.record.index,
            event.leaf_hash_hex(),
            event.record.checkpoint_size,
            escape(&event.record.origin)
        )}]}),
    ];
    if let Some(base) = review_url {
        blocks.push(json!({"type": "actions", "elements": [{
            "type": "button",
            "text": {"type": "plain_text", "text": "Review"},
            "url": review_link(base, event),
        }]}));
    }
    json!({ "text": cut(&event.headline(), TEXT_MAX), "blocks": blocks })
}

pub fn request(event: &AlertEvent, webhook_path: &str, review_url: Option<&str>) -> WireRequest {
    WireRequest {
        first_index: event.record.index,
        last_index: event.record.index,
        events: 1,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: serde_json::to_vec(&body(event, review_url)).expect("JSON serializes"),
        url_suffix: Some(format!("/{}", webhook_path.trim_start_matches('/'))),
    }
}
