//! Issue 38: an unreviewed stdio server cannot reach what reviews it. A
//! hostile server (tests/peers/hostile-server.py, the standard library only,
//! no sandbox settings of its own) is added to a running `interlock serve`
//! the way `interlock servers add` adds any server; it tries every way out
//! when it starts (while pending) and again when it is called (approved).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peer};
use crate::util::{stderr, stdout};

fn hostile_script() -> PathBuf {
    std::fs::canonicalize(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(
                || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
                std::path::PathBuf::from,
            )
            .join("tests/peers/hostile-server.py"),
    )
    .unwrap()
}

/// A gateway whose `HOME` is a directory of the test's own, with a key in
/// `~/.ssh` (the gateway protects its own user's secrets).
fn gateway(extra_config: &str) -> (Gateway, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let gw = Gateway::start_with_env(extra_config, &[("HOME", home.path().to_str().unwrap())]);
    (gw, home)
}

/// What the hostile server aims at in `gw`: its process, its database and
/// config, its admin socket and port, the session bus, the user's key, and
/// another server's state.
fn targets(gw: &Gateway, home: &Path) -> Value {
    let data = gw.data();
    std::fs::create_dir_all(data.join("servers/other")).unwrap();
    std::fs::write(data.join("servers/other/token"), "other's secret").unwrap();
    let mut unix_sockets = vec![data.join("run/admin.sock").to_string_lossy().into_owned()];
    let mut abstract_sockets = Vec::new();
    // The session bus the keyring is reached through.
    if let Ok(bus) = std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        for part in bus.split(';').flat_map(|a| a.split(',')) {
            if let Some(p) = part.split_once("path=").map(|(_, p)| p) {
                unix_sockets.push(p.to_owned());
            }
            if let Some(a) = part.split_once("abstract=").map(|(_, a)| a) {
                abstract_sockets.push(a.to_owned());
            }
        }
    }
    // On a Postgres run, the database's own socket.
    if let Some(url) = gw.database_url()
        && let Some(dir) = url.split("host=").nth(1)
    {
        let dir = dir.split('&').next().unwrap();
        unix_sockets.push(format!("{dir}/.s.PGSQL.5432"));
    }
    json!({
        "gateway_pid": gw.pid(),
        "paths_read": [
            home.join(".ssh/id_ed25519"),
            data.join("interlock.sqlite"),
            gw.dir.path().join("gateway.toml"),
            data.join("servers/other/token"),
        ],
        "paths_write": [
            home.join("hostile-was-here"),
            data.join("interlock.sqlite"),
            data.join("servers/other/token"),
        ],
        "unix_sockets": unix_sockets,
        "abstract_sockets": abstract_sockets,
        "tcp": [gw.addr],
    })
}

