//! Issue 18 item 2: approvals that do not fatigue. A reviewer approves a held
//! call once, for the agent's session, for an hour, or for its exact
//! arguments; each wider scope is a signed standing approval narrowed to that
//! agent, which the gateway offers from the held call (`GET
//! /api/v1/plans/{id}/scopes`), checks in full when it is granted, and names
//! in the log at every use. Through a real `interlock serve`, the drifting SDK
//! server, MCP sessions over Streamable HTTP, and a reviewer key registered by
//! its public half (as a browser's is).

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http, post_mcp};
use crate::standing::{config, gateway};
use crate::util::{stderr, stdout};

/// Opens an MCP session (2025-11-25) for the agent key; returns its id.
fn open_session(gw: &Gateway, key: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "scoped-test", "version": "1"}}});
    let (status, headers, body) = post_mcp(&gw.addr, key, &[], init.to_string().as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let sid = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
        .map(|(_, v)| v.clone())
        .expect("a session id");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post_mcp(
        &gw.addr,
        key,
        &[("Mcp-Session-Id", &sid)],
        note.to_string().as_bytes(),
    );
    assert_eq!(status, 202);
    sid
}

/// One `tools/call` in session `sid` (or stateless, without one).
fn call(gw: &Gateway, key: &str, sid: Option<&str>, tool: &str, args: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": tool, "arguments": args}});
    let headers: Vec<(&str, &str)> = match sid {
        Some(s) => vec![("Mcp-Session-Id", s)],
        None => vec![("MCP-Protocol-Version", "2026-07-28")],
    };
    let (status, _, bytes) = post_mcp(&gw.addr, key, &headers, body.to_string().as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    serde_json::from_slice(&bytes).expect("a JSON answer")
}

/// The held plan of a call's answer: a held tool error (a session's call), or
/// the round trip's `input_required` (a stateless call still waiting).
pub(crate) fn held_plan(r: &Value) -> Option<String> {
    if r["result"]["resultType"] == "input_required" {
        return r["result"]["_meta"]["io.interlock/held"]["plan_id"]
            .as_str()
            .map(str::to_owned);
    }
    let s = &r["result"]["structuredContent"];
    (s["held"] == true).then(|| s["plan_id"].as_str().unwrap().to_owned())
}

fn ran(r: &Value) -> bool {
    r["result"].is_object() && held_plan(r).is_none() && r["result"]["isError"] != true
}

/// A reviewer: an API key and an approver key registered by its public half.
struct Reviewer {
    api_key: String,
    signing: ed25519_dalek::SigningKey,
}

fn reviewer(gw: &Gateway) -> Reviewer {
    let signing = ed25519_dalek::SigningKey::from_bytes(&[77; 32]);
    let out = gw.cli(&[
        "keys",
        "register",
        "--public-key",
        &hex::encode(signing.verifying_key().as_bytes()),
        "--identity",
        "human:scoped-reviewer",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    Reviewer {
        api_key: gw.reviewer_key(),
        signing,
    }
}

impl Reviewer {
    fn sign(&self, gw: &Gateway, subject: &str, hash: &str, nonce: u8) -> Value {
        use interlock_core::decision::{Terms, sign_decision};
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let server = gw.api_get(&self.api_key, "/api/v1/servers/drifty");
        sign_decision(
            &self.signing,
            &Terms {
                audience: server["audience"].as_str().unwrap(),
                subject,
                subject_hash: hash.parse().unwrap(),
                decision: interlock_core::Decision::Approve,
                reason: "fine for a while",
                issued_at: now,
                not_before: now - 5,
                expires_at: now + 600,
                nonce: [nonce; 16],
                policy_digest: server["policy_digest"].as_str().unwrap().parse().unwrap(),
            },
        )
        .unwrap()
        .1
        .to_json()
    }

    fn post(&self, gw: &Gateway, path: &str, body: &Value) -> (u16, Value) {
        let (s, _, b) = http(
            &gw.addr,
            "POST",
            path,
            &[
                ("Authorization", &format!("Bearer {}", self.api_key)),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        );
        (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
    }

    fn scopes(&self, gw: &Gateway, plan_id: &str) -> Value {
        gw.api_get(&self.api_key, &format!("/api/v1/plans/{plan_id}/scopes"))
    }

    /// Approves the held call for `scope` as the review UI does: the plan at
    /// the hash shown, then the offered grant.
    fn approve_for(&self, gw: &Gateway, plan_id: &str, scope: &str) -> Value {
        let offers = self.scopes(gw, plan_id);
        let plan_hash = offers["plan_hash"].as_str().unwrap().to_owned();
        let offer = offers["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["scope"] == scope)
            .unwrap_or_else(|| panic!("{scope} is not on offer: {offers}"))
            .clone();
        let envelope = self.sign(gw, plan_id, &plan_hash, 1);
        let (s, b) = self.post(gw, &format!("/api/v1/plans/{plan_id}/decisions"), &envelope);
        assert_eq!(s, 200, "{b}");
        let grant = &offer["grant"];
        if grant.is_null() {
            return Value::Null;
        }
        let envelope = self.sign(
            gw,
            grant["subject"].as_str().unwrap(),
            grant["document_hash"].as_str().unwrap(),
            2,
        );
        let (s, b) = self.post(
            gw,
            "/api/v1/standing",
            &json!({"document": grant["document"], "envelope": envelope}),
        );
        assert_eq!(s, 200, "{b}");
        b
    }
}

fn scope_names(offers: &Value) -> Vec<String> {
    offers["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["scope"].as_str().unwrap().to_owned())
        .collect()
}

/// The `tool.call` leaves of `tool` run under a standing approval, with its id.
fn standing_uses(gw: &Gateway, reviewer: &Reviewer) -> Vec<String> {
    gw.api_get(&reviewer.api_key, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .filter(|e| e["type"] == "tool.call" && e["verdict"]["verdict"] == "standing_approval")
        .map(|e| {
            e["verdict"]["standing_approval"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn second_reader(gw: &Gateway) -> String {
    let out = gw.cli(&[
        "agents",
        "add",
        "other-bot",
        "--role",
        "reader",
        "--config",
        &config(gw),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

/// The headline: approved for an hour, the agent's next calls of that tool run
/// without a hold — in any session, with other values — each logged with the
/// grant's id; another agent, other argument names, and the calls after a
/// revocation are held as before.
#[test]
fn a_call_approved_for_an_hour_lets_that_agents_next_calls_run_each_logged() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let rev = reviewer(&gw);
    let other = second_reader(&gw);
    let sid = open_session(&gw, &reader);
    let first = call(&gw, &reader, Some(&sid), "drifty__odd", json!({"n": 1}));
    let plan_id = held_plan(&first).unwrap_or_else(|| panic!("not held: {first}"));
    assert_eq!(
        scope_names(&rev.scopes(&gw, &plan_id)),
        ["once", "session", "hour", "arguments"]
    );
    let granted = rev.approve_for(&gw, &plan_id, "hour");
    let grant_id = granted["id"].as_str().unwrap().to_owned();
    // The held call itself is approved (its retry runs it, once).
    let plan = gw.api_get(&rev.api_key, &format!("/api/v1/plans/{plan_id}"));
    assert_eq!(plan["plan"]["status"], "APPROVED", "{plan}");
    // Who decided, by name, not only by key id (issue 46).
    let decided = plan["decisions"].as_array().unwrap();
    assert!(
        decided
            .iter()
            .any(|d| d["approver_identity"] == "human:scoped-reviewer"),
        "{plan}"
    );

    let later = open_session(&gw, &reader);
    for (sid, n) in [
        (Some(later.as_str()), 2),
        (None, 3),
        (Some(sid.as_str()), 4),
    ] {
        let r = call(&gw, &reader, sid, "drifty__odd", json!({"n": n}));
        assert!(ran(&r), "covered by the hour's grant: {r}");
    }
    assert_eq!(standing_uses(&gw, &rev), vec![grant_id.clone(); 3]);

    // Not another agent of the same role, not other argument names.
    let r = call(&gw, &other, None, "drifty__odd", json!({"n": 5}));
    assert!(held_plan(&r).is_some(), "another agent: {r}");
    let r = call(&gw, &reader, None, "drifty__odd", json!({"m": 5}));
    assert!(held_plan(&r).is_some(), "other argument names: {r}");

    let (s, b) = rev.post(
        &gw,
        &format!("/api/v1/standing/{grant_id}/revoke"),
        &json!({"reason": "enough"}),
    );
    assert_eq!(s, 200, "{b}");
    let r = call(&gw, &reader, None, "drifty__odd", json!({"n": 6}));
    assert!(held_plan(&r).is_some(), "after the revocation: {r}");
    gw.assert_audit_clean();
}

/// *For this session* covers the agent's calls in the session the held call
/// came from, and in no other session of the same agent.
#[test]
fn a_session_approval_covers_only_that_session() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let rev = reviewer(&gw);
    let sid = open_session(&gw, &reader);
    let first = call(&gw, &reader, Some(&sid), "drifty__odd", json!({"n": 1}));
    let plan_id = held_plan(&first).unwrap_or_else(|| panic!("not held: {first}"));
    let granted = rev.approve_for(&gw, &plan_id, "session");
    let doc = gw.api_get(&rev.api_key, "/api/v1/standing");
    let stored = doc["standing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == granted["id"])
        .unwrap()
        .clone();
    assert!(
        !stored.to_string().contains(&sid),
        "the session id itself stays out of the grant: {stored}"
    );

    let r = call(&gw, &reader, Some(&sid), "drifty__odd", json!({"n": 2}));
    assert!(ran(&r), "same session: {r}");
    let elsewhere = open_session(&gw, &reader);
    let r = call(
        &gw,
        &reader,
        Some(&elsewhere),
        "drifty__odd",
        json!({"n": 2}),
    );
    assert!(held_plan(&r).is_some(), "another session: {r}");
    let r = call(&gw, &reader, None, "drifty__odd", json!({"n": 2}));
    assert!(
        held_plan(&r).is_some(),
        "a stateless call has no session: {r}"
    );
    gw.assert_audit_clean();
}

/// *For these exact arguments* covers those arguments only, from any session.
#[test]
fn an_exact_arguments_approval_covers_only_those_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let rev = reviewer(&gw);
    let first = call(&gw, &reader, None, "drifty__odd", json!({"n": 1, "s": "*"}));
    let plan_id = held_plan(&first).unwrap_or_else(|| panic!("not held: {first}"));
    // A stateless call has no session to approve.
    assert_eq!(
        scope_names(&rev.scopes(&gw, &plan_id)),
        ["once", "hour", "arguments"]
    );
    rev.approve_for(&gw, &plan_id, "arguments");
    let sid = open_session(&gw, &reader);
    let r = call(
        &gw,
        &reader,
        Some(&sid),
        "drifty__odd",
        json!({"s": "*", "n": 1}),
    );
    assert!(ran(&r), "the same arguments: {r}");
    // A literal "*" in the arguments is not a wildcard in the grant.
    let r = call(
        &gw,
        &reader,
        None,
        "drifty__odd",
        json!({"n": 1, "s": "anything"}),
    );
    assert!(held_plan(&r).is_some(), "other values: {r}");
    let r = call(&gw, &reader, None, "drifty__odd", json!({"n": 2, "s": "*"}));
    assert!(held_plan(&r).is_some(), "other values: {r}");
    gw.assert_audit_clean();
}

/// A call that inspection held (its arguments look like an attack) is
/// approved once or not at all: no standing scope is offered for it.
#[test]
fn regression_a_call_held_by_inspection_offers_no_standing_scope() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let rev = reviewer(&gw);
    let r = call(
        &gw,
        &reader,
        None,
        "drifty__odd",
        json!({"q": "x'; DROP TABLE users; --"}),
    );
    let plan_id = held_plan(&r).unwrap_or_else(|| panic!("not held: {r}"));
    assert_eq!(scope_names(&rev.scopes(&gw, &plan_id)), ["once"]);
    // Scopes exist for held calls only.
    let (s, b) = {
        let (s, _, b) = http(
            &gw.addr,
            "GET",
            "/api/v1/plans/not-a-call/scopes",
            &[("Authorization", &format!("Bearer {}", rev.api_key))],
            b"",
        );
        (
            s,
            serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null),
        )
    };
    assert_eq!(s, 404, "{b}");
}

/// An agent key cannot read a held call's scopes (nothing on the agent's
/// side can approve, or learn what a grant would say).
#[test]
fn regression_an_agent_key_cannot_read_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let r = call(&gw, &reader, None, "drifty__odd", json!({"n": 1}));
    let plan_id = held_plan(&r).unwrap_or_else(|| panic!("not held: {r}"));
    let (s, _, _) = http(
        &gw.addr,
        "GET",
        &format!("/api/v1/plans/{plan_id}/scopes"),
        &[("Authorization", &format!("Bearer {reader}"))],
        b"",
    );
    assert!(s == 401 || s == 403, "{s}");
}

/// `call-…` plans are the gateway's held calls, which get scoped offers: an
/// agent's own plan cannot take that name and pose as one.
#[test]
fn regression_an_agent_cannot_propose_a_plan_posing_as_a_held_call() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, _reader) = gateway(dir.path());
    let plan = json!({"plan": {
        "schema_version": "interlock.plan/v1",
        "plan_id": "call-0123456789ab-deadbeef",
        "title": "Held tool call: drifty__odd",
        "description": "looks like a held call",
        "body": {"stages": [{"id": "call", "action": "mcp.call_tool", "target": "drifty",
            "params": {"tool": "odd", "arguments": {}},
            "rollback": "none"}]}}});
    let (_, _, r) = gw.rpc(
        "tools/call",
        json!({"name": "propose_plan", "arguments": plan}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("held calls"), "{r}");
}

/// Issue 40: a coding agent's held tool use offers *once* and *for 1 hour*
/// — exactly that use (client, tool, input, working directory), for that
/// agent, even though inspection held it: the reviewer saw those bytes.
/// Approved for the hour, the same use is allowed again and again, each time
/// logged with its standing approval; the same command elsewhere is held.
#[test]
fn regression_issue_40_an_exact_native_use_approved_for_an_hour() {
    // The reviewer signs for the audience and policy a server's view names.
    let dir = tempfile::tempdir().unwrap();
    let (gw, _reader) = gateway(dir.path());
    let rev = reviewer(&gw);
    let body = std::fs::read(
        crate::util::manifest_dir()
            .join("tests/fixtures/hooks/claude-code/pre_tool_use.bash_rm_rf_home.json"),
    )
    .unwrap();
    let auth = format!("Bearer {}", gw.agent_key);
    let hook = |body: &[u8]| {
        let (s, _, b) = http(
            &gw.addr,
            "POST",
            "/hooks/v1/claude-code?wait=0",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            body,
        );
        assert_eq!(s, 200);
        let v: Value = serde_json::from_slice(&b).unwrap();
        let o = &v["hookSpecificOutput"];
        (
            o["permissionDecision"].as_str().unwrap().to_owned(),
            o["permissionDecisionReason"].as_str().unwrap().to_owned(),
        )
    };
    let (d, reason) = hook(&body);
    assert_eq!(d, "deny", "{reason}");
    let plan_id = reason.split('`').nth(1).unwrap().to_owned();
    assert_eq!(scope_names(&rev.scopes(&gw, &plan_id)), ["once", "hour"]);
    let granted = rev.approve_for(&gw, &plan_id, "hour");
    assert!(granted["id"].as_str().is_some(), "{granted}");
    for _ in 0..3 {
        let (d, reason) = hook(&body);
        assert_eq!(d, "allow", "{reason}");
        assert!(reason.contains("for a while"), "{reason}");
    }
    let elsewhere = String::from_utf8(body).unwrap().replace(
        "\"cwd\": \"/home/user/my-project\"",
        "\"cwd\": \"/home/user/other\"",
    );
    let (d, reason) = hook(elsewhere.as_bytes());
    assert_eq!(d, "deny", "{reason}");
    // A grant for a native use must name one agent and one exact use: one
    // for any input of the tool, properly signed, is refused.
    let offered = rev.scopes(&gw, reason.split('`').nth(1).unwrap());
    let mut doc = offered["scopes"][1]["grant"]["document"].clone();
    doc.as_object_mut().unwrap().remove("arguments_hash");
    let hash =
        interlock_core::canon::digest(&interlock_core::canon::from_serde_json(&doc).unwrap());
    let subject = interlock_trust::standing::subject(&interlock_trust::standing::id_of(&hash));
    let envelope = rev.sign(&gw, &subject, &hash.to_string(), 3);
    let (s, b) = rev.post(
        &gw,
        "/api/v1/standing",
        &json!({"document": doc, "envelope": envelope}),
    );
    assert_ne!(s, 200, "{b}");
    assert!(b.to_string().contains("one exact use"), "{b}");
    gw.assert_audit_clean();
}
