//! Issue 15, items 11, 12 and 19: every channel an upstream reaches the agent
//! through is inspected, the scan fails closed, upstream log messages reach
//! only their own call, and resource reads go to the server that owns the
//! URI. The upstream is the drifting SDK server (`tests/peers`), whose
//! `leak` tool puts a secret it builds itself (an AWS access key id) in the
//! channel a test names; the agent is raw HTTP (SSE streams included).

use std::time::Duration;

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir, post_mcp};

/// The secret the fixture builds (`'AKIA' + 'IOSFODNN7' + 'EXAMPLE'`).
const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";

fn gateway(calls: &str, servers: &[(&str, &str)]) -> Gateway {
    let script = peers_dir().join("drifting-server.mjs");
    let mut config = format!("[calls]\n{calls}\n");
    for (name, env) in servers {
        config.push_str(&format!(
            "[servers.{name}]\ncommand = \"node\"\nargs = [{:?}]\n{env}\n",
            script.to_str().unwrap()
        ));
    }
    let gw = Gateway::start(&config);
    for (name, _) in servers {
        gw.wait_for_server(name, "PENDING");
        gw.approve_server(name);
    }
    // Every server's approval reaches the gateway (the CLI wrote it to the store;
    // the gateway picks it up), not only the first one's.
    for (name, _) in servers {
        gw.wait_for_tool(&format!("{name}__leak"), true);
    }
    gw
}

fn one(calls: &str) -> Gateway {
    gateway(calls, &[("drifty", "")])
}

/// A POST to `/mcp` with the agent key `key`; returns the JSON-RPC messages
/// of the answer (one, or an SSE stream's events in order).
fn post(gw: &Gateway, key: &str, body: &Value) -> Vec<Value> {
    let (status, _, raw) = post_mcp(
        &gw.addr,
        key,
        &[("MCP-Protocol-Version", "2026-07-28")],
        &serde_json::to_vec(body).unwrap(),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&raw));
    let text = String::from_utf8_lossy(&raw).into_owned();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// `tools/call drifty__leak {args}`, with a progress token when `stream`
/// (the answer is then an SSE stream carrying the call's notifications).
fn leak(gw: &Gateway, args: Value, stream: bool) -> Vec<Value> {
    let mut params = json!({"name": "drifty__leak", "arguments": args});
    if stream {
        params["_meta"] = json!({"progressToken": "tok"});
    }
    post(
        gw,
        &gw.agent_key,
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}),
    )
}

/// The last `tool.call` leaf in the log.
fn last_call_leaf(gw: &Gateway) -> Value {
    let key = gw.reviewer_key();
    let log = gw.api_get(&key, "/api/v1/log?from=0&limit=1000");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["entry"]["type"] == "tool.call")
        .map(|e| e["entry"].clone())
        .expect("a tool.call leaf")
}

fn assert_no_secret(what: &str, v: &impl std::fmt::Debug) {
    let text = format!("{v:?}");
    assert!(
        !text.contains(SECRET),
        "{what} reached the agent unredacted: {text}"
    );
}

/// The answer blocks the call's result with an error that says why.
fn assert_blocked(answer: &Value, why: &str) {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("the gateway blocked the upstream's result: ") && text.contains(why),
        "{answer}"
    );
}

#[test]
fn regression_scan_fails_closed_on_deep_structured_content() {
    let gw = one("");
    // Shallow: redacted in place.
    let shallow = leak(&gw, json!({"channel": "structured", "depth": 3}), false);
    assert_no_secret("structuredContent", &shallow);
    assert!(
        shallow[0]["result"]["structuredContent"].is_object(),
        "{shallow:?}"
    );
    // Deeper than the parser's limit: blocked, never forwarded unscanned.
    let deep = leak(&gw, json!({"channel": "structured", "depth": 200}), false);
    assert_no_secret("deep structuredContent", &deep);
    assert_blocked(
        &deep[0],
        "structuredContent nests deeper than 128 levels, so it could not be scanned",
    );
    let leaf = last_call_leaf(&gw);
    assert_eq!(leaf["outcome"], "ok", "{leaf}");
    assert_eq!(leaf["verdict"]["response"], "blocked", "{leaf}");
    assert_eq!(
        leaf["verdict"]["response_reason"],
        "structuredContent nests deeper than 128 levels, so it could not be scanned",
        "{leaf}"
    );
    gw.assert_audit_clean();
}

