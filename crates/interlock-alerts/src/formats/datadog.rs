//! Datadog logs intake (v2): a batch per `POST` to
//! `https://http-intake.logs.<site>/api/v2/logs`, `DD-API-KEY: <key>`,
//! `Content-Type: application/json`, the body a JSON array of log objects
//! (at most 1000) with Datadog's reserved attributes — `ddsource`, `ddtags`,
//! `hostname`, `service`, `message`, `status` — and the event under
//! `interlock` (Datadog's "Send logs" API reference). Datadog answers `202`.

use serde_json::json;

use super::WireRequest;
use crate::event::AlertEvent;

/// The most log entries Datadog accepts in one request.
pub const MAX_ENTRIES: usize = 1000;

pub fn requests(events: &[AlertEvent], api_key: &str, hostname: &str) -> Vec<WireRequest> {
    events
        .chunks(MAX_ENTRIES)
        .map(|chunk| {
            let entries: Vec<_> = chunk
                .iter()
                .map(|e| {
                    let mut tags = vec![
                        format!("category:{}", e.category.as_str()),
                        format!("severity:{}", e.severity.as_str()),
                        format!("kind:{}", e.kind),
                    ];
                    if let Some(s) = &e.summary.server {
                        tags.push(format!("server:{s}"));
                    }
                    json!({
                        "ddsource": "interlock",
                        "ddtags": tags.join(","),
                        "hostname": hostname,
                        "service": "interlock",
                        "status": e.severity.datadog(),
                        "message": e.headline(),
                        "interlock": e.to_json(),
                    })
                })
                .collect();
            WireRequest {
                first_index: chunk[0].record.index,
                last_index: chunk[chunk.len() - 1].record.index,
                events: chunk.len(),
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    ("DD-API-KEY".into(), api_key.to_owned()),
                ],
                body: serde_json::to_vec(&entries).expect("JSON serializes"),
                url_suffix: None,
            }
        })
        .collect()
}
