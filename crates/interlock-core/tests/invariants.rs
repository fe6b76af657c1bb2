//! Each universal invariant, broken on purpose: the plan is rejected with an error
//! that names the invariant and the stage.

use std::sync::Arc;

use interlock_core::canon::{self, Value};
use interlock_core::{CustomInvariant, InvariantId, Plan, Policy, Violation, validate};

/// A valid two-stage plan; tests edit one thing in it.
const GOOD: &str = r#"
schema_version: interlock.plan/v1
plan_id: write-app-config
title: Write the app config
proposer: agent:deployer
created_at: "2026-11-29T12:00:00Z"
body:
  stages:
    - id: make-dir
      action: fs.make_dir
      target: /srv/app
      preconditions:
        - probe: fs.path_absent
      verify:
        - probe: fs.is_dir
      rollback: Remove the empty directory.
    - id: write-config
      action: fs.write_file
      target: /srv/app/app.toml
      params:
        content: "level = 'info'\n"
      preconditions:
        - probe: fs.path_absent
      verify:
        - probe: fs.file_contains
          params: { text: level }
      rollback: Delete the file.
"#;

fn doc(yaml: &str) -> Value {
    canon::parse_yaml(yaml.as_bytes()).expect("test plans are valid YAML")
}

/// Applies `edit` to GOOD's YAML and returns the violations.
fn violations(edit: impl Fn(&str) -> String, policy: &Policy) -> Vec<Violation> {
    let yaml = edit(GOOD);
    assert_ne!(yaml, GOOD, "the edit must change the plan");
    rejected(&yaml, policy)
}

fn rejected(yaml: &str, policy: &Policy) -> Vec<Violation> {
    validate(&doc(yaml), policy)
        .expect_err("the plan must be rejected")
        .0
}

fn assert_names(vs: &[Violation], invariant: InvariantId, stage: Option<&str>) {
    let hit = vs
        .iter()
        .find(|v| v.invariant == invariant)
        .unwrap_or_else(|| panic!("no {invariant} violation in {vs:#?}"));
    assert_eq!(hit.stage.as_deref(), stage, "{hit}");
    let text = hit.to_string();
    assert!(text.contains(&format!("[{invariant}]")), "{text}");
    if let Some(stage) = stage {
        assert!(text.contains(&format!("stage `{stage}`")), "{text}");
    }
}

#[test]
fn the_good_plan_passes() {
    let valid = validate(&doc(GOOD), &Policy::default()).expect("valid");
    assert_eq!(valid.plan.body.stages.len(), 2);
    assert_eq!(valid.hash, canon::digest(doc(GOOD).get("body").unwrap()));
}

#[test]
fn schema_valid_rejects_a_stage_without_a_target() {
    let vs = violations(
        |p| p.replacen("      target: /srv/app/app.toml\n", "", 1),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::SchemaValid, Some("write-config"));
    assert!(
        vs.iter().any(|v| v.path == "$.body.stages[1].target"),
        "{vs:#?}"
    );
}

#[test]
fn schema_valid_rejects_unknown_fields_and_wrong_types() {
    let vs = violations(
        |p| {
            p.replace(
                "      rollback: Delete the file.",
                "      rolback: Delete the file.",
            )
        },
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::SchemaValid, Some("write-config"));
    assert!(
        vs.iter()
            .any(|v| v.message.contains("unknown field `rolback`"))
    );
    let vs = violations(
        |p| p.replace("plan_id: write-app-config", "plan_id: 12"),
        &Policy::default(),
    );
    assert!(
        vs.iter()
            .any(|v| v.path == "$.plan_id" && v.message.contains("string")),
        "{vs:#?}"
    );
}

