//! OpenTelemetry traces over OTLP/HTTP: a batch per `POST` to the collector's
//! `/v1/traces`, `Content-Type: application/x-protobuf`, the body an
//! `ExportTraceServiceRequest` (the OTLP specification's "OTLP/HTTP"), built
//! with OpenTelemetry's generated types (`opentelemetry-proto`) and encoded
//! with prost.
//!
//! One span per tool call (`tool.call`, `prompt.get`, `resource.read` leaves;
//! other events carry no span): from the call's intent leaf (when it was
//! forwarded) to its outcome leaf, kind SERVER (the gateway served the call),
//! status ERROR when it was blocked or refused. Trace and span ids are derived
//! from the log's origin and the call's id (SHA-256, domain-separated), so a
//! restart that resends a batch resends the same ids and a collector sees one
//! span, not two. Attributes: the server, tool, agent, verdict and outcome,
//! the leaf indices and hashes of the intent and outcome, the checkpoint size
//! the record was sent under, and the log's origin. The log keeps whole
//! seconds, so a span's times are whole seconds too.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    InstrumentationScope, KeyValue, any_value::Value as Any,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status, span};
use prost::Message as _;

use super::WireRequest;
use crate::event::{AlertEvent, Category};

use super::otlp::{kv, text};

fn int(key: &str, value: u64) -> KeyValue {
    kv(key, Any::IntValue(i64::try_from(value).unwrap_or(i64::MAX)))
}

/// SHA-256 of `domain`, a NUL, `origin`, a NUL and `call`, truncated.
fn derived<const N: usize>(domain: &str, origin: &str, call: &str) -> [u8; N] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [domain, origin, call] {
        ctx.update(part.as_bytes());
        ctx.update(&[0]);
    }
    let d = ctx.finish();
    let mut out = [0u8; N];
    out.copy_from_slice(&d.as_ref()[..N]);
    out
}

/// The call a span stands for: its call id, or (a leaf without one) its
/// leaf index.
fn call_key(e: &AlertEvent) -> String {
    e.call_id
        .clone()
        .unwrap_or_else(|| format!("leaf:{}", e.record.index))
}

/// The trace id of the call `e` records (16 bytes; never all zero in
/// practice, which OTLP forbids).
pub fn trace_id(e: &AlertEvent) -> [u8; 16] {
    derived("interlock.trace.v1", &e.record.origin, &call_key(e))
}

/// The span id of the call `e` records (8 bytes).
pub fn span_id(e: &AlertEvent) -> [u8; 8] {
    derived("interlock.span.v1", &e.record.origin, &call_key(e))
}

/// Whether `e` is a call with a span.
pub fn has_span(e: &AlertEvent) -> bool {
    matches!(
        e.kind.as_str(),
        "tool.call" | "prompt.get" | "resource.read" | "completion.complete"
    ) && !e.test
}

fn nanos(secs: i64) -> u64 {
    u64::try_from(secs)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
}

fn span_of(e: &AlertEvent) -> Span {
    let r = &e.record;
    let s = &e.summary;
    let mut attributes = vec![
        text("interlock.origin", &r.origin),
        int("interlock.leaf.index", r.index),
        text("interlock.leaf.hash", &e.leaf_hash_hex()),
        int("interlock.checkpoint.size", r.checkpoint_size),
        text("interlock.kind", &e.kind),
        text("interlock.category", e.category.as_str()),
        text("interlock.severity", e.severity.as_str()),
    ];
    for (key, value) in [
        ("interlock.server", &s.server),
        ("interlock.tool", &s.tool),
        ("interlock.agent", &s.agent),
        ("interlock.verdict", &s.verdict),
        ("interlock.outcome", &s.outcome),
        ("interlock.plan_id", &s.plan_id),
        ("interlock.call_id", &e.call_id),
        ("interlock.arguments_hash", &e.arguments_hash),
        ("interlock.result_hash", &e.result_hash),
    ] {
        if let Some(v) = value {
            attributes.push(text(key, v));
        }
    }
    if let Some(tool) = &s.tool {
        // OpenTelemetry's semantic conventions for MCP and generative AI.
        attributes.push(text("mcp.method.name", "tools/call"));
        attributes.push(text("gen_ai.tool.name", tool));
    }
    let end = nanos(s.time);
    let mut start = end;
    if let Some(i) = &e.intent {
        attributes.push(int("interlock.intent.index", i.index));
        if let Some(h) = &i.leaf_hash {
            attributes.push(text("interlock.intent.hash", &hex::encode(h)));
        }
        if let Some(t) = i.time {
            start = nanos(t).min(end);
        }
    }
    let failed = matches!(e.category, Category::Block);
    let name = match (&s.server, &s.tool) {
        (Some(server), Some(tool)) => format!("tools/call {server}.{tool}"),
        _ => e.kind.clone(),
    };
    Span {
        trace_id: trace_id(e).to_vec(),
        span_id: span_id(e).to_vec(),
        name,
        kind: span::SpanKind::Server as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: end,
        attributes,
        status: Some(Status {
            message: if failed {
                s.reasons
                    .clone()
                    .or_else(|| s.outcome.clone())
                    .unwrap_or_default()
            } else {
                String::new()
            },
            code: if failed {
                opentelemetry_proto::tonic::trace::v1::status::StatusCode::Error as i32
            } else {
                opentelemetry_proto::tonic::trace::v1::status::StatusCode::Ok as i32
            },
        }),
        ..Default::default()
    }
}