#[test]
fn regression_scan_fails_closed_on_oversized_result() {
    let gw = one("response_max_bytes = 65536");
    let small = leak(&gw, json!({"channel": "big", "bytes": 1000}), false);
    assert_no_secret("a result under the cap", &small);
    assert!(
        small[0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("[REDACTED:secret]")
    );
    let big = leak(&gw, json!({"channel": "big", "bytes": 100_000}), false);
    assert_no_secret("an oversized result", &big);
    assert_blocked(&big[0], "over the scan cap of 65536 bytes");
    let leaf = last_call_leaf(&gw);
    assert_eq!(leaf["verdict"]["response"], "blocked", "{leaf}");
    assert!(
        leaf["verdict"]["response_reason"]
            .as_str()
            .unwrap()
            .contains("over the scan cap"),
        "{leaf}"
    );
}

#[test]
fn regression_embedded_resource_text_is_inspected() {
    let gw = one("");
    for channel in ["resource", "blob"] {
        let answer = leak(&gw, json!({"channel": channel}), false);
        assert_no_secret(channel, &answer);
        let leaf = last_call_leaf(&gw);
        assert_eq!(leaf["verdict"]["response"], "redacted", "{channel}: {leaf}");
    }
}

#[test]
fn regression_upstream_error_message_is_inspected() {
    let gw = one("");
    let answer = leak(&gw, json!({"channel": "error"}), false);
    assert_no_secret("the upstream's error", &answer);
    let message = answer[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("[REDACTED:secret]"), "{answer:?}");
    let leaf = last_call_leaf(&gw);
    assert_eq!(leaf["outcome"], "upstream_error", "{leaf}");
    assert_eq!(leaf["verdict"]["response"], "redacted", "{leaf}");
    // The log keeps the redacted error, not the secret.
    assert_no_secret("the leaf", &leaf);
}

#[test]
fn regression_progress_message_is_inspected() {
    let gw = one("");
    let events = leak(&gw, json!({"channel": "progress"}), true);
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 1, "{events:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "tok");
    assert_eq!(progress[0]["params"]["message"], "key [REDACTED:secret]");
    assert_no_secret("a progress message", &events);
    let leaf = last_call_leaf(&gw);
    assert_eq!(
        leaf["verdict"]["notification_findings"][0]["path"], "notifications/progress.message",
        "{leaf}"
    );
}

#[test]
fn regression_log_message_is_inspected() {
    let gw = one("");
    let events = leak(&gw, json!({"channel": "log", "note": "n"}), true);
    let logs: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{events:?}");
    assert_eq!(logs[0]["params"]["data"]["key"], "key [REDACTED:secret]");
    assert_no_secret("a log message", &events);
    let leaf = last_call_leaf(&gw);
    assert_eq!(
        leaf["verdict"]["notification_findings"][0]["category"], "secret",
        "{leaf}"
    );
}

#[test]
fn regression_resource_read_blob_is_inspected() {
    let gw = one("");
    let (status, _, body) = gw.rpc("resources/read", json!({"uri": "notes://leak"}));
    assert_eq!(status, 200, "{body}");
    assert_no_secret("a resource's text blob", &body);
    assert!(body["result"]["contents"][0]["blob"].is_string(), "{body}");
}

#[test]
fn regression_prompt_get_embedded_blob_is_inspected() {
    let gw = one("");
    let (status, _, body) = gw.rpc("prompts/get", json!({"name": "drifty__leaky"}));
    assert_eq!(status, 200, "{body}");
    assert_no_secret("a prompt's embedded blob", &body);
    assert!(
        body["result"]["messages"][0]["content"]["resource"]["blob"].is_string(),
        "{body}"
    );
}

/// Agent A's call streams (its relay is registered); agent B's concurrent
/// call on the same upstream makes it log. B's log message must not reach
/// A's stream.
#[test]
fn regression_log_message_never_reaches_another_agents_call() {
    let gw = one("");
    let out = gw.cli(&["agents", "add", "other"]);
    assert!(out.status.success());
    let other = crate::util::stdout(&out).trim().to_owned();
    let a = {
        let (addr, key) = (gw.addr.clone(), gw.agent_key.clone());
        std::thread::spawn(move || {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "drifty__slow", "arguments": {"ms": 2500},
                "_meta": {"progressToken": "a"}}});
            let (_, _, raw) = post_mcp(
                &addr,
                &key,
                &[("MCP-Protocol-Version", "2026-07-28")],
                &serde_json::to_vec(&body).unwrap(),
            );
            String::from_utf8_lossy(&raw).into_owned()
        })
    };
    std::thread::sleep(Duration::from_millis(700));
    let b = post(
        &gw,
        &other,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "drifty__quiet_log", "arguments": {"note": "agent B's log"}}}),
    );
    assert_eq!(b[0]["result"]["content"][0]["text"], "logged", "{b:?}");
    let a = a.join().unwrap();
    assert!(a.contains("done"), "{a}");
    assert!(
        !a.contains("notifications/message") && !a.contains("agent B's log"),
        "agent B's log message reached agent A's call: {a}"
    );
    // Alone on the upstream, a streaming call gets its own log message.
    let own = post(
        &gw,
        &gw.agent_key,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "drifty__quiet_log", "arguments": {"note": "A's own"},
            "_meta": {"progressToken": "a2"}}}),
    );
    assert!(
        own.iter()
            .any(|e| e["method"] == "notifications/message"
                && e["params"]["data"]["note"] == "A's own"),
        "{own:?}"
    );
}

/// Two upstreams whose templates claim the same URIs alike, and one URI only
/// the second lists: the listed one goes to its owner, the shared claim is
/// refused (never given to whichever server comes first).
#[test]
fn regression_resource_read_routes_to_the_owner() {
    let gw = gateway(
        "",
        &[
            (
                "alpha",
                "env = { NOTE_TEMPLATE = \"memo://{id}\", SERVER_TAG = \"alpha\" }",
            ),
            (
                "beta",
                "env = { NOTE_TEMPLATE = \"memo://{id}\", NOTE_URI = \"memo://beta-only\", \
                 SERVER_TAG = \"beta\" }",
            ),
        ],
    );
    let read = |uri: &str| gw.rpc("resources/read", json!({"uri": uri})).2;
    let listed = read("memo://beta-only");
    assert_eq!(
        listed["result"]["contents"][0]["text"], "beta: memo://beta-only",
        "{listed}"
    );
    let shared = read("memo://7");
    let message = shared["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`alpha`") && message.contains("`beta`") && message.contains("guess"),
        "{shared}"
    );
    let nobody = read("other://x");
    assert!(
        nobody["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown resource"),
        "{nobody}"
    );
}
