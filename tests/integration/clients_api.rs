//! Issue 19 item 2: "Connect a client" on the reviewer API — what the review
//! UI's Settings and the desktop's first run call. A real gateway whose user
//! has Claude Code set up (the fixture home): the API lists it with a
//! per-server preview, connects it (the gateway config gains the upstreams,
//! the file reaches the gateway with its own agent key), and undoes it (the
//! file back byte for byte); only a reviewer key reaches it, only a known
//! client's own file can be named, and each step is a log leaf.

use serde_json::Value;

use crate::gateway_util::{http, peer};
use crate::signin::{Fresh, body};
use crate::util::manifest_dir;

/// A home directory with the Claude Code fixture, the peers' paths filled in.
fn claude_code_home() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let home = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(manifest_dir().join("tests/data/connect/claude-code/.claude.json"))
            .unwrap()
            .replace("@NODE@", peer("INTERLOCK_PEERS_NODE").to_str().unwrap())
            .replace(
                "@EVERYTHING@",
                peer("INTERLOCK_PEERS_SERVER_EVERYTHING").to_str().unwrap(),
            )
            .replace(
                "@TIME@",
                peer("INTERLOCK_PEERS_TIME_SERVER").to_str().unwrap(),
            );
    let file = home.path().join(".claude.json");
    std::fs::write(&file, &text).unwrap();
    (home, file, text.into_bytes())
}

fn post(gw: &Fresh, key: &str, path: &str) -> (u16, Value) {
    let (status, _, body) = http(
        &gw.addr,
        "POST",
        path,
        &[("Authorization", &format!("Bearer {key}"))],
        b"",
    );
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// A reviewer key, by the first-run link.
fn reviewer(gw: &Fresh) -> String {
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 11, "settings"));
    assert_eq!(status, 200, "{answer}");
    answer["key"].as_str().unwrap().to_owned()
}

