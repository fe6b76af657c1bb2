//! Splunk HTTP Event Collector: a batch per `POST` to
//! `…/services/collector/event`, `Authorization: Splunk <HEC token>`, the body
//! the batch's event objects one after another (newline-separated), each
//! `{"time": <epoch seconds>, "host", "source": "interlock", "sourcetype":
//! "interlock:alert", "event": {…}}` (Splunk's "Format events for HTTP Event
//! Collector"). Splunk answers `{"text":"Success","code":0}`.

use serde_json::json;

use super::WireRequest;
use crate::event::AlertEvent;

pub fn request(
    events: &[AlertEvent],
    token: &str,
    hostname: &str,
    index: Option<&str>,
) -> Option<WireRequest> {
    let mut body = Vec::new();
    for e in events {
        let mut obj = json!({
            "time": e.summary.time,
            "host": hostname,
            "source": "interlock",
            "sourcetype": "interlock:alert",
            "event": e.to_json(),
        });
        if let Some(i) = index {
            obj["index"] = i.into();
        }
        serde_json::to_writer(&mut body, &obj).expect("JSON serializes");
        body.push(b'\n');
    }
    WireRequest::batch(
        events,
        vec![
            ("Content-Type".into(), "application/json".into()),
            ("Authorization".into(), format!("Splunk {token}")),
        ],
        body,
    )
}

/// Splunk HEC's answer: `code` 0 is success.
pub fn accepted(body: &[u8]) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    match v["code"].as_i64() {
        Some(0) | None => Ok(()),
        Some(code) => Err(format!(
            "Splunk HEC code {code}: {}",
            v["text"].as_str().unwrap_or("")
        )),
    }
}
