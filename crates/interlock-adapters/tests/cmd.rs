//! The argv-command executor and prober with real programs.

mod common;

use std::time::{Duration, Instant};

use common::*;
use interlock_adapters::{AdapterConfig, CommandRule, ConfigError, ExecError, ProbeOutcome};
use interlock_canon::Value;

fn argv(args: &[&str]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| Value::String((*a).to_owned()))
        .map(|v| interlock_canon::canonical_string(&v))
        .collect();
    format!(r#"{{"argv": [{}]}}"#, quoted.join(","))
}

#[tokio::test]
async fn runs_an_allow_listed_program_and_captures_its_output() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &["/bin/echo"]));
    let out = a
        .execute(&stage("cmd.run", "/bin/echo", &argv(&["hello", "world"])))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "stdout"), "hello world\n");
    assert_eq!(int_field(&out.detail, "exit_code"), 0);
    assert_eq!(int_field(&out.detail, "stdout_bytes"), 12);
    assert_eq!(field(&out.detail, "stdout_truncated"), &Value::Bool(false));
    assert_eq!(str_field(&out.detail, "stderr"), "");
}

#[tokio::test]
async fn shell_metacharacters_are_plain_arguments() {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("marker");
    let a = adapters(&config(root.path(), &["/bin/echo"]));
    let touch = format!("; touch {}", marker.display());
    let out = a
        .execute(&stage(
            "cmd.run",
            "/bin/echo",
            &argv(&[
                "hello; rm -rf /tmp/x",
                "$(id)",
                "`id`",
                "*",
                &touch,
                "|",
                "cat",
            ]),
        ))
        .await
        .unwrap();
    assert_eq!(
        str_field(&out.detail, "stdout"),
        format!("hello; rm -rf /tmp/x $(id) `id` * {touch} | cat\n")
    );
    assert!(!marker.exists(), "no shell ran the `touch`");
}

#[tokio::test]
async fn a_program_not_allow_listed_is_forbidden_and_never_spawned() {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("marker");
    let a = adapters(&config(root.path(), &["/bin/echo"]));
    let m = marker.display().to_string();
    for target in ["/usr/bin/touch", "touch", "/bin/../usr/bin/touch"] {
        let err = a
            .execute(&stage("cmd.run", target, &argv(&[&m])))
            .await
            .unwrap_err();
        assert!(matches!(err, ExecError::Forbidden(_)), "{target}: {err:?}");
    }
    assert!(!marker.exists());
    // No configured commands at all: nothing runs.
    let none = adapters(&config(root.path(), &[]));
    let err = none
        .execute(&stage("cmd.run", "/bin/echo", &argv(&["x"])))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
}

#[tokio::test]
async fn programs_by_name_resolve_at_configuration_time() {
    let rule = CommandRule::new("echo").unwrap();
    assert!(rule.program.is_absolute(), "{rule:?}");
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&AdapterConfig {
        commands: vec![rule.clone()],
        ..config(root.path(), &[])
    });
    for target in ["echo".to_owned(), rule.program.display().to_string()] {
        let out = a
            .execute(&stage("cmd.run", &target, &argv(&["hi"])))
            .await
            .unwrap();
        assert_eq!(str_field(&out.detail, "stdout"), "hi\n");
        assert_eq!(
            str_field(&out.detail, "program"),
            rule.program.display().to_string()
        );
    }
    assert!(matches!(
        CommandRule::new("no-such-program-interlock"),
        Err(ConfigError::ProgramNotFound(_))
    ));
    assert!(matches!(
        CommandRule::new("./echo"),
        Err(ConfigError::ProgramNotAbsolute(_))
    ));
    assert!(matches!(
        CommandRule::new("/no/such/program"),
        Err(ConfigError::ProgramNotFound(_))
    ));
}

#[tokio::test]
async fn an_argv_prefix_narrows_a_rule() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&AdapterConfig {
        commands: vec![
            CommandRule::new("/bin/echo")
                .unwrap()
                .with_argv_prefix(["-n"]),
        ],
        ..config(root.path(), &[])
    });
    let out = a
        .execute(&stage("cmd.run", "/bin/echo", &argv(&["-n", "x"])))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "stdout"), "x");
    let err = a
        .execute(&stage("cmd.run", "/bin/echo", &argv(&["x"])))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
}

#[tokio::test]
async fn a_timeout_kills_the_command() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &["/bin/sleep"]));
    let started = Instant::now();
    let err = a
        .execute(&stage(
            "cmd.run",
            "/bin/sleep",
            r#"{"argv": ["5"], "timeout_ms": 200}"#,
        ))
        .await
        .unwrap_err();
    assert_eq!(err, ExecError::Timeout { timeout_ms: 200 });
    // Liveness, not performance: the 5 s sleep must not be waited for.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// Whether any live process has `needle` as one of its arguments.
fn process_with_arg(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| {
            cmdline
                .split(|&b| b == 0)
                .any(|arg| arg == needle.as_bytes())
        })
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let root = tempfile::tempdir().unwrap();
    // `find -exec` forks a child, so the sleep is a grandchild of nobody we wait on.
    let a = adapters(&config(root.path(), &["/usr/bin/find"]));
    let unique = format!("29.{}", std::process::id());
    let started = Instant::now();
    let err = a
        .execute(&stage(
            "cmd.run",
            "/usr/bin/find",
            &format!(
                r#"{{"argv": ["/", "-maxdepth", "0", "-exec", "/bin/sleep", "{unique}", ";"], "timeout_ms": 500}}"#
            ),
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // SIGKILL is asynchronous; give the kernel a moment to tear the process down.
    let deadline = Instant::now() + Duration::from_secs(3);
    while process_with_arg(&unique) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!process_with_arg(&unique), "the grandchild sleep survived");
}

