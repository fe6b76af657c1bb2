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

/// A fresh gateway whose user's home is `home` (the clients' files there).
fn gateway_in(home: &tempfile::TempDir) -> Fresh {
    Fresh::start_with(&[
        ("HOME", home.path().to_str().unwrap()),
        (
            "XDG_CONFIG_HOME",
            home.path().join(".config").to_str().unwrap(),
        ),
    ])
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
fn clients_are_previewed_through_the_reviewer_api_without_a_change() {
    let (home, file, original) = claude_code_home();
    let gw = gateway_in(&home);
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
}

/// Issue 39 item 1: connecting a client over the reviewer API started its MCP
/// servers as the gateway's user, and undoing signed their removals with this
/// machine's approver key (item 2), on a reviewer key alone — a browser's
/// sign-in, a request through an SSH tunnel that arrives from 127.0.0.1. Both
/// are the owner's now (the desktop app's native confirmation, `interlock
/// connect`): the API refuses them with how the owner does it, touches no
/// file, starts nothing and logs no change.
#[test]
fn regression_issue_39_connect_and_undo_over_the_reviewer_api_are_owner_actions() {
    let (home, file, original) = claude_code_home();
    let gw = gateway_in(&home);
    let key = reviewer(&gw);
    for (path, command) in [
        (
            "/api/v1/clients/claude-code/connect",
            "interlock connect claude-code",
        ),
        (
            "/api/v1/clients/claude-code/undo",
            "interlock connect --undo claude-code",
        ),
    ] {
        let (status, refused) = post(&gw, &key, path);
        assert_eq!(status, 403, "{path}: {refused}");
        assert_eq!(refused["error"]["code"], "owner_action", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(command) && message.contains("desktop app"),
            "{message}"
        );
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        original,
        "the file untouched"
    );
    let config = std::fs::read_to_string(gw.data().join("gateway.toml")).unwrap_or_default();
    assert!(!config.contains("[servers.time]"), "{config}");
    let (_, servers) = gw.get(&key, "/api/v1/servers");
    assert!(
        !servers.to_string().contains("\"time\""),
        "a server was started: {servers}"
    );
    let types = leaf_types(&gw, &key);
    assert!(!types.iter().any(|t| t.starts_with("client.")), "{types:?}");
    // An unknown client is still named as one.
    let (status, _) = post(&gw, &key, "/api/v1/clients/no-such/connect");
    assert_eq!(status, 404);
}

#[test]
fn clients_api_names_only_known_clients_never_a_path() {
    let (home, _file, _) = claude_code_home();
    let gw = gateway_in(&home);
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

/// Issue 40 item 1: Settings' "Guard a coding agent's own tools" previews,
/// per coding agent, the diff installing Interlock's hooks in its user
/// settings would write — the agent key and any secret in the file masked —
/// and installing and undoing over the reviewer API are owner actions: 403
/// with the command, the file untouched, nothing logged.
#[test]
fn regression_issue_40_hooks_are_previewed_masked_and_installed_only_by_the_owner() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let original =
        format!("{{\n  \"model\": \"opus\",\n  \"env\": {{\"GITHUB_TOKEN\": \"{token}\"}}\n}}\n");
    std::fs::write(&settings, &original).unwrap();
    let gw = gateway_in(&home);
    let key = reviewer(&gw);

    let (status, list) = gw.get(&key, "/api/v1/hooks");
    assert_eq!(status, 200, "{list}");
    let slugs: Vec<&str> = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["client"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["claude-code", "cursor", "codex", "gemini-cli"]);
    let claude = &list["clients"][0];
    assert_eq!(claude["exists"], true, "{claude}");
    assert_eq!(claude["installed"], false, "{claude}");
    assert_eq!(claude["plan"]["changes_anything"], true, "{claude}");
    let diff = claude["plan"]["diff"].as_str().unwrap();
    assert!(diff.contains("hook claude-code\""), "{diff}");
    assert!(diff.contains("INTERLOCK_API_KEY=<agent key>"), "{diff}");
    assert!(
        !diff.contains(token),
        "a secret in the settings reached the page: {diff}"
    );
    assert!(!diff.contains("--on-unreachable"), "{diff}");
    assert_eq!(list["clients"][1]["exists"], false);
    assert!(
        list["clients"][1]["plan"]["diff"]
            .as_str()
            .unwrap()
            .starts_with("--- /dev/null\n"),
        "{list}"
    );
    let (status, asking) = gw.get(&key, "/api/v1/hooks?on_unreachable=ask");
    assert_eq!(status, 200, "{asking}");
    assert!(
        asking["clients"][0]["plan"]["diff"]
            .as_str()
            .unwrap()
            .contains("hook claude-code --on-unreachable ask"),
        "{asking}"
    );
    let (status, bad) = gw.get(&key, "/api/v1/hooks?on_unreachable=maybe");
    assert_eq!(status, 400, "{bad}");

    for (path, command) in [
        (
            "/api/v1/hooks/claude-code/install",
            "interlock hooks install claude-code --yes",
        ),
        (
            "/api/v1/hooks/claude-code/undo",
            "interlock hooks install claude-code --undo",
        ),
    ] {
        let (status, refused) = post(&gw, &key, path);
        assert_eq!(status, 403, "{path}: {refused}");
        assert_eq!(refused["error"]["code"], "owner_action", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(command), "{message}");
    }
    let (status, _) = post(&gw, &key, "/api/v1/hooks/..%2F.ssh/install");
    assert_eq!(status, 404);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    let types = leaf_types(&gw, &key);
    assert!(!types.iter().any(|t| t.starts_with("client.")), "{types:?}");

    // The owner installs at the terminal: the page then says so, and shows
    // neither the key the file now holds nor a change to make.
    let out = gw.cli(&["hooks", "install", "claude-code", "--yes"], true);
    assert!(out.status.success(), "{out:?}");
    let written = std::fs::read_to_string(&settings).unwrap();
    let installed_key = written
        .split("INTERLOCK_API_KEY=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_owned();
    let (_, list) = gw.get(&key, "/api/v1/hooks");
    let claude = &list["clients"][0];
    assert_eq!(claude["installed"], true, "{claude}");
    assert_eq!(claude["plan"]["changes_anything"], false, "{claude}");
    assert!(!list.to_string().contains(&installed_key), "{list}");
    let out = gw.cli(&["hooks", "install", "claude-code", "--undo"], true);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
}
