//! The adapter registry, and a whole plan run through it the way the engine will.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::*;
use interlock_adapters::{
    AdapterConfig, Adapters, ConfigError, ExecError, ExecOutcome, Executor, ProbeOutcome,
};
use interlock_canon::Value;
use interlock_core::{Plan, Registry, Stage};

#[test]
fn builtin_serves_exactly_the_documented_fs_and_cmd_names() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &[]));
    assert_eq!(
        a.actions().collect::<Vec<_>>(),
        [
            "cmd.run",
            "fs.ensure_absent",
            "fs.make_dir",
            "fs.read_file",
            "fs.write_file",
            // A coding agent's held tool use (issue 40): acts on nothing here.
            "hook.permit",
            // A held request to a model (issue 42): acts on nothing here.
            "llm.permit"
        ]
    );
    assert_eq!(
        a.probes().collect::<Vec<_>>(),
        [
            "cmd.exit_code",
            "fs.file_contains",
            "fs.file_sha256",
            "fs.is_dir",
            "fs.path_absent",
            "fs.path_exists"
        ]
    );
    assert!(a.unregistered(&Registry::builtin()).is_empty());
    assert_eq!(
        a.unregistered(&Registry::empty()).len(),
        a.actions().count() + a.probes().count()
    );
    // HTTP and MCP are other adapters' business.
    assert!(a.executor("http.get").is_none());
    assert!(a.prober("mcp.tool_result").is_none());
}

#[tokio::test]
async fn missing_adapters_halt_rather_than_skip() {
    let a = Adapters::new();
    let s = stage("fs.write_file", "/tmp/x", r#"{"content": "x"}"#);
    let err = a.execute(&s).await.unwrap_err();
    assert!(matches!(err, ExecError::Unsupported(_)), "{err:?}");
    let o = a.probe(&check("fs.path_absent", "{}"), &s).await;
    assert!(matches!(o, ProbeOutcome::Unprobeable { .. }), "{o:?}");
}

struct Fake;

#[async_trait]
impl Executor for Fake {
    fn actions(&self) -> Vec<&'static str> {
        vec!["fs.write_file", "k8s.rollout_restart"]
    }
    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        Ok(ExecOutcome {
            summary: format!("fake {}", stage.action),
            detail: Value::Object(Default::default()),
            output: None,
        })
    }
}

#[tokio::test]
async fn a_later_executor_replaces_a_builtin_and_unregistered_names_are_reported() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &[])).with_executor(Arc::new(Fake));
    let out = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("f"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap();
    assert_eq!(out.summary, "fake fs.write_file");
    assert!(!root.path().join("f").exists());
    assert_eq!(
        a.unregistered(&Registry::builtin()),
        ["action k8s.rollout_restart"]
    );
}

#[test]
fn unusable_roots_are_configuration_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    for (roots, want_absolute) in [
        (vec!["relative".into()], true),
        (vec![dir.path().join("missing")], false),
        (vec![file], false),
    ] {
        let err = Adapters::builtin(&AdapterConfig {
            fs_roots: roots,
            ..AdapterConfig::default()
        })
        .unwrap_err();
        if want_absolute {
            assert!(matches!(err, ConfigError::RootNotAbsolute(_)), "{err:?}");
        } else {
            assert!(matches!(err, ConfigError::RootUnusable { .. }), "{err:?}");
        }
    }
    let err = Adapters::builtin(&AdapterConfig {
        command_timeout: std::time::Duration::ZERO,
        ..AdapterConfig::default()
    })
    .unwrap_err();
    assert_eq!(err, ConfigError::ZeroTimeout);
}

/// The plan of docs/SCHEMA.md's test vector, pointed at a temp dir, run stage by
/// stage as the engine does: preconditions, dispatch, verify.
#[tokio::test]
async fn the_schema_example_plan_runs_through_the_adapters() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("interlock/hello.txt");
    let doc = format!(
        r#"{{
          "schema_version": "interlock.plan/v1",
          "plan_id": "vector-1",
          "title": "Write a greeting",
          "proposer": "agent:test",
          "created_at": "2026-01-31T12:00:00Z",
          "body": {{ "stages": [
            {{ "id": "dir", "action": "fs.make_dir", "target": "{dir}",
               "preconditions": [ {{ "probe": "fs.path_absent" }} ],
               "verify": [ {{ "probe": "fs.is_dir" }} ],
               "rollback": "Remove the directory." }},
            {{ "id": "greet", "action": "fs.write_file", "target": "{file}",
               "params": {{ "content": "héllo, wörld €\n", "mode": 420 }},
               "preconditions": [ {{ "probe": "fs.path_absent" }} ],
               "verify": [
                 {{ "probe": "fs.file_contains", "params": {{ "text": "héllo" }} }},
                 {{ "probe": "fs.file_sha256", "params": {{ "sha256": "{sha}" }} }}
               ],
               "rollback": "Delete the file." }}
          ] }}
        }}"#,
        dir = target.parent().unwrap().display(),
        file = target.display(),
        sha = interlock_canon::Digest::of_bytes("héllo, wörld €\n".as_bytes()),
    );
    let value = interlock_canon::parse_json(doc.as_bytes()).unwrap();
    let plan = Plan::from_value(&value, &[]).unwrap();
    let a = adapters(&config(root.path(), &[]));
    for stage in &plan.body.stages {
        for c in &stage.preconditions {
            let o = a.probe(c, stage).await;
            assert!(o.is_met(), "{} precondition {}: {o}", stage.id, c.probe);
        }
        a.execute(stage).await.unwrap();
        for c in &stage.verify {
            let o = a.probe(c, stage).await;
            assert!(o.is_met(), "{} verify {}: {o}", stage.id, c.probe);
        }
    }
    // Run again: the preconditions now fail closed, nothing is dispatched.
    let first = &plan.body.stages[0];
    let o = a.probe(&first.preconditions[0], first).await;
    assert!(matches!(o, ProbeOutcome::Unmet { .. }), "{o:?}");
}
