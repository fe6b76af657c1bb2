//! Issue 20 item 4: per-key rate limits, monthly quotas and response caps on
//! the call path, set through the admin API, with real MCP servers
//! (mcp-server-time, server-everything) and the official Python SDK client.
//! A refusal is a JSON-RPC error with the retry time (HTTP 429 with
//! `Retry-After` on a plain JSON answer) and a `tool.call` leaf of its own
//! verdict.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, client, http, peer, post_mcp};
use crate::util::stderr;

fn config() -> String {
    format!(
        "[servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n\n\
         [servers.everything]\ncommand = {:?}\nargs = [{:?}]\n",
        peer("INTERLOCK_PEERS_TIME_SERVER").to_str().unwrap(),
        peer("INTERLOCK_PEERS_NODE").to_str().unwrap(),
        peer("INTERLOCK_PEERS_SERVER_EVERYTHING").to_str().unwrap(),
    )
}

fn owner(gw: &Gateway) -> String {
    let out = gw.cli(&["admin", "token", "create", "root", "--scope", "owner"]);
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn admin(gw: &Gateway, token: &str, method: &str, path: &str, body: Value) -> Value {
    let (s, _, b) = http(
        &gw.addr,
        method,
        path,
        &[
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
        ],
        &serde_json::to_vec(&body).unwrap(),
    );
    let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
    assert_eq!(s, 200, "{method} {path}: {v}");
    v
}

/// One stateless `tools/call` with `key`: status, Retry-After, body.
fn call(gw: &Gateway, key: &str, tool: &str, args: Value) -> (u16, Option<String>, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": tool, "arguments": args}});
    let (s, h, b) = post_mcp(
        &gw.addr,
        key,
        &[("MCP-Protocol-Version", "2026-07-28")],
        &serde_json::to_vec(&body).unwrap(),
    );
    let retry = h
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
        .map(|(_, v)| v.clone());
    (s, retry, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn leaves(gw: &Gateway, verdict: &str) -> Vec<Value> {
    let reviewer = gw.reviewer_key();
    gw.api_get(&reviewer, "/api/v1/log?from=0&limit=2000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .filter(|e| e["type"] == "tool.call" && e["verdict"]["verdict"] == verdict)
        .collect()
}

fn ready(gw: &Gateway) {
    for s in ["time", "everything"] {
        gw.wait_for_server(s, "PENDING");
        gw.approve_server(s);
    }
    gw.wait_for_tool("time__get_current_time", true);
    gw.wait_for_tool("everything__echo", true);
}

const NOW: &str = "time__get_current_time";

#[test]
fn a_key_over_its_rate_is_refused_with_the_retry_time_and_a_leaf() {
    let gw = Gateway::start(&config());
    ready(&gw);
    let root = owner(&gw);
    let made = admin(
        &gw,
        &root,
        "POST",
        "/api/v1/admin/keys",
        json!({"name": "burst", "rate_per_minute": 3}),
    );
    let key = made["key"].as_str().unwrap().to_owned();
    for i in 0..3 {
        let (s, _, b) = call(&gw, &key, NOW, json!({"timezone": "UTC"}));
        assert_eq!(
            (s, &b["result"]["isError"]),
            (200, &json!(false)),
            "call {i}: {b}"
        );
    }
    let (s, retry, b) = call(&gw, &key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 429, "{b}");
    assert_eq!(b["error"]["code"], -32006, "{b}");
    let secs = b["error"]["data"]["retry_after_secs"].as_u64().unwrap();
    assert!((1..=20).contains(&secs), "{b}");
    assert_eq!(retry.as_deref(), Some(secs.to_string().as_str()));
    assert_eq!(b["error"]["data"]["limit"], "rate");
    // Another key is not slowed by this one.
    let (s, _, _) = call(&gw, &gw.agent_key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 200);

    // The official Python SDK client in a session sees the JSON-RPC error
    // (the session's transport answers it as JSON-RPC, status and all).
    let script = gw.dir.path().join("burst.json");
    std::fs::write(
        &script,
        json!([{"op": "call", "name": NOW, "arguments": {"timezone": "UTC"}}]).to_string(),
    )
    .unwrap();
    let out = client(
        "py",
        &gw.url,
        Some(&key),
        &["script", script.to_str().unwrap()],
    );
    let step = out["steps"][0].to_string();
    assert!(
        step.contains("rate limit") && step.contains("retry in"),
        "{out}"
    );

    // Raised by an admin: applies to the next call (nothing cached past it).
    let id = made["id"].as_str().unwrap();
    admin(
        &gw,
        &root,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        json!({"rate_per_minute": 1000}),
    );
    let (s, _, b) = call(&gw, &key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 200, "{b}");

    let refused = leaves(&gw, "rate_limited");
    assert!(refused.len() >= 2, "{refused:?}");
    assert_eq!(refused[0]["verdict"]["rate_per_minute"], 3);
    assert_eq!(refused[0]["outcome"], "refused");
    assert_eq!(refused[0]["tool"], "get_current_time");
    gw.assert_audit_clean();
}

#[test]
fn a_monthly_quota_is_counted_durably_across_restart_and_rotation() {
    let mut gw = Gateway::start(&config());
    ready(&gw);
    let root = owner(&gw);
    let made = admin(
        &gw,
        &root,
        "POST",
        "/api/v1/admin/keys",
        json!({"name": "metered", "monthly_quota": 2}),
    );
    let key = made["key"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        assert_eq!(call(&gw, &key, NOW, json!({"timezone": "UTC"})).0, 200);
    }
    let (s, retry, b) = call(&gw, &key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 429, "{b}");
    assert_eq!(b["error"]["data"]["limit"], "quota", "{b}");
    let secs = b["error"]["data"]["retry_after_secs"].as_u64().unwrap();
    assert!(secs > 0 && secs <= 31 * 86_400, "until next month: {b}");
    assert_eq!(retry, Some(secs.to_string()));

    // A restart does not reset it.
    gw.restart();
    gw.wait_for_tool(NOW, true);
    let (s, _, b) = call(&gw, &key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 429, "after a restart: {b}");
    // Nor does a rotation: the new key inherits the month's count.
    let rotated = admin(
        &gw,
        &root,
        "POST",
        &format!("/api/v1/admin/keys/{}/rotate", made["id"].as_str().unwrap()),
        json!({}),
    );
    let (s, _, b) = call(
        &gw,
        rotated["key"].as_str().unwrap(),
        NOW,
        json!({"timezone": "UTC"}),
    );
    assert_eq!(s, 429, "after a rotation: {b}");
    // Raised: the next call runs.
    admin(
        &gw,
        &root,
        "PATCH",
        &format!("/api/v1/admin/keys/{}", rotated["id"].as_str().unwrap()),
        json!({"monthly_quota": 3}),
    );
    assert_eq!(
        call(
            &gw,
            rotated["key"].as_str().unwrap(),
            NOW,
            json!({"timezone": "UTC"})
        )
        .0,
        200
    );

    let refused = leaves(&gw, "quota_exceeded");
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert_eq!(refused[0]["verdict"]["monthly_quota"], 2);
    assert!(refused[0]["verdict"]["month"].as_str().unwrap().len() == 7);
    gw.assert_audit_clean();
}

#[test]
fn response_caps_and_policy_apply_per_key_where_responses_are_inspected() {
    let gw = Gateway::start(&config());
    ready(&gw);
    let root = owner(&gw);
    let key = |body: Value| {
        admin(&gw, &root, "POST", "/api/v1/admin/keys", body)["key"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let small = key(json!({"name": "small", "max_response_bytes": 64}));
    let few = key(json!({"name": "few", "max_array_items": 1}));
    let strict = key(json!({"name": "strict", "response_policy": {"pii": "block"}}));

    // Over the byte cap: withheld, saying why.
    let (s, _, b) = call(&gw, &small, NOW, json!({"timezone": "UTC"}));
    assert_eq!(s, 200);
    assert_eq!(b["result"]["isError"], true, "{b}");
    let text = b["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("over this key's response cap of 64 bytes"),
        "{text}"
    );
    // The same call for the gateway's own agent key passes.
    let (_, _, b) = call(&gw, &gw.agent_key, NOW, json!({"timezone": "UTC"}));
    assert_eq!(b["result"]["isError"], false, "{b}");

    // An array over the item cap: withheld (get-resource-links answers
    // several content items).
    let (_, _, b) = call(
        &gw,
        &few,
        "everything__get-resource-links",
        json!({"count": 3}),
    );
    assert_eq!(b["result"]["isError"], true, "{b}");
    let text = b["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("over this key's cap of 1 array items"),
        "{text}"
    );
    let (_, _, b) = call(&gw, &few, NOW, json!({"timezone": "UTC"}));
    assert_eq!(b["result"]["isError"], false, "one item passes: {b}");

    // The response policy: PII redacted by the gateway's default, blocked
    // for the strict key.
    let pii = json!({"message": "write to jane.doe@example.com"});
    let (_, _, b) = call(&gw, &gw.agent_key, "everything__echo", pii.clone());
    let text = b["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        text.contains("[REDACTED:pii]") && b["result"]["isError"] != true,
        "{b}"
    );
    let (_, _, b) = call(&gw, &strict, "everything__echo", pii);
    assert_eq!(b["result"]["isError"], true, "{b}");
    assert!(b.to_string().contains("blocked by policy"), "{b}");

    // Each withheld answer is in its call's leaf.
    let blocked: Vec<Value> = leaves(&gw, "allowed")
        .into_iter()
        .filter(|l| l["verdict"]["response"] == "blocked")
        .collect();
    assert_eq!(blocked.len(), 3, "{blocked:?}");
    let reasons: Vec<&str> = blocked
        .iter()
        .filter_map(|l| l["verdict"]["response_reason"].as_str())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("response cap of 64 bytes")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("cap of 1 array items")),
        "{reasons:?}"
    );
    gw.assert_audit_clean();
}
