//! Helpers shared by the adapter tests: stages and checks built directly from their
//! public fields, with params written as JSON for readability.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use interlock_adapters::{AdapterConfig, Adapters, CommandRule};
use interlock_canon::{Map, Value};
use interlock_core::{Check, Rollback, Stage};

pub fn params(json: &str) -> Map {
    match interlock_canon::parse_json(json.as_bytes()).expect("test params are JSON") {
        Value::Object(m) => m,
        other => panic!("params must be an object, got {other:?}"),
    }
}

pub fn stage(action: &str, target: impl AsRef<Path>, json: &str) -> Stage {
    Stage {
        id: "s1".into(),
        action: action.into(),
        target: target.as_ref().display().to_string(),
        target_object: None,
        params: params(json),
        preconditions: Vec::new(),
        verify: Vec::new(),
        rollback: Some(Rollback::Described("described by hand".into())),
    }
}

pub fn check(probe: &str, json: &str) -> Check {
    Check {
        probe: probe.into(),
        target: None,
        target_object: None,
        params: params(json),
        description: None,
        expect: None,
    }
}

/// A configuration confined to `root`, allowing `programs` (absolute paths).
pub fn config(root: &Path, programs: &[&str]) -> AdapterConfig {
    AdapterConfig {
        fs_roots: vec![root.to_path_buf()],
        commands: programs
            .iter()
            .map(|p| CommandRule::new(p).expect("test program exists"))
            .collect(),
        command_timeout: Duration::from_secs(10),
        output_cap: 64 * 1024,
        ..AdapterConfig::default()
    }
}

pub fn adapters(config: &AdapterConfig) -> Adapters {
    Adapters::builtin(config).expect("valid test config")
}

/// Runs a probe against `target` through the registry.
pub async fn probe(
    a: &Adapters,
    check: &Check,
    target: impl AsRef<Path>,
) -> interlock_adapters::ProbeOutcome {
    let target = target.as_ref().display().to_string();
    a.prober(&check.probe)
        .expect("prober registered")
        .probe(check, &target)
        .await
}

pub fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key)
        .unwrap_or_else(|| panic!("detail has no `{key}`: {v:?}"))
}

pub fn int_field(v: &Value, key: &str) -> i64 {
    field(v, key)
        .as_number()
        .and_then(|n| n.as_i64())
        .expect("integer field")
}

pub fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    field(v, key).as_str().expect("string field")
}

/// Whether this process bypasses file permissions (root in a container): tests of
/// "permission denied" cannot observe a denial then and skip that part.
pub fn permissions_bypassed(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let locked = dir.join("locked-probe");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let bypassed = std::fs::read_dir(&locked).is_ok();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir(&locked).unwrap();
    bypassed
}
