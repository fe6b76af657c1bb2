//! Issue 15 item 6: standing approvals cover exactly what the reviewer
//! approved — every constrained argument present, the tool's approved
//! definition unchanged, for no longer than the policy allows. Through a real
//! `interlock serve`, the drifting SDK server and the real TypeScript client.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};
use crate::util::{stderr, stdout};

/// A gateway serving the drifting server (its `odd` description read from a
/// file), a `reader` role whose `odd` calls are held (odd has no read-only
/// hint, so its risk is above the role's `low`), and a `reader-bot` agent key.
pub(crate) fn gateway(dir: &std::path::Path) -> (Gateway, String) {
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        // Drift below critical is only recorded: the drifted tool stays served,
        // so what stops the call is the void grant, not the drift policy.
        "[calls]\nhold_secs = 1\n[drift]\nmonitor_below = \"critical\"\nquarantine_at = \"critical\"\n\
         [roles.default]\ntools = [\"*\"]\n[roles.reader]\ntools = [\"drifty__*\"]\nmax_risk = \"low\"\n\
         [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?}, DRIFT_TOOL = \"odd\" }}\n",
        script.to_str().unwrap(),
        dir.join("odd.txt").to_str().unwrap(),
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let out = gw.cli(&[
        "agents",
        "add",
        "reader-bot",
        "--role",
        "reader",
        "--config",
        &config(&gw),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reader = stdout(&out).trim().to_owned();
    (gw, reader)
}

pub(crate) fn config(gw: &Gateway) -> String {
    gw.dir
        .path()
        .join("gateway.toml")
        .to_string_lossy()
        .into_owned()
}

fn call(gw: &Gateway, key: &str, tool: &str, args: Value) -> Value {
    crate::gateway_util::client(
        "mjs",
        &gw.url,
        Some(key),
        &["call", tool, &args.to_string()],
    )
}

fn grant(gw: &Gateway, tool: &str, shape: &str, lifetime: &str) -> std::process::Output {
    gw.cli(&[
        "standing",
        "add",
        "--role",
        "reader",
        "--tool",
        tool,
        "--shape",
        shape,
        "--for",
        lifetime,
        "--reason",
        "harmless",
        "--config",
        &config(gw),
    ])
}

fn held(r: &Value) -> bool {
    r["result"]["structuredContent"]["held"] == true
}

/// A shape `{"mode": "*"}` constrains `mode`; a call without it must not run
/// under the grant (the tool's default for it is not what was approved).
#[test]
fn regression_standing_grant_does_not_match_a_call_omitting_a_constrained_argument() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let out = grant(&gw, "drifty__odd", r#"{"mode":"*"}"#, "1h");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let r = call(&gw, &reader, "drifty__odd", json!({"mode": "fast"}));
    assert_eq!(r["result"]["content"][0]["text"], "odd", "{r}");
    let r = call(&gw, &reader, "drifty__odd", json!({}));
    assert!(held(&r), "a call omitting `mode` was covered: {r}");
}

/// The tool's definition changes after the grant: the grant is void, the call
/// is held, and the hold says which grant no longer applies.
#[test]
fn regression_standing_grant_is_void_after_tool_drift() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, reader) = gateway(dir.path());
    let out = grant(&gw, "drifty__odd", r#"{"mode":"*"}"#, "1h");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let id = stdout(&out).split_whitespace().next().unwrap().to_owned();
    let r = call(&gw, &reader, "drifty__odd", json!({"mode": "fast"}));
    assert_eq!(r["result"]["content"][0]["text"], "odd", "{r}");

    std::fs::write(
        dir.path().join("odd.txt"),
        "Returns unusual fields, and now also files a report.",
    )
    .unwrap();
    let reviewer = gw.reviewer_key();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = gw.api_get(&reviewer, "/api/v1/servers/drifty");
        if s["server"]["observed_hash"] != s["server"]["baseline_hash"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no drift seen: {s}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let r = call(&gw, &reader, "drifty__odd", json!({"mode": "fast"}));
    assert!(held(&r), "the grant still covered the drifted tool: {r}");
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&id) && text.contains("does not apply"), "{r}");
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let leaf = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["entry"]["type"] == "tool.call")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(leaf["entry"]["verdict"]["verdict"], "held", "{leaf}");
    assert!(
        leaf["entry"]["verdict"]["hold_reasons"]
            .as_str()
            .unwrap_or_default()
            .contains(&id),
        "{leaf}"
    );
}

/// A grant longer than the policy's `standing_max_lifetime_secs` (7 days by
/// default) is refused when it is made, saying why; one within it is granted.
#[test]
fn regression_standing_grant_beyond_policy_lifetime_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, _reader) = gateway(dir.path());
    let out = grant(&gw, "drifty__odd", r#"{"mode":"*"}"#, "8d");
    assert!(
        !out.status.success(),
        "an 8-day grant was accepted: {}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("standing_max_lifetime_secs"),
        "{}",
        stderr(&out)
    );
    let listed = gw.cli(&["standing", "list"]);
    assert!(
        !stdout(&listed).contains("drifty__odd"),
        "{}",
        stdout(&listed)
    );
    let out = grant(&gw, "drifty__odd", r#"{"mode":"*"}"#, "7d");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // A tool no approved surface has cannot be granted at all.
    let out = grant(&gw, "drifty__nope", "{}", "1h");
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(stderr(&out).contains("drifty__nope"), "{}", stderr(&out));
}

/// A grant posted to the reviewer API for a definition other than the tool's
/// approved one was accepted, and then silently never applied. Now it is refused
/// with 409, naming the approved definition; the approved one gets past that
/// check (and is then judged on its signature).
#[test]
fn regression_standing_grant_for_a_definition_that_is_not_approved_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, _reader) = gateway(dir.path());
    let out = grant(&gw, "drifty__odd", r#"{"mode":"*"}"#, "1h");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let reviewer = gw.reviewer_key();
    let listed = gw.api_get(&reviewer, "/api/v1/standing");
    let approved = listed["standing"][0]["document"].clone();
    let approved_hash = approved["tool_hash"].as_str().unwrap().to_owned();
    assert!(approved_hash.starts_with("sha256:"), "{listed}");
    // A well-formed envelope whose signature is not valid for anything.
    let envelope = json!({
        "payloadType": "application/vnd.in-toto+json",
        "payload": "e30=",
        "signatures": [{"keyid": format!("ed25519:{}", "0".repeat(64)), "sig": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}],
    });
    let post = |document: &Value| {
        let body = json!({"document": document, "envelope": envelope}).to_string();
        let (status, _, body) = crate::gateway_util::http(
            &gw.addr,
            "POST",
            "/api/v1/standing",
            &[
                ("Authorization", &format!("Bearer {reviewer}")),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
        );
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    let mut stale = approved.clone();
    stale["tool_hash"] = json!(format!("sha256:{}", "0".repeat(64)));
    let (status, body) = post(&stale);
    assert_eq!(status, 409, "{body}");
    assert!(
        body.contains(&approved_hash),
        "names the approved definition: {body}"
    );
    let (status, body) = post(&approved);
    assert_ne!(
        status, 409,
        "the approved definition passes the check: {body}"
    );
    assert_ne!(
        status, 200,
        "and the bogus signature is still refused: {body}"
    );
}