#[test]
fn hash_recomputes_rejects_a_stale_claimed_hash() {
    let wrong = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let vs = violations(
        |p| p.replace("title:", &format!("plan_hash: \"{wrong}\"\ntitle:")),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::HashRecomputes, None);
    // And the right claimed hash is accepted.
    let right = canon::digest(doc(GOOD).get("body").unwrap());
    let ok = GOOD.replace("title:", &format!("plan_hash: \"{right}\"\ntitle:"));
    validate(&doc(&ok), &Policy::default()).expect("matching claimed hash passes");
}

#[test]
fn unique_ids_known_actions_rejects_duplicates_unknown_actions_and_bad_params() {
    let vs = violations(
        |p| p.replace("id: write-config", "id: make-dir"),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::StagesKnown, Some("make-dir"));
    assert!(vs.iter().any(|v| v.message.contains("duplicate stage id")));

    let vs = violations(
        |p| p.replace("action: fs.write_file", "action: fs.write_fiel"),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::StagesKnown, Some("write-config"));
    assert!(
        vs.iter()
            .any(|v| v.message.contains("unknown action `fs.write_fiel`"))
    );

    let vs = violations(
        |p| p.replace("probe: fs.is_dir", "probe: fs.is_directory"),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::StagesKnown, Some("make-dir"));

    let vs = violations(|p| p.replace("content:", "contents:"), &Policy::default());
    assert_names(&vs, InvariantId::StagesKnown, Some("write-config"));
    assert!(
        vs.iter()
            .any(|v| v.path == "$.body.stages[1].params.content"),
        "{vs:#?}"
    );
}

#[test]
fn mutating_has_rollback() {
    let vs = violations(
        |p| p.replace("      rollback: Delete the file.\n", ""),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::MutatingHasRollback, Some("write-config"));
}

#[test]
fn mutating_has_preconditions() {
    let vs = violations(
        |p| {
            p.replacen(
                "      preconditions:\n        - probe: fs.path_absent\n      verify:\n        - probe: fs.file_contains",
                "      verify:\n        - probe: fs.file_contains",
                1,
            )
        },
        &Policy::default(),
    );
    assert_names(
        &vs,
        InvariantId::MutatingHasPreconditions,
        Some("write-config"),
    );
}

#[test]
fn read_only_stages_need_neither_rollback_nor_preconditions() {
    let plan = GOOD.replace(
        "  stages:\n",
        "  stages:\n    - id: look\n      action: fs.read_file\n      target: /srv/app/app.toml\n",
    );
    validate(&doc(&plan), &Policy::default()).expect("a read-only stage may stand alone");
}

fn policy(yaml: &str) -> Policy {
    Policy::from_value(&doc(yaml)).expect("test policy is valid")
}

#[test]
fn nothing_forbidden_rejects_forbidden_actions_and_targets() {
    let p = policy(
        "policy_version: interlock.policy/v1\nforbidden:\n  actions: ['fs.write_*']\n  targets: ['/etc/**']\n",
    );
    let vs = rejected(GOOD, &p);
    assert_names(&vs, InvariantId::NothingForbidden, Some("write-config"));
    assert!(vs.iter().any(|v| v.message.contains("fs.write_*")));

    let p = policy("policy_version: interlock.policy/v1\nforbidden:\n  targets: ['/etc/**']\n");
    let vs = violations(
        |p| p.replace("target: /srv/app\n", "target: /etc/nginx\n"),
        &p,
    );
    assert_names(&vs, InvariantId::NothingForbidden, Some("make-dir"));
    // `*` does not cross `/`; `**` does.
    let p = policy("policy_version: interlock.policy/v1\nforbidden:\n  targets: ['/srv/*']\n");
    let vs = rejected(GOOD, &p);
    assert_eq!(vs.len(), 1, "{vs:#?}");
    assert_names(&vs, InvariantId::NothingForbidden, Some("make-dir"));
}

