//! Issue 40: each client's documented hook payloads (`tests/fixtures/hooks/`,
//! sources in its `SOURCES.md`) read into the tool use they describe, judged
//! by the native rules, and answered in the shape each client documents.

use std::path::PathBuf;

use interlock_hooks::{Answer, Client, HookError, NativeTool, Phase, answer, parse};
use interlock_inspect::{NativeContext, Severity, inspect_native};
use serde_json::{Value, json};

fn dir(client: Client) -> PathBuf {
    // The runner's manifest directory, not the compiled one: a build cache
    // shared between clones may hand this binary over from another clone.
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    PathBuf::from(manifest)
        .join("../../tests/fixtures/hooks")
        .join(client.slug())
}

/// Every event fixture of `client` (not its answers, config or paths).
fn events(client: Client) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir(client))
        .expect("the fixtures are there")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            !["answers", "config", "paths", "hooks."]
                .iter()
                .any(|x| n.starts_with(x))
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// What the rules say: whether anything high or critical is found.
fn stopped(event: &interlock_hooks::HookEvent) -> bool {
    let ctx = NativeContext {
        cwd: &event.cwd,
        project: event.project.as_deref(),
        home: Some("/home/user"),
    };
    let native = event.tool.actions().iter().any(|a| {
        inspect_native(a, &ctx)
            .iter()
            .any(|f| f.severity >= Severity::High)
    });
    let mcp = match &event.tool {
        NativeTool::Mcp { arguments, .. } => interlock_inspect::inspect_arguments(
            arguments,
            &interlock_inspect::ArgContext::with_roots([event.cwd.as_str()]),
        )
        .iter()
        .any(|f| f.severity >= Severity::High),
        _ => false,
    };
    native || mcp
}

#[test]
fn every_documented_payload_reads_into_its_tool_use() {
    let mut read = 0;
    for client in Client::ALL {
        let fixtures = events(client);
        assert!(fixtures.len() >= 5, "{client}: {} fixtures", fixtures.len());
        for (name, bytes) in fixtures {
            let event = match parse(client, &bytes) {
                Ok(e) => e,
                Err(HookError::NotAToolEvent { .. }) if name.starts_with("session_end") => continue,
                Err(e) => panic!("{client} {name}: {e}"),
            };
            read += 1;
            let expected_phase = if name.starts_with("post_") || name.starts_with("after_") {
                Phase::After
            } else if name.starts_with("permission_request") {
                Phase::Permission
            } else {
                Phase::Before
            };
            assert_eq!(event.phase, expected_phase, "{client} {name}");
            assert!(event.cwd.starts_with('/'), "{client} {name}");
            // The binding is stable and names the exact input.
            assert_eq!(
                event.input_hash(),
                parse(client, &bytes).unwrap().input_hash()
            );
            let should_stop = [
                "rm_rf_home",
                "_env",
                "metadata",
                "ssh_key",
                "mcp_stdio_tool",
                "command_server",
            ]
            .iter()
            .any(|k| name.contains(k));
            let benign = [
                "git_status",
                "edit_src",
                "replace_src",
                "_src.json",
                "docs_example",
            ]
            .iter()
            .any(|k| name.contains(k));
            if event.phase != Phase::After && should_stop {
                assert!(
                    stopped(&event),
                    "{client} {name} must be stopped: {:?}",
                    event.tool
                );
            }
            if benign {
                assert!(
                    !stopped(&event),
                    "{client} {name} must pass: {:?}",
                    event.tool
                );
            }
            if event.phase == Phase::After {
                assert!(event.outcome.is_some(), "{client} {name}");
            }
        }
    }
    assert!(read >= 30, "{read} payloads read");
}

fn documented(client: Client) -> Value {
    serde_json::from_slice(&std::fs::read(dir(client).join("answers.json")).unwrap()).unwrap()
}

/// The members of an answer, values of reasons and messages aside.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let reason =
                        k.contains("eason") || k.contains("message") || k == "systemMessage";
                    (k.clone(), if reason { json!("…") } else { shape(v) })
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn answers_have_each_clients_documented_shape() {
    let r = || "why".to_string();
    let allow = Answer::Allow { reason: r() };
    let deny = Answer::Deny { reason: r() };
    let ask = Answer::Ask { reason: r() };
    let claude = documented(Client::ClaudeCode);
    for (a, key) in [(&allow, "allow"), (&deny, "deny"), (&ask, "ask")] {
        assert_eq!(
            shape(&answer(Client::ClaudeCode, Phase::Before, "PreToolUse", a)),
            shape(&claude["pre_tool_use"][key]),
            "claude-code {key}"
        );
    }
    assert_eq!(
        answer(
            Client::ClaudeCode,
            Phase::Permission,
            "PermissionRequest",
            &allow
        ),
        claude["permission_request"]["allow"]
    );
    let cursor = documented(Client::Cursor);
    let section = &cursor["before_shell_execution_and_before_mcp_execution"];
    for (a, key) in [(&allow, "allow"), (&deny, "deny"), (&ask, "ask")] {
        assert_eq!(
            shape(&answer(
                Client::Cursor,
                Phase::Before,
                "beforeShellExecution",
                a
            )),
            shape(&section[key]),
            "cursor {key}"
        );
    }
    let codex = documented(Client::Codex);
    assert_eq!(
        shape(&answer(Client::Codex, Phase::Before, "PreToolUse", &deny)),
        shape(&codex["pre_tool_use"]["deny"])
    );
    // Codex has no PreToolUse allow: no decision is its "no objection".
    assert_eq!(
        answer(Client::Codex, Phase::Before, "PreToolUse", &allow),
        json!({})
    );
    let gemini = documented(Client::GeminiCli);
    for (a, key) in [(&allow, "allow"), (&deny, "deny")] {
        assert_eq!(
            shape(&answer(Client::GeminiCli, Phase::Before, "BeforeTool", a)),
            shape(&gemini["before_tool"][key]),
            "gemini-cli {key}"
        );
    }
    for client in Client::ALL {
        assert_eq!(answer(client, Phase::After, "x", &allow), json!({}));
    }
}

/// Hostile bodies get a clear error, never a panic or a guess.
#[test]
fn malformed_events_are_refused_clearly() {
    for (body, want) in [
        (&b"not json"[..], "not valid JSON"),
        (b"[1]", "not a JSON object"),
        (b"{\"tool_name\":\"Bash\"}", "hook_event_name"),
        (
            b"{\"hook_event_name\":\"PreToolUse\",\"hook_event_name\":\"PreToolUse\"}",
            "not valid JSON",
        ),
        (
            b"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}",
            "cwd",
        ),
    ] {
        let e = parse(Client::ClaudeCode, body).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
}
