//! Issue 19 item 1: `interlock connect CLIENT`, end to end, per client: a
//! fixture home with the client's real-world config (several servers, an env
//! secret, comments where the format has them, entries the gateway cannot
//! run) → connect → the gateway sees each imported server pending and serves
//! none of its tools → a reviewer approves → a real MCP client (the official
//! Python SDK), configured exactly as the rewritten file says, reaches the
//! tools, and the secret reached the upstream from the keychain → undo gives
//! the client its file back byte for byte.
//!
//! The hostile inputs have their own regression tests: malformed JSON and
//! TOML, a symlinked config, a server name that collides, a second connect.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::gateway_util::{Gateway, client, free_port, peer, peers_dir, tool_names};
use crate::util::{manifest_dir, stderr, stdout};

/// A fixture home: `tests/data/connect/<fixture>/` copied with the peers'
/// real paths in place of `@NODE@`, `@EVERYTHING@`, `@TIME@`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(fixture: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &manifest_dir().join("tests/data/connect").join(fixture),
            dir.path(),
        );
        Home { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `interlock ARGS` as the user of this home, beside `gw`'s data
    /// directory and keychain, adding upstreams to `gw`'s config.
    fn interlock(&self, gw: &Gateway, args: &[&str]) -> Output {
        self.interlock_env(gw, args, &[])
    }

    /// [`Home::interlock`] with `extra` environment variables.
    fn interlock_env(&self, gw: &Gateway, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let config = gw.dir.path().join("gateway.toml");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
        cmd.args(args)
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .env_remove("CODEX_HOME");
        if args.first() == Some(&"connect") && args.len() > 1 {
            cmd.args(["--config", config.to_str().unwrap()]);
        }
        for (k, v) in gw.env_for_thread() {
            cmd.env(k, v);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().expect("the binary runs")
    }
}

pub(crate) fn substitute(text: &str) -> String {
    text.replace("@NODE@", peer("INTERLOCK_PEERS_NODE").to_str().unwrap())
        .replace(
            "@EVERYTHING@",
            peer("INTERLOCK_PEERS_SERVER_EVERYTHING").to_str().unwrap(),
        )
        .replace(
            "@TIME@",
            peer("INTERLOCK_PEERS_TIME_SERVER").to_str().unwrap(),
        )
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            let text = std::fs::read_to_string(e.path()).unwrap();
            std::fs::write(&dest, substitute(&text)).unwrap();
        }
    }
}

