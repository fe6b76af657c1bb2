//! Issue 20 item 5: servers added and removed at run time, without a
//! restart — a real MCP server (mcp-server-time) added to a live `interlock
//! serve`, pending, approved and called; removal only as a signed decision,
//! tried unsigned, with a wrong signature, for another server and replayed.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http, peer, tool_names};
use crate::util::{stderr, stdout};

fn post(gw: &Gateway, key: &str, path: &str, body: &Value) -> (u16, Value) {
    let (s, _, b) = http(
        &gw.addr,
        "POST",
        path,
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Content-Type", "application/json"),
        ],
        &serde_json::to_vec(body).unwrap(),
    );
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A removal of `name` signed by `key` over `hash` (the gateway's terms
/// unless a test changes them).
fn sign_removal(
    gw: &Gateway,
    reviewer: &str,
    key: &ed25519_dalek::SigningKey,
    subject: &str,
    hash: &str,
    nonce: u8,
) -> Value {
    use interlock_core::decision::{Terms, sign_decision};
    // The audience and policy digest the server's view reports.
    let view = gw.api_get(reviewer, "/api/v1/servers/time");
    let audience = view["audience"].as_str().unwrap().to_owned();
    let policy = view["policy_digest"].as_str().unwrap().to_owned();
    let t = now();
    sign_decision(
        key,
        &Terms {
            audience: &audience,
            subject,
            subject_hash: hash.parse().unwrap(),
            decision: interlock_core::Decision::Approve,
            reason: "not needed any more",
            issued_at: t - 5,
            not_before: t - 5,
            expires_at: t + 600,
            nonce: [nonce; 16],
            policy_digest: policy.parse().unwrap(),
        },
    )
    .unwrap()
    .1
    .to_json()
}

fn time_args() -> Vec<String> {
    vec![
        peer("INTERLOCK_PEERS_TIME_SERVER")
            .to_string_lossy()
            .into_owned(),
        "--local-timezone".into(),
        "UTC".into(),
    ]
}

fn call_time(gw: &Gateway) -> Value {
    let (status, _, body) = gw.rpc(
        "tools/call",
        json!({"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}),
    );
    assert_eq!(status, 200, "{body}");
    body
}

#[test]
fn servers_are_added_and_removed_at_run_time_without_a_restart() {
    let gw = Gateway::start("# the operator's own comment\n");
    let pid = gw.pid();
    let config_path = gw.dir.path().join("gateway.toml");
    let args = time_args();

    // Added from a second terminal, through the admin socket.
    let out = gw.cli(&[
        "servers",
        "add",
        "time",
        "--command",
        &args[0],
        "--",
        &args[1],
        &args[2],
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("pending"), "{}", stdout(&out));
    gw.wait_for_server("time", "PENDING");
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(
        config.contains("# the operator's own comment\n") && config.contains("[servers.time]"),
        "{config}"
    );
    // Pending: none of its tools is served.
    let listed = gw.list_tools();
    assert!(
        !tool_names(&listed).iter().any(|t| t.starts_with("time__")),
        "{listed}"
    );
    let refused = call_time(&gw);
    assert!(
        refused["error"].is_object() || refused["result"]["isError"] == true,
        "{refused}"
    );

    // Approved: served and callable, by the same process.
    gw.approve_server("time");
    gw.wait_for_tool("time__get_current_time", true);
    let answer = call_time(&gw);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("UTC"),
        "{answer}"
    );
    assert_eq!(gw.pid(), pid, "no restart");

    // A second name with the same tool prefix cannot shadow it; a bad name
    // and a server with no transport are refused with a reason.
    let reviewer = gw.reviewer_key();
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "time", "url": "http://127.0.0.1:9/mcp"}),
    );
    assert_eq!(s, 409, "{b}");
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "Bad__Name", "url": "http://127.0.0.1:9/mcp"}),
    );
    assert_eq!(s, 400, "{b}");
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "nothing"}),
    );
    assert_eq!(s, 400, "{b}");
    // An agent key cannot add servers.
    let (s, _) = post(
        &gw,
        &gw.agent_key,
        "/api/v1/servers",
        &json!({"name": "evil", "url": "http://127.0.0.1:9/mcp"}),
    );
    assert_eq!(s, 401);

    // Removal: the terms to sign.
    let terms = gw.api_get(&reviewer, "/api/v1/servers/time/removal");
    let subject = terms["subject"].as_str().unwrap().to_owned();
    let hash = terms["hash"].as_str().unwrap().to_owned();
    assert_eq!(subject, "server-removal:time");
    let removal = "/api/v1/servers/time/removal";

    // Unsigned: refused.
    let (s, b) = post(&gw, &reviewer, removal, &json!({"remove": true}));
    assert_eq!(s, 400, "{b}");
    // Signed by a key nobody registered: refused.
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[41; 32]);
    let (s, b) = post(
        &gw,
        &reviewer,
        removal,
        &sign_removal(&gw, &reviewer, &stranger, &subject, &hash, 1),
    );
    assert_eq!(s, 422, "an unregistered key must be refused: {b}");
    // A registered key…
    let key = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let out = gw.cli(&[
        "keys",
        "register",
        "--public-key",
        &hex::encode(key.verifying_key().as_bytes()),
        "--identity",
        "human:browser-reviewer",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // …over another hash (another transport): refused.
    let other = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let (s, b) = post(
        &gw,
        &reviewer,
        removal,
        &sign_removal(&gw, &reviewer, &key, &subject, other, 2),
    );
    assert_eq!(s, 409, "{b}");
    // …with its signature tampered: refused.
    let mut tampered = sign_removal(&gw, &reviewer, &key, &subject, &hash, 3);
    let sig = tampered["signatures"][0]["sig"]
        .as_str()
        .unwrap()
        .to_owned();
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    tampered["signatures"][0]["sig"] = json!(format!("{flipped}{}", &sig[1..]));
    let (s, b) = post(&gw, &reviewer, removal, &tampered);
    assert_eq!(s, 422, "{b}");
    // …about the server's surface, not its removal: refused here.
    let (s, b) = post(
        &gw,
        &reviewer,
        removal,
        &sign_removal(&gw, &reviewer, &key, "server:time", &hash, 4),
    );
    assert_eq!(s, 400, "{b}");
    // Still served after every refusal.
    gw.wait_for_tool("time__get_current_time", true);

    // Signed properly: removed, by the same process.
    let signed = sign_removal(&gw, &reviewer, &key, &subject, &hash, 5);
    let (s, b) = post(&gw, &reviewer, removal, &signed);
    assert_eq!(s, 200, "{b}");
    gw.wait_for_tool("time__get_current_time", false);
    let gone = call_time(&gw);
    assert!(
        gone["error"].is_object() || gone["result"]["isError"] == true,
        "{gone}"
    );
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(!config.contains("[servers.time]"), "{config}");
    assert!(config.contains("# the operator's own comment"), "{config}");
    let listed = stdout(&gw.cli(&["servers", "list"]));
    assert!(!listed.contains("time"), "{listed}");

    // Added again (same command, so the same removal hash): requested by
    // the reviewer, run once the owner confirms it (issue 39), pending again,
    // not trusted on the removed server's approval.
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "time", "command": args[0], "args": &args[1..]}),
    );
    assert_eq!(s, 202, "{b}");
    assert_eq!(b["status"], "REQUESTED", "{b}");
    let out = gw.cli(&["servers", "confirm", "time"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    gw.wait_for_server("time", "PENDING");
    // The old removal, replayed: refused (its nonce is spent).
    let (s, b) = post(&gw, &reviewer, removal, &signed);
    assert_eq!(s, 409, "a replayed removal must be refused: {b}");
    assert_eq!(b["error"]["code"], "replayed", "{b}");
    gw.wait_for_server("time", "PENDING");

    // The CLI signs with the keychain's approver key.
    let out = gw.cli(&["servers", "remove", "time", "--reason", "done with it"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let listed = stdout(&gw.cli(&["servers", "list"]));
    assert!(!listed.contains("time"), "{listed}");
    // Removing what is not there: exit 1 with a reason.
    let out = gw.cli(&["servers", "remove", "time", "--reason", "again"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no server named"), "{}", stderr(&out));

    // Every step is on the log, which verifies.
    let entries = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let types: Vec<String> = entries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["entry"]["type"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        types.iter().filter(|t| *t == "server.added").count(),
        2,
        "{types:?}"
    );
    assert_eq!(
        types.iter().filter(|t| *t == "server.removed").count(),
        2,
        "{types:?}"
    );
    assert_eq!(gw.pid(), pid, "no restart");
    gw.assert_audit_clean();
}

/// This machine's address on its default route (not loopback): a request
/// from it reaches the gateway as from another machine would.
fn non_loopback_ip() -> std::net::IpAddr {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    // No packet is sent: connecting a UDP socket only picks the route.
    s.connect("192.0.2.1:9")
        .or_else(|_| s.connect("10.255.255.255:9"))
        .expect("a default route (the test needs a non-loopback address)");
    let ip = s.local_addr().unwrap().ip();
    assert!(!ip.is_loopback(), "{ip}");
    ip
}

/// A stdio server runs a program on the gateway's machine: a reviewer key
/// used from elsewhere (a team's reviewer, a stolen key) must not add one —
/// it could run anything there. An HTTP server it may add (pending).
#[test]
fn regression_a_reviewer_elsewhere_cannot_add_a_stdio_server() {
    let ip = non_loopback_ip();
    let gw = Gateway::start(&format!("listen = \"{ip}:0\"\n"));
    let reviewer = gw.reviewer_key();
    let config_path = gw.dir.path().join("gateway.toml");
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "pwn", "command": "/bin/sh", "args": ["-c", "touch /tmp/pwned"]}),
    );
    assert_eq!(s, 403, "{b}");
    assert_eq!(b["error"]["code"], "not_this_machine", "{b}");
    assert!(
        !std::fs::read_to_string(&config_path)
            .unwrap()
            .contains("pwn"),
        "nothing written"
    );
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "docs", "url": "http://127.0.0.1:9/mcp"}),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "PENDING");
    assert!(
        std::fs::read_to_string(&config_path)
            .unwrap()
            .contains("[servers.docs]")
    );
}

