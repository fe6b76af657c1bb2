//! Syslog: RFC 5424 messages, octet-counting framed for TLS transport
//! (RFC 5425 section 4.3: `MSG-LEN SP SYSLOG-MSG`), one frame per event,
//! a batch's frames written back to back.
//!
//! ```text
//! <PRI>1 TIMESTAMP HOSTNAME interlock - MSGID [interlock@32473 origin="…" index="42"
//!   leafHash="…" checkpointSize="57" category="block" severity="high"] {event JSON}
//! ```
//!
//! - PRI = facility × 8 + the severity's RFC 5424 level (critical 2 … info 6).
//! - TIMESTAMP is the leaf's time; MSGID its kind (`tool.call`); PROCID nil.
//! - The structured data element carries the verifiable record. Its SD-ID uses
//!   32473, the private enterprise number RFC 5612 reserves for documentation:
//!   Interlock has no IANA number of its own.
//! - MSG is the event's JSON (MSG-ANY, no BOM, so collectors pass it on as is).

use super::WireRequest;
use crate::event::AlertEvent;

/// The SD-ID of the record element.
pub const SD_ID: &str = "interlock@32473";
pub const APP_NAME: &str = "interlock";

/// RFC 5424 PRINTUSASCII, at most `max` characters, `-` if empty.
fn header_field(s: &str, max: usize) -> String {
    let out: String = s
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(max)
        .collect();
    if out.is_empty() { "-".into() } else { out }
}

/// An SD-PARAM value: `"`, `\` and `]` escaped (RFC 5424 section 6.3.3).
fn param(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One event as an RFC 5424 message.
pub fn message(event: &AlertEvent, facility: u8, hostname: &str) -> Vec<u8> {
    let pri = u16::from(facility.min(23)) * 8 + u16::from(event.severity.syslog());
    let r = &event.record;
    let sd = format!(
        "[{SD_ID} origin=\"{}\" index=\"{}\" leafHash=\"{}\" checkpointSize=\"{}\" \
         category=\"{}\" severity=\"{}\"]",
        param(&r.origin),
        r.index,
        event.leaf_hash_hex(),
        r.checkpoint_size,
        event.category.as_str(),
        event.severity.as_str(),
    );
    let body = serde_json::to_string(&event.to_json()).expect("JSON values serialize");
    format!(
        "<{pri}>1 {} {} {APP_NAME} - {} {sd} {body}",
        event.time_rfc3339(),
        header_field(hostname, 255),
        header_field(&event.kind, 32),
    )
    .into_bytes()
}

/// RFC 5425 octet counting: the message's length in bytes, a space, the message.
pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = format!("{} ", message.len()).into_bytes();
    out.extend_from_slice(message);
    out
}

/// The batch as one write: every event framed, back to back.
pub fn request(events: &[AlertEvent], facility: u8, hostname: &str) -> Option<WireRequest> {
    let body = events
        .iter()
        .flat_map(|e| frame(&message(e, facility, hostname)))
        .collect();
    WireRequest::batch(events, Vec::new(), body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Category, Record};
    use crate::severity::Severity;
    use interlock_receipts::ReceiptSummary;

    fn event() -> AlertEvent {
        AlertEvent {
            record: Record {
                origin: "interlock.example/a\"b]".into(),
                index: 42,
                leaf_hash: [0xab; 32],
                checkpoint_size: 57,
            },
            kind: "tool.call".into(),
            category: Category::Block,
            severity: Severity::High,
            summary: ReceiptSummary {
                kind: "tool.call".into(),
                time: 1_700_000_000,
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
    fn a_message_has_the_rfc_5424_header_and_an_escaped_record() {
        let m = String::from_utf8(message(&event(), 13, "host one")).unwrap();
        // Facility 13 (log audit) × 8 + error (3) = 107.
        assert!(
            m.starts_with(
                "<107>1 2023-11-14T22:13:20Z hostone interlock - tool.call [interlock@32473 "
            ),
            "{m}"
        );
        assert!(m.contains(r#"origin="interlock.example/a\"b\]""#), "{m}");
        assert!(
            m.contains(r#"index="42""#) && m.contains(r#"checkpointSize="57""#),
            "{m}"
        );
        let json = &m[m.find("] {").unwrap() + 2..];
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["index"], 42);
    }

    #[test]
    fn frames_count_octets_not_characters() {
        assert_eq!(frame("é".as_bytes()), b"2 \xc3\xa9".to_vec());
        let r = request(&[event(), event()], 13, "h").unwrap();
        let one = frame(&message(&event(), 13, "h"));
        assert_eq!(r.body.len(), 2 * one.len());
        assert!(request(&[], 13, "h").is_none());
    }
}