/// The `ExportTraceServiceRequest` of the calls among `events`.
pub fn export(events: &[AlertEvent], hostname: &str) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    text("service.name", "interlock"),
                    text("host.name", hostname),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "interlock.alerts".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans: events.iter().filter(|e| has_span(e)).map(span_of).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// One request with a span per call among `events` (`None` when none is a
/// call: the cursor moves past them without a request).
pub fn request(events: &[AlertEvent], hostname: &str, token: Option<&str>) -> Option<WireRequest> {
    let calls: Vec<AlertEvent> = events.iter().filter(|e| has_span(e)).cloned().collect();
    let mut headers = vec![("Content-Type".into(), "application/x-protobuf".into())];
    if let Some(t) = token {
        headers.push(("Authorization".into(), format!("Bearer {t}")));
    }
    WireRequest::batch(&calls, headers, export(&calls, hostname).encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Intent, Record};

    /// The event of a forwarded call's outcome leaf at `index` (its intent
    /// at `index - 1`), as delivery hands it over.
    fn call(origin: &str, index: u64, call_id: &str, outcome: &str) -> AlertEvent {
        let blocked = outcome == "blocked";
        AlertEvent {
            record: Record {
                origin: origin.into(),
                index,
                leaf_hash: [7; 32],
                checkpoint_size: index + 1,
            },
            kind: "tool.call".into(),
            category: if blocked {
                Category::Block
            } else {
                Category::Call
            },
            severity: crate::Severity::Info,
            summary: interlock_receipts::ReceiptSummary {
                kind: "tool.call".into(),
                time: 1_700_000_010,
                server: Some("files".into()),
                tool: Some("write".into()),
                agent: Some("builder".into()),
                outcome: Some(outcome.into()),
                ..Default::default()
            },
            arguments_hash: Some("sha256:aa".into()),
            result_hash: None,
            call_id: Some(call_id.into()),
            test: false,
            intent: Some(Intent {
                index: index - 1,
                leaf_hash: Some([9; 32]),
                time: Some(1_700_000_008),
            }),
        }
    }

    #[test]
    fn a_call_is_one_span_from_its_intent_to_its_outcome_with_ids_from_the_call() {
        let e = call("interlock.test/a", 5, "call_1", "ok");
        assert_eq!(
            e.intent,
            Some(Intent {
                index: 4,
                leaf_hash: Some([9; 32]),
                time: Some(1_700_000_008)
            })
        );
        let req = export(std::slice::from_ref(&e), "gw");
        let span = &req.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(span.start_time_unix_nano, 1_700_000_008 * 1_000_000_000);
        assert_eq!(span.end_time_unix_nano, 1_700_000_010 * 1_000_000_000);
        assert_eq!(span.trace_id.len(), 16);
        assert_eq!(span.span_id.len(), 8);
        // Deterministic: the same call, the same ids; another call or another
        // log, others.
        let again = call("interlock.test/a", 5, "call_1", "ok");
        assert_eq!(trace_id(&again), trace_id(&e));
        assert_eq!(span_id(&again), span_id(&e));
        assert_ne!(
            trace_id(&call("interlock.test/a", 7, "call_2", "ok")),
            trace_id(&e)
        );
        assert_ne!(
            trace_id(&call("interlock.test/b", 5, "call_1", "ok")),
            trace_id(&e)
        );
        let attr = |k: &str| {
            span.attributes
                .iter()
                .find(|a| a.key == k)
                .and_then(|a| a.value.clone())
                .and_then(|v| v.value)
        };
        assert_eq!(attr("interlock.intent.index"), Some(Any::IntValue(4)));
        assert_eq!(
            attr("interlock.intent.hash"),
            Some(Any::StringValue(hex::encode([9; 32])))
        );
        assert_eq!(attr("interlock.leaf.index"), Some(Any::IntValue(5)));
        assert_eq!(
            attr("interlock.server"),
            Some(Any::StringValue("files".into()))
        );
        assert_eq!(
            attr("gen_ai.tool.name"),
            Some(Any::StringValue("write".into()))
        );
    }

    #[test]
    fn only_calls_have_spans_and_a_block_is_an_error() {
        let blocked = call("o", 3, "call_b", "blocked");
        let drift = AlertEvent::test_event(
            Record {
                origin: "o".into(),
                index: 1,
                leaf_hash: [0; 32],
                checkpoint_size: 2,
            },
            1,
        );
        let req = request(std::slice::from_ref(&drift), "gw", None);
        assert!(req.is_none(), "no call, no request");
        let req = request(&[drift, blocked], "gw", Some("t")).unwrap();
        assert_eq!((req.first_index, req.last_index, req.events), (3, 3, 1));
        let decoded = ExportTraceServiceRequest::decode(req.body.as_slice()).unwrap();
        let span = &decoded.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(
            span.status.as_ref().unwrap().code,
            opentelemetry_proto::tonic::trace::v1::status::StatusCode::Error as i32
        );
    }
}
