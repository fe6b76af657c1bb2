//! Links into the review UI for chat and pager messages.

use crate::event::AlertEvent;

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Where a reviewer acts on `event` in the UI served at `base`: the plan (a
/// held call), the server (a drift, a quarantine), else the receipts.
pub fn review_link(base: &str, event: &AlertEvent) -> String {
    let base = base.trim_end_matches('/');
    let s = &event.summary;
    if let Some(plan) = &s.plan_id {
        format!("{base}/#/plans/{}", encode(plan))
    } else if let Some(server) = &s.server {
        format!("{base}/#/servers/{}", encode(server))
    } else {
        format!("{base}/#/receipts")
    }
}
