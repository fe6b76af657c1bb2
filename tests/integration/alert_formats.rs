//! Issue 21 item 4: Slack, Splunk HEC, Datadog logs, Elastic `_bulk` and
//! PagerDuty Events v2 sinks, each delivering to a local receiver
//! (`receiver.rs`, a real HTTP server) that stands in for the service and
//! checks the service's documented wire format: the method and path, the
//! authentication header, the content type and the body's shape —
//! Slack's incoming-webhook Block Kit message, Splunk's HEC event objects,
//! Datadog's v2 logs array with its reserved attributes, Elastic's bulk NDJSON
//! action/document pairs, PagerDuty's Events v2 trigger and resolve.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};
use crate::receiver::{Captured, Mode, Receiver, block_a_call_and_list_what_sinks_deliver};
use crate::util::{stderr, stdout};

const SLACK_PATH: &str = "T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX";
const SPLUNK_TOKEN: &str = "9f7b2c1e-hec-token";
const DD_KEY: &str = "dd-api-key-0123456789";
const ES_KEY: &str = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==";
const PD_KEY: &str = "R0UTINGKEY0123456789ABCDEFGHIJ";

fn sink(name: &str, kind: &str, url: &str, env: &str, extra: &str) -> String {
    format!(
        "[[alerts.sinks]]\nname = \"{name}\"\nkind = \"{kind}\"\nurl = \"{url}\"\nsecret_env = \"{env}\"\n\
         hostname = \"gw-test\"\nbackoff_ms = 50\nbackoff_max_ms = 200\n{extra}\n"
    )
}

/// Every line of an NDJSON body, parsed.
fn ndjson(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).unwrap();
    assert!(text.ends_with('\n'), "NDJSON ends with a newline: {text}");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn indices<'a>(values: impl Iterator<Item = &'a Value>) -> BTreeSet<u64> {
    values.map(|v| v["index"].as_u64().unwrap()).collect()
}

