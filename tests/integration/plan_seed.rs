//! Issue 23 end to end: a plan in the seed's style (object targets of a declared
//! kind, a compensating rollback, an irreversible stage with its justification,
//! `at_least` expectations on a numeric and a version probe) through a real
//! `interlock serve`, whose actions and probes are tools of the example executor
//! MCP server (examples/executor-server/, on the official TypeScript SDK): it is
//! validated, approved by a reviewer with a keychain key, run by the agent, halts,
//! and its rollback plan — proposed by the reviewer CLI, the reviewer API and the
//! agent's `propose_plan` — is reviewed and run like any other plan.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http, peer};
use crate::util::{manifest_dir, stderr, stdout};

/// The example executor server, copied beside a `node_modules` link to the peers'
/// (the same SDK version its package.json pins), run as upstream `ops`.
fn executor_config(dir: &std::path::Path) -> String {
    let src = manifest_dir().join("examples/executor-server/server.mjs");
    let script = dir.join("server.mjs");
    std::fs::copy(&src, &script).unwrap();
    std::os::unix::fs::symlink(
        peer("INTERLOCK_PEERS_NODE_MODULES"),
        dir.join("node_modules"),
    )
    .unwrap();
    format!(
        "[servers.ops]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    )
}

fn repo_file(rel: &str) -> String {
    std::fs::read_to_string(manifest_dir().join(rel)).unwrap()
}

/// The seed-style example plan as JSON, proposed as the test's agent.
fn seed_plan() -> Value {
    let doc = interlock_canon_yaml(&repo_file("examples/plans/seed-style.yaml"));
    let mut doc = doc;
    doc.as_object_mut().unwrap().remove("proposer");
    doc
}

fn interlock_canon_yaml(yaml: &str) -> Value {
    // Through the binary's own strict intake, so the test reads YAML as Interlock does.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.yaml");
    std::fs::write(&path, yaml).unwrap();
    let out = crate::util::interlock(&["canon", path.to_str().unwrap()], None);
    assert!(out.status.success(), "canon: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn call(gw: &Gateway, tool: &str, args: Value) -> Value {
    let out = gw.client("mjs", &["call", tool, &args.to_string()]);
    out["result"].clone()
}

#[test]
fn seed_style_plan_runs_through_an_executor_server_and_halts_into_a_reviewable_rollback_plan() {
    let work = tempfile::tempdir().unwrap();
    let gw = Gateway::start_with_policy(
        &executor_config(work.path()),
        &repo_file("examples/policies/seed-style.yaml"),
    );
    gw.wait_for_server("ops", "PENDING");
    gw.approve_server("ops");
    gw.wait_for_tool("ops__healthy_replicas", true);

    // Validated under the policy in force: object targets of kind `service`.
    let proposed = call(&gw, "propose_plan", json!({ "plan": seed_plan() }));
    assert_eq!(proposed["isError"], false, "{proposed}");
    assert_eq!(proposed["structuredContent"]["risk"], "high", "{proposed}");
    // A target of an undeclared kind is refused with its path.
    let mut bad = seed_plan();
    bad["plan_id"] = "seed-bad".into();
    bad["body"]["stages"][0]["target"]["kind"] = "database".into();
    let refused = call(&gw, "propose_plan", json!({ "plan": bad }));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused.to_string().contains("$.body.stages[0].target.kind"),
        "{refused}"
    );

    let out = gw.approve("plans", "seed-style", "scale-up and migration reviewed");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let ran = call(&gw, "execute_plan", json!({ "plan_id": "seed-style" }));
    let report = &ran["structuredContent"];
    assert_eq!(report["status"], "HALTED", "{ran}\n{}", gw.log());
    let results: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["result"].as_str().unwrap())
        .collect();
    assert_eq!(results[0], "committed", "{ran}");
    assert_eq!(results[1], "committed", "{ran}");
    assert!(
        results[2].contains("version 1.9.0") && results[2].contains("at_least"),
        "{ran}"
    );

    // Nothing rolled back by itself; the reviewer CLI proposes the rollback plan.
    let out = gw.cli(&["plans", "rollback", "seed-style", "--json"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let first: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(first["plan_id"], "seed-style.rollback", "{first}");
    assert_eq!(first["status"], "PROPOSED", "{first}");
    let shown = gw.cli(&["plans", "show", "seed-style.rollback"]);
    let shown = stdout(&shown);
    assert!(shown.contains("rollback_of"), "{shown}");
    assert!(shown.contains("expect at_least 1"), "{shown}");
    // The reviewer API and the agent can ask as well (each a new revision).
    let reviewer = gw.reviewer_key();
    let (status, _, body) = http(
        &gw.addr,
        "POST",
        "/api/v1/plans/seed-style/rollback",
        &[("Authorization", &format!("Bearer {reviewer}"))],
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let again = call(&gw, "propose_plan", json!({ "rollback_of": "seed-style" }));
    assert_eq!(again["isError"], false, "{again}");
    assert_eq!(again["structuredContent"]["plan_id"], "seed-style.rollback");
    assert_eq!(again["structuredContent"]["revision"], 3, "{again}");
    // The agent cannot ask for a plan that did not halt.
    let not_halted = call(
        &gw,
        "propose_plan",
        json!({ "rollback_of": "seed-style.rollback" }),
    );
    assert_eq!(not_halted["isError"], true, "{not_halted}");

    let view = gw.api_get(&reviewer, "/api/v1/plans/seed-style.rollback");
    assert_eq!(view["validation"]["ok"], true, "{view}");
    let link = &view["document"]["body"]["rollback_of"];
    assert_eq!(link["plan_id"], "seed-style");
    assert!(
        view["document"]["description"]
            .as_str()
            .unwrap()
            .contains("stage `migrate` is irreversible"),
        "{view}"
    );

    let out = gw.approve("plans", "seed-style.rollback", "undo the scale-up");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let undone = call(
        &gw,
        "execute_plan",
        json!({ "plan_id": "seed-style.rollback" }),
    );
    // Its verify (`healthy_replicas equals 2`) probed the executor server.
    assert_eq!(
        undone["structuredContent"]["status"], "SUCCEEDED",
        "{undone}"
    );
    gw.assert_audit_clean();
}
