//! Issue 15: trust hardening, tried as an attacker would — through a real
//! `interlock serve`, the real SDK clients, the real keychain. Each test is named
//! after the hole it closes and failed on the code before the fix.

use serde_json::Value;

use crate::gateway_util::{Gateway, client, http, peers_dir, write_file_plan};
use crate::util::{stderr, stdout};

fn drifting_config(dir: &std::path::Path) -> String {
    let script = peers_dir().join("drifting-server.mjs");
    format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        dir.join("greet-description.txt").to_str().unwrap()
    )
}

fn post_server_decision(gw: &Gateway, reviewer: &str, envelope: &Value) -> (u16, Value) {
    let (s, _, b) = http(
        &gw.addr,
        "POST",
        "/api/v1/servers/drifty/decisions",
        &[
            ("Authorization", &format!("Bearer {reviewer}")),
            ("Content-Type", "application/json"),
        ],
        &serde_json::to_vec(envelope).unwrap(),
    );
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn log_entries(gw: &Gateway, reviewer: &str) -> Vec<Value> {
    gw.api_get(reviewer, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .collect()
}

fn server_status(gw: &Gateway, reviewer: &str) -> String {
    gw.api_get(reviewer, "/api/v1/servers/drifty")["server"]["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A test-held approver key, registered by its public half (as a browser's key is).
fn registered_key(gw: &Gateway, identity: &str, seed: u8) -> ed25519_dalek::SigningKey {
    let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
    let out = gw.cli(&[
        "keys",
        "register",
        "--public-key",
        &hex::encode(key.verifying_key().as_bytes()),
        "--identity",
        identity,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    key
}

struct Signed<'a> {
    audience: &'a str,
    issued_at: i64,
    nonce: u8,
}

fn sign_server_approval(
    gw: &Gateway,
    reviewer: &str,
    key: &ed25519_dalek::SigningKey,
    s: Signed<'_>,
) -> Value {
    use interlock_core::decision::{Terms, sign_decision};
    let server = gw.api_get(reviewer, "/api/v1/servers/drifty");
    let hash = server["server"]["observed_hash"].as_str().unwrap();
    sign_decision(
        key,
        &Terms {
            audience: s.audience,
            subject: "server:drifty",
            subject_hash: hash.parse().unwrap(),
            decision: interlock_core::Decision::Approve,
            reason: "checked every tool",
            issued_at: s.issued_at,
            not_before: s.issued_at,
            expires_at: s.issued_at + 3600,
            nonce: [s.nonce; 16],
            policy_digest: server["policy_digest"].as_str().unwrap().parse().unwrap(),
        },
    )
    .unwrap()
    .1
    .to_json()
}

/// A reviewer API key with no signing key re-posts a past `server.approved`
/// envelope (read from the log) after a later rejection: it must not make the
/// server trusted again.
#[test]
fn regression_replayed_server_approval_after_rejection_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_server("drifty", "TRUSTED");
    let out = gw.cli(&["servers", "reject", "drifty", "--reason", "changed my mind"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    gw.wait_for_server("drifty", "REJECTED");

    let reviewer = gw.reviewer_key();
    let past = log_entries(&gw, &reviewer)
        .into_iter()
        .find(|e| e["type"] == "server.approved")
        .expect("the approval is in the log");
    let (s, b) = post_server_decision(&gw, &reviewer, &past["envelope"]);
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("replayed")),
        "{b}"
    );
    gw.wait_for_server("drifty", "REJECTED");
    let refused = log_entries(&gw, &reviewer)
        .into_iter()
        .find(|e| e["type"] == "decision.refused")
        .expect("the refusal is logged");
    assert_eq!(refused["why"], "replayed", "{refused}");
    assert_eq!(refused["subject"], "server:drifty", "{refused}");
    gw.assert_audit_clean();
}

/// An approval signed before a rejection but posted after it (withheld) is older
/// than the subject's latest decision: refused, the rejection stands.
#[test]
fn regression_withheld_older_server_approval_cannot_undo_a_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    let reviewer = gw.reviewer_key();
    let key = registered_key(&gw, "human:browser-reviewer", 41);
    let audience = gw.api_get(&reviewer, "/api/v1/servers/drifty")["audience"]
        .as_str()
        .unwrap()
        .to_owned();
    let withheld = sign_server_approval(
        &gw,
        &reviewer,
        &key,
        Signed {
            audience: &audience,
            issued_at: now() - 120,
            nonce: 1,
        },
    );
    let out = gw.cli(&["servers", "reject", "drifty", "--reason", "not this one"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let (s, b) = post_server_decision(&gw, &reviewer, &withheld);
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("stale")),
        "{b}"
    );
    gw.wait_for_server("drifty", "REJECTED");
    // A fresh decision is accepted.
    let fresh = sign_server_approval(
        &gw,
        &reviewer,
        &key,
        Signed {
            audience: &audience,
            issued_at: now(),
            nonce: 2,
        },
    );
    let (s, b) = post_server_decision(&gw, &reviewer, &fresh);
    assert_eq!(s, 200, "{b}");
    assert_eq!(server_status(&gw, &reviewer), "TRUSTED");
}

/// A statement made for another gateway that trusts the same key is refused.
#[test]
fn regression_statement_for_another_gateway_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    let reviewer = gw.reviewer_key();
    let key = registered_key(&gw, "human:browser-reviewer", 42);
    let elsewhere = sign_server_approval(
        &gw,
        &reviewer,
        &key,
        Signed {
            audience: "gateway.elsewhere.example/log",
            issued_at: now(),
            nonce: 1,
        },
    );
    let (s, b) = post_server_decision(&gw, &reviewer, &elsewhere);
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (422, Some("decision_refused")),
        "{b}"
    );
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gateway.elsewhere.example/log"),
        "{b}"
    );
    assert_eq!(server_status(&gw, &reviewer), "PENDING");
}