fn leaf_types(gw: &Fresh, key: &str) -> Vec<String> {
    let (_, log) = gw.get(key, "/api/v1/log?from=0&limit=1000");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["entry"]["type"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn clients_are_previewed_connected_and_undone_through_the_reviewer_api() {
    let (home, file, original) = claude_code_home();
    let gw = Fresh::start_with(&[
        ("HOME", home.path().to_str().unwrap()),
        (
            "XDG_CONFIG_HOME",
            home.path().join(".config").to_str().unwrap(),
        ),
    ]);
    let key = reviewer(&gw);

    let (status, list) = gw.get(&key, "/api/v1/clients");
    assert_eq!(status, 200, "{list}");
    let clients = list["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 7, "{list}");
    let cc = clients
        .iter()
        .find(|c| c["client"] == "claude-code")
        .unwrap();
    assert_eq!(cc["found"], true);
    assert_eq!(cc["undoable"], false);
    let servers = cc["plan"]["servers"].as_array().unwrap();
    let action = |n: &str| servers.iter().find(|s| s["name"] == n).unwrap()["action"].clone();
    assert_eq!(action("everything"), "import");
    assert_eq!(action("time"), "import");
    assert_eq!(action("linear"), "keep");
    let gateway_url = format!("http://{}/mcp", gw.addr);
    assert_eq!(cc["plan"]["entry"]["reach"]["url"], gateway_url.as_str());
    // Nothing was changed by looking.
    assert_eq!(std::fs::read(&file).unwrap(), original);
    let cursor = clients.iter().find(|c| c["client"] == "cursor").unwrap();
    assert_eq!(cursor["found"], false);
    assert!(cursor["plan"].is_null());

    let (status, done) = post(&gw, &key, "/api/v1/clients/claude-code/connect");
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["changed"], true);
    // The running gateway started the new upstreams, pending (issue 20
    // item 5): no restart.
    assert!(done.get("restart_needed").is_none(), "{done}");
    let mut started: Vec<&str> = done["started"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    started.sort_unstable();
    assert_eq!(started, ["everything", "time"], "{done}");
    let rewritten: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let entry = &rewritten["mcpServers"]["interlock"];
    assert_eq!(entry["url"], gateway_url.as_str(), "{rewritten}");
    assert!(rewritten["mcpServers"]["time"].is_null());
    let config = std::fs::read_to_string(gw.data().join("gateway.toml")).unwrap();
    assert!(
        config.contains("[servers.time]") && config.contains("[servers.everything]"),
        "{config}"
    );
    // The client's new key is an agent key: it reaches /mcp, not these routes.
    let agent = entry["headers"]["Authorization"]
        .as_str()
        .unwrap()
        .trim_start_matches("Bearer ")
        .to_owned();
    let (status, _) = gw.get(&agent, "/api/v1/clients");
    assert_eq!(status, 401);
    let (status, _) = post(&gw, &agent, "/api/v1/clients/claude-code/undo");
    assert_eq!(status, 401);
    assert!(file.exists() && std::fs::read(&file).unwrap() != original);

    let (_, list) = gw.get(&key, "/api/v1/clients");
    let cc = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "claude-code")
        .unwrap()
        .clone();
    assert_eq!(cc["undoable"], true);
    assert_eq!(cc["plan"]["changes_anything"], false, "{cc}");

    let (status, undone) = post(&gw, &key, "/api/v1/clients/claude-code/undo");
    assert_eq!(status, 200, "{undone}");
    assert_eq!(std::fs::read(&file).unwrap(), original, "byte for byte");
    // Each server its connect started is either stopped (a signed removal
    // with this machine's key) or said to be still running, and why.
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().or(x["name"].as_str()).unwrap().to_owned())
            .collect()
    };
    let mut accounted = names(&undone["servers_stopped"]);
    accounted.extend(names(&undone["servers_still_running"]));
    accounted.sort();
    let mut removed = names(&undone["servers_removed"]);
    removed.sort();
    assert_eq!(accounted, removed, "{undone}");
    eprintln!("undo through the API: {undone}");
    let (status, again) = post(&gw, &key, "/api/v1/clients/claude-code/undo");
    assert_eq!(status, 409, "{again}");

    let types = leaf_types(&gw, &key);
    assert!(types.iter().any(|t| t == "client.connected"), "{types:?}");
    assert!(types.iter().any(|t| t == "client.undone"), "{types:?}");
    // Evidence before effect: each change's intent leaf precedes its
    // outcome, which names it; the refused second undo is logged too.
    let (_, log) = gw.get(&key, "/api/v1/log?from=0&limit=1000");
    let entries: Vec<(u64, Value)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["index"].as_u64().unwrap(), e["entry"].clone()))
        .collect();
    let outcomes: Vec<&(u64, Value)> = entries
        .iter()
        .filter(|(_, e)| {
            ["client.connected", "client.undone", "client.change_refused"]
                .contains(&e["type"].as_str().unwrap_or(""))
        })
        .collect();
    let kinds: Vec<&str> = outcomes
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["client.connected", "client.undone", "client.change_refused"],
        "{kinds:?}"
    );
    for (index, outcome) in outcomes {
        let intent_index = outcome["intent_index"].as_u64().expect("intent_index");
        assert!(intent_index < *index);
        let (_, intent) = entries.iter().find(|(i, _)| *i == intent_index).unwrap();
        assert_eq!(intent["type"], "client.change.intent");
        assert_eq!(intent["client"], "claude-code");
        assert_eq!(intent["reviewer"], outcome["reviewer"]);
    }
    let audit = gw.cli(&["audit", "verify"], true);
    assert!(audit.status.success());
}

#[test]
fn clients_api_names_only_known_clients_never_a_path() {
    let (home, _file, _) = claude_code_home();
    let gw = Fresh::start_with(&[
        ("HOME", home.path().to_str().unwrap()),
        (
            "XDG_CONFIG_HOME",
            home.path().join(".config").to_str().unwrap(),
        ),
    ]);
    let key = reviewer(&gw);
    for slug in [
        "..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "chatgpt",
        "claude-code%00",
        "claude-code%2F..%2F..",
    ] {
        let (status, answer) = post(&gw, &key, &format!("/api/v1/clients/{slug}/connect"));
        assert_eq!(status, 404, "{slug}: {answer}");
    }
    // Refused before the log: no intent leaf carries what an unknown slug said.
    let types = leaf_types(&gw, &key);
    assert!(!types.iter().any(|t| t.starts_with("client.")), "{types:?}");
    // Without a key, or a cross-site page: refused before anything runs.
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/clients/claude-code/connect",
        &[],
        b"",
    );
    assert_eq!(status, 401);
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/clients/claude-code/connect",
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Origin", "http://evil.example"),
        ],
        b"",
    );
    assert_eq!(status, 403);
    assert!(
        !gw.data().join("gateway.toml").exists(),
        "nothing was connected"
    );
}
