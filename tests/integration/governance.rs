//! The governance loop through the binary: the demo, the reviewer CLI with a key in
//! the real OS keychain, and `audit verify` against a tampered database file.

use std::path::Path;
use std::process::Command;

use crate::util::{approve_as_shown, interlock, interlock_with, stderr, stdout};

fn run_demo(dir: &Path) {
    let out = interlock(&["demo", "--data-dir", dir.to_str().unwrap()], None);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    for needle in [
        "state: PROPOSED — nothing has run",
        "state: APPROVED",
        "state: SUCCEEDED",
        "contains: level = \"info\"",
        "verifies against the signed checkpoint",
        "execute refused",
        "the statement is for plan hash",
        "has already been executed",
        "log OK",
    ] {
        assert!(text.contains(needle), "`{needle}` missing:\n{text}");
    }
}

#[test]
fn demo_runs_the_whole_loop_and_leaves_an_auditable_log() {
    let dir = tempfile::tempdir().unwrap();
    run_demo(dir.path());
    let out = interlock(
        &[
            "audit",
            "verify",
            "--data-dir",
            dir.path().to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("log OK"), "{}", stdout(&out));
    // Without --data-dir the demo needs nothing at all and cleans up after itself.
    let out = interlock(&["demo"], None);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Runs SQL against the database file with Python's sqlite3 — a different program
/// than Interlock, as an attacker with write access to the file would use.
fn tamper(db: &Path, sql: &str) {
    let status = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()",
            db.to_str().unwrap(),
            sql,
        ])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "tampering failed: {sql}");
}

#[test]
fn audit_verify_names_edited_dropped_and_reordered_entries_in_the_database_file() {
    let cases = [
        (
            // One character of the statement (its predicate's type).
            r#"UPDATE log_leaves SET data = CAST(REPLACE(CAST(data AS TEXT), '"type":"', '"type":"x') AS BLOB) WHERE idx = 3;"#,
            "3",
        ),
        ("DELETE FROM log_leaves WHERE idx = 5;", "5"),
        (
            "UPDATE log_leaves SET idx = 1000000 WHERE idx = 2; UPDATE log_leaves SET idx = 2 WHERE idx = 4; UPDATE log_leaves SET idx = 4 WHERE idx = 1000000;",
            "2",
        ),
        (
            "UPDATE log_checkpoints SET root = zeroblob(32) WHERE size = (SELECT MAX(size) FROM log_checkpoints);",
            "checkpoint",
        ),
    ];
    for (sql, named) in cases {
        let dir = tempfile::tempdir().unwrap();
        run_demo(dir.path());
        tamper(&dir.path().join("interlock.sqlite"), sql);
        let out = interlock(
            &[
                "audit",
                "verify",
                "--data-dir",
                dir.path().to_str().unwrap(),
            ],
            None,
        );
        let report = stdout(&out) + &stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{sql}\n{report}");
        assert!(
            report.contains(named),
            "{sql}: `{named}` not named in\n{report}"
        );
    }
}

fn write_plan(dir: &Path, workspace: &Path) -> std::path::PathBuf {
    let target = workspace.join("notes.txt");
    let plan = serde_json::json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": "ci-write-notes",
        "title": "Write the release notes",
        "proposer": "agent:ci",
        "created_at": "2026-11-29T12:00:00Z",
        "body": { "stages": [{
            "id": "write",
            "action": "fs.write_file",
            "target": target.to_str().unwrap(),
            "params": { "content": "v1.0\n" },
            "preconditions": [{ "probe": "fs.path_absent" }],
            "verify": [{ "probe": "fs.file_contains", "params": { "text": "v1.0" } }],
            "rollback": "Delete the notes file."
        }]}
    });
    let path = dir.join("plan.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&plan).unwrap()).unwrap();
    path
}

