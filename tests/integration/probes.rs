//! Issue 16 item 1: effective-permission probes through a real `interlock
//! serve`, in front of a real MCP server on the official TypeScript SDK whose
//! tool definitions never change but whose behaviour does.

use std::time::Duration;

use serde_json::Value;

use crate::gateway_util::{Gateway, peers_dir, tool_names};
use crate::util::{stderr, stdout};

/// The probed server (`tests/peers/probed-server.mjs`) marked safe to probe,
/// with a denied probe, a result probe and a probe of a tool it does not list.
fn probed_config(open_file: &std::path::Path) -> String {
    let script = peers_dir().join("probed-server.mjs");
    format!(
        r#"recheck_secs = 1
[servers.vault]
command = "node"
args = [{script:?}]
env = {{ OPEN_FILE = {open:?} }}
probes = "non-production"
[[servers.vault.probe]]
tool = "read_secret"
arguments = {{ path = "/etc/shadow" }}
expect = "denied"
[[servers.vault.probe]]
tool = "echo"
arguments = {{ text = "hello" }}
expect = {{ result_contains = "hello", result_lacks = "root:" }}
[[servers.vault.probe]]
tool = "no_such_tool"
expect = "denied"
"#,
        script = script.to_str().unwrap(),
        open = open_file.to_str().unwrap(),
    )
}

/// The vault's server view once `done` holds (see
/// [`Gateway::server_view_until`]).
fn wait_view(gw: &Gateway, key: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    gw.server_view_until(key, "vault", what, done)
}

