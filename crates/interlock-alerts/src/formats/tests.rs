//! The formats against their documented wire shapes, without I/O.

use interlock_receipts::ReceiptSummary;

use super::pagerduty::{Action, action};
use super::*;
use crate::event::{Category, Record};
use crate::severity::Severity;

fn event(kind: &str, category: Category, plan: Option<&str>, server: Option<&str>) -> AlertEvent {
    AlertEvent {
        record: Record {
            origin: "interlock.example/log".into(),
            index: 7,
            leaf_hash: [1; 32],
            checkpoint_size: 8,
        },
        kind: kind.into(),
        category,
        severity: Severity::Medium,
        summary: ReceiptSummary {
            kind: kind.into(),
            time: 1_700_000_000,
            plan_id: plan.map(str::to_owned),
            server: server.map(str::to_owned),
            reasons: Some("<!channel> & <https://evil.example|click>".into()),
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
fn elastic_accepts_created_and_duplicate_items_only() {
    assert!(elastic::accepted(br#"{"errors":false,"items":[]}"#).is_ok());
    assert!(
        elastic::accepted(
            br#"{"errors":true,"items":[{"create":{"status":201}},{"create":{"status":409,"error":{"reason":"version conflict"}}}]}"#
        )
        .is_ok(),
        "a redelivered document already there is no failure"
    );
    let e = elastic::accepted(
        br#"{"errors":true,"items":[{"create":{"status":400,"error":{"reason":"mapper_parsing_exception"}}}]}"#,
    )
    .unwrap_err();
    assert!(
        e.contains("400") && e.contains("mapper_parsing_exception"),
        "{e}"
    );
    assert!(elastic::accepted(b"not json").is_err());
}

#[test]
fn splunk_accepts_code_zero_only() {
    assert!(splunk::accepted(br#"{"text":"Success","code":0}"#).is_ok());
    assert!(splunk::accepted(br#"{"text":"Invalid token","code":4}"#).is_err());
}

#[test]
fn pagerduty_resolves_what_a_decision_settles() {
    let held = event("tool.call", Category::Hold, Some("p1"), Some("files"));
    assert_eq!(action(&held), Action::Trigger("interlock:plan:p1".into()));
    let decided = event("plan.decision", Category::Decision, Some("p1"), None);
    assert_eq!(
        action(&decided),
        Action::Resolve("interlock:plan:p1".into())
    );
    let drift = event("server.drift_held", Category::Drift, None, Some("files"));
    assert_eq!(
        action(&drift),
        Action::Trigger("interlock:server:files".into())
    );
    let approved = event("server.approved", Category::Decision, None, Some("files"));
    assert_eq!(
        action(&approved),
        Action::Resolve("interlock:server:files".into())
    );
    let block = event("tool.call", Category::Block, None, Some("files"));
    assert_eq!(
        action(&block),
        Action::Trigger("interlock:leaf:interlock.example/log#7".into())
    );
    let body = pagerduty::body(&held, "KEY", "gw", Some("https://gw.example/"));
    assert_eq!(body["payload"]["severity"], "warning");
    assert_eq!(body["links"][0]["href"], "https://gw.example/#/plans/p1");
}

#[test]
fn slack_text_cannot_inject_mentions_or_links() {
    let m = slack::body(&event("tool.call", Category::Hold, None, None), None);
    let text = m["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(
        text.contains("&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;"),
        "{text}"
    );
    assert!(
        m["blocks"].as_array().unwrap().len() == 3,
        "no button without a review URL"
    );
}

#[test]
fn every_http_kind_needs_its_secret() {
    let events = [event("tool.call", Category::Hold, None, None)];
    for kind in [
        SinkKind::Webhook,
        SinkKind::Slack,
        SinkKind::SplunkHec,
        SinkKind::Datadog,
        SinkKind::Elastic,
        SinkKind::Pagerduty,
    ] {
        assert_eq!(
            encode(kind, &events, &FormatContext::default()),
            Err(FormatError::MissingSecret(kind.as_str()))
        );
    }
}

#[test]
fn an_otlp_export_decodes_with_the_data_models_severity_and_the_record() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use prost::Message as _;
    let mut e = event("tool.call", Category::Block, None, Some("files"));
    e.severity = Severity::High;
    let r = otlp::request(&[e], "gw", Some("tok")).unwrap();
    assert!(
        r.headers
            .contains(&("Authorization".into(), "Bearer tok".into()))
    );
    let req = ExportLogsServiceRequest::decode(r.body.as_slice()).unwrap();
    let rec = &req.resource_logs[0].scope_logs[0].log_records[0];
    assert_eq!(rec.severity_number, 17, "ERROR");
    assert_eq!(rec.time_unix_nano, 1_700_000_000_000_000_000);
    let attr = |k: &str| {
        rec.attributes
            .iter()
            .find(|a| a.key == k)
            .unwrap()
            .value
            .clone()
            .unwrap()
    };
    assert_eq!(
        format!("{:?}", attr("interlock.leaf.index").value.unwrap()),
        "IntValue(7)"
    );
}