/// The reviewer path of issue 3 with the approver key in the real OS keychain
/// (gnome-keyring over D-Bus; `scripts/test` runs the tests inside
/// `scripts/with-keyring`).
#[test]
fn the_reviewer_cli_approves_with_a_keychain_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let service = format!("interlock-test-{}", std::process::id());
    let env = [
        ("INTERLOCK_DATA_DIR", data.to_str().unwrap()),
        ("INTERLOCK_KEYCHAIN_SERVICE", service.as_str()),
    ];
    let run = |args: &[&str]| interlock_with(args, None, &env);

    let out = run(&["keys", "init", "--identity", "human:ci-reviewer"]);
    assert!(out.status.success(), "keys init: {}", stderr(&out));
    assert!(stdout(&out).contains("fingerprint"));
    let shown = run(&["keys", "show", "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let key: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(key["public_key"].as_str().unwrap().len(), 64);
    // A second init must not replace the key.
    assert_eq!(run(&["keys", "init"]).status.code(), Some(2));

    let plan = write_plan(dir.path(), &data.join("workspace"));
    let out = run(&["plan", "propose", plan.to_str().unwrap()]);
    assert!(out.status.success(), "propose: {}", stderr(&out));
    let listed = run(&["plans", "list", "--status", "proposed", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(list[0]["plan_id"], "ci-write-notes");
    let hash = list[0]["plan_hash"].as_str().unwrap().to_owned();

    // Not approved yet: execution is refused and nothing is written.
    let out = run(&["plan", "execute", "ci-write-notes"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!data.join("workspace/notes.txt").exists());

    let shown = run(&["plans", "show", "ci-write-notes"]);
    assert!(stdout(&shown).contains(&hash), "{}", stdout(&shown));
    let out = approve_as_shown(
        "plans",
        "ci-write-notes",
        "notes look right",
        &["--expires", "10m"],
        &env,
    );
    assert!(
        out.status.success(),
        "approve: {}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("APPROVED"), "{}", stdout(&out));

    let out = run(&["plan", "execute", "ci-write-notes"]);
    assert!(
        out.status.success(),
        "execute: {}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(data.join("workspace/notes.txt")).unwrap(),
        "v1.0\n"
    );
    let again = run(&["plan", "execute", "ci-write-notes"]);
    assert_eq!(again.status.code(), Some(1));

    let out = run(&["audit", "verify"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_revised_plan_shows_its_diff_and_needs_a_new_approval() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let service = format!("interlock-test-diff-{}", std::process::id());
    let env = [
        ("INTERLOCK_DATA_DIR", data.to_str().unwrap()),
        ("INTERLOCK_KEYCHAIN_SERVICE", service.as_str()),
    ];
    let run = |args: &[&str]| interlock_with(args, None, &env);
    assert!(
        run(&["keys", "init", "--identity", "human:ci"])
            .status
            .success()
    );
    let plan = write_plan(dir.path(), &data.join("workspace"));
    assert!(
        run(&["plan", "propose", plan.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        approve_as_shown("plans", "ci-write-notes", "ok", &[], &env)
            .status
            .success()
    );
    let edited = std::fs::read_to_string(&plan)
        .unwrap()
        .replace("v1.0\\n", "v2.0\\n");
    std::fs::write(&plan, edited).unwrap();
    assert!(
        run(&["plan", "propose", plan.to_str().unwrap()])
            .status
            .success()
    );
    let shown = stdout(&run(&["plans", "show", "ci-write-notes"]));
    assert!(
        shown.contains("-        \"content\": \"v1.0\\n\""),
        "{shown}"
    );
    assert!(
        shown.contains("+        \"content\": \"v2.0\\n\""),
        "{shown}"
    );
    let out = run(&["plan", "execute", "ci-write-notes"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the old approval must not carry over"
    );
}

/// Reading needs no key: `plans list|show`, `audit verify` and `receipts show` work
/// on a machine with no keychain at all (here: a session bus address that leads
/// nowhere), so a reviewer can look before they can sign.
#[test]
fn reading_plans_and_the_log_needs_no_keychain() {
    let dir = tempfile::tempdir().unwrap();
    run_demo(dir.path());
    let data = dir.path().to_str().unwrap();
    let nowhere = format!("unix:path={}/no-bus", data);
    let env = [("DBUS_SESSION_BUS_ADDRESS", nowhere.as_str())];
    for args in [
        &["plans", "list", "--data-dir", data][..],
        &["plans", "show", "demo-write-config", "--data-dir", data],
        &["audit", "verify", "--data-dir", data],
        &["receipts", "show", "0", "--data-dir", data],
    ] {
        let out = interlock_with(args, None, &env);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let listed = stdout(&interlock_with(
        &["plans", "list", "--data-dir", data],
        None,
        &env,
    ));
    assert!(
        listed.contains("SUCCEEDED") && listed.contains("demo-write-config"),
        "{listed}"
    );
    // Signing does need it, and says how to get one.
    let out = interlock_with(
        &[
            "plans",
            "approve",
            "demo-edit-after-approval",
            "--reason",
            "x",
            "--data-dir",
            data,
        ],
        None,
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Secret Service"), "{}", stderr(&out));
}