#[test]
fn slack_splunk_datadog_elastic_and_pagerduty_receive_their_documented_formats() {
    let slack = Receiver::start(Mode::Accept);
    let splunk = Receiver::start(Mode::Accept);
    let datadog = Receiver::start(Mode::Accept);
    let elastic = Receiver::start(Mode::Accept);
    let pagerduty = Receiver::start(Mode::Accept);
    let script = peers_dir().join("drifting-server.mjs");
    let review = "review_url = \"https://gw.example\"";
    let config = format!(
        "[calls]\nhold_secs = 1\n[roles.default]\ntools = [\"*\"]\n[alerts]\npoll_ms = 50\n{}{}{}{}{}\
         [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        sink(
            "chat",
            "slack",
            &format!("{}/services", slack.base),
            "SLACK_PATH",
            review
        ),
        sink(
            "splunk",
            "splunk_hec",
            &format!("{}/services/collector/event", splunk.base),
            "HEC_TOKEN",
            ""
        ),
        sink(
            "dd",
            "datadog",
            &format!("{}/api/v2/logs", datadog.base),
            "DD_KEY",
            ""
        ),
        sink(
            "es",
            "elastic",
            &format!("{}/_bulk", elastic.base),
            "ES_KEY",
            "index = \"interlock-test\""
        ),
        sink(
            "pager",
            "pagerduty",
            &format!("{}/v2/enqueue", pagerduty.base),
            "PD_KEY",
            &format!("{review}\nmin_severity = \"medium\"")
        ),
        script.to_str().unwrap()
    );
    let gw = Gateway::start_with_env(
        &config,
        &[
            ("SLACK_PATH", SLACK_PATH),
            ("HEC_TOKEN", SPLUNK_TOKEN),
            ("DD_KEY", DD_KEY),
            ("ES_KEY", ES_KEY),
            ("PD_KEY", PD_KEY),
        ],
    );
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let call = |name: &str| {
        gw.client(
            "py",
            &["call", "drifty__greet", &json!({"name": name}).to_string()],
        )
    };
    assert_eq!(call("Ada")["result"]["content"][0]["text"], "Hello, Ada!");
    let held = call("x'; DROP TABLE users; --");
    let plan_id = held["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let blocked = call("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    assert_eq!(
        blocked["result"]["structuredContent"]["blocked"], true,
        "{blocked}"
    );
    let out = gw.approve("plans", &plan_id, "a name with a quote, not an injection");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    // Everything the log signed after the plan's approval, as a default sink sends it.
    let reviewer = gw.reviewer_key();
    let size = gw.api_get(&reviewer, "/api/v1/log/checkpoint")["size"]
        .as_u64()
        .unwrap();
    let log = gw.api_get(&reviewer, &format!("/api/v1/log?from=0&limit={size}"));
    let entries: BTreeMap<u64, Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let t = e["entry"]["type"].as_str().unwrap_or("");
            t != "tool.call.intent" && !t.starts_with("log.")
        })
        .map(|e| (e["index"].as_u64().unwrap(), e["entry"].clone()))
        .collect();
    let all: BTreeSet<u64> = entries.keys().copied().collect();

    // Slack: one Block Kit message per event, to the webhook's secret path.
    let got = slack.wait_until("every entry on Slack", |got| got.len() >= all.len());
    for r in &got {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", &*format!("/services/{SLACK_PATH}"))
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
        let m = r.json();
        assert!(m["text"].as_str().is_some_and(|t| !t.is_empty()), "{m}");
        assert_eq!(m["blocks"][0]["type"], "header", "{m}");
        assert_eq!(m["blocks"][1]["type"], "section", "{m}");
        assert_eq!(m["blocks"][2]["type"], "context", "{m}");
        assert_eq!(m["blocks"][3]["elements"][0]["type"], "button", "{m}");
    }
    let held_msg = got
        .iter()
        .map(Captured::json)
        .find(|m| m["text"].as_str().unwrap().contains(" held "))
        .expect("the held call on Slack");
    assert_eq!(
        held_msg["blocks"][3]["elements"][0]["url"],
        format!("https://gw.example/#/plans/{plan_id}"),
        "{held_msg}"
    );
    // Slack's mrkdwn: the reasons' `<`/`>`/`&` are escaped, so no link or mention is injected.
    for r in &got {
        let t = r.json()["blocks"][1]["text"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(!t.contains('<') && !t.contains('>'), "{t}");
    }

    // Splunk HEC: batches of event objects with the HEC token.
    let got = splunk.wait_until("every entry in Splunk", |got| {
        indices(
            got.iter()
                .flat_map(|r| ndjson(&r.body))
                .map(|o| o["event"].clone())
                .collect::<Vec<_>>()
                .iter(),
        )
        .is_superset(&all)
    });
    for r in &got {
        assert_eq!(r.path, "/services/collector/event");
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Splunk {SPLUNK_TOKEN}"))
        );
        for o in ndjson(&r.body) {
            assert!(o["time"].is_i64(), "{o}");
            assert_eq!(o["host"], "gw-test");
            assert_eq!(o["source"], "interlock");
            assert_eq!(o["sourcetype"], "interlock:alert");
            assert_eq!(o["event"]["schema"], "interlock.alert/v1", "{o}");
        }
    }

    // Datadog: arrays of log objects with the reserved attributes.
    let got = datadog.wait_until("every entry in Datadog", |got| {
        let logs: Vec<Value> = got
            .iter()
            .flat_map(|r| r.json().as_array().unwrap().clone())
            .collect();
        indices(logs.iter().map(|l| &l["interlock"])).is_superset(&all)
    });
    for r in &got {
        assert_eq!(r.path, "/api/v2/logs");
        assert_eq!(r.header("dd-api-key"), Some(DD_KEY));
        assert_eq!(r.header("content-type"), Some("application/json"));
        for l in r.json().as_array().unwrap() {
            assert_eq!(l["ddsource"], "interlock");
            assert_eq!(l["service"], "interlock");
            assert_eq!(l["hostname"], "gw-test");
            assert!(l["ddtags"].as_str().unwrap().contains("severity:"), "{l}");
            assert!(
                ["info", "notice", "warn", "error", "critical"]
                    .contains(&l["status"].as_str().unwrap())
            );
            assert!(l["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
    }

    // Elastic: NDJSON create actions keyed origin#index, then the document.
    let got = elastic.wait_until("every entry in Elastic", |got| {
        let lines: Vec<Value> = got.iter().flat_map(|r| ndjson(&r.body)).collect();
        indices(lines.iter().skip(1).step_by(2)).is_superset(&all)
    });
    for r in &got {
        assert_eq!(r.path, "/_bulk");
        assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("ApiKey {ES_KEY}"))
        );
        let lines = ndjson(&r.body);
        assert_eq!(lines.len() % 2, 0);
        for pair in lines.chunks(2) {
            let (action, doc) = (&pair[0]["create"], &pair[1]);
            assert_eq!(action["_index"], "interlock-test", "{action}");
            assert_eq!(
                action["_id"],
                format!("{}#{}", doc["origin"].as_str().unwrap(), doc["index"]),
            );
            assert!(doc["@timestamp"].as_str().unwrap().ends_with('Z'), "{doc}");
        }
    }

    // PagerDuty: the hold triggers under the plan's key and its approval resolves it;
    // the block triggers an error; routine entries (below medium) stay out.
    let got = pagerduty.wait_until("the plan resolved in PagerDuty", |got| {
        got.iter().any(|r| {
            r.json()["event_action"] == "resolve"
                && r.json()["dedup_key"] == format!("interlock:plan:{plan_id}")
        })
    });
    let events: Vec<Value> = got.iter().map(Captured::json).collect();
    for (r, e) in got.iter().zip(&events) {
        assert_eq!(r.path, "/v2/enqueue");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(e["routing_key"], PD_KEY);
        if e["event_action"] == "trigger" {
            let p = &e["payload"];
            for k in ["summary", "source", "severity", "timestamp"] {
                assert!(p[k].as_str().is_some_and(|v| !v.is_empty()), "{k}: {e}");
            }
            assert!(
                ["critical", "error", "warning"].contains(&p["severity"].as_str().unwrap()),
                "{e}"
            );
            assert!(
                e["links"][0]["href"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://gw.example/#/"),
                "{e}"
            );
        } else {
            assert_eq!(e["event_action"], "resolve", "{e}");
            assert!(e.get("payload").is_none(), "{e}");
        }
    }
    let trigger = events
        .iter()
        .find(|e| {
            e["event_action"] == "trigger" && e["dedup_key"] == format!("interlock:plan:{plan_id}")
        })
        .expect("the hold triggered");
    assert_eq!(trigger["payload"]["severity"], "warning");
    assert!(
        events
            .iter()
            .any(|e| e["event_action"] == "trigger" && e["payload"]["severity"] == "error")
    );
    assert!(
        events
            .iter()
            .all(|e| e["payload"]["custom_details"]["verdict"] != "allowed")
    );
    assert!(
        events
            .iter()
            .any(|e| e["event_action"] == "resolve" && e["dedup_key"] == "interlock:server:drifty"),
        "the server's approval resolves its key"
    );
}

/// OTLP/HTTP logs: a local receiver standing in for an OpenTelemetry
/// collector's `/v1/logs` decodes each body as the specification's
/// `ExportLogsServiceRequest` (protobuf, `application/x-protobuf`) and finds
/// every entry as a log record with the resource, scope, severity number and
/// `interlock.*` record attributes.
#[test]
fn an_otlp_collector_receives_every_entry_as_log_records() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use prost::Message as _;

    let otlp = Receiver::start(Mode::Accept);
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start_with_env(
        &format!(
            "[roles.default]\ntools = [\"*\"]\n[alerts]\npoll_ms = 50\n[[alerts.sinks]]\nname = \"otel\"\n\
             kind = \"otlp\"\nurl = \"{}/v1/logs\"\nsecret_env = \"OTLP_TOKEN\"\nhostname = \"gw-test\"\n\
             [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
            otlp.base,
            script.to_str().unwrap()
        ),
        &[("OTLP_TOKEN", "otlp-token")],
    );
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let expected: BTreeSet<u64> = block_a_call_and_list_what_sinks_deliver(&gw)
        .into_iter()
        .collect();
    let decode = |r: &Captured| {
        ExportLogsServiceRequest::decode(r.body.as_slice()).expect("an OTLP logs request")
    };
    let index_of = |rec: &opentelemetry_proto::tonic::logs::v1::LogRecord| -> u64 {
        match rec
            .attributes
            .iter()
            .find(|a| a.key == "interlock.leaf.index")
            .and_then(|a| a.value.clone())
            .and_then(|v| v.value)
        {
            Some(Any::IntValue(i)) => i as u64,
            other => panic!("interlock.leaf.index: {other:?}"),
        }
    };
    let got = otlp.wait_until("every entry as a log record", |got| {
        let have: BTreeSet<u64> = got
            .iter()
            .flat_map(|r| decode(r).resource_logs)
            .flat_map(|rl| rl.scope_logs)
            .flat_map(|sl| sl.log_records)
            .map(|rec| index_of(&rec))
            .collect();
        have.is_superset(&expected)
    });
    let mut severities = BTreeSet::new();
    for r in &got {
        assert_eq!(r.path, "/v1/logs");
        assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
        assert_eq!(r.header("authorization"), Some("Bearer otlp-token"));
        for rl in decode(r).resource_logs {
            let resource = rl.resource.expect("a resource");
            let service = resource
                .attributes
                .iter()
                .find(|a| a.key == "service.name")
                .unwrap();
            assert_eq!(
                service.value.clone().unwrap().value,
                Some(Any::StringValue("interlock".into()))
            );
            for sl in rl.scope_logs {
                assert_eq!(sl.scope.unwrap().name, "interlock.alerts");
                for rec in sl.log_records {
                    assert!(rec.time_unix_nano > 0);
                    severities.insert(rec.severity_number);
                    let Some(Any::StringValue(body)) = rec.body.clone().and_then(|b| b.value)
                    else {
                        panic!("a string body: {rec:?}");
                    };
                    let ev: Value = serde_json::from_str(&body).unwrap();
                    assert_eq!(ev["index"].as_u64().unwrap(), index_of(&rec));
                    assert_eq!(rec.event_name, ev["kind"].as_str().unwrap());
                }
            }
        }
    }
    assert!(
        severities.contains(&17),
        "the block is ERROR (17): {severities:?}"
    );
}