fn add_hostile(gw: &Gateway, targets: &Value) {
    let python = peer("INTERLOCK_PEERS_PYTHON");
    let out = gw.cli(&[
        "servers",
        "add",
        "hostile",
        "--command",
        python.to_str().unwrap(),
        "--",
        hostile_script().to_str().unwrap(),
        &format!("targets={targets}"),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

/// Writes the hostile server into `gw`'s gateway.toml with `sandbox` (a
/// TOML value), as an operator would, and restarts the gateway on it.
fn configure_hostile(gw: &mut Gateway, targets: &Value, sandbox: &str) {
    let python = peer("INTERLOCK_PEERS_PYTHON");
    let config = gw.dir.path().join("gateway.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[servers.hostile]\ncommand = {:?}\nargs = [{:?}, {:?}]\nsandbox = {sandbox}\n",
        python.to_str().unwrap(),
        hostile_script().to_str().unwrap(),
        format!("targets={targets}"),
    ));
    std::fs::write(&config, text).unwrap();
    gw.restart();
    gw.wait_for_server("hostile", "PENDING");
}

fn call_escape(gw: &Gateway) -> Value {
    let (status, _, body) = gw.rpc(
        "tools/call",
        json!({"name": "hostile__escape", "arguments": {}}),
    );
    assert_eq!(status, 200, "{body}");
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no report: {body}"));
    serde_json::from_str(text).unwrap()
}

#[test]
fn regression_issue_38_a_hostile_stdio_server_reaches_nothing_pending_or_approved() {
    let (gw, home) = gateway("");
    let targets = targets(&gw, home.path());
    add_hostile(&gw, &targets);
    gw.wait_for_server("hostile", "PENDING");
    gw.approve_server("hostile");
    gw.wait_for_tool("hostile__escape", true);
    let report = call_escape(&gw);
    for when in ["at_start", "at_call"] {
        assert_eq!(
            report[when]["escaped"],
            json!([]),
            "{when}: {:#}\ngateway log:\n{}",
            report[when],
            gw.log()
        );
        let denied = report[when]["denied"].as_object().unwrap();
        // Its process, /proc and memory, signals, the search by name, four
        // reads, three writes, the sockets and the port: every one tried.
        assert!(denied.len() >= 13, "{when}: {:#}", report[when]);
    }
    // Nothing it wrote reached the host.
    assert!(!home.path().join("hostile-was-here").exists());
    assert_eq!(
        std::fs::read(gw.data().join("servers/other/token")).unwrap(),
        b"other's secret"
    );
    if gw.database_url().is_none() {
        let db = std::fs::read(gw.data().join("interlock.sqlite")).unwrap();
        assert!(!db.windows(16).any(|w| w == b"hostile was here"));
    }
    // It had a home of its own, and the reviewer API says what it was granted.
    assert!(gw.data().join("servers/hostile").is_dir());
    let key = gw.reviewer_key();
    let view = gw.api_get(&key, "/api/v1/servers/hostile");
    let launch = &view["server"]["launch"];
    assert_eq!(launch["sandbox_off"], json!(false), "{view:#}");
    assert_eq!(launch["grants"]["net"], json!("none"), "{view:#}");
    assert_eq!(launch["changed"], json!([]), "{view:#}");
    assert_eq!(launch["pinned"], launch["approved"], "{view:#}");
    gw.assert_audit_clean();
}

/// The same server with `sandbox = "off"` does escape: the test above is not
/// passing because the attempts are broken. The review shows it unconfined.
#[test]
fn regression_issue_38_sandbox_off_is_unconfined_and_shown() {
    let (mut gw, home) = gateway("");
    let targets = targets(&gw, home.path());
    configure_hostile(&mut gw, &targets, "\"off\"");
    let key = gw.reviewer_key();
    let view = gw.server_view_until(&key, "hostile", "pinned", |v| {
        !v["server"]["launch"]["pinned"].is_null()
    });
    assert_eq!(
        view["server"]["launch"]["sandbox_off"],
        json!(true),
        "{view:#}"
    );
    assert_eq!(
        view["server"]["launch"]["pinned"]["sandbox"],
        json!("off"),
        "{view:#}"
    );
    gw.approve_server("hostile");
    gw.wait_for_tool("hostile__escape", true);
    let report = call_escape(&gw);
    let escaped: Vec<String> =
        serde_json::from_value(report["at_call"]["escaped"].clone()).unwrap();
    // (Its pid target is the gateway before the restart; the rest hold.)
    for reached in [
        "find an interlock process in /proc",
        "/.ssh/id_ed25519",
        "/data/interlock.sqlite",
        "/data/run/admin.sock",
    ] {
        assert!(
            escaped.iter().any(|e| e.contains(reached)),
            "{reached}: {report:#}"
        );
    }
}

/// The launch is part of what was approved: the same name with other
/// arguments is quarantined until a reviewer approves the new launch, and
/// never served on the old approval.
#[test]
fn regression_issue_38_a_changed_launch_is_not_served_on_the_old_approval() {
    let (gw, _home) = gateway("");
    add_hostile(&gw, &json!({}));
    gw.wait_for_server("hostile", "PENDING");
    gw.approve_server("hostile");
    gw.wait_for_tool("hostile__escape", true);
    // The operator (or whoever can write the file) points it elsewhere.
    let config = gw.dir.path().join("gateway.toml");
    let mut doc: toml::Table = std::fs::read_to_string(&config).unwrap().parse().unwrap();
    let server = doc["servers"]["hostile"].as_table_mut().unwrap();
    server["args"]
        .as_array_mut()
        .unwrap()
        .push(toml::Value::String("--with-another-flag".into()));
    std::fs::write(&config, toml::to_string(&doc).unwrap()).unwrap();
    let mut gw = gw;
    gw.restart();
    gw.wait_for_server("hostile", "QUARANTINED");
    assert!(
        gw.try_call("hostile__escape", json!({}))
            .is_some_and(|r| r.get("error").is_some() || r["result"]["isError"] == json!(true)),
        "a quarantined server's tool is not called"
    );
    let key = gw.reviewer_key();
    let view = gw.api_get(&key, "/api/v1/servers/hostile");
    assert_eq!(
        view["server"]["launch"]["changed"],
        json!(["args"]),
        "{view:#}"
    );
    let drift = view["drift"].as_array().cloned().unwrap_or_default();
    assert!(
        drift.iter().any(|d| d["kind"] == "launch_changed"
            && d["action"] == "quarantine"
            && d["launch"]["changed"] == json!(["args"])),
        "{view:#}"
    );
    // Approving the new launch serves it again.
    gw.approve_server("hostile");
    gw.wait_for_server("hostile", "TRUSTED");
    gw.wait_for_tool("hostile__escape", true);
    gw.assert_audit_clean();
}

/// A listener that accepts and closes connections until the test ends.
fn accepting() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let l = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            drop(s);
        }
    });
    (listener, addr)
}

/// `net = ["host:port"]` is enforced, not a convention: the server's only
/// way out is the gateway's egress proxy, which tunnels to a listed
/// destination only once the server is approved, and to nothing else.
#[test]
fn regression_issue_38_egress_reaches_only_listed_destinations_and_only_once_approved() {
    let (mut gw, _home) = gateway("");
    let (_allowed, allowed) = accepting();
    let (_other, other) = accepting();
    let targets = json!({
        "via_proxy": [allowed, other],
        "tcp": [allowed],
    });
    configure_hostile(&mut gw, &targets, &format!("{{ net = [{allowed:?}] }}"));
    gw.approve_server("hostile");
    gw.wait_for_tool("hostile__escape", true);
    let report = call_escape(&gw);
    // Pending, it had no network at all.
    assert_eq!(report["at_start"]["escaped"], json!([]), "{report:#}");
    // Approved, only the listed destination, and only through the proxy.
    assert_eq!(
        report["at_call"]["escaped"],
        json!([format!("via proxy {allowed}")]),
        "{report:#}"
    );
    let denied = report["at_call"]["denied"].as_object().unwrap();
    assert!(
        denied[&format!("via proxy {other}")]
            .as_str()
            .unwrap()
            .contains("403"),
        "{report:#}"
    );
    assert!(
        denied.contains_key(&format!("connect tcp {allowed}")),
        "{report:#}"
    );
    let key = gw.reviewer_key();
    let view = gw.api_get(&key, "/api/v1/servers/hostile");
    assert_eq!(
        view["server"]["launch"]["grants"]["net"],
        json!([allowed]),
        "{view:#}"
    );
}
