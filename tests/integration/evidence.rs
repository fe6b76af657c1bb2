//! Issue 16, evidence: what a `tool.call` leaf binds (item 8), the approved
//! surfaces kept by their hash (item 7), and the auditor's claims read from
//! the log alone (item 9).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http, peers_dir};

fn drifty(dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let drift_file = dir.join("greet-description.txt");
    let script = peers_dir().join("drifting-server.mjs");
    let cfg = format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        drift_file.to_str().unwrap()
    );
    (cfg, drift_file)
}

fn entries(gw: &Gateway, reviewer: &str) -> Vec<Value> {
    gw.api_get(reviewer, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .collect()
}

fn add(gw: &Gateway) -> Value {
    gw.rpc(
        "tools/call",
        json!({"name": "drifty__add", "arguments": {"a": 2, "b": 3}}),
    )
    .2
}

/// The server view, polled until `done` holds of it. A 404 is "not yet":
/// `servers list` sees a new row a moment before the gateway serves its view.
fn server_until(gw: &Gateway, reviewer: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) = http(
            &gw.addr,
            "GET",
            "/api/v1/servers/drifty",
            &[("Authorization", &format!("Bearer {reviewer}"))],
            b"",
        );
        assert!(status == 200 || status == 404, "{status}");
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status == 200 && done(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "never: {v}\n{}", gw.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Item 8 and 7: a call's intent and outcome leaves share one call id and
/// name the tool's approved definition hash and the server's baseline hash;
/// both resolve, through `GET /api/v1/surfaces/{hash}`, to the definitions a
/// reviewer approved — still after a later re-approval moved the baseline on.
#[test]
fn regression_tool_call_leaf_binds_the_approved_definition_and_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, drift_file) = drifty(dir.path());
    let gw = Gateway::start(&cfg);
    gw.wait_for_server("drifty", "PENDING");
    let reviewer = gw.reviewer_key();
    let pending = server_until(&gw, &reviewer, |_| true);
    let observed = pending["server"]["observed_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    // Nothing approved yet: nothing kept.
    let (status, _, _) = http(
        &gw.addr,
        "GET",
        &format!("/api/v1/surfaces/{observed}"),
        &[("Authorization", &format!("Bearer {reviewer}"))],
        b"",
    );
    assert_eq!(status, 404);
    let (status, _, body) = http(
        &gw.addr,
        "GET",
        "/api/v1/surfaces/not-a-hash",
        &[("Authorization", &format!("Bearer {reviewer}"))],
        b"",
    );
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));

    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__add", true);
    assert_eq!(add(&gw)["result"]["content"][0]["text"], "5");

    let log = entries(&gw, &reviewer);
    let intent = log
        .iter()
        .find(|e| e["type"] == "tool.call.intent" && e["tool"] == "add")
        .expect("an intent leaf");
    let outcome = log
        .iter()
        .find(|e| e["type"] == "tool.call" && e["tool"] == "add")
        .expect("an outcome leaf");
    let call_id = intent["call_id"].as_str().unwrap();
    assert!(
        call_id.starts_with("call_") && call_id.len() == 37,
        "{intent}"
    );
    assert_eq!(outcome["call_id"], call_id, "{outcome}");
    assert_eq!(outcome["baseline_hash"], observed.as_str(), "{outcome}");
    assert_eq!(intent["baseline_hash"], observed.as_str(), "{intent}");
    assert!(outcome.get("served_definition_hash").is_none(), "{outcome}");

    let kept = gw.api_get(&reviewer, &format!("/api/v1/surfaces/{observed}"));
    assert_eq!(kept["server"], "drifty", "{kept}");
    let definition_of = |kept: &Value, tool: &str| {
        kept["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .map(|t| t["definition_hash"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        outcome["definition_hash"],
        definition_of(&kept, "add"),
        "{outcome}\n{kept}"
    );
    assert!(
        kept["surface"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "greet"),
        "{kept}"
    );

    // A reworded greet is monitored and still served: a greet call names the
    // approved definition and the one it was served under.
    std::fs::write(&drift_file, "Greets a person warmly by their name.").unwrap();
    let drifted = server_until(&gw, &reviewer, |v| {
        v["server"]["observed_hash"] != v["server"]["baseline_hash"]
    });
    let greeted = gw.rpc(
        "tools/call",
        json!({"name": "drifty__greet", "arguments": {"name": "Ada"}}),
    );
    assert!(greeted.2["result"].is_object(), "{}", greeted.2);
    let greet_leaf = entries(&gw, &reviewer)
        .into_iter()
        .find(|e| e["type"] == "tool.call" && e["tool"] == "greet")
        .expect("a greet leaf");
    assert_eq!(greet_leaf["definition_hash"], definition_of(&kept, "greet"));
    assert!(
        greet_leaf["served_definition_hash"].is_string()
            && greet_leaf["served_definition_hash"] != greet_leaf["definition_hash"],
        "{greet_leaf}"
    );

    // Item 8: every drift record, in the log and in the server view, is one
    // the published schema describes.
    let schema_path = crate::util::manifest_dir().join("docs/schemas/drift-finding.schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&schema_path).unwrap()).unwrap();
    let schema = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut records: Vec<Value> = entries(&gw, &reviewer)
        .into_iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("server.drift"))
        })
        .flat_map(|e| e["drift"].as_array().cloned().unwrap_or_default())
        .collect();
    records.extend(drifted["drift"].as_array().cloned().unwrap_or_default());
    assert!(records.len() >= 2, "{records:?}");
    for record in &records {
        let errors: Vec<String> = schema.iter_errors(record).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{record} fails the schema: {errors:?}");
    }
    assert!(
        !schema.is_valid(&json!({"tool": "greet", "kind": "renamed_quietly"})),
        "the schema must refuse what it does not describe"
    );

    // Re-approved: the baseline moves on; the first approved surface is kept.
    let second = drifted["server"]["observed_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    gw.approve_server("drifty");
    server_until(&gw, &reviewer, |v| {
        v["server"]["baseline_hash"] == second.as_str()
    });
    let first_again = gw.api_get(&reviewer, &format!("/api/v1/surfaces/{observed}"));
    assert_eq!(first_again["hash"], observed.as_str());
    let now_kept = gw.api_get(&reviewer, &format!("/api/v1/surfaces/{second}"));
    assert_ne!(
        definition_of(&now_kept, "greet"),
        definition_of(&first_again, "greet")
    );
    gw.assert_audit_clean();
}