/// `servers approve` signed whatever was current at approve time, not what
/// `show`/`diff` displayed. Now it signs only a hash the person gives (or confirms
/// on a terminal): without one, from a script, nothing is signed; a hash that is
/// no longer current is refused.
#[test]
fn regression_cli_approval_signs_only_the_hash_that_was_shown() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    let out = gw.cli(&["servers", "approve", "drifty", "--reason", "ok"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--hash"), "{}", stderr(&out));
    let stale = format!("sha256:{}", "0".repeat(64));
    let out = gw.cli(&[
        "servers", "approve", "drifty", "--reason", "ok", "--hash", &stale,
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("changed"), "{}", stderr(&out));
    let reviewer = gw.reviewer_key();
    assert_eq!(server_status(&gw, &reviewer), "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_server("drifty", "TRUSTED");
}

/// A second agent key could supersede another agent's plan, read it, list it and
/// run it once approved. A plan now belongs to its first proposer, and another
/// agent sees it as it sees a plan that does not exist.
#[test]
fn regression_agent_cannot_supersede_read_list_or_run_another_agents_plan() {
    let gw = Gateway::start("");
    let out = gw.cli(&["agents", "add", "intruder"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let intruder = stdout(&out).trim().to_owned();
    let as_intruder = |args: &[&str]| client("py", &gw.url, Some(&intruder), args);

    let plan = write_file_plan(&gw, "owned", "The builder's plan", "owned.txt");
    let r = gw.client("py", &["call", "propose_plan", &plan.to_string()]);
    assert_eq!(r["result"]["isError"], false, "{r}");

    let evil = write_file_plan(&gw, "owned", "Same id, other bytes", "evil.txt");
    let r = as_intruder(&["call", "propose_plan", &evil.to_string()]);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("belongs to agent:builder"), "{r}");

    let r = as_intruder(&["call", "get_plan", r#"{"plan_id":"owned"}"#]);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("no plan `owned`"), "{r}");
    assert!(
        !r.to_string().contains("owned.txt"),
        "the document leaked: {r}"
    );

    let r = as_intruder(&["call", "list_plans", "{}"]);
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(!r.to_string().contains("\"owned\""), "{r}");
    let r = gw.client("py", &["call", "list_plans", "{}"]);
    assert!(r.to_string().contains("\"owned\""), "{r}");

    let out = gw.approve("plans", "owned", "the builder's file");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let r = as_intruder(&["call", "execute_plan", r#"{"plan_id":"owned"}"#]);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("no plan `owned`"), "{r}");
    assert!(!gw.data().join("workspace/owned.txt").exists());

    let r = gw.client("py", &["call", "execute_plan", r#"{"plan_id":"owned"}"#]);
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(gw.data().join("workspace/owned.txt").exists());
    assert!(!gw.data().join("workspace/evil.txt").exists());
}

/// Runs SQL on the gateway's database as another program would (a failing
/// disk, an operator): with Python's sqlite3 on the SQLite file, or with
/// `psql` on a Postgres run. `sqlite` and `postgres` are the same change in
/// each dialect.
fn on_database(gw: &Gateway, sqlite: &str, postgres: &str) {
    let status = match gw.database_url() {
        Some(url) => std::process::Command::new("psql")
            .args(["-v", "ON_ERROR_STOP=1", "-q", "-d", url, "-c", postgres])
            .status()
            .expect("psql runs"),
        None => std::process::Command::new("python3")
            .args([
                "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], timeout=30); c.executescript(sys.argv[2]); c.commit()",
                gw.data().join("interlock.sqlite").to_str().unwrap(),
                sqlite,
            ])
            .status()
            .expect("python3 runs"),
    };
    assert!(status.success(), "{sqlite} / {postgres}");
}

/// Makes every log leaf insert fail, as on a full or failing disk.
fn refuse_log_leaves(gw: &Gateway) {
    on_database(
        gw,
        "CREATE TRIGGER refuse_leaves BEFORE INSERT ON log_leaves \
         BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
        "CREATE FUNCTION refuse_leaves() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'disk says no'; END $$; \
         CREATE TRIGGER refuse_leaves BEFORE INSERT ON log_leaves \
         FOR EACH ROW EXECUTE FUNCTION refuse_leaves();",
    );
}

/// Undoes [`refuse_log_leaves`].
fn allow_log_leaves(gw: &Gateway) {
    on_database(
        gw,
        "DROP TRIGGER refuse_leaves;",
        "DROP TRIGGER refuse_leaves ON log_leaves; DROP FUNCTION refuse_leaves();",
    );
}

/// Issue 15, item 13: the server row flipped to TRUSTED before its
/// `server.approved` leaf was written, so a leaf that could not be written left a
/// trusted server with no evidence. Now the row and the leaf are one transaction:
/// with the leaf refused, the server stays PENDING and nothing is served.
#[test]
fn regression_server_is_not_trusted_when_its_approval_leaf_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    // Every log leaf insert now fails, as on a full or failing disk.
    refuse_log_leaves(&gw);
    let out = gw.approve("servers", "drifty", "reviewed every tool");
    assert!(!out.status.success(), "{}", stdout(&out));
    allow_log_leaves(&gw);
    let listed = stdout(&gw.cli(&["servers", "list"]));
    assert!(
        listed
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["drifty", "PENDING"])),
        "the row must not change without its leaf: {listed}"
    );
    // With the disk back, the same review approves it, and the log audits clean.
    gw.approve_server("drifty");
    gw.wait_for_server("drifty", "TRUSTED");
    gw.wait_for_tool("drifty__greet", true);
    gw.assert_audit_clean();
}

/// Issue 15, item 13: a tool call was forwarded first and logged after, so a call
/// whose leaf could not be written had already run. Now its intent leaf is written
/// before it is sent: with the log refusing writes, the call is refused and never
/// reaches the upstream (here `die`, which would end the upstream process).
#[test]
fn regression_a_call_whose_intent_cannot_be_logged_never_reaches_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::start(&drifting_config(dir.path()));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__die", true);
    let downs = |gw: &Gateway| gw.log().matches("upstream down").count();
    refuse_log_leaves(&gw);
    let (_, _, refused) = gw.rpc(
        "tools/call",
        serde_json::json!({"name": "drifty__die", "arguments": {}}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("log append failed"),
        "{refused}"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(downs(&gw), 0, "the upstream ran the call: {}", gw.log());
    allow_log_leaves(&gw);
    // With the log writable again the same call is forwarded (and the upstream
    // exits, as `die` does): the check above would have seen it.
    let _ = gw.rpc(
        "tools/call",
        serde_json::json!({"name": "drifty__die", "arguments": {}}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while downs(&gw) == 0 {
        assert!(std::time::Instant::now() < deadline, "{}", gw.log());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let entries = log_entries(&gw, &gw.reviewer_key());
    let intent = entries
        .iter()
        .find(|e| e["type"] == "tool.call.intent")
        .expect("an intent leaf");
    let outcome = entries
        .iter()
        .find(|e| e["type"] == "tool.call" && e["tool"] == "die")
        .expect("an outcome leaf");
    assert_eq!(outcome["intent_index"], intent["seq"], "{outcome}");
}

/// Issue 44: an agent key's row and its `apikey.issued` receipt were two
/// commits. A process stopped between them (killed, or its leaf refused as
/// on a full disk) left a key no one held, with no receipt, taking the
/// agent's name for good: the next `agents add` of that name was refused as
/// taken. Now the row commits with its leaf, or neither does.
#[test]
fn regression_issue_44_a_key_is_issued_with_its_receipt_or_not_at_all() {
    let gw = Gateway::start("");
    refuse_log_leaves(&gw);
    let out = gw.cli(&["agents", "add", "ghost"]);
    assert!(
        !out.status.success(),
        "a key issued without its receipt: {}",
        stdout(&out)
    );
    allow_log_leaves(&gw);
    let out = gw.cli(&["agents", "add", "ghost"]);
    assert!(
        out.status.success(),
        "the name was taken by a key with no receipt: {}",
        stderr(&out)
    );
    let key = stdout(&out).trim().to_owned();
    let listed = stdout(&gw.cli(&["agents", "list"]));
    assert_eq!(
        listed.matches("ghost").count(),
        1,
        "a key row without its receipt: {listed}"
    );
    let leaves = log_entries(&gw, &gw.reviewer_key());
    let hash = interlock_gateway::keys::key_hash(&key);
    assert!(
        leaves
            .iter()
            .any(|l| l["type"] == "apikey.issued" && l["key_hash"] == hash.as_str()),
        "no receipt for the key"
    );
}