/// The span ids the documentation promises, computed apart from the
/// gateway's code (OpenSSL's SHA-256): the first `n` bytes of
/// SHA-256(`domain` NUL origin NUL call id NUL), hex.
fn openssl_id(domain: &str, origin: &str, call: &str, n: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("input");
    std::fs::write(&f, format!("{domain}\0{origin}\0{call}\0")).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-r"])
        .arg(&f)
        .output()
        .expect("openssl runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()[..2 * n].to_owned()
}

/// OTLP/HTTP traces: a local receiver standing in for an OpenTelemetry
/// collector's `/v1/traces` decodes each body as the specification's
/// `ExportTraceServiceRequest` (protobuf, `application/x-protobuf`) and finds
/// one SERVER span per tool call — from its intent leaf to its outcome leaf,
/// with the server, tool, verdict, both leaves' indices and hashes — whose
/// trace and span ids are derived from the log's origin and the call id (so a
/// restart resends the same ids; recomputed here with OpenSSL). The block is
/// an ERROR span. A second sink, new after a restart, sends the same ids.
#[test]
fn an_otlp_collector_receives_a_span_per_call_with_ids_from_the_call() {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind, status::StatusCode};
    use prost::Message as _;

    let otlp = Receiver::start(Mode::Accept);
    let script = peers_dir().join("drifting-server.mjs");
    let traces_sink = |name: &str| {
        format!(
            "[[alerts.sinks]]\nname = \"{name}\"\nkind = \"otlp_traces\"\n\
             url = \"{}/{name}/v1/traces\"\nhostname = \"gw-test\"\n",
            otlp.base
        )
    };
    let config = |sinks: &str| {
        format!(
            "[roles.default]\ntools = [\"*\"]\n[alerts]\npoll_ms = 50\n{sinks}\
             [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
            script.to_str().unwrap()
        )
    };
    let mut gw = Gateway::start(&config(&traces_sink("first")));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let ok = gw.client("py", &["call", "drifty__greet", r#"{"name":"Ada"}"#]);
    assert_eq!(ok["result"]["content"][0]["text"], "Hello, Ada!", "{ok}");
    block_a_call_and_list_what_sinks_deliver(&gw);
    let reviewer = gw.reviewer_key();
    let size = gw.api_get(&reviewer, "/api/v1/log/checkpoint")["size"]
        .as_u64()
        .unwrap();
    let log = gw.api_get(&reviewer, &format!("/api/v1/log?from=0&limit={size}"));
    let calls: BTreeMap<u64, Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["type"] == "tool.call")
        .map(|e| (e["index"].as_u64().unwrap(), e["entry"].clone()))
        .collect();
    assert_eq!(calls.len(), 2, "one allowed, one blocked");

    let attr = |s: &Span, k: &str| {
        s.attributes
            .iter()
            .find(|a| a.key == k)
            .and_then(|a| a.value.clone())
            .and_then(|v| v.value)
    };
    let int = |s: &Span, k: &str| match attr(s, k) {
        Some(Any::IntValue(i)) => i as u64,
        other => panic!("{k}: {other:?}"),
    };
    let text = |s: &Span, k: &str| match attr(s, k) {
        Some(Any::StringValue(v)) => v,
        other => panic!("{k}: {other:?}"),
    };
    let spans_of = |path: &str| -> Vec<Span> {
        otlp.requests()
            .iter()
            .filter(|r| r.path == path)
            .flat_map(|r| {
                assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
                ExportTraceServiceRequest::decode(r.body.as_slice())
                    .expect("an OTLP traces request")
                    .resource_spans
            })
            .flat_map(|rs| rs.scope_spans)
            .flat_map(|ss| ss.spans)
            .collect()
    };
    let wait_spans = |path: &str| {
        otlp.wait_until("a span per call", |_| {
            let have: BTreeSet<u64> = spans_of(path)
                .iter()
                .map(|s| int(s, "interlock.leaf.index"))
                .collect();
            calls.keys().all(|i| have.contains(i))
        });
        spans_of(path)
    };
    let first = wait_spans("/first/v1/traces");
    assert_eq!(first.len(), calls.len(), "only calls have spans: {first:?}");
    for span in &first {
        let index = int(span, "interlock.leaf.index");
        let entry = &calls[&index];
        assert_eq!(span.kind, SpanKind::Server as i32);
        assert_eq!(text(span, "interlock.server"), "drifty");
        assert_eq!(text(span, "interlock.tool"), "greet");
        assert_eq!(
            text(span, "interlock.call_id"),
            entry["call_id"].as_str().unwrap()
        );
        let proof = gw.api_get(&reviewer, &format!("/api/v1/log/{index}/proof"));
        assert_eq!(text(span, "interlock.leaf.hash"), proof["leaf_hash"]);
        let origin = text(span, "interlock.origin");
        let call = entry["call_id"].as_str().unwrap();
        assert_eq!(
            hex::encode(&span.trace_id),
            openssl_id("interlock.trace.v1", &origin, call, 16)
        );
        assert_eq!(
            hex::encode(&span.span_id),
            openssl_id("interlock.span.v1", &origin, call, 8)
        );
        assert_eq!(
            span.end_time_unix_nano,
            entry["time"].as_u64().unwrap() * 1_000_000_000
        );
        let status = span.status.clone().unwrap();
        if entry["outcome"] == "blocked" {
            assert_eq!(status.code, StatusCode::Error as i32, "{span:?}");
            assert!(
                attr(span, "interlock.intent.index").is_none(),
                "never forwarded"
            );
        } else {
            assert_eq!(status.code, StatusCode::Ok as i32, "{span:?}");
            assert_eq!(text(span, "interlock.verdict"), "allowed");
            let intent = entry["intent_index"].as_u64().unwrap();
            assert_eq!(int(span, "interlock.intent.index"), intent);
            let intent_proof = gw.api_get(&reviewer, &format!("/api/v1/log/{intent}/proof"));
            assert_eq!(
                text(span, "interlock.intent.hash"),
                intent_proof["leaf_hash"]
            );
            assert!(span.start_time_unix_nano <= span.end_time_unix_nano);
            assert!(span.start_time_unix_nano > 0);
        }
    }

    // A restart with a new sink reading from the beginning: the same ids.
    std::fs::write(
        gw.dir.path().join("gateway.toml"),
        config(&format!(
            "{}{}",
            traces_sink("first"),
            traces_sink("second")
        )),
    )
    .unwrap();
    gw.restart();
    let second = wait_spans("/second/v1/traces");
    let ids = |spans: &[Span]| -> BTreeMap<u64, (Vec<u8>, Vec<u8>)> {
        spans
            .iter()
            .filter(|s| calls.contains_key(&int(s, "interlock.leaf.index")))
            .map(|s| {
                (
                    int(s, "interlock.leaf.index"),
                    (s.trace_id.clone(), s.span_id.clone()),
                )
            })
            .collect()
    };
    assert_eq!(ids(&second), ids(&first));
}