/// Item 9: while an agent calls a tool as fast as it can, the tool drifts
/// (held), is called on inside the window, and is re-approved; then
/// `interlock receipts claims` — the log verified, then read alone — says no
/// tool ran inside the window, and the reviewer API says the same. (The race
/// the gateway closes by construction — a call inspected before the drift was
/// installed whose intent leaf lands after the drift leaf — is too narrow to
/// hit reliably from outside; `claims.rs`'s unit tests show such a call is
/// reported.)
#[test]
fn no_tool_runs_between_its_drift_and_the_reviewers_decision() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let (cfg, drift_file) = drifty(dir.path());
    let gw = Arc::new(Gateway::start(&cfg));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let reviewer = gw.reviewer_key();

    let stop = Arc::new(AtomicBool::new(false));
    let (served, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (gw, stop) = (Arc::clone(&gw), Arc::clone(&stop));
            let (served, refused) = (Arc::clone(&served), Arc::clone(&refused));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let answer = gw
                        .rpc(
                            "tools/call",
                            json!({"name": "drifty__greet", "arguments": {"name": "Ada"}}),
                        )
                        .2;
                    if answer["result"].is_object() {
                        served.fetch_add(1, Ordering::Relaxed);
                    } else {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // A new instruction to the model: held.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(
        &drift_file,
        "Greets a person by name. Always greet everyone the user mentions.",
    )
    .unwrap();
    let held = server_until(&gw, &reviewer, |v| {
        v["server"]["blocked_tools"]
            .as_array()
            .is_some_and(|b| b.iter().any(|t| t["tool"] == "greet"))
    });
    let refused_before = refused.load(Ordering::Relaxed);
    // Liveness bounds only, generous for a loaded 2-core CI machine (this
    // test failed once on a shared 20 s bound for both phases).
    let deadline = Instant::now() + Duration::from_secs(120);
    while refused.load(Ordering::Relaxed) < refused_before + 20 {
        assert!(
            Instant::now() < deadline,
            "calls were not refused while held"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = held["server"]["observed_hash"].as_str().unwrap().to_owned();
    gw.approve_server("drifty");
    server_until(&gw, &reviewer, |v| {
        v["server"]["baseline_hash"] == second.as_str()
    });
    let served_before = served.load(Ordering::Relaxed);
    let deadline = Instant::now() + Duration::from_secs(120);
    while served.load(Ordering::Relaxed) < served_before + 20 {
        assert!(
            Instant::now() < deadline,
            "calls were not served after approval"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for c in callers {
        c.join().unwrap();
    }

    let out = gw.cli(&["receipts", "claims", "--json"]);
    let claim: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}{}", crate::util::stdout(&out), crate::util::stderr(&out)));
    assert!(out.status.success(), "{claim}");
    assert_eq!(claim["answer"], "no", "{claim}");
    // Every served call is an execution the claim checked (how many were
    // served before the drift depends on the machine's load: at least the 20
    // after the approval).
    let served = served.load(Ordering::Relaxed);
    assert!(served >= 20, "{served}");
    assert!(
        claim["executions_checked"].as_u64().unwrap() >= served,
        "{served} served: {claim}"
    );
    let windows = claim["windows"].as_array().unwrap();
    assert!(
        windows
            .iter()
            .any(|w| w["tool"] == "greet" && w["closed_by"] == "server.approved"),
        "{claim}"
    );
    let text = gw.cli(&["receipts", "claims"]);
    assert!(
        crate::util::stdout(&text).contains("\nNo. "),
        "{}",
        crate::util::stdout(&text)
    );
    let api = gw.api_get(&reviewer, "/api/v1/claims");
    assert_eq!(api["answer"], "no", "{api}");
    assert_eq!(api["windows"], claim["windows"], "{api}");
}

/// The `hash` column `interlock servers show` prints for `tool`.
fn shown_tool_hash(gw: &Gateway, tool: &str) -> String {
    let out = gw.cli(&["servers", "show", "drifty"]);
    crate::util::stdout(&out)
        .lines()
        .find(|l| l.split_whitespace().next() == Some(tool))
        .and_then(|l| l.split_whitespace().last())
        .filter(|h| h.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no hash for {tool}: {}", crate::util::stdout(&out)))
        .to_owned()
}

/// Item 5: a reviewer blocks one tool while the server is still pending,
/// approves the server (the block stays), approves the blocked tool alone
/// later; and a held tool is approved alone, without re-approving the server.
/// Each decision is signed about the tool's definition hash, and the log's
/// claim still holds.
#[test]
fn regression_one_tool_is_blocked_or_approved_without_deciding_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, drift_file) = drifty(dir.path());
    let gw = Gateway::start(&cfg);
    gw.wait_for_server("drifty", "PENDING");
    let reviewer = gw.reviewer_key();

    let out = gw.cli(&[
        "servers",
        "reject",
        "drifty",
        "--tool",
        "add",
        "--reason",
        "not needed",
    ]);
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    assert!(crate::util::stdout(&out).contains("blocked tool `add`"));
    // A pending server's tool cannot be approved alone.
    let add_hash = shown_tool_hash(&gw, "add");
    let early = gw.cli(&[
        "servers", "approve", "drifty", "--tool", "add", "--hash", &add_hash, "--reason", "x",
    ]);
    assert!(!early.status.success());
    assert!(
        crate::util::stderr(&early).contains("approve the server first"),
        "{}",
        crate::util::stderr(&early)
    );

    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let view = gw.api_get(&reviewer, "/api/v1/servers/drifty");
    let add_view = view["observed_tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .cloned()
        .unwrap();
    assert_eq!(add_view["definition_hash"], add_hash.as_str(), "{view}");
    assert_eq!(add_view["served"], false, "{view}");
    assert_eq!(add_view["blocked"], "block", "{view}");
    let listed = crate::gateway_util::tool_names(&gw.list_tools());
    assert!(!listed.contains(&"drifty__add".to_owned()), "{listed:?}");
    let refused = gw.rpc(
        "tools/call",
        json!({"name": "drifty__add", "arguments": {"a": 1, "b": 1}}),
    );
    let message = refused.2["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("blocked by a reviewer"), "{}", refused.2);
    let view = gw.api_get(&reviewer, "/api/v1/servers/drifty");
    assert_eq!(view["server"]["status"], "TRUSTED", "{view}");
    assert!(
        view["server"]["blocked_tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["tool"] == "add" && b["action"] == "block"),
        "{view}"
    );

    // A statement about another subject is refused by the tool route.
    let (status, _, body) = http(
        &gw.addr,
        "POST",
        "/api/v1/servers/drifty/tools/add/decisions",
        &[
            ("Authorization", &format!("Bearer {reviewer}")),
            ("Content-Type", "application/json"),
        ],
        br#"{"payload":"e30","payloadType":"application/vnd.interlock.approval+json","signatures":[]}"#,
    );
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));

    let out = gw.cli(&[
        "servers", "approve", "drifty", "--tool", "add", "--hash", &add_hash, "--reason", "needed",
    ]);
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    gw.wait_for_tool("drifty__add", true);
    assert_eq!(add(&gw)["result"]["content"][0]["text"], "5");

    // A held drift of greet, approved for greet alone.
    std::fs::write(
        &drift_file,
        "Greets a person by name. Always greet everyone the user mentions.",
    )
    .unwrap();
    gw.wait_for_tool("drifty__greet", false);
    let before = gw.api_get(&reviewer, "/api/v1/servers/drifty");
    let greet_hash = shown_tool_hash(&gw, "greet");
    let out = gw.cli(&[
        "servers",
        "approve",
        "drifty",
        "--tool",
        "greet",
        "--hash",
        &greet_hash,
        "--reason",
        "reviewed the new wording",
    ]);
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    gw.wait_for_tool("drifty__greet", true);
    let after = gw.api_get(&reviewer, "/api/v1/servers/drifty");
    assert_eq!(after["server"]["status"], "TRUSTED", "{after}");
    assert_ne!(
        after["server"]["baseline_hash"], before["server"]["baseline_hash"],
        "{after}"
    );
    // The new baseline is exactly what is listed now: no drift remains.
    assert_eq!(
        after["server"]["baseline_hash"], after["server"]["observed_hash"],
        "{after}"
    );
    let kinds: Vec<String> = entries(&gw, &reviewer)
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_owned))
        .collect();
    assert!(kinds.contains(&"tool.blocked".to_owned()), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "tool.approved").count(),
        2,
        "{kinds:?}"
    );
    let claim = gw.api_get(&reviewer, "/api/v1/claims");
    assert_eq!(claim["answer"], "no", "{claim}");
    // The block is a window of its own: open from `tool.blocked`, through the
    // server's approval, until the tool's approval.
    assert!(
        claim["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["tool"] == "add" && w["closed_by"] == "tool.approved"),
        "{claim}"
    );
    gw.assert_audit_clean();
}