/// Issue 38: a reviewer key may add a stdio server (from this machine), but
/// only sandboxed: `sandbox = "off"` runs a program with the gateway's own
/// power, which is the machine owner's choice in gateway.toml, never an API
/// caller's.
#[test]
fn regression_issue_38_a_reviewer_cannot_add_an_unconfined_server() {
    let gw = Gateway::start("");
    let reviewer = gw.reviewer_key();
    let config_path = gw.dir.path().join("gateway.toml");
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "loose", "command": "/bin/true", "sandbox": "off"}),
    );
    assert_eq!(s, 403, "{b}");
    assert_eq!(b["error"]["code"], "owner_only", "{b}");
    assert!(
        !std::fs::read_to_string(&config_path)
            .unwrap()
            .contains("loose"),
        "nothing written"
    );
    // Sandboxed, the same server is requested, for the owner to run.
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "loose", "command": "/bin/true"}),
    );
    assert_eq!(s, 202, "{b}");
    assert_eq!(b["status"], "REQUESTED", "{b}");
}

/// Issue 39 item 1: a reviewer key on a loopback connection added a stdio
/// server, which ran a program as the gateway's user — but an SSH tunnel, a
/// TLS proxy on the host or another local user all arrive from 127.0.0.1,
/// and a browser's sign-in makes a reviewer key. Over the reviewer API a
/// program is now only requested: logged, shown, not run, until the
/// machine's owner confirms it through the admin socket.
#[test]
fn regression_issue_39_a_reviewer_key_only_requests_a_program_the_owner_runs() {
    let gw = Gateway::start("");
    let reviewer = gw.reviewer_key();
    let config_path = gw.dir.path().join("gateway.toml");
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let script = format!("touch {}", marker.display());
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "pwn", "command": "/bin/sh", "args": ["-c", script]}),
    );
    assert_eq!(s, 202, "{b}");
    assert_eq!(b["status"], "REQUESTED", "{b}");
    assert_eq!(b["confirm"], "interlock servers confirm pwn", "{b}");
    // Nothing runs, nothing is configured, nothing is pinned.
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(!marker.exists(), "the program ran on a reviewer key alone");
    assert!(
        !std::fs::read_to_string(&config_path)
            .unwrap_or_default()
            .contains("pwn")
    );
    let servers = gw.api_get(&reviewer, "/api/v1/servers");
    assert!(!servers.to_string().contains("\"pwn\""), "{servers}");
    // The same name again waits already.
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "pwn", "command": "/bin/true"}),
    );
    assert_eq!(s, 409, "{b}");
    // Reviewers and the owner see the request, with its command line.
    let requests = gw.api_get(&reviewer, "/api/v1/servers/requests");
    assert_eq!(
        requests["requests"][0]["server"]["command"], "/bin/sh",
        "{requests}"
    );
    assert!(
        requests["requests"][0]["requested_by"]
            .as_str()
            .is_some_and(|by| by.starts_with("reviewer:")),
        "{requests}"
    );
    let listed = stdout(&gw.cli(&["servers", "requests"]));
    assert!(listed.contains("/bin/sh -c touch"), "{listed}");
    // The log says who asked for what.
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let asked = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .find(|e| e["type"] == "server.requested")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(asked["server"], "pwn", "{asked}");
    assert!(
        asked["requested_by"]
            .as_str()
            .unwrap()
            .starts_with("reviewer:"),
        "{asked}"
    );
    // Declined by the owner: gone, nothing ran.
    let out = gw.cli(&["servers", "decline", "pwn"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!marker.exists());
    assert_eq!(
        gw.api_get(&reviewer, "/api/v1/servers/requests")["requests"],
        json!([])
    );
    // Requested again and confirmed by the owner: added, pending review.
    let (s, b) = post(
        &gw,
        &reviewer,
        "/api/v1/servers",
        &json!({"name": "pwn", "command": "/bin/true"}),
    );
    assert_eq!(s, 202, "{b}");
    let out = gw.cli(&["servers", "confirm", "pwn"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        std::fs::read_to_string(&config_path)
            .unwrap()
            .contains("[servers.pwn]")
    );
    let out = gw.cli(&["servers", "confirm", "pwn"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "confirmed once: {}",
        stdout(&out)
    );
}
