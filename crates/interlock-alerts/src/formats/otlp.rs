//! OpenTelemetry logs over OTLP/HTTP: a batch per `POST` to the collector's
//! `/v1/logs`, `Content-Type: application/x-protobuf`, the body an
//! `ExportLogsServiceRequest` (the OTLP specification's "OTLP/HTTP" and the
//! logs data model), built with OpenTelemetry's own generated types
//! (`opentelemetry-proto`) and encoded with prost.
//!
//! One resource (`service.name` = `interlock`, `host.name`), one scope
//! (`interlock.alerts`), one log record per event: its time, the severity
//! number and text of the logs data model, the event's JSON as the body, and
//! the record and facts as `interlock.*` attributes. With a secret, the request
//! carries `Authorization: Bearer <secret>`.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, InstrumentationScope, KeyValue, any_value::Value as Any,
};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;

use super::WireRequest;
use crate::event::AlertEvent;
use crate::severity::Severity;

/// An OTLP attribute (shared with the traces format).
pub(crate) fn kv(key: &str, value: Any) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

/// A string attribute.
pub(crate) fn text(key: &str, value: &str) -> KeyValue {
    kv(key, Any::StringValue(value.into()))
}

/// The logs data model's severity (SeverityNumber) of ours.
pub fn severity_number(s: Severity) -> SeverityNumber {
    match s {
        Severity::Info => SeverityNumber::Info,
        Severity::Low => SeverityNumber::Info2,
        Severity::Medium => SeverityNumber::Warn,
        Severity::High => SeverityNumber::Error,
        Severity::Critical => SeverityNumber::Fatal,
    }
}

fn record(e: &AlertEvent) -> LogRecord {
    let nanos = u64::try_from(e.summary.time)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000);
    let r = &e.record;
    let mut attributes = vec![
        text("interlock.origin", &r.origin),
        kv(
            "interlock.leaf.index",
            Any::IntValue(i64::try_from(r.index).unwrap_or(i64::MAX)),
        ),
        text("interlock.leaf.hash", &e.leaf_hash_hex()),
        kv(
            "interlock.checkpoint.size",
            Any::IntValue(i64::try_from(r.checkpoint_size).unwrap_or(i64::MAX)),
        ),
        text("interlock.kind", &e.kind),
        text("interlock.category", e.category.as_str()),
    ];
    let s = &e.summary;
    for (key, value) in [
        ("interlock.server", &s.server),
        ("interlock.agent", &s.agent),
        ("interlock.tool", &s.tool),
        ("interlock.verdict", &s.verdict),
        ("interlock.plan_id", &s.plan_id),
        ("interlock.call_id", &e.call_id),
        ("interlock.arguments_hash", &e.arguments_hash),
    ] {
        if let Some(v) = value {
            attributes.push(text(key, v));
        }
    }
    LogRecord {
        time_unix_nano: nanos,
        observed_time_unix_nano: nanos,
        severity_number: severity_number(e.severity) as i32,
        severity_text: e.severity.as_str().to_uppercase(),
        body: Some(AnyValue {
            value: Some(Any::StringValue(e.to_json().to_string())),
        }),
        attributes,
        event_name: e.kind.clone(),
        ..Default::default()
    }
}

/// The `ExportLogsServiceRequest` of `events`.
pub fn export(events: &[AlertEvent], hostname: &str) -> ExportLogsServiceRequest {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource {
                attributes: vec![
                    text("service.name", "interlock"),
                    text("host.name", hostname),
                ],
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: "interlock.alerts".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                log_records: events.iter().map(record).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

pub fn request(events: &[AlertEvent], hostname: &str, token: Option<&str>) -> Option<WireRequest> {
    let mut headers = vec![("Content-Type".into(), "application/x-protobuf".into())];
    if let Some(t) = token {
        headers.push(("Authorization".into(), format!("Bearer {t}")));
    }
    WireRequest::batch(events, headers, export(events, hostname).encode_to_vec())
}
