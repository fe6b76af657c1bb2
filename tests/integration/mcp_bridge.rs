//! Issue 15 item 18: `interlock mcp`, the stdio bridge, end to end — the
//! official Python SDK's stdio client spawns it as its server, pointed at a
//! real `interlock serve` fronting server-everything.

use std::process::Command;

use serde_json::Value;

use crate::gateway_util::{Gateway, node_module, peer, peers_dir};

const EVERYTHING: &str = "@modelcontextprotocol/server-everything/dist/index.js";
const LONG_RUNNING: &str = "everything__trigger-long-running-operation";

/// Runs `tests/peers/stdio-client.py ARGS -- interlock mcp` with the bridge's
/// URL and key in its environment; returns the driver's JSON output.
fn stdio_client(url: &str, key: &str, args: &[&str]) -> Value {
    let out = Command::new(peer("INTERLOCK_PEERS_PYTHON"))
        .arg(peers_dir().join("stdio-client.py"))
        .args(args)
        .args(["--", env!("CARGO_BIN_EXE_interlock"), "mcp"])
        .env("INTERLOCK_GATEWAY_URL", url)
        .env("INTERLOCK_API_KEY", key)
        .output()
        .expect("the stdio client driver runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdio client printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The `tool.call` leaves that name `tool`.
fn tool_call_leaves(gw: &Gateway, tool: &str) -> Vec<Value> {
    let reviewer = gw.reviewer_key();
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .filter(|e| e["type"] == "tool.call" && e.to_string().contains(tool))
        .collect()
}

/// A call with a progress token is answered as SSE (progress notifications,
/// then the response). The bridge advertised SSE and then read the answer as
/// JSON, so the client got "not JSON" for a call that ran, and would retry
/// the side effect. Now the client gets every progress notification and the
/// result, and the upstream ran the call exactly once.
#[test]
fn regression_stdio_bridge_relays_an_sse_answer_to_a_real_client() {
    let gw = Gateway::start(&format!(
        "[servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        node_module(EVERYTHING)
    ));
    gw.wait_for_server("everything", "PENDING");
    gw.approve_server("everything");
    gw.wait_for_tool(LONG_RUNNING, true);

    let out = stdio_client(
        &gw.url,
        &gw.agent_key,
        &[
            "--call",
            LONG_RUNNING,
            "--arguments",
            r#"{"duration":0.6,"steps":3}"#,
        ],
    );
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools listed: {out}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&LONG_RUNNING) && tools.contains(&"propose_plan"),
        "{tools:?}"
    );
    let result = &out["result"];
    assert!(
        out["error"].is_null() && result["isError"] != true,
        "the call failed through the bridge: {out}"
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Long running operation completed") && text.contains("Steps: 3"),
        "{out}"
    );
    let progress = out["progress"].as_array().unwrap();
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert_eq!(values, [1.0, 2.0, 3.0], "progress relayed in order: {out}");

    let leaves = tool_call_leaves(&gw, "trigger-long-running-operation");
    assert_eq!(leaves.len(), 1, "the upstream ran once: {leaves:?}");
    gw.assert_audit_clean();
}

/// An HTTP error answer (here 401: a wrong key) reaches the client as a
/// clear JSON-RPC error for its request, instead of an id-less message it
/// cannot match (it would wait until its own timeout).
#[test]
fn regression_stdio_bridge_turns_an_http_error_into_a_jsonrpc_error() {
    let gw = Gateway::start("");
    let started = std::time::Instant::now();
    let out = stdio_client(&gw.url, "ilk_not-a-key", &["--timeout", "30"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the client waited for an answer it never got: {out}"
    );
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("401") || message.to_lowercase().contains("key"),
        "{out}"
    );
    assert!(out["tools"].is_null(), "{out}");
}