#[test]
fn no_secrets_rejects_a_key_in_the_body() {
    let vs = violations(
        |p| p.replace("level = 'info'", "aws_key = 'AKIAIOSFODNN7EXAMPLE'"),
        &Policy::default(),
    );
    assert_names(&vs, InvariantId::NoSecrets, Some("write-config"));
    let text = vs.iter().map(ToString::to_string).collect::<String>();
    assert!(
        !text.contains("AKIAIOSFODNN7EXAMPLE"),
        "a finding must not repeat the secret"
    );
}

#[test]
fn every_violation_is_reported_at_once() {
    let vs = violations(
        |p| {
            p.replace("      rollback: Delete the file.\n", "")
                .replace("action: fs.make_dir", "action: fs.mkdirr")
                .replace("level = 'info'", "-----BEGIN RSA PRIVATE KEY-----")
        },
        &Policy::default(),
    );
    for inv in [
        InvariantId::StagesKnown,
        InvariantId::MutatingHasRollback,
        InvariantId::NoSecrets,
    ] {
        assert!(
            vs.iter().any(|v| v.invariant == inv),
            "{inv} missing in {vs:#?}"
        );
    }
}

#[test]
fn schema_extensions_are_typed_and_required() {
    let p = policy(
        "policy_version: interlock.policy/v1\nextensions:\n  - name: ticket\n    type: string\n    required: true\n    pattern: 'OPS-[0-9]+'\n",
    );
    let vs = rejected(GOOD, &p);
    assert!(
        vs.iter()
            .any(|v| v.path == "$.body.ticket" && v.invariant == InvariantId::SchemaValid)
    );
    let vs = violations(|p| p.replace("body:\n", "body:\n  ticket: OPS-12x\n"), &p);
    assert!(vs.iter().any(|v| v.message.contains("pattern")), "{vs:#?}");
    let ok = GOOD.replace("body:\n", "body:\n  ticket: OPS-42\n");
    let valid = validate(&doc(&ok), &p).expect("the extension field is accepted");
    assert_eq!(valid.plan.body.extensions["ticket"], Value::from("OPS-42"));
    // Without the extension declared, the same field is an unknown field.
    let vs = validate(&doc(&ok), &Policy::default()).unwrap_err().0;
    assert!(
        vs.iter()
            .any(|v| v.message.contains("unknown field `ticket`"))
    );
}

struct NoDeletesOnFriday;
impl CustomInvariant for NoDeletesOnFriday {
    fn name(&self) -> &str {
        "no-ensure-absent"
    }
    fn check(&self, plan: &Plan, _: &Policy) -> Vec<Violation> {
        plan.body
            .stages
            .iter()
            .filter(|s| s.action == "fs.ensure_absent")
            .map(|s| {
                Violation::custom(
                    self.name(),
                    Some(&s.id),
                    "$.body.stages",
                    "deletes are not allowed",
                )
            })
            .collect()
    }
}

#[test]
fn custom_invariants_run_and_change_the_policy_digest() {
    let p = Policy::default().with_invariant(Arc::new(NoDeletesOnFriday));
    assert_ne!(p.digest(), Policy::default().digest());
    let vs = violations(
        |p| p.replace("action: fs.make_dir", "action: fs.ensure_absent"),
        &p,
    );
    assert_names(
        &vs,
        InvariantId::Custom("no-ensure-absent".into()),
        Some("make-dir"),
    );
}

#[test]
fn policy_errors_name_their_path() {
    let errs = Policy::from_value(&doc(
        "policy_version: interlock.policy/v1\nactions:\n  - name: x\n    mutating: maybe\nforbidden:\n  targets: ['a[']\n",
    ))
    .unwrap_err();
    assert!(
        errs.iter().any(|e| e.path == "$.actions[0].mutating"),
        "{errs:#?}"
    );
    assert!(errs.iter().any(|e| e.path == "$.forbidden"), "{errs:#?}");
}

#[test]
fn risk_follows_the_riskiest_stage() {
    let valid = validate(&doc(GOOD), &Policy::default()).unwrap();
    assert_eq!(valid.risk.level, interlock_core::RiskLevel::Medium);
}