/// A gateway on a fixed free port (so a restart keeps the URL the client
/// was given) with no upstreams yet. Secrets in results are let through so
/// that `get-env`'s answer shows the token the upstream really got (the
/// response scan would redact it, as it should in use).
fn gateway() -> Gateway {
    Gateway::start(&format!(
        "listen = \"127.0.0.1:{}\"\n\n[calls]\nresponse_secrets = \"allow\"\n",
        free_port()
    ))
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

/// The gateway's entry in the rewritten client file, as JSON (Codex's TOML
/// read with the `toml` crate, as Codex reads it).
fn gateway_entry(client_slug: &str, file: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    let (container, doc): (&str, Value) = match client_slug {
        "codex" => (
            "mcp_servers",
            serde_json::to_value(toml::from_str::<toml::Value>(&text).unwrap()).unwrap(),
        ),
        "vscode" => ("servers", jsonc(&text)),
        "gemini" => ("mcpServers", jsonc(&text)),
        _ => ("mcpServers", serde_json::from_str(&text).unwrap()),
    };
    doc[container]["interlock"].clone()
}

/// JSON with comments and trailing commas, as VS Code and Gemini CLI read it.
fn jsonc(text: &str) -> Value {
    jsonc_parser::cst::CstRootNode::parse(text, &Default::default())
        .unwrap()
        .to_serde_value()
        .unwrap()
}

/// The Python SDK client's `--header NAME: VALUE` arguments for an entry's
/// headers.
fn header_args(headers: &serde_json::Map<String, Value>) -> Vec<String> {
    headers
        .iter()
        .flat_map(|(k, v)| {
            [
                "--header".to_owned(),
                format!("{k}: {}", v.as_str().unwrap()),
            ]
        })
        .collect()
}

/// Calls `tool` the way the client's entry says to reach the gateway: a URL
/// and headers (Streamable HTTP, the Python SDK's client), or a command, its
/// arguments and environment (the Python SDK's stdio client spawning it).
fn call_as_configured(entry: &Value, tool: &str) -> Value {
    let url = ["url", "httpUrl", "serverUrl"]
        .iter()
        .find_map(|k| entry[*k].as_str());
    if let Some(url) = url {
        let headers = entry
            .get("headers")
            .or_else(|| entry.get("http_headers"))
            .and_then(Value::as_object)
            .expect("an HTTP entry carries its headers");
        let args = header_args(headers);
        let listed = client(
            "py",
            url,
            None,
            &args
                .iter()
                .map(String::as_str)
                .chain(["list-tools"])
                .collect::<Vec<_>>(),
        );
        let called = client(
            "py",
            url,
            None,
            &args
                .iter()
                .map(String::as_str)
                .chain(["call", tool, "{}"])
                .collect::<Vec<_>>(),
        );
        return serde_json::json!({"tools": tool_names(&listed), "result": called["result"], "error": called["error"]});
    }
    let command = entry["command"].as_str().expect("a command entry");
    let mut cmd = Command::new(peer("INTERLOCK_PEERS_PYTHON"));
    cmd.arg(peers_dir().join("stdio-client.py"))
        .args(["--call", tool, "--"])
        .arg(command)
        .args(
            entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        )
        .env_remove("INTERLOCK_API_KEY")
        .env_remove("INTERLOCK_GATEWAY_URL");
    for (k, v) in entry["env"].as_object().unwrap() {
        cmd.env(k, v.as_str().unwrap());
    }
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdio client printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::json!({"tools": v["tools"], "result": v["result"], "error": v["error"]})
}

/// The whole round trip for one client (see the module's doc).
/// `kept` names the entries that stay in the client (the gateway cannot run
/// them) and `kept_text` other text of the file that must survive the edit.
fn round_trip(slug: &str, file_in_home: &str, kept: &[&str], kept_text: &[&str]) {
    let mut gw = gateway();
    let home = Home::new(slug);
    let file = home.path().join(file_in_home);
    let original = std::fs::read(&file).unwrap();
    let secret = format!("fixture-token-for-{slug}");

    // The preview changes nothing and names every server.
    let preview = ok(
        &home.interlock(&gw, &["connect", slug]),
        "connect (preview)",
    );
    assert_eq!(std::fs::read(&file).unwrap(), original, "the preview wrote");
    for name in ["everything", "time"].iter().chain(kept) {
        assert!(
            preview.contains(name),
            "{name} missing from the preview:\n{preview}"
        );
    }
    assert!(preview.contains("dry run"), "{preview}");
    assert!(
        preview
            .lines()
            .any(|l| l.contains("EVERYTHING_TOKEN") && l.contains("into the OS keychain")),
        "{preview}"
    );

    // Connected while no gateway runs: the secrets go into this process's
    // keychain and it mints the key itself (beside a live gateway, the
    // gateway does both: `connect_beside_a_live_gateway_…`); undo below runs
    // beside the live gateway.
    gw.kill();
    ok(
        &home.interlock(&gw, &["connect", slug, "--yes"]),
        "connect --yes",
    );
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert!(
        !rewritten.contains(&secret),
        "the secret is still in the client's file"
    );
    for k in kept.iter().chain(kept_text) {
        assert!(rewritten.contains(k), "kept {k} was removed:\n{rewritten}");
    }
    let config = std::fs::read_to_string(gw.dir.path().join("gateway.toml")).unwrap();
    assert!(
        !config.contains(&secret),
        "the secret is in gateway.toml:\n{config}"
    );
    assert!(config.contains("env_keychain"), "{config}");

    // The gateway sees each server pending and serves none of its tools.
    gw.restart();
    gw.wait_for_server("everything", "PENDING");
    gw.wait_for_server("time", "PENDING");
    let entry = gateway_entry(slug, &file);
    let before = call_as_configured(&entry, "everything__get-env");
    let tools = before["tools"].to_string();
    assert!(
        !tools.contains("everything__") && !tools.contains("time__"),
        "pending servers' tools are served: {before}"
    );

    // Approved, they reach the client configured as its file says.
    gw.approve_server("everything");
    gw.approve_server("time");
    gw.wait_for_tool("everything__get-env", true);
    gw.wait_for_tool("time__get_current_time", true);
    let after = call_as_configured(&entry, "everything__get-env");
    let tools = after["tools"].to_string();
    assert!(
        tools.contains("everything__echo") && tools.contains("time__get_current_time"),
        "{after}"
    );
    let text = after["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("get-env answered {after}"));
    let env: serde_json::Map<String, Value> =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    assert_eq!(
        env.get("EVERYTHING_TOKEN").and_then(Value::as_str),
        Some(secret.as_str()),
        "the secret did not reach the upstream from the keychain: {text}"
    );

    // A second connect changes nothing.
    let again = ok(
        &home.interlock(&gw, &["connect", slug, "--yes"]),
        "second connect",
    );
    assert!(again.contains("nothing to do"), "{again}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), rewritten);

    // Undo: the file byte for byte, the upstreams gone, the key revoked.
    ok(&home.interlock(&gw, &["connect", "--undo", slug]), "undo");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        original,
        "undo did not restore the bytes"
    );
    let config = std::fs::read_to_string(gw.dir.path().join("gateway.toml")).unwrap();
    assert!(!config.contains("[servers."), "{config}");
    let keys = ok(&gw.cli(&["agents", "list"]), "agents list");
    assert!(
        keys.lines()
            .any(|l| l.starts_with(&format!("connect-{slug} ")) && l.ends_with("revoked")),
        "{keys}"
    );
    // A running gateway stops accepting a revoked key within 5 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let refused = call_as_configured(&entry, "everything__get-env");
        if refused["error"].is_object() && refused["result"].is_null() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the revoked key still reaches the gateway: {refused}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

#[test]
fn connect_claude_desktop_through_the_stdio_bridge_and_undo() {
    round_trip(
        "claude-desktop",
        ".config/Claude/claude_desktop_config.json",
        &["scripts"],
        &["\"globalShortcut\": \"Ctrl+Space\""],
    );
}

#[test]
fn connect_claude_code_over_http_with_a_header_and_undo() {
    round_trip(
        "claude-code",
        ".claude.json",
        &["linear", "github"],
        &["\"numStartups\": 41", "\"hasTrustDialogAccepted\": true"],
    );
}

#[test]
fn connect_cursor_over_http_with_a_header_and_undo() {
    round_trip("cursor", ".cursor/mcp.json", &["browser"], &[]);
}

#[test]
fn connect_vscode_keeps_comments_and_inputs_and_undo() {
    round_trip(
        "vscode",
        ".config/Code/User/mcp.json",
        &["perplexity"],
        &[
            "// Servers for Copilot's agent mode.",
            "/* asks for its key when it starts */",
            "\"inputs\"",
        ],
    );
}

#[test]
fn connect_windsurf_over_http_with_a_header_and_undo() {
    round_trip(
        "windsurf",
        ".codeium/windsurf/mcp_config.json",
        &["figma"],
        &[],
    );
}

#[test]
fn connect_codex_keeps_its_toml_and_undo() {
    round_trip(
        "codex",
        ".codex/config.toml",
        &["sentry", "notion"],
        &[
            "# Codex CLI settings",
            "[tui]",
            "# ask before running commands",
        ],
    );
}

#[test]
fn connect_gemini_keeps_comments_and_undo() {
    round_trip(
        "gemini",
        ".gemini/settings.json",
        &["github", "events"],
        &[
            "// Gemini CLI reads comments here.",
            "\"theme\": \"GitHub\"",
        ],
    );
}

/// No state for a file: no layer directory under the data directory.
fn no_connect_state(gw: &Gateway) -> bool {
    !gw.data().join("connect").exists()
        || std::fs::read_dir(gw.data().join("connect"))
            .unwrap()
            .all(|d| {
                std::fs::read_dir(d.unwrap().path())
                    .unwrap()
                    .next()
                    .is_none()
            })
}

/// A client file that is not valid in its format is refused (exit 1, the
/// parser's reason), and nothing is written anywhere: not the file, not the
/// gateway config, no backup, no key.
#[test]
fn regression_connect_refuses_malformed_json_and_toml_and_changes_nothing() {
    let gw = gateway();
    let config_before = std::fs::read(gw.dir.path().join("gateway.toml")).unwrap();
    let home = Home::new("cursor");
    for (slug, rel, text) in [
        // A trailing comma and a comment: VS Code allows them, Cursor does not.
        (
            "cursor",
            ".cursor/mcp.json",
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"},}}\n",
        ),
        (
            "cursor",
            ".cursor/mcp.json",
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}} // c\n",
        ),
        ("cursor", ".cursor/mcp.json", "{\"mcpServers\": [1, 2]}\n"),
        (
            "claude-code",
            ".claude.json",
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"}\n",
        ),
        (
            "codex",
            ".codex/config.toml",
            "[mcp_servers.a]\ncommand = \"x\"\ncommand = \"y\"\n",
        ),
        (
            "codex",
            ".codex/config.toml",
            "[mcp_servers.a\ncommand = \"x\"\n",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "{ \"mcpServers\": { \"a\": } }",
        ),
    ] {
        let file = home.path().join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let out = home.interlock(&gw, &["connect", slug, "--yes"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{text:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("is not valid") && stderr(&out).contains("left alone"),
            "{text:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    assert_eq!(
        std::fs::read(gw.dir.path().join("gateway.toml")).unwrap(),
        config_before
    );
    assert!(no_connect_state(&gw));
    let keys = ok(&gw.cli(&["agents", "list"]), "agents list");
    assert!(!keys.contains("connect-"), "{keys}");
}

/// A config kept as a symlink (dotfiles managers) is edited through its
/// link: the target gets the new bytes, the link stays a link, and undo
/// gives the target its bytes back. A link to something that is not a
/// regular file is refused.
#[test]
fn regression_connect_edits_a_symlinked_config_through_its_link() {
    let gw = gateway();
    let home = Home::new("cursor");
    let link = home.path().join(".cursor/mcp.json");
    let dotfiles = home.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("cursor-mcp.json");
    std::fs::rename(&link, &target).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let original = std::fs::read(&target).unwrap();

    let out = ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    assert!(out.contains("a symlink to"), "{out}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let entry = gateway_entry("cursor", &target);
    assert!(entry["url"].as_str().is_some(), "{entry}");
    ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo",
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), original);

    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&dotfiles, &link).unwrap();
    let out = home.interlock(&gw, &["connect", "cursor", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
}

/// A client's server whose name is already an upstream: the same server
/// (same command, arguments and secret) is shared, not added twice; a
/// different one is imported under `<name>-<client>`, never over it.
#[test]
fn regression_connect_renames_a_server_whose_name_collides() {
    let gw = gateway();
    let config = gw.dir.path().join("gateway.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n# mine\n[servers.time]\ncommand = \"/usr/bin/true\"\n");
    std::fs::write(&config, &text).unwrap();
    let cursor = Home::new("cursor");
    let out = ok(
        &cursor.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    assert!(out.contains("upstream `time-cursor`"), "{out}");
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(
        after.contains("# mine\n[servers.time]\ncommand = \"/usr/bin/true\"\n"),
        "{after}"
    );
    assert!(after.contains("[servers.time-cursor]") && after.contains("[servers.everything]"));

    // Windsurf lists the same `time` server Cursor did: shared. Its
    // `everything` holds another token: a server of its own.
    let windsurf = Home::new("windsurf");
    let out = ok(
        &windsurf.interlock(&gw, &["connect", "windsurf", "--yes"]),
        "connect",
    );
    assert!(
        out.contains("upstream `time-cursor` (stdio:")
            && out.contains("already configured: shared"),
        "{out}"
    );
    assert!(out.contains("upstream `everything-windsurf`"), "{out}");
    let config_text = std::fs::read_to_string(&config).unwrap();
    let parsed = interlock_gateway::GatewayConfig::parse(&config_text).unwrap();
    assert!(
        parsed.servers.contains_key("everything-windsurf"),
        "{config_text}"
    );

    // Undoing Cursor removes what only Cursor uses; `time-cursor`, which
    // Windsurf shares, stays and is Windsurf's now.
    let names = || {
        interlock_gateway::GatewayConfig::parse(&std::fs::read_to_string(&config).unwrap())
            .unwrap()
            .servers
            .into_keys()
            .collect::<Vec<String>>()
    };
    ok(
        &cursor.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo cursor",
    );
    assert_eq!(names(), ["everything-windsurf", "time", "time-cursor"]);
    // Undoing Windsurf then removes all it used; the operator's own `time`
    // stays, with its comment.
    ok(
        &windsurf.interlock(&gw, &["connect", "--undo", "windsurf"]),
        "undo windsurf",
    );
    assert_eq!(names(), ["time"]);
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.contains("# mine\n[servers.time]\n"), "{after}");
}

/// A second connect never wraps an entry that already reaches the gateway:
/// with nothing new it writes nothing; after the user adds a server, it
/// imports only that one and keeps the one gateway entry; each undo peels
/// one connect off, back to the original bytes.
#[test]
fn regression_second_connect_never_double_wraps() {
    let gw = gateway();
    let home = Home::new("claude-code");
    let file = home.path().join(".claude.json");
    let original = std::fs::read(&file).unwrap();
    ok(
        &home.interlock(&gw, &["connect", "claude-code", "--yes"]),
        "connect",
    );
    let first = std::fs::read_to_string(&file).unwrap();
    let out = ok(
        &home.interlock(&gw, &["connect", "claude-code", "--yes"]),
        "again",
    );
    assert!(out.contains("nothing to do") && out.contains("already reaches the gateway"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // The user adds a server by hand.
    let mut doc: Value = serde_json::from_str(&first).unwrap();
    doc["mcpServers"]["later"] = serde_json::json!({"command": "/usr/bin/true", "args": []});
    let second_before = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(&file, &second_before).unwrap();
    let out = ok(
        &home.interlock(&gw, &["connect", "claude-code", "--yes"]),
        "third",
    );
    assert!(
        out.contains("upstream `later`") && out.contains("interlock  already reaches"),
        "{out}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let names: Vec<&String> = doc["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("interlock")).count(),
        1,
        "{names:?}"
    );
    assert!(!names.contains(&&"later".to_owned()));
    let keys = ok(&gw.cli(&["agents", "list"]), "agents list");
    assert_eq!(keys.matches("connect-claude-code").count(), 1, "{keys}");

    ok(
        &home.interlock(&gw, &["connect", "--undo", "claude-code"]),
        "undo 1",
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), second_before);
    // Undoing the first connect would drop `later`, added by hand after it:
    // refused unless forced.
    let out = home.interlock(&gw, &["connect", "--undo", "claude-code"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = ok(
        &home.interlock(&gw, &["connect", "--undo", "claude-code", "--force"]),
        "undo 2",
    );
    assert!(
        out.contains("revoked agent key `connect-claude-code`"),
        "{out}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), original);
    let out = home.interlock(&gw, &["connect", "--undo", "claude-code"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// Undo will not throw away what changed in the file after connect wrote
/// it, unless told to.
#[test]
fn regression_undo_refuses_a_file_changed_since_connect() {
    let gw = gateway();
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    let original = std::fs::read(&file).unwrap();
    ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    let mut edited = std::fs::read_to_string(&file).unwrap();
    edited.push('\n');
    std::fs::write(&file, &edited).unwrap();
    let out = home.interlock(&gw, &["connect", "--undo", "cursor"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor", "--force"]),
        "undo --force",
    );
    assert_eq!(std::fs::read(&file).unwrap(), original);
}

/// Issue 39 item 5: an agent's name is its identity, and a revoked key's name
/// is never given to a new key (it would inherit the old agent's approved
/// plans and held calls). Undo revokes `connect-<client>`; connecting again
/// makes a new agent, `connect-<client>-2`, and the entry carries its key.
#[test]
fn regression_issue_39_a_client_connected_again_after_undo_is_a_new_agent() {
    let gw = gateway();
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    let out = ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo",
    );
    assert!(out.contains("revoked agent key `connect-cursor`"), "{out}");
    let out = ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect again",
    );
    assert!(out.contains("connect-cursor-2"), "{out}");
    let keys = ok(&gw.cli(&["agents", "list"]), "agents list");
    let line = |name: &str| {
        keys.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {keys}"))
            .to_owned()
    };
    assert!(line("connect-cursor").ends_with("revoked"), "{keys}");
    assert!(!line("connect-cursor-2").ends_with("revoked"), "{keys}");
    // The new entry's key is the new agent's: it reaches the gateway.
    let entry = gateway_entry("cursor", &file);
    let args = header_args(
        entry["headers"]
            .as_object()
            .expect("cursor's entry has headers"),
    );
    let listed = client(
        "py",
        entry["url"].as_str().unwrap(),
        None,
        &args
            .iter()
            .map(String::as_str)
            .chain(["list-tools"])
            .collect::<Vec<_>>(),
    );
    assert!(
        listed["error"].is_null() && listed["tools"].is_array(),
        "{listed}"
    );
    let out = ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo again",
    );
    assert!(
        out.contains("revoked agent key `connect-cursor-2`"),
        "{out}"
    );
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Issue 39 item 19: connect moved the client's tokens into the keychain, yet
/// kept its undo backup (`connect/<client>/…/1.orig`) — the client's file as it
/// was, tokens included — in clear in the data directory. The backup is now
/// sealed with a key kept in the keychain beside the tokens; undo opens it
/// (here beside a live gateway, through its admin socket, which reads back
/// only such keys) and the file comes back byte for byte.
#[test]
fn regression_issue_39_the_undo_backup_keeps_no_token_in_clear() {
    let mut gw = gateway();
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    let original = std::fs::read(&file).unwrap();
    let secret = "fixture-token-for-cursor";
    assert!(String::from_utf8_lossy(&original).contains(secret));
    gw.kill();
    ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect --yes",
    );
    let backups = files_under(&gw.data().join("connect"));
    assert!(
        backups
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "orig")),
        "{backups:?}"
    );
    for f in &backups {
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} keeps the token in clear",
            f.display()
        );
    }
    gw.restart();
    ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo",
    );
    assert_eq!(std::fs::read(&file).unwrap(), original, "byte for byte");
}

/// A gateway config naming a keychain token that the keychain does not
/// hold does not start (a server without its token would fail in ways that
/// look like the server's fault), and the error names the server and the
/// variable; `interlock review` refuses it the same way.
#[test]
fn regression_serve_refuses_an_upstream_whose_keychain_token_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        "listen = \"127.0.0.1:0\"\n[servers.gh]\ncommand = \"/usr/bin/true\"\n\
         env_keychain = { GITHUB_TOKEN = \"upstream.gh.GITHUB_TOKEN\" }\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let service = format!("interlock-connect-test-{}", std::process::id());
    let env = [
        ("INTERLOCK_DATA_DIR", data.to_str().unwrap()),
        ("INTERLOCK_KEYCHAIN_SERVICE", service.as_str()),
    ];
    for args in [
        ["serve", "--config", config.to_str().unwrap()],
        ["review", "--config", config.to_str().unwrap()],
    ] {
        let out = crate::util::interlock_with(&args, None, &env);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("servers.gh")
                && err.contains("GITHUB_TOKEN")
                && err.contains("no such token"),
            "{args:?}: {err}"
        );
    }
}

/// `--project DIR` connects the project's own file (Claude Code's
/// `.mcp.json`) with a key of its own, and leaves the user's file alone.
#[test]
fn connect_a_project_file_with_its_own_key() {
    let gw = gateway();
    let home = Home::new("claude-code");
    let user_file = home.path().join(".claude.json");
    let user_bytes = std::fs::read(&user_file).unwrap();
    let project = home.path().join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join(".mcp.json");
    let original = substitute(
        "{\n  \"mcpServers\": {\n    \"time\": {\n      \"command\": \"@TIME@\",\n      \
         \"args\": [\"--local-timezone\", \"UTC\"]\n    }\n  }\n}\n",
    );
    std::fs::write(&file, &original).unwrap();
    let dir = project.to_str().unwrap();
    let out = ok(
        &home.interlock(&gw, &["connect", "claude-code", "--project", dir, "--yes"]),
        "connect --project",
    );
    assert!(
        out.contains(".mcp.json") && out.contains("upstream `time`"),
        "{out}"
    );
    let entry = gateway_entry("claude-code", &file);
    assert_eq!(entry["type"], "http", "{entry}");
    assert_eq!(std::fs::read(&user_file).unwrap(), user_bytes);
    let keys = ok(&gw.cli(&["agents", "list"]), "agents list");
    assert!(keys.contains("connect-claude-code-"), "{keys}");
    ok(
        &home.interlock(&gw, &["connect", "--undo", "claude-code", "--project", dir]),
        "undo --project",
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// Issue 19 item 3: beside a live gateway whose keychain this terminal cannot
/// reach (a headless gateway's keyring lives in its own session), connect
/// and undo still work: the gateway keeps the secrets and issues the key
/// through its admin socket, and the secret reaches the upstream from the
/// gateway's keychain: the running gateway starts the new upstream at once
/// (issue 20 item 5), without a restart.
#[test]
fn connect_beside_a_live_gateway_needs_no_keychain_of_its_own() {
    let gw = gateway();
    let pid = gw.pid();
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    let original = std::fs::read(&file).unwrap();
    let no_bus = [("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")];
    let out = ok(
        &home.interlock_env(&gw, &["connect", "cursor", "--yes"], &no_bus),
        "connect without a keychain",
    );
    assert!(out.contains("The running gateway started them"), "{out}");
    gw.wait_for_server("everything", "PENDING");
    gw.approve_server("everything");
    gw.wait_for_tool("everything__get-env", true);
    let after = call_as_configured(&gateway_entry("cursor", &file), "everything__get-env");
    let text = after["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("get-env answered {after}"));
    assert!(text.contains("fixture-token-for-cursor"), "{text}");
    assert_eq!(gw.pid(), pid, "no restart");
    let out = ok(
        &home.interlock_env(&gw, &["connect", "--undo", "cursor"], &no_bus),
        "undo without a keychain",
    );
    // The upstream's token, and the key its sealed backup was opened with
    // (read back through the gateway's socket: issue 39 item 19).
    assert!(out.contains("deleted 2 keychain token"), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), original);
}

/// Regression: beside a running gateway, connect wrote the config's `listen`
/// into the client's entry, not the address the gateway is bound to (its
/// `--listen` or `INTERLOCK_LISTEN` may differ: here the config says port 0),
/// so the client could not reach it. It asks the running gateway now.
#[test]
fn regression_connect_writes_the_address_the_running_gateway_is_bound_to() {
    let gw = Gateway::start("[calls]\nresponse_secrets = \"allow\"\n");
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    let entry = gateway_entry("cursor", &file);
    assert_eq!(entry["url"], gw.url.as_str(), "{entry}");
}

/// `connect --undo` beside the live gateway that started the servers stops
/// them there too, each by a removal signed with this machine's approver key
/// (the person at the terminal asked for exactly this): nothing of the undone
/// connect stays pending in the inbox, and each stop is a `server.removed` leaf.
#[test]
fn connect_undo_stops_the_servers_the_running_gateway_started() {
    let gw = gateway();
    let home = Home::new("cursor");
    let file = home.path().join(".cursor/mcp.json");
    let original = std::fs::read(&file).unwrap();
    ok(
        &home.interlock(&gw, &["connect", "cursor", "--yes"]),
        "connect",
    );
    gw.wait_for_server("everything", "PENDING");
    let out = ok(
        &home.interlock(&gw, &["connect", "--undo", "cursor"]),
        "undo",
    );
    assert!(
        out.contains("stopped `everything` in the running gateway (signed removal"),
        "{out}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), original);
    let reviewer = gw.reviewer_key();
    let servers = gw.api_get(&reviewer, "/api/v1/servers");
    assert!(
        !servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "everything"),
        "{servers}"
    );
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let removed: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .filter(|e| e["type"] == "server.removed")
        .map(|e| e["server"].as_str().unwrap())
        .collect();
    assert_eq!(removed, ["everything", "time"], "{log}");
}

/// Claude Code rewrites `~/.claude.json` itself (counters, project trust),
/// so the file has usually changed by the time someone undoes: `--merge`
/// keeps it as it is and undoes only connect's edit — the gateway's entry
/// out, the imported entries back with their original content.
#[test]
fn regression_undo_merge_keeps_changes_made_after_connect() {
    let gw = gateway();
    let home = Home::new("claude-code");
    let file = home.path().join(".claude.json");
    let original: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    ok(
        &home.interlock(&gw, &["connect", "claude-code", "--yes"]),
        "connect",
    );
    // The client rewrites its file meanwhile.
    let mut now: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    now["numStartups"] = 42.into();
    std::fs::write(&file, serde_json::to_string(&now).unwrap()).unwrap();

    let out = home.interlock(&gw, &["connect", "--undo", "claude-code"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--merge"), "{}", stderr(&out));
    let out = ok(
        &home.interlock(&gw, &["connect", "--undo", "claude-code", "--merge"]),
        "undo --merge",
    );
    assert!(
        out.contains("revoked agent key `connect-claude-code`"),
        "{out}"
    );
    let after: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(after["numStartups"], 42, "the client's own change was lost");
    let mut expected = original.clone();
    expected["numStartups"] = 42.into();
    assert_eq!(after, expected, "not the original content with the change");
    let config = std::fs::read_to_string(gw.dir.path().join("gateway.toml")).unwrap();
    assert!(!config.contains("[servers."), "{config}");
}

/// Issue 38: `@modelcontextprotocol/server-filesystem`, imported by `connect`
/// from a project's file as its client configured it (a root directory), runs
/// sandboxed with the profile derived from that entry — which the preview
/// shows — and, approved, writes in its root through the gateway.
#[test]
fn connect_a_filesystem_server_runs_sandboxed_with_its_derived_profile() {
    let gw = gateway();
    let home = Home::new("claude-code");
    let project = home.path().join("src/site");
    let root = project.join("files");
    std::fs::create_dir_all(&root).unwrap();
    let file = project.join(".mcp.json");
    let original = serde_json::json!({"mcpServers": {"files": {
        "command": peer("INTERLOCK_PEERS_NODE"),
        "args": [peer("INTERLOCK_PEERS_SERVER_FILESYSTEM"), root],
    }}});
    std::fs::write(&file, serde_json::to_vec_pretty(&original).unwrap()).unwrap();
    let dir = project.to_str().unwrap();
    let preview = ok(
        &home.interlock(&gw, &["connect", "claude-code", "--project", dir]),
        "connect --project (preview)",
    );
    let sandbox_line = preview
        .lines()
        .find(|l| l.contains("sandboxed, no network"))
        .unwrap_or_else(|| panic!("no sandbox line:\n{preview}"));
    assert!(
        sandbox_line.contains(&format!("writes {}", root.display())),
        "{preview}"
    );
    ok(
        &home.interlock(&gw, &["connect", "claude-code", "--project", dir, "--yes"]),
        "connect --project --yes",
    );
    gw.wait_for_server("files", "PENDING");
    gw.approve_server("files");
    gw.wait_for_tool("files__write_file", true);
    let entry = gateway_entry("claude-code", &file);
    let url = entry["url"].as_str().expect("an HTTP entry");
    let args = header_args(entry["headers"].as_object().unwrap());
    let target = root.join("hello.txt");
    let call = serde_json::json!({"path": target, "content": "written from a sandbox"}).to_string();
    let answer = client(
        "py",
        url,
        None,
        &args
            .iter()
            .map(String::as_str)
            .chain(["call", "files__write_file", &call])
            .collect::<Vec<_>>(),
    );
    assert!(answer["error"].is_null(), "{answer}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written from a sandbox",
        "{answer}"
    );
    let key = gw.reviewer_key();
    let view = gw.api_get(&key, "/api/v1/servers/files");
    let grants = &view["server"]["launch"]["grants"];
    assert_eq!(grants["write"], serde_json::json!([root]), "{view:#}");
    assert_eq!(grants["net"], "none", "{view:#}");
}
