//! Issue 15 item 16: bounded resources, through a real `interlock serve` —
//! sessions capped per agent key (one key cannot evict another's), the header
//! block bounded in size (431) and in time (slowloris), one `tools/list`
//! bounded in all across pages. Each test is named after the hole it closes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::gateway_util::{Gateway, http, post_mcp};
use crate::util::{stderr, stdout};

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"limits-test","version":"1"}}}"#;

/// `initialize` with `key`: the status and the session id (if one was opened).
fn open_session(gw: &Gateway, key: &str) -> (u16, Option<String>, String) {
    let (status, headers, body) = post_mcp(&gw.addr, key, &[], INIT);
    let sid = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .map(|(_, v)| v.clone());
    (status, sid, String::from_utf8_lossy(&body).into_owned())
}

/// A `ping` in session `sid`: its HTTP status.
fn ping(gw: &Gateway, key: &str, sid: &str) -> u16 {
    post_mcp(
        &gw.addr,
        key,
        &[
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .0
}

fn agent(gw: &Gateway, name: &str) -> String {
    let out = gw.cli(&["agents", "add", name]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

/// Today one global FIFO: a key that opens sessions pushes out everyone
/// else's. Now a key over its own cap loses only its own oldest session, and a
/// full gateway refuses new sessions instead of evicting.
#[test]
fn regression_one_key_cannot_evict_another_keys_sessions() {
    let gw = Gateway::start("[limits]\nsessions_per_key = 2\nmax_sessions = 4\n");
    let victim = gw.agent_key.clone();
    let (status, sid, body) = open_session(&gw, &victim);
    assert_eq!(status, 200, "{body}");
    let victim_sid = sid.unwrap();
    let flood = agent(&gw, "flood");
    let mut flood_sids = Vec::new();
    for _ in 0..20 {
        let (status, sid, body) = open_session(&gw, &flood);
        assert_eq!(status, 200, "{body}");
        flood_sids.push(sid.unwrap());
    }
    assert_eq!(
        ping(&gw, &victim, &victim_sid),
        200,
        "the victim's session was evicted"
    );
    // The flooding key kept only its own newest two.
    assert_eq!(ping(&gw, &flood, &flood_sids[0]), 404);
    assert_eq!(ping(&gw, &flood, &flood_sids[19]), 200);
    assert_eq!(ping(&gw, &flood, &flood_sids[18]), 200);
    // A full gateway (1 + 2 + 1 = 4) refuses a new session with a clear error.
    let third = agent(&gw, "third");
    assert_eq!(open_session(&gw, &third).0, 200);
    let (status, sid, body) = open_session(&gw, &third);
    assert_eq!(status, 503, "{body}");
    assert!(sid.is_none());
    assert!(body.contains("limits.max_sessions"), "{body}");
    assert_eq!(ping(&gw, &victim, &victim_sid), 200);
}

/// A 200 KB header block: answered 431, not a silently closed connection.
#[test]
fn regression_oversized_header_block_gets_431() {
    let gw = Gateway::start("");
    let big = "a".repeat(200 * 1024);
    let (status, _, _) = http(&gw.addr, "GET", "/healthz", &[("X-Padding", &big)], b"");
    assert_eq!(status, 431);
    // Within the limit, the same request is served.
    let (status, _, body) = http(&gw.addr, "GET", "/healthz", &[("X-Padding", "a")], b"");
    assert_eq!((status, body.as_slice()), (200, &b"ok"[..]));
}

/// A client that sends its header block a byte at a time (slowloris) is cut
/// off after `header_read_timeout_secs`, however it trickles.
#[test]
fn regression_slow_header_is_timed_out() {
    let gw = Gateway::start("[limits]\nheader_read_timeout_secs = 1\n");
    let mut s = TcpStream::connect(&gw.addr).unwrap();
    s.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n", gw.addr).as_bytes())
        .unwrap();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        // One header byte every 200 ms, for at most 30 s.
        for _ in 0..150 {
            if writer.write_all(b"X").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let ended = match s.read_to_end(&mut answer) {
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    assert!(
        ended,
        "the connection stayed open for {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    drop(s);
    trickle.join().unwrap();
    // The gateway still serves others.
    assert_eq!(http(&gw.addr, "GET", "/healthz", &[], b"").0, 200);
}

/// An upstream that paginates `tools/list` without end: the gateway stops
/// gathering at its cumulative cap, logs why, and does not serve the server.
#[test]
fn regression_endless_tools_list_pagination_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // A hostile upstream (raw JSON-RPC over stdio): every page has ten tools
    // and a next cursor.
    let script = dir.path().join("endless.mjs");
    std::fs::write(
        &script,
        r#"
import readline from 'node:readline';
const rl = readline.createInterface({ input: process.stdin });
let page = 0;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25',
      capabilities: { tools: {} }, serverInfo: { name: 'endless', version: '1' } } });
  } else if (m.method === 'tools/list') {
    page += 1;
    const tools = Array.from({ length: 10 }, (_, i) => ({ name: `t${page}_${i}`,
      description: 'x'.repeat(100), inputSchema: { type: 'object' } }));
    send({ jsonrpc: '2.0', id: m.id, result: { tools, nextCursor: `c${page}` } });
  } else {
    send({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
"#,
    )
    .unwrap();
    let gw = Gateway::start(&format!(
        "[limits]\nmax_tools = 50\n[servers.endless]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !gw
        .log()
        .contains("tools/list is larger than the gateway accepts")
    {
        assert!(Instant::now() < deadline, "no bound was hit: {}", gw.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(gw.log().contains("limits.max_tools = 50"), "{}", gw.log());
    let listed = stdout(&gw.cli(&["servers", "list"]));
    assert!(!listed.contains("TRUSTED"), "{listed}");
}

/// A stateless (2026-07-28) `tools/call` with `key`: the HTTP status and body.
fn stateless_call(
    addr: &str,
    key: &str,
    tool: &str,
    args: serde_json::Value,
) -> (u16, serde_json::Value) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let (status, _, bytes) = post_mcp(
        addr,
        key,
        &[("MCP-Protocol-Version", "2026-07-28")],
        body.to_string().as_bytes(),
    );
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// One key's held calls each keep a task waiting for a reviewer: a key may
/// have only `held_calls_per_key` at once; another key is not affected.
#[test]
fn regression_one_key_cannot_hold_calls_without_bound() {
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[calls]\nhold_secs = 20\n[limits]\nheld_calls_per_key = 1\n[roles.default]\ntools = [\"*\"]\n\
         [roles.reader]\ntools = [\"drifty__*\"]\nmax_risk = \"low\"\n\
         [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let config = gw.dir.path().join("gateway.toml");
    let add = |name: &str| {
        let out = gw.cli(&[
            "agents",
            "add",
            name,
            "--role",
            "reader",
            "--config",
            config.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).trim().to_owned()
    };
    let (one, two) = (add("reader-one"), add("reader-two"));
    let addr = gw.addr.clone();
    let waiting = {
        let (addr, one) = (addr.clone(), one.clone());
        std::thread::spawn(move || {
            stateless_call(&addr, &one, "drifty__odd", serde_json::json!({}))
        })
    };
    // Wait until the first call is held (its plan is proposed).
    let reviewer = gw.reviewer_key();
    let deadline = Instant::now() + Duration::from_secs(15);
    while gw
        .api_get(&reviewer, "/api/v1/inbox")
        .to_string()
        .matches("\"call-")
        .count()
        == 0
    {
        assert!(Instant::now() < deadline, "the first call was not held");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, refused) = stateless_call(&addr, &one, "drifty__odd", serde_json::json!({}));
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32005, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("held_calls_per_key"),
        "{refused}"
    );
    // Another key's call is held as usual.
    let other = std::thread::spawn(move || {
        stateless_call(&addr, &two, "drifty__odd", serde_json::json!({}))
    });
    let (_, first) = waiting.join().unwrap();
    assert!(crate::scoped::held_plan(&first).is_some(), "{first}");
    let (_, second) = other.join().unwrap();
    assert!(crate::scoped::held_plan(&second).is_some(), "{second}");
}

/// Connections beyond `max_connections` wait (in the listen backlog) until one
/// closes, instead of each taking a task and buffers.
#[test]
fn regression_connections_beyond_the_cap_wait() {
    let gw = Gateway::start("[limits]\nmax_connections = 1\nheader_read_timeout_secs = 60\n");
    let idle = TcpStream::connect(&gw.addr).unwrap();
    // Give the gateway time to take the idle connection (and its one permit).
    std::thread::sleep(Duration::from_millis(500));
    let (tx, rx) = std::sync::mpsc::channel();
    let addr = gw.addr.clone();
    std::thread::spawn(move || {
        let _ = tx.send(http(&addr, "GET", "/healthz", &[], b"").0);
    });
    assert!(
        rx.recv_timeout(Duration::from_secs(2)).is_err(),
        "a second connection was served while the only one allowed was open"
    );
    drop(idle);
    assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok(200));
}

/// A request in session `sid` of `key`: the JSON-RPC answer.
fn in_session(gw: &Gateway, key: &str, sid: &str, body: serde_json::Value) -> serde_json::Value {
    let (_, _, bytes) = post_mcp(
        &gw.addr,
        key,
        &[
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        body.to_string().as_bytes(),
    );
    serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)
}

/// One key's resource subscriptions, across all its sessions, are capped at
/// `subscriptions_per_key`; another key is not affected.
#[test]
fn regression_one_key_cannot_hold_subscriptions_without_bound() {
    let dir = tempfile::tempdir().unwrap();
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[limits]\nsubscriptions_per_key = 1\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n\
         env = {{ NOTE_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        dir.path().join("note.txt").to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    let key = gw.agent_key.clone();
    let subscribe = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
        "params": {"uri": "notes://today"}});
    let (_, one, _) = open_session(&gw, &key);
    let (_, two, _) = open_session(&gw, &key);
    let (one, two) = (one.unwrap(), two.unwrap());
    let ok = in_session(&gw, &key, &one, subscribe.clone());
    assert_eq!(ok["result"], serde_json::json!({}), "{ok}");
    let refused = in_session(&gw, &key, &two, subscribe.clone());
    assert_eq!(refused["error"]["code"], -32005, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("subscriptions_per_key"),
        "{refused}"
    );
    // Another key has its own allowance.
    let other = agent(&gw, "other");
    let (_, theirs, _) = open_session(&gw, &other);
    let ok = in_session(&gw, &other, &theirs.unwrap(), subscribe.clone());
    assert_eq!(ok["result"], serde_json::json!({}), "{ok}");
    // Unsubscribing frees the key's place.
    let unsubscribe = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "resources/unsubscribe",
        "params": {"uri": "notes://today"}});
    in_session(&gw, &key, &one, unsubscribe);
    let ok = in_session(&gw, &key, &two, subscribe);
    assert_eq!(ok["result"], serde_json::json!({}), "{ok}");
}

/// A body timeout counted between frames let a client that sends one byte of
/// its body just inside each deadline hold its connection (and a request slot)
/// for as long as it liked. The whole body must now arrive within
/// `body_timeout_secs`: a trickled body is answered 408.
#[test]
fn regression_trickled_body_is_timed_out_in_all() {
    let gw = Gateway::start("[limits]\nbody_timeout_secs = 2\n");
    let mut s = TcpStream::connect(&gw.addr).unwrap();
    let body_len = 400;
    s.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {body_len}\r\n\r\n",
            gw.addr, gw.agent_key
        )
        .as_bytes(),
    )
    .unwrap();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        // One body byte every 500 ms: well inside any per-frame timeout, and
        // 200 s for the whole body.
        for _ in 0..body_len {
            if writer.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "after {:?}: {answer}",
        started.elapsed()
    );
    assert!(answer.contains("limits.body_timeout_secs"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(30));
    drop(s);
    trickle.join().unwrap();
    // A body that arrives in time is served as before.
    let (status, _, body) = post_mcp(&gw.addr, &gw.agent_key, &[], INIT);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

/// Issue 39 item 18: one global `max_connections` was the only bound, so
/// one agent's slow calls could take every upstream slot. A key's calls in
/// flight are now capped (`limits.calls_in_flight_per_key`): its next call
/// is refused at once with a retry hint and a leaf, while another key's
/// call goes through.
#[test]
fn regression_issue_39_one_key_cannot_take_every_upstream_slot() {
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[limits]\ncalls_in_flight_per_key = 1\n[roles.default]\ntools = [\"*\"]\n\
         [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__slow", true);
    let other = agent(&gw, "other");
    let call = |key: &str, ms: u64| {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "drifty__slow", "arguments": {"ms": ms}}});
        let (status, _, bytes) = post_mcp(
            &gw.addr,
            key,
            &[("MCP-Protocol-Version", "2026-07-28")],
            &serde_json::to_vec(&body).unwrap(),
        );
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
        serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
    };
    std::thread::scope(|s| {
        let slow = s.spawn(|| call(&gw.agent_key, 3000));
        std::thread::sleep(Duration::from_millis(800));
        let refused = call(&gw.agent_key, 10);
        assert_eq!(refused["error"]["code"], -32006, "{refused}");
        assert_eq!(refused["error"]["data"]["limit"], "in_flight", "{refused}");
        assert_eq!(refused["error"]["data"]["calls_in_flight_per_key"], 1);
        // Another key is not starved.
        let theirs = call(&other, 10);
        assert_eq!(theirs["result"]["content"][0]["text"], "done", "{theirs}");
        let first = slow.join().unwrap();
        assert_eq!(first["result"]["content"][0]["text"], "done", "{first}");
    });
    // The slot is free again once the call ended.
    let again = call(&gw.agent_key, 10);
    assert_eq!(again["result"]["content"][0]["text"], "done", "{again}");
    let reviewer = gw.reviewer_key();
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    assert!(
        log.to_string().contains("in_flight_limited"),
        "the refusal is a leaf: {log}"
    );
}

/// A keep-alive connection that sends `initialize` with `key` and reads the
/// answer's status, leaving the connection open (its status, and the
/// connection if the gateway kept it).
fn initialize_on_new_connection(gw: &Gateway, key: &str) -> (u16, TcpStream) {
    let mut s = TcpStream::connect(&gw.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        gw.addr,
        INIT.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(INIT).unwrap();
    // The status line, then the headers and as much of the body as the
    // Content-Length says.
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "the answer ended early");
        got.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&got).to_lowercase();
    let status: u16 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let length: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).unwrap();
    (status, s)
}

/// Issue 39 item 18: one global `max_connections`, so one agent key holding
/// connections open (a stream per session, held calls waiting) could leave
/// none for the other agents. Each key is served on at most
/// `limits.connections_per_key` at once: a request on one more is refused
/// (429, the connection closed), another key is served, and the share comes
/// back as the key's connections end.
#[test]
fn regression_issue_39_one_key_cannot_take_every_connection() {
    let gw = Gateway::start("[limits]\nconnections_per_key = 2\n");
    let (a, b) = (agent(&gw, "greedy"), agent(&gw, "other"));
    let (first, held_1) = initialize_on_new_connection(&gw, &a);
    let (second, _held_2) = initialize_on_new_connection(&gw, &a);
    assert_eq!((first, second), (200, 200));
    let (third, _) = initialize_on_new_connection(&gw, &a);
    assert_eq!(third, 429, "a third connection for the same key");
    let (other, _held_3) = initialize_on_new_connection(&gw, &b);
    assert_eq!(other, 200, "another key is served");
    // One of the key's connections ends: its share comes back.
    drop(held_1);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (again, _held_4) = initialize_on_new_connection(&gw, &a);
        if again == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the share never came back");
        std::thread::sleep(Duration::from_millis(100));
    }
}
