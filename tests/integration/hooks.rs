//! Issue 40: coding agents' hooks through `interlock serve`. Each client's
//! documented payloads (`tests/fixtures/hooks/`, sources in `SOURCES.md`)
//! get allow, deny or hold in the form that client documents; a held Claude
//! Code `Bash` command runs once after a reviewer approves it, and again is
//! held anew; every answer is a `hook.call` leaf of a log that verifies.

use serde_json::Value;

use crate::gateway_util::{Gateway, http};
use crate::util::{manifest_dir, stderr, stdout};

fn fixture(client: &str, name: &str) -> Vec<u8> {
    std::fs::read(
        manifest_dir()
            .join("tests/fixtures/hooks")
            .join(client)
            .join(name),
    )
    .unwrap_or_else(|e| panic!("{client}/{name}: {e}"))
}

/// Posts a hook event as the client's hook would; its (always 200) answer.
fn hook(gw: &Gateway, client: &str, key: Option<&str>, body: &[u8]) -> Value {
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    let (status, _, answer) = http(
        &gw.addr,
        "POST",
        &format!("/hooks/v1/{client}?wait=0"),
        &headers,
        body,
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    serde_json::from_slice(&answer).expect("the answer is JSON")
}

/// What an answer decides, in any client's form: allow, deny, ask or none.
fn decision(answer: &Value) -> (String, String) {
    let reason = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    if let Some(o) = answer.get("hookSpecificOutput") {
        if let Some(d) = o.get("permissionDecision") {
            return (reason(d), reason(&o["permissionDecisionReason"]));
        }
        if let Some(d) = o.get("decision") {
            return (reason(&d["behavior"]), reason(&d["message"]));
        }
    }
    if let Some(p) = answer.get("permission") {
        return (reason(p), reason(&answer["agent_message"]));
    }
    if let Some(d) = answer.get("decision") {
        return (reason(d), reason(&answer["reason"]));
    }
    ("none".into(), String::new())
}

#[test]
fn every_clients_documented_payloads_get_their_documented_answers() {
    let gw = Gateway::start("");
    let key = Some(gw.agent_key.as_str());
    for (client, allowed, held, reported) in [
        (
            "claude-code",
            "pre_tool_use.bash_git_status.json",
            "pre_tool_use.bash_rm_rf_home.json",
            "post_tool_use.bash.json",
        ),
        (
            "cursor",
            "before_shell_execution.git_status.json",
            "before_shell_execution.rm_rf_home.json",
            "after_shell_execution.git_status.json",
        ),
        (
            "codex",
            "pre_tool_use.bash_git_status.json",
            "pre_tool_use.bash_rm_rf_home.json",
            "post_tool_use.bash.json",
        ),
        (
            "gemini-cli",
            "before_tool.run_shell_command_git_status.json",
            "before_tool.run_shell_command_rm_rf_home.json",
            "after_tool.run_shell_command.json",
        ),
    ] {
        let answer = hook(&gw, client, key, &fixture(client, allowed));
        // Codex's PreToolUse has no allow: no decision is its "no objection".
        let want = if client == "codex" { "none" } else { "allow" };
        assert_eq!(decision(&answer).0, want, "{client} {allowed}: {answer}");
        let answer = hook(&gw, client, key, &fixture(client, held));
        let (d, reason) = decision(&answer);
        assert_eq!(d, "deny", "{client} {held}: {answer}");
        assert!(
            reason.contains("held this Bash use for review as plan `call-hook-"),
            "{reason}"
        );
        assert_eq!(
            hook(&gw, client, key, &fixture(client, reported)),
            serde_json::json!({})
        );
        // Fail closed: no key, a wrong key, a body that is not an event.
        for (k, body) in [
            (None, fixture(client, allowed)),
            (Some("ilk_not-a-key"), fixture(client, allowed)),
            (key, b"{\"hook_event_name\": ".to_vec()),
        ] {
            let answer = hook(&gw, client, k, &body);
            if client == "codex" || !answer.to_string().contains("PermissionRequest") {
                let (d, reason) = decision(&answer);
                assert_eq!(d, "deny", "{client}: {answer}");
                assert!(reason.contains("Interlock refused"), "{reason}");
            }
        }
    }
    // An unreadable `?wait` is not a 400 (a hook client's "no objection"):
    // the use is judged with the default wait.
    let (status, _, answer) = http(
        &gw.addr,
        "POST",
        "/hooks/v1/claude-code?wait=soon",
        &[("Authorization", &format!("Bearer {}", gw.agent_key))],
        &fixture("claude-code", "pre_tool_use.bash_git_status.json"),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(decision(&answer).0, "allow", "{answer}");
    // The leaves: one per judged event, and the log verifies.
    gw.assert_audit_clean();
    // Exported once the last leaves are under a signed checkpoint (within
    // `checkpoint_interval_ms`).
    let bundle_dir = gw.dir.path().join("bundle");
    let leaves = || {
        let _ = std::fs::remove_dir_all(&bundle_dir);
        let out = gw.cli(&["receipts", "export", bundle_dir.to_str().unwrap()]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        let bundle = std::fs::read_to_string(bundle_dir.join("bundle.json")).unwrap();
        bundle.matches("hook.call").count()
    };
    let mut found = leaves();
    for _ in 0..50 {
        if found >= 13 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        found = leaves();
    }
    assert!(
        found >= 13,
        "{found} hook.call leaves in the bundle, 13 expected"
    );
    // The Overview counts them with the calls (an after-event's report is
    // the same use, not another): 5 allowed and 4 held.
    let overview = gw.api_get(&gw.reviewer_key(), "/api/v1/overview");
    assert_eq!(overview["calls_today"], 9, "{overview}");
    assert_eq!(overview["held_calls_today"], 4, "{overview}");
    let own = overview["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "(agents' own tools)")
        .unwrap_or_else(|| panic!("{overview}"));
    assert_eq!(
        (own["calls"].as_u64(), own["holds"].as_u64()),
        (Some(9), Some(4))
    );
    let out = gw.cli(&[
        "receipts",
        "verify",
        gw.dir.path().join("bundle/bundle.json").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn regression_issue_40_a_held_bash_command_runs_once_after_approval() {
    let gw = Gateway::start("");
    let key = Some(gw.agent_key.as_str());
    let rm = fixture("claude-code", "pre_tool_use.bash_rm_rf_home.json");
    let (d, reason) = decision(&hook(&gw, "claude-code", key, &rm));
    assert_eq!(d, "deny");
    let plan_id = reason
        .split('`')
        .find(|s| s.starts_with("call-hook-"))
        .unwrap_or_else(|| panic!("{reason}"))
        .to_owned();
    // A retry before the decision waits on the same plan (none proposed anew).
    let (_, again) = decision(&hook(&gw, "claude-code", key, &rm));
    assert!(again.contains(&plan_id), "{again}");
    // The plan a reviewer reads names the exact command and binding.
    let shown = gw.cli(&["plans", "show", &plan_id]);
    assert!(stdout(&shown).contains("rm -rf ~"), "{}", stdout(&shown));
    let out = gw.approve("plans", &plan_id, "cleaning a scratch account");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // Another input — one byte of it — is not what was approved.
    let other = String::from_utf8(rm.clone())
        .unwrap()
        .replace("rm -rf ~", "rm -rf ~/");
    let (d, reason) = decision(&hook(&gw, "claude-code", key, other.as_bytes()));
    assert_eq!(d, "deny");
    assert!(!reason.contains(&plan_id), "{reason}");
    // The exact use retried: allowed, once.
    let (d, reason) = decision(&hook(&gw, "claude-code", key, &rm));
    assert_eq!(
        (d.as_str(), reason.contains(&plan_id)),
        ("allow", true),
        "{reason}"
    );
    let (d, reason) = decision(&hook(&gw, "claude-code", key, &rm));
    assert_eq!(d, "deny", "{reason}");
    assert!(
        reason.contains("held this Bash use for review") && !reason.contains(&plan_id),
        "{reason}"
    );
    gw.assert_audit_clean();
}

/// `interlock hook <client>`, the command hook of clients without an HTTP
/// hook type: the gateway's answer on stdout; a deny when the gateway cannot
/// answer (or `ask`, when the owner chose it).
#[test]
fn the_command_hook_relays_the_answer_and_fails_closed() {
    let gw = Gateway::start("");
    let base = format!("http://{}", gw.addr);
    let run = |gateway: &str, extra: &[&str], name: &str| {
        let mut args = vec!["hook", "gemini-cli", "--wait", "0"];
        args.extend_from_slice(extra);
        let out = crate::util::interlock_with(
            &args,
            Some(&fixture("gemini-cli", name)),
            &[
                ("INTERLOCK_API_KEY", &gw.agent_key),
                ("INTERLOCK_GATEWAY", gateway),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).expect("one JSON answer")
    };
    let ok = "before_tool.run_shell_command_git_status.json";
    assert_eq!(run(&base, &[], ok)["decision"], "allow");
    let held = run(&base, &[], "before_tool.run_shell_command_rm_rf_home.json");
    assert_eq!(held["decision"], "deny");
    assert!(
        held["reason"]
            .as_str()
            .unwrap()
            .contains("held this Bash use"),
        "{held}"
    );
    let closed = format!("http://127.0.0.1:{}", crate::gateway_util::free_port());
    let down = run(&closed, &[], ok);
    assert_eq!(down["decision"], "deny", "{down}");
    assert!(
        down["reason"].as_str().unwrap().contains("could not judge"),
        "{down}"
    );
    // Gemini CLI has no documented "ask": no decision lets it ask its user.
    assert_eq!(
        run(&closed, &["--on-unreachable", "ask"], ok),
        serde_json::json!({})
    );
}

/// Issue 40: the router answers a body over `limits.max_body_bytes` with
/// 413 — which a hook client that posts to the gateway itself (Claude Code's
/// `http` hook type) takes as "no objection" and runs the tool. On the hook
/// endpoint it is a 200 with a deny in the client's form; elsewhere the 413
/// stays.
#[test]
fn regression_issue_40_an_oversize_hook_event_is_denied_not_a_413() {
    let gw = Gateway::start("[limits]\nmax_body_bytes = 65536\n");
    let key = Some(gw.agent_key.as_str());
    let event =
        String::from_utf8(fixture("claude-code", "pre_tool_use.bash_git_status.json")).unwrap();
    let padded = event.replacen(
        "\"git status\"",
        &format!("\"git status # {}\"", "x".repeat(70_000)),
        1,
    );
    assert!(padded.len() > 65_536);
    let (d, reason) = decision(&hook(&gw, "claude-code", key, padded.as_bytes()));
    assert_eq!(d, "deny", "{reason}");
    assert!(
        reason.contains("larger than limits.max_body_bytes"),
        "{reason}"
    );
    let (d, _) = decision(&hook(&gw, "cursor", key, padded.as_bytes()));
    assert_eq!(d, "deny");
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        padded.as_bytes(),
    );
    assert_eq!(status, 413, "other endpoints keep their status");
}

/// Issue 40: `interlock hooks install` writes each client's own settings
/// (another hook and other settings kept), the command it installs answers
/// for the gateway, and `--undo` gives the file back byte for byte — or
/// removes it, where there was none.
#[test]
fn regression_issue_40_install_and_undo_leave_each_clients_file_as_it_was() {
    let gw = Gateway::start("");
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.path().to_string_lossy().into_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let gateway = format!("http://{}", gw.addr);
    let cli = |args: &[&str]| {
        let out = crate::util::interlock_with(args, None, &env);
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    };
    for (client, file, original, pick, event) in [
        (
            "claude-code",
            ".claude/settings.json",
            "{\n    \"model\": \"opus\",\n    \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]}\n}\n",
            "/hooks/PreToolUse/1/hooks/0/command",
            "pre_tool_use.bash_git_status.json",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "{\"version\": 1, \"hooks\": {\"afterFileEdit\": [{\"command\": \"./fmt.sh\"}]}}",
            "/hooks/beforeShellExecution/0/command",
            "before_shell_execution.git_status.json",
        ),
        (
            "codex",
            ".codex/hooks.json",
            "{\"description\": \"team hooks\"}\n",
            "/hooks/PreToolUse/0/hooks/0/command",
            "pre_tool_use.bash_git_status.json",
        ),
        (
            "gemini-cli",
            ".gemini/settings.json",
            "{\n  \"theme\": \"GitHub\",\n  \"general\": {\"vimMode\": true}\n}",
            "/hooks/BeforeTool/0/hooks/0/command",
            "before_tool.run_shell_command_git_status.json",
        ),
    ] {
        let path = project.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, original).unwrap();
        let dir = project.to_str().unwrap();
        let shown = cli(&[
            "hooks",
            "install",
            client,
            "--project",
            dir,
            "--gateway",
            &gateway,
        ]);
        assert!(
            shown.contains("nothing written") && shown.contains(&format!("hook {client}")),
            "{shown}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            original,
            "a preview writes nothing"
        );
        cli(&[
            "hooks",
            "install",
            client,
            "--project",
            dir,
            "--gateway",
            &gateway,
            "--yes",
        ]);
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let kept: Value = serde_json::from_str(original).unwrap();
        for (k, v) in kept.as_object().unwrap() {
            if k != "hooks" {
                assert_eq!(&written[k], v, "{client}: `{k}` kept");
            }
        }
        // The installed command is the hook: run as the client runs it.
        let command = written
            .pointer(pick)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{client}: {written}"));
        let answer = run_hook(command, &fixture(client, event));
        let want = if client == "codex" { "none" } else { "allow" };
        assert_eq!(decision(&answer).0, want, "{client}: {answer}");
        cli(&["hooks", "install", client, "--project", dir, "--undo"]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            original,
            "{client}: undo gives the bytes back"
        );
        // The key it minted is revoked, and the running gateway was told
        // (its admin socket): the same command is denied at once.
        let answer = run_hook(command, &fixture(client, event));
        assert_eq!(
            decision(&answer).0,
            "deny",
            "{client}: the revoked key still answers: {answer}"
        );
    }
    // A file that did not exist is removed again.
    cli(&["hooks", "install", "cursor", "--gateway", &gateway, "--yes"]);
    let user = home.path().join(".cursor/hooks.json");
    assert!(user.exists());
    cli(&["hooks", "install", "cursor", "--undo"]);
    assert!(!user.exists());
}

/// Runs an installed hook's command as its client does (`sh -c`, the event
/// on stdin); the JSON answer it prints.
fn run_hook(command: &str, event: &[u8]) -> Value {
    use std::io::Write as _;
    let mut child = std::process::Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(event).unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}