fn log_entries(gw: &Gateway, key: &str) -> Vec<Value> {
    gw.api_get(key, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .collect()
}

fn finding_schema() -> jsonschema::Validator {
    let path = crate::util::manifest_dir().join("docs/schemas/probe-finding.schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the published schema is a valid JSON Schema")
}

fn assert_valid(schema: &jsonschema::Validator, record: &Value) {
    let errors: Vec<String> = schema
        .iter_errors(record)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{record} fails the schema: {errors:?}");
}

/// The hole: a tool whose definition stays byte-for-byte the same, whose
/// denial for `/etc/shadow` was what the reviewer approved, starts answering.
/// The next re-check's probe sees it, the server is quarantined (nothing of it
/// served) and the evidence — probe, expected, observed, the result's SHA-256,
/// never its text — is a verifiable `server.probe_drift` leaf committed with
/// the quarantine. Probes are never agent calls; a reviewer's re-approval
/// adopts what it now does, and it stays trusted.
#[test]
fn regression_denied_probe_that_now_succeeds_quarantines_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let open_file = dir.path().join("open");
    let gw = Gateway::start(&probed_config(&open_file));
    let reviewer = gw.reviewer_key();
    let schema = finding_schema();

    // Before approval the probes run and their outcomes are shown with the
    // pending server: the denial holds, the unknown tool is a finding.
    gw.wait_for_server("vault", "PENDING");
    let pending = wait_view(&gw, &reviewer, "probed while pending", |v| {
        v["probes"]["observed"]
            .as_array()
            .is_some_and(|r| r.len() == 3)
    });
    let runs = &pending["probes"]["observed"];
    assert_eq!(runs[0]["tool"], "read_secret", "{pending}");
    assert_eq!(runs[0]["outcome"], "refused", "{pending}");
    assert_eq!(runs[0]["verdict"], "met", "{pending}");
    assert_eq!(runs[1]["outcome"], "succeeded", "{pending}");
    assert_eq!(runs[1]["verdict"], "met", "{pending}");
    assert_eq!(runs[2]["outcome"], "unknown_tool", "{pending}");
    let found = pending["probes"]["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{pending}");
    assert_eq!(found[0]["kind"], "inconclusive", "{pending}");
    assert_eq!(found[0]["action"], "report", "{pending}");
    assert_valid(&schema, &found[0]);
    let surface_hash = pending["server"]["observed_hash"].clone();

    gw.approve_server("vault");
    let trusted = wait_view(&gw, &reviewer, "trusted", |v| {
        v["server"]["status"] == "TRUSTED"
    });
    // Approval adopted the outcomes the reviewer saw as the probes' baseline.
    assert_eq!(
        trusted["probes"]["baseline"][0]["outcome"], "refused",
        "{trusted}"
    );
    gw.wait_for_tool("vault__echo", true);
    // Nothing the gateway did on its own is an agent's call.
    let before = log_entries(&gw, &reviewer);
    assert!(
        !before.iter().any(|e| e["type"]
            .as_str()
            .is_some_and(|t| t.starts_with("tool.call"))),
        "probes must not be tool calls: {before:?}"
    );
    let approved = before
        .iter()
        .find(|e| e["type"] == "server.approved")
        .unwrap();
    assert_eq!(
        approved["probe_baseline"][0]["outcome"], "refused",
        "{approved}"
    );
    let echoed = gw.client("py", &["call", "vault__echo", r#"{"text":"hi"}"#]);
    assert_eq!(echoed["result"]["content"][0]["text"], "hi", "{echoed}");

    // Behaviour changes; the listing does not.
    std::fs::write(&open_file, "").unwrap();
    gw.wait_for_server("vault", "QUARANTINED");
    gw.wait_for_tool("vault__echo", false);
    let refused = gw.client("mjs", &["call", "vault__echo", r#"{"text":"hi"}"#]);
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("quarantined"),
        "{refused}"
    );
    let listed = gw.list_tools();
    assert!(
        !tool_names(&listed).iter().any(|t| t.starts_with("vault__")),
        "{listed}"
    );
    let view = gw.api_get(&reviewer, "/api/v1/servers/vault");
    assert_eq!(view["server"]["observed_hash"], surface_hash, "{view}");
    assert_eq!(
        view["drift"],
        Value::Array(vec![]),
        "no surface drift: {view}"
    );

    // The evidence leaf, committed with the quarantine.
    let entries = log_entries(&gw, &reviewer);
    let leaf = entries
        .iter()
        .find(|e| e["type"] == "server.probe_drift" && e["status"] == "QUARANTINED")
        .unwrap_or_else(|| panic!("no quarantining probe leaf in {entries:?}"));
    assert_eq!(leaf["server"], "vault", "{leaf}");
    assert_eq!(leaf["surface_hash"], surface_hash, "{leaf}");
    let findings = leaf["findings"].as_array().unwrap();
    let grew = findings
        .iter()
        .find(|f| f["kind"] == "permission_grew")
        .unwrap_or_else(|| panic!("{leaf}"));
    assert_eq!(grew["tool"], "read_secret", "{grew}");
    assert_eq!(grew["expected"]["kind"], "denied", "{grew}");
    assert_eq!(grew["observed"]["outcome"], "succeeded", "{grew}");
    assert_eq!(grew["baseline"], "refused", "{grew}");
    assert_eq!(grew["action"], "quarantine", "{grew}");
    let args: Value = serde_json::json!({ "path": "/etc/shadow" });
    let args_hash =
        interlock_core::canon::digest(&interlock_core::canon::from_serde_json(&args).unwrap());
    assert_eq!(grew["arguments_hash"], args_hash.to_string(), "{grew}");
    // The result's SHA-256, over the canonical bytes of what the server answered.
    let answered = serde_json::json!({
        "content": [{ "type": "text", "text": "/etc/shadow: root:$6$saltsalt$hashhashhash:19000:0:99999:7:::" }]
    });
    let result_hash =
        interlock_core::canon::digest(&interlock_core::canon::from_serde_json(&answered).unwrap());
    assert_eq!(
        grew["observed"]["result_hash"],
        result_hash.to_string(),
        "{grew}"
    );
    for f in findings {
        assert_valid(&schema, f);
    }
    // The secret itself is nowhere in the log.
    let all = serde_json::to_string(&entries).unwrap();
    assert!(
        !all.contains("hashhashhash"),
        "the probe's result leaked into the log"
    );
    // The leaf verifies: the whole log audits clean.
    gw.assert_audit_clean();
    let shown = gw.cli(&["servers", "show", "vault"]);
    let shown = stdout(&shown);
    assert!(
        shown.contains("read_secret") && shown.contains("permission grew"),
        "{shown}"
    );

    // A reviewer's re-approval adopts what the tool now does: served again,
    // and the next re-checks leave it trusted.
    gw.approve_server("vault");
    wait_view(&gw, &reviewer, "re-approved", |v| {
        v["server"]["status"] == "TRUSTED" && v["probes"]["baseline"][0]["outcome"] == "succeeded"
    });
    gw.wait_for_tool("vault__echo", true);
    std::thread::sleep(Duration::from_secs(3));
    let still = gw.api_get(&reviewer, "/api/v1/servers/vault");
    assert_eq!(still["server"]["status"], "TRUSTED", "{still}");
    gw.assert_audit_clean();
}

/// Probes are real calls: a server that is not marked safe to probe is never
/// probed, and a config that declares probes for it is refused at load.
#[test]
fn probes_declared_without_the_non_production_marking_refuse_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = probed_config(&dir.path().join("open")).replace("probes = \"non-production\"\n", "");
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, cfg).unwrap();
    let out = crate::util::interlock_with(
        &["serve", "--config", path.to_str().unwrap()],
        None,
        &[(
            "INTERLOCK_DATA_DIR",
            dir.path().join("data").to_str().unwrap(),
        )],
    );
    assert!(!out.status.success());
    let err = crate::util::stderr(&out);
    assert!(
        err.contains("servers.vault") && err.contains("non-production"),
        "{err}"
    );
}

/// Issue 39 item 17: probes called tools a reviewer had blocked, and left no
/// leaf of their own, so nothing on the log showed the gateway calling them.
/// Each probe call is now a `server.probe_call` leaf written before it is
/// sent, and a blocked tool is not called at all: its probe is recorded as
/// not reached.
#[test]
fn regression_issue_39_a_blocked_tool_is_never_probed_and_every_probe_call_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&probed_config(&dir.path().join("open")));
    let reviewer = gw.reviewer_key();
    gw.wait_for_server("vault", "PENDING");
    wait_view(&gw, &reviewer, "probed while pending", |v| {
        v["probes"]["observed"][0]["outcome"] == "refused"
    });
    let calls_of = |entries: &[Value], tool: &str| -> usize {
        entries
            .iter()
            .filter(|e| e["type"] == "server.probe_call" && e["tool"] == tool)
            .count()
    };
    let before = log_entries(&gw, &reviewer);
    assert!(calls_of(&before, "read_secret") > 0, "{before:?}");
    let call = before
        .iter()
        .find(|e| e["type"] == "server.probe_call" && e["tool"] == "echo")
        .unwrap();
    let args = interlock_core::canon::from_serde_json(&serde_json::json!({"text": "hello"}));
    assert_eq!(
        call["arguments_hash"],
        interlock_core::canon::digest(&args.unwrap()).to_string(),
        "{call}"
    );
    assert_eq!(
        calls_of(&before, "no_such_tool"),
        0,
        "an unlisted tool is not called"
    );

    let out = gw.cli(&[
        "servers",
        "reject",
        "vault",
        "--tool",
        "read_secret",
        "--reason",
        "not this one",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let view = wait_view(&gw, &reviewer, "the blocked tool not reached", |v| {
        v["probes"]["observed"][0]["outcome"] == "unreachable"
    });
    let detail = view["probes"]["observed"][0].to_string();
    assert!(detail.contains("blocked"), "{view}");
    // Another round or two, then: no probe call of the blocked tool after
    // its block, while the others are still called.
    std::thread::sleep(Duration::from_secs(3));
    let after = log_entries(&gw, &reviewer);
    let blocked_at = after
        .iter()
        .position(|e| e["type"] == "tool.blocked")
        .unwrap_or_else(|| panic!("no tool.blocked leaf: {after:?}"));
    let later = &after[blocked_at..];
    assert_eq!(calls_of(later, "read_secret"), 0, "{later:?}");
    assert!(calls_of(later, "echo") > 0, "{later:?}");
    gw.assert_audit_clean();
}