#[tokio::test]
async fn output_is_capped_keeping_the_head() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&AdapterConfig {
        output_cap: 1024,
        ..config(root.path(), &["/usr/bin/seq"])
    });
    let out = a
        .execute(&stage("cmd.run", "/usr/bin/seq", &argv(&["1", "1000000"])))
        .await
        .unwrap();
    let stdout = str_field(&out.detail, "stdout");
    assert_eq!(stdout.len(), 1024);
    assert!(stdout.starts_with("1\n2\n3\n"));
    assert_eq!(field(&out.detail, "stdout_truncated"), &Value::Bool(true));
    let total: i64 = (1..=1_000_000i64)
        .map(|n| n.to_string().len() as i64 + 1)
        .sum();
    assert_eq!(int_field(&out.detail, "stdout_bytes"), total);
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_with_the_stderr_tail() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &["/bin/false", "/bin/ls"]));
    let err = a
        .execute(&stage("cmd.run", "/bin/false", &argv(&[])))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecError::NonZeroExit { code: Some(1), .. }),
        "{err:?}"
    );
    let err = a
        .execute(&stage(
            "cmd.run",
            "/bin/ls",
            &argv(&["/no-such-path-interlock"]),
        ))
        .await
        .unwrap_err();
    match err {
        ExecError::NonZeroExit {
            code: Some(c),
            stderr_tail,
        } => {
            assert_ne!(c, 0);
            assert!(
                stderr_tail.contains("no-such-path-interlock"),
                "{stderr_tail}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_environment_is_cleared_and_stdin_is_null() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &["/usr/bin/env", "/bin/cat"]));
    let out = a
        .execute(&stage("cmd.run", "/usr/bin/env", &argv(&[])))
        .await
        .unwrap();
    for line in str_field(&out.detail, "stdout").lines() {
        let key = line.split('=').next().unwrap();
        assert!(["PATH", "HOME", "LANG"].contains(&key), "leaked {line}");
    }
    // `cat` with no arguments reads stdin: it ends at once on /dev/null.
    let out = a
        .execute(&stage(
            "cmd.run",
            "/bin/cat",
            r#"{"argv": [], "timeout_ms": 5000}"#,
        ))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "stdout"), "");
}

#[tokio::test]
async fn cwd_and_timeout_params_are_checked() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &["/bin/pwd", "/bin/echo"]));
    let sub = root.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = a
        .execute(&stage(
            "cmd.run",
            "/bin/pwd",
            &format!(r#"{{"argv": [], "cwd": "{}"}}"#, sub.display()),
        ))
        .await
        .unwrap();
    assert_eq!(
        str_field(&out.detail, "stdout").trim_end(),
        std::fs::canonicalize(&sub).unwrap().display().to_string()
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let err = a
        .execute(&stage(
            "cmd.run",
            "/bin/pwd",
            &format!(r#"{{"argv": [], "cwd": "{}"}}"#, elsewhere.path().display()),
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    for bad in [
        r#"{"argv": [], "timeout_ms": 0}"#,
        r#"{"argv": [], "timeout_ms": 10001}"#,
        r#"{"argv": [], "cwd": "relative"}"#,
        r#"{"argv": ["x", 1]}"#,
        r#"{}"#,
    ] {
        let err = a
            .execute(&stage("cmd.run", "/bin/echo", bad))
            .await
            .unwrap_err();
        assert!(matches!(err, ExecError::InvalidParams(_)), "{bad}: {err:?}");
    }
}

fn exit_code(args: &[&str], code: i64) -> interlock_core::Check {
    let quoted: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    check(
        "cmd.exit_code",
        &format!(r#"{{"argv": [{}], "code": {code}}}"#, quoted.join(",")),
    )
}

#[tokio::test]
async fn exit_code_probe() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&AdapterConfig {
        command_timeout: Duration::from_millis(300),
        ..config(root.path(), &["/bin/true", "/bin/false", "/bin/sleep"])
    });
    let o = probe(&a, &exit_code(&[], 0), "/bin/true").await;
    assert!(matches!(o, ProbeOutcome::Met { .. }), "{o:?}");
    let o = probe(&a, &exit_code(&[], 0), "/bin/false").await;
    assert!(matches!(o, ProbeOutcome::Unmet { .. }), "{o:?}");
    let o = probe(&a, &exit_code(&[], 1), "/bin/false").await;
    assert!(matches!(o, ProbeOutcome::Met { .. }), "{o:?}");
    // Not allow-listed: unprobeable, even when the expected code is "failure".
    let o = probe(&a, &exit_code(&[], 1), "/bin/ls").await;
    assert!(matches!(o, ProbeOutcome::Unprobeable { .. }), "{o:?}");
    // Ran too long: unprobeable.
    let started = Instant::now();
    let o = probe(&a, &exit_code(&["5"], 0), "/bin/sleep").await;
    assert!(matches!(o, ProbeOutcome::Unprobeable { .. }), "{o:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // Bad params.
    let o = probe(&a, &check("cmd.exit_code", r#"{"argv": []}"#), "/bin/true").await;
    assert!(matches!(o, ProbeOutcome::Unprobeable { .. }), "{o:?}");
    let o = probe(
        &a,
        &check("cmd.exit_code", r#"{"argv": [], "code": 0.5}"#),
        "/bin/true",
    )
    .await;
    assert!(matches!(o, ProbeOutcome::Unprobeable { .. }), "{o:?}");
}
