//! Elasticsearch `_bulk`: a batch per `POST` to `…/_bulk`,
//! `Content-Type: application/x-ndjson`, `Authorization: ApiKey <encoded key>`,
//! the body an action line and a document line per event, ending in a newline
//! (Elastic's "Bulk API" reference). The action is `create` with `_id`
//! `<origin>#<leaf index>`, so a redelivered event is refused as a duplicate
//! (409) instead of indexed twice: at-least-once delivery, exactly-once
//! documents. The document is the event with `@timestamp`.

use serde_json::json;

use super::WireRequest;
use crate::event::AlertEvent;

pub const DEFAULT_INDEX: &str = "interlock-alerts";

pub fn document_id(e: &AlertEvent) -> String {
    format!("{}#{}", e.record.origin, e.idempotency_key())
}

pub fn request(events: &[AlertEvent], api_key: &str, index: &str) -> Option<WireRequest> {
    let mut body = Vec::new();
    for e in events {
        let action = json!({"create": {"_index": index, "_id": document_id(e)}});
        serde_json::to_writer(&mut body, &action).expect("JSON serializes");
        body.push(b'\n');
        let mut doc = e.to_json();
        doc["@timestamp"] = e.time_rfc3339().into();
        serde_json::to_writer(&mut body, &doc).expect("JSON serializes");
        body.push(b'\n');
    }
    WireRequest::batch(
        events,
        vec![
            ("Content-Type".into(), "application/x-ndjson".into()),
            ("Authorization".into(), format!("ApiKey {api_key}")),
        ],
        body,
    )
}

/// `_bulk` answers 200 even when items failed: the request is accepted only
/// if every item was created or already existed (409, a redelivery).
pub fn accepted(body: &[u8]) -> Result<(), String> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("_bulk answer is not JSON: {e}"))?;
    if v["errors"] != true {
        return Ok(());
    }
    for item in v["items"].as_array().into_iter().flatten() {
        let result = item.as_object().and_then(|o| o.values().next());
        let status = result.and_then(|r| r["status"].as_u64()).unwrap_or(0);
        if !(200..300).contains(&status) && status != 409 {
            let reason = result
                .and_then(|r| r["error"]["reason"].as_str())
                .unwrap_or("no reason given");
            return Err(format!("_bulk item status {status}: {reason}"));
        }
    }
    Ok(())
}
