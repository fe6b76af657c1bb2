//! Issue 15 item 21: protocol eras translated, not leaked. Agents of both eras
//! (a 2026-07-28 stateless request with its `_meta` envelope, as the SDK 2.x
//! clients send it; a 2025-11-25 session of the official Python SDK 1.x
//! client) call upstreams of both eras: the official Python SDK 2.x server
//! (`tests/peers/py2-server.py`, which serves both eras and refuses a request
//! of the other era on a connection) over stdio and over Streamable HTTP,
//! reached with the handshake (`protocol = "2025-11-25"`) or in the stateless
//! era it offers in `server/discover` (the default, `auto`). Its `era` tool
//! reports the version it served the call at and the `_meta` keys it got.

use std::process::{Child, Command};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, free_port, peer, wait_for_port};

/// The Python SDK 2.x server over Streamable HTTP, killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        let port = free_port();
        let child = Command::new(peer("INTERLOCK_PEERS_PY2_PYTHON"))
            .arg(peer("INTERLOCK_PEERS_PY2_SERVER"))
            .args(["--http", &port.to_string()])
            .spawn()
            .expect("the mcp 2.x server starts");
        wait_for_port(port);
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A gateway with the Python SDK 2.x server as `stdio` and as `http` (its
/// own process), both reached in the era `protocol` chooses.
fn gateway(protocol: &str) -> (Gateway, HttpServer) {
    let http = HttpServer::start();
    let config = format!(
        "[servers.stdio]\ncommand = {:?}\nargs = [{:?}]\n{protocol}\n\
         [servers.http]\nurl = {:?}\n{protocol}\n",
        peer("INTERLOCK_PEERS_PY2_PYTHON").to_str().unwrap(),
        peer("INTERLOCK_PEERS_PY2_SERVER").to_str().unwrap(),
        http.url,
    );
    let gw = Gateway::start(&config);
    for name in ["stdio", "http"] {
        gw.wait_for_server(name, "PENDING");
        gw.approve_server(name);
    }
    for name in ["stdio", "http"] {
        gw.wait_for_tool(&format!("{name}__era"), true);
    }
    (gw, http)
}

/// What the upstream's `era` tool saw, from a `tools/call` result.
fn seen(result: &Value) -> Value {
    assert_eq!(result["isError"], json!(false), "the call failed: {result}");
    serde_json::from_str(result["content"][0]["text"].as_str().expect("text content"))
        .expect("the era tool answers JSON")
}

/// A stateless `tools/call` carrying the 2026-07-28 envelope as an SDK 2.x
/// client sends it, and a `_meta` key of the agent's own.
fn stateless_call(gw: &Gateway, tool: &str) -> Value {
    let (status, _, body) = gw.rpc(
        "tools/call",
        json!({
            "name": tool,
            "arguments": {"text": "hello"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "some-agent", "version": "9"},
                "com.example/trace": "t-1",
            },
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body["error"].is_null(),
        "{tool}: the upstream refused: {body}"
    );
    seen(&body["result"])
}

/// A `tools/call` in a 2025-11-25 session of the Python SDK 1.x client.
fn handshake_call(gw: &Gateway, tool: &str) -> Value {
    let out = gw.client("py", &["call", tool, r#"{"text":"hello"}"#]);
    assert!(out["error"].is_null(), "{tool}: {out}");
    seen(&out["result"])
}

const ENVELOPE: [&str; 3] = [
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/protocolVersion",
];

/// Before: the agent's envelope went upstream verbatim and the SDK answered
/// -32600 "this connection serves the handshake protocol era".
#[test]
fn regression_stateless_agent_call_reaches_a_handshake_era_upstream() {
    let (gw, _http) = gateway(r#"protocol = "2025-11-25""#);
    for server in ["stdio", "http"] {
        let seen = stateless_call(&gw, &format!("{server}__era"));
        assert_eq!(seen["protocolVersion"], "2025-11-25", "{server}: {seen}");
        // The envelope is gone; the agent's own `_meta` key is not.
        assert_eq!(seen["metaKeys"], json!(["com.example/trace"]), "{server}");
        assert_eq!(seen["text"], "hello");
    }
}

/// A server offering 2026-07-28 is reached in it, with the gateway's own
/// envelope in place of the agent's (whose clientCapabilities claimed
/// sampling, which the gateway does not relay).
#[test]
fn regression_stateless_agent_call_reaches_a_stateless_era_upstream() {
    let (gw, _http) = gateway("");
    for server in ["stdio", "http"] {
        let seen = stateless_call(&gw, &format!("{server}__era"));
        assert_eq!(seen["protocolVersion"], "2026-07-28", "{server}: {seen}");
        let mut keys = ENVELOPE.to_vec();
        keys.insert(0, "com.example/trace");
        assert_eq!(seen["metaKeys"], json!(keys), "{server}");
    }
}

/// Before: the gateway reached every upstream with the handshake, so a
/// server offering 2026-07-28 was never spoken to in it.
#[test]
fn regression_handshake_agent_call_reaches_a_stateless_era_upstream() {
    let (gw, _http) = gateway("");
    for server in ["stdio", "http"] {
        let seen = handshake_call(&gw, &format!("{server}__era"));
        assert_eq!(seen["protocolVersion"], "2026-07-28", "{server}: {seen}");
        assert_eq!(seen["metaKeys"], json!(ENVELOPE), "{server}");
    }
}

#[test]
fn handshake_agent_call_reaches_a_handshake_era_upstream() {
    let (gw, _http) = gateway(r#"protocol = "2025-11-25""#);
    for server in ["stdio", "http"] {
        let seen = handshake_call(&gw, &format!("{server}__era"));
        assert_eq!(seen["protocolVersion"], "2025-11-25", "{server}: {seen}");
        assert_eq!(seen["metaKeys"], json!([]), "{server}");
    }
}
