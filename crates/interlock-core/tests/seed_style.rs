//! Issue 23: plans as expressive as the seed's. The seed-style example plan under
//! its policy validates; each new field is broken on purpose and rejected with the
//! invariant and path; every old-style plan and policy keeps its hash and digest
//! shape; and a halted plan's rollback plan is built from its compensating stages.

use interlock_core::canon::{self, Value};
use interlock_core::rollback::{RollbackPlanError, rollback_plan};
use interlock_core::{
    InvariantId, Plan, PlanSchema, Policy, RiskLevel, Rollback, Violation, validate,
};

fn repo_file(rel: &str) -> String {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    std::fs::read_to_string(dir.join("../..").join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(s: &str) -> Value {
    canon::parse_yaml(s.as_bytes()).expect("test documents are valid YAML")
}

fn seed_policy() -> Policy {
    Policy::from_value(&yaml(&repo_file("examples/policies/seed-style.yaml")))
        .expect("the seed-style policy reads")
}

fn seed_plan() -> String {
    repo_file("examples/plans/seed-style.yaml")
}

fn rejected(plan: &str, policy: &Policy) -> Vec<Violation> {
    validate(&yaml(plan), policy)
        .expect_err("the plan must be rejected")
        .0
}

/// The violation of `invariant` at exactly `path`, or a panic listing them all.
fn at<'a>(vs: &'a [Violation], invariant: InvariantId, path: &str) -> &'a Violation {
    vs.iter()
        .find(|v| v.invariant == invariant && v.path == path)
        .unwrap_or_else(|| panic!("no {invariant} violation at {path} in {vs:#?}"))
}

fn edit(from: &str, to: &str) -> String {
    let plan = seed_plan();
    assert!(plan.contains(from), "the seed plan contains {from:?}");
    plan.replacen(from, to, 1)
}

#[test]
fn the_seed_style_plan_validates_with_every_new_field_read() {
    let valid = validate(&yaml(&seed_plan()), &seed_policy()).expect("valid");
    let stages = &valid.plan.body.stages;
    assert_eq!(
        valid.risk.level,
        RiskLevel::High,
        "svc.migrate is high risk"
    );
    // The object target: kind and fields kept, its id is what adapters act on.
    let t = stages[0].target_object.as_ref().unwrap();
    assert_eq!((t.kind.as_str(), t.id.as_str()), ("service", "checkout"));
    assert_eq!(stages[0].target, "checkout");
    assert_eq!(t.fields.get("namespace"), Some(&"shop".into()));
    // A compensating stage, read like a stage, and an irreversible one.
    match &stages[0].rollback {
        Some(Rollback::Compensate(undo)) => {
            assert_eq!(undo.action, "svc.scale");
            assert_eq!(undo.preconditions.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &stages[1].rollback,
        Some(Rollback::Irreversible { justification }) if justification.contains("backup")
    ));
    let e = stages[0].preconditions[0].expect.as_ref().unwrap();
    assert_eq!(e.to_string(), "at_least 2");
}

#[test]
fn regression_compensating_stage_is_validated_like_any_stage() {
    let policy = seed_policy();
    // An unknown action in the compensation.
    let vs = rejected(
        &edit(
            "      rollback:\n        action: svc.scale",
            "      rollback:\n        action: svc.resize",
        ),
        &policy,
    );
    at(
        &vs,
        InvariantId::StagesKnown,
        "$.body.stages[0].rollback.action",
    );
    // A mutating compensation without preconditions.
    let vs = rejected(
        &edit(
            "        params: { replicas: 2 }\n        preconditions:\n          - { probe: svc.healthy_replicas, expect: { op: at_least, value: 1 } }\n",
            "        params: { replicas: 2 }\n",
        ),
        &policy,
    );
    at(
        &vs,
        InvariantId::MutatingHasPreconditions,
        "$.body.stages[0].rollback.preconditions",
    );
    // Bad params, and a forbidden target, in the compensation.
    let vs = rejected(
        &edit("params: { replicas: 2 }", "params: { replicas: two }"),
        &policy,
    );
    at(
        &vs,
        InvariantId::StagesKnown,
        "$.body.stages[0].rollback.params.replicas",
    );
    let plan = seed_plan().replacen(
        "        target: { kind: service, id: checkout, namespace: shop }\n        params: { replicas: 2 }",
        "        target: { kind: service, id: prod-checkout, namespace: shop }\n        params: { replicas: 2 }",
        1,
    );
    let vs = rejected(&plan, &policy);
    at(
        &vs,
        InvariantId::NothingForbidden,
        "$.body.stages[0].rollback.target",
    );
}

#[test]
fn regression_irreversible_needs_true_and_a_justification() {
    let policy = seed_policy();
    let vs = rejected(
        &edit(
            "        justification: The migration drops a column; restoring it means restoring the backup.\n",
            "",
        ),
        &policy,
    );
    at(
        &vs,
        InvariantId::SchemaValid,
        "$.body.stages[1].rollback.justification",
    );
    let vs = rejected(&edit("irreversible: true", "irreversible: false"), &policy);
    at(
        &vs,
        InvariantId::SchemaValid,
        "$.body.stages[1].rollback.irreversible",
    );
    let vs = rejected(
        &edit("irreversible: true", "irreversible: true\n        note: x"),
        &policy,
    );
    at(
        &vs,
        InvariantId::SchemaValid,
        "$.body.stages[1].rollback.note",
    );
}

#[test]
fn mutating_stage_without_any_rollback_is_still_rejected() {
    let plan = seed_plan();
    let from = plan.find("      rollback:\n        irreversible").unwrap();
    let to = plan[from..].find("    - id: cutover").unwrap() + from;
    let vs = rejected(&format!("{}{}", &plan[..from], &plan[to..]), &seed_policy());
    at(
        &vs,
        InvariantId::MutatingHasRollback,
        "$.body.stages[1].rollback",
    );
}

#[test]
fn regression_expectation_that_cannot_be_evaluated_is_rejected_at_validation() {
    let policy = seed_policy();
    let cases = [
        // An ordering of a string against a number probe.
        (
            "{ op: at_least, value: 2 } }\n      verify",
            "{ op: at_least, value: two } }\n      verify",
            "$.body.stages[0].preconditions[0].expect",
        ),
        // `matches` on a number.
        (
            "{ op: at_least, value: 2 } }\n      verify",
            "{ op: matches, value: \"2\" } }\n      verify",
            "$.body.stages[0].preconditions[0].expect",
        ),
        // Not a version.
        (
            "{ op: at_least, value: \"1.4\" }",
            "{ op: at_least, value: latest }",
            "$.body.stages[1].preconditions[0].expect",
        ),
        // An unknown operator.
        (
            "{ op: at_least, value: \"1.4\" }",
            "{ op: newer_than, value: \"1.4\" }",
            "$.body.stages[1].preconditions[0].expect.op",
        ),
    ];
    for (from, to, path) in cases {
        let vs = rejected(&edit(from, to), &policy);
        assert!(
            vs.iter().any(|v| v.path == path),
            "{to}: no violation at {path} in {vs:#?}"
        );
    }
    // A probe that returns a value needs an `expect`; one that returns none takes none.
    let vs = rejected(
        &edit(
            "{ probe: svc.version, expect: { op: at_least, value: \"1.4\" } }",
            "{ probe: svc.version }",
        ),
        &policy,
    );
    at(
        &vs,
        InvariantId::StagesKnown,
        "$.body.stages[1].preconditions[0].expect",
    );
    let old = repo_file("examples/plans/write-config.yaml");
    assert!(validate(&yaml(&old), &Policy::default()).is_ok());
    let with_expect = old.replacen(
        "probe: fs.path_absent",
        "probe: fs.path_absent\n          expect: { op: equals, value: true }",
        1,
    );
    assert_ne!(with_expect, old);
    let vs = rejected(&with_expect, &Policy::default());
    assert!(vs.iter().any(|v| v.path.ends_with(".expect")), "{vs:#?}");
}

#[test]
fn regression_object_target_is_checked_against_its_declared_kind() {
    let policy = seed_policy();
    let first = "      target: { kind: service, id: checkout, namespace: shop }\n      params: { replicas: 4 }";
    let cases = [
        (
            "{ kind: database, id: checkout, namespace: shop }",
            "$.body.stages[0].target.kind",
        ),
        (
            "{ kind: service, id: checkout }",
            "$.body.stages[0].target.namespace",
        ),
        (
            "{ kind: service, id: checkout, namespace: Shop_1 }",
            "$.body.stages[0].target.namespace",
        ),
        (
            "{ kind: service, id: checkout, namespace: shop, zone: eu }",
            "$.body.stages[0].target.zone",
        ),
        (
            "{ kind: service, namespace: shop }",
            "$.body.stages[0].target.id",
        ),
    ];
    for (target, path) in cases {
        let plan = edit(
            first,
            &format!("      target: {target}\n      params: {{ replicas: 4 }}"),
        );
        let vs = rejected(&plan, &policy);
        at(&vs, InvariantId::SchemaValid, path);
    }
    // Forbidden by kind and id glob: `prod-*` services.
    let plan = edit(
        first,
        "      target: { kind: service, id: prod-checkout, namespace: shop }\n      params: { replicas: 4 }",
    );
    let vs = rejected(&plan, &policy);
    let v = at(
        &vs,
        InvariantId::NothingForbidden,
        "$.body.stages[0].target",
    );
    assert!(v.message.contains("prod-*"), "{}", v.message);
    // An object target under a policy that declares no kinds.
    let vs = rejected(&seed_plan(), &Policy::default());
    at(
        &vs,
        InvariantId::SchemaValid,
        "$.body.stages[0].target.kind",
    );
}

#[test]
fn string_targets_stay_valid_beside_declared_kinds() {
    let mut policy = seed_policy();
    let base = Policy::default();
    policy.registry = base.registry.clone();
    let old = repo_file("examples/plans/write-config.yaml");
    assert_eq!(
        validate(&yaml(&old), &policy).unwrap().hash,
        validate(&yaml(&old), &base).unwrap().hash
    );
}

#[test]
fn unknown_action_policy_rejects_by_default_and_otherwise_treats_as_declared() {
    let plan = r#"
schema_version: interlock.plan/v1
plan_id: unknown
title: t
proposer: agent:x
created_at: "2026-12-01T12:00:00Z"
body:
  stages:
    - { id: a, action: k8s.apply, target: cluster, params: { any: thing } }
"#;
    let with = |mode: &str| {
        Policy::from_value(&yaml(&format!(
            "policy_version: interlock.policy/v1\nunknown_action: {mode}\n"
        )))
        .unwrap()
    };
    let vs = rejected(plan, &Policy::default());
    at(&vs, InvariantId::StagesKnown, "$.body.stages[0].action");
    assert_eq!(rejected(plan, &with("reject")).len(), vs.len());
    let read = validate(&yaml(plan), &with("read")).expect("read: no rollback needed");
    assert_eq!(read.risk.level, RiskLevel::Medium, "unknown is never low");
    let vs = rejected(plan, &with("mutating"));
    at(
        &vs,
        InvariantId::MutatingHasRollback,
        "$.body.stages[0].rollback",
    );
    at(
        &vs,
        InvariantId::MutatingHasPreconditions,
        "$.body.stages[0].preconditions",
    );
    assert!(
        Policy::from_value(&yaml(
            "policy_version: interlock.policy/v1\nunknown_action: allow\n"
        ))
        .is_err()
    );
    // The choice is part of the digest; the default is not written.
    assert_ne!(with("read").digest(), with("mutating").digest());
    assert_eq!(with("reject").digest(), Policy::default().digest());
}

/// Issue 23 item 6: a policy that uses none of the new fields has the digest shape
/// it had (the new keys are written only when set), so approvals made under it hold.
#[test]
fn regression_old_policies_digest_without_new_keys() {
    for policy in [
        Policy::default(),
        Policy::from_value(&yaml(&repo_file("examples/policies/team.yaml"))).unwrap(),
    ] {
        let v = policy.to_value();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "actions",
                "custom_invariants",
                "extensions",
                "forbidden",
                "policy_version",
                "probes",
                "quorum",
                "secrets"
            ]
        );
        let forbidden: Vec<&String> = v
            .get("forbidden")
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(forbidden, ["actions", "targets"]);
        for list in ["actions", "probes"] {
            for item in v.get(list).unwrap().as_array().unwrap() {
                let item = item.as_object().unwrap();
                assert!(
                    !item.contains_key("mcp") && !item.contains_key("returns"),
                    "{item:?}"
                );
            }
        }
    }
    // A policy that uses them writes them.
    let seed = seed_policy().to_value();
    assert!(seed.get("target_kinds").is_some());
    assert!(seed.get("forbidden").unwrap().get("objects").is_some());
}

#[test]
fn rollback_plan_undoes_committed_compensations_newest_first() {
    let policy = seed_policy();
    let halted = Plan::read(&yaml(&seed_plan()), PlanSchema::of(&policy)).unwrap();
    let committed = vec!["scale-up".to_owned(), "migrate".to_owned()];
    let doc = rollback_plan(&halted, 1, &committed, "2026-12-01T13:00:00Z").unwrap();
    let valid = validate(&doc, &policy).expect("the rollback plan is a valid plan");
    assert_eq!(valid.plan.plan_id, "seed-style.rollback");
    assert_eq!(valid.plan.proposer, "agent:ops");
    let link = valid.plan.body.rollback_of.as_ref().unwrap();
    assert_eq!((link.plan_id.as_str(), link.revision), ("seed-style", 1));
    assert_eq!(link.plan_hash, halted.hash());
    // Only the compensation of scale-up runs; migrate is named as irreversible.
    let stages = &valid.plan.body.stages;
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0].id, "scale-up");
    assert_eq!(
        stages[0].params.get("replicas"),
        Some(&Value::Number(canon::Number::from_i64(2).unwrap()))
    );
    // Undoing the undo is the forward stage.
    match &stages[0].rollback {
        Some(Rollback::Compensate(fwd)) => {
            assert_eq!(
                fwd.params.get("replicas"),
                Some(&Value::Number(canon::Number::from_i64(4).unwrap()))
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(
        valid
            .plan
            .description
            .as_deref()
            .unwrap()
            .contains("stage `migrate` is irreversible")
    );
    // Nothing committed that can be compensated: a typed error naming why.
    let err =
        rollback_plan(&halted, 1, &["migrate".to_owned()], "2026-12-01T13:00:00Z").unwrap_err();
    assert!(
        matches!(&err, RollbackPlanError::NothingToRollBack(notes) if notes[0].contains("irreversible")),
        "{err}"
    );
}

/// Issue 23 item 6: every plan that validated before validates and hashes the same
/// — the example plans and the first SCHEMA.md vector, under the old policies and
/// under a policy that uses every new field.
#[test]
fn regression_old_plans_hash_the_same_under_new_policies() {
    let vector = {
        let md = repo_file("docs/SCHEMA.md");
        let from = md.find("## Test vector").unwrap();
        let start = from + md[from..].find("```json\n").unwrap() + 8;
        let end = start + md[start..].find("```").unwrap();
        canon::parse_json(&md.as_bytes()[start..end]).unwrap()
    };
    let old = yaml(&repo_file("examples/plans/write-config.yaml"));
    let mut seed_with_builtins = seed_policy();
    for a in Policy::default().registry.actions() {
        seed_with_builtins.registry.add_action(a.clone());
    }
    for p in Policy::default().registry.probes() {
        seed_with_builtins.registry.add_probe(p.clone());
    }
    for doc in [vector, old] {
        let before = validate(&doc, &Policy::default()).unwrap().hash;
        assert_eq!(before, canon::digest(doc.get("body").unwrap()));
        assert_eq!(validate(&doc, &seed_with_builtins).unwrap().hash, before);
    }
}

/// Found by the end-to-end test: a check without a target of its own probed only
/// the stage's target *string*, so an MCP-bound probe got no object target.
#[test]
fn regression_check_without_target_inherits_the_stages_object_target() {
    let policy = seed_policy();
    let plan = Plan::read(&yaml(&seed_plan()), PlanSchema::of(&policy)).unwrap();
    let stage = &plan.body.stages[0];
    let check = stage.preconditions[0].for_stage(stage);
    assert_eq!(check.target.as_deref(), Some("checkout"));
    assert_eq!(check.target_object, stage.target_object);
    assert!(check.target_object.is_some());
    // A check's own target wins.
    let stage = &plan.body.stages[1];
    let mut own = stage.preconditions[0].clone();
    own.target = Some("payments".into());
    assert_eq!(own.for_stage(stage).target.as_deref(), Some("payments"));
    assert_eq!(own.for_stage(stage).target_object, None);
}

proptest::proptest! {
    /// Issue 23 item 6, as a property: a plan written in the old format — any mix of
    /// stages, targets, described rollbacks, checks, valid or not — gets the same
    /// verdict (the same hash, or the same violations) under the built-in policy and
    /// under one that declares every new policy field, and its hash is the digest of
    /// its body as received.
    #[test]
    fn old_format_plans_keep_their_verdict_and_hash_under_new_policy_fields(
        stages in proptest::collection::vec(
            (
                proptest::sample::select(vec!["fs.write_file", "fs.make_dir", "fs.read_file", "http.get", "cmd.run", "k8s.apply"]),
                proptest::sample::select(vec!["/srv/app/a.toml", "/etc/passwd", "https://example.org/x", "/bin/true", "checkout"]),
                proptest::option::of("[A-Za-z ]{1,20}"),
                proptest::collection::vec(proptest::sample::select(vec!["fs.path_absent", "fs.path_exists", "fs.is_dir", "svc.version"]), 0..3),
                proptest::option::of("[a-z]{0,6}"),
            ),
            1..6,
        )
    ) {
        let stages: Vec<serde_json::Value> = stages
            .iter()
            .enumerate()
            .map(|(i, (action, target, rollback, checks, content))| {
                let mut s = serde_json::json!({ "id": format!("s{i}"), "action": action, "target": target });
                if let Some(r) = rollback { s["rollback"] = r.as_str().into(); }
                if !checks.is_empty() {
                    s["preconditions"] = checks.iter().map(|p| serde_json::json!({ "probe": p })).collect();
                }
                if let Some(c) = content { s["params"] = serde_json::json!({ "content": c }); }
                s
            })
            .collect();
        let doc = canon::from_serde_json(&serde_json::json!({
            "schema_version": "interlock.plan/v1", "plan_id": "prop", "title": "t",
            "proposer": "agent:p", "created_at": "2026-12-01T12:00:00Z",
            "body": { "stages": stages }
        })).unwrap();
        let old = Policy::default();
        let mut new = Policy::from_value(&yaml(
            "policy_version: interlock.policy/v1\ntarget_kinds: [{ kind: service, fields: [] }]\nforbidden: { objects: [{ kind: service, id: \"*\" }] }\n",
        )).unwrap();
        // The seed-style policy's MCP-bound actions (its typed probes stay out, so
        // the generator's `svc.version` is an unknown probe under both policies).
        for a in seed_policy().registry.actions().filter(|a| a.mcp.is_some()) {
            new.registry.add_action(a.clone());
        }
        let verdict = |p: &Policy| match validate(&doc, p) {
            Ok(v) => Ok(v.hash),
            Err(vs) => Err(vs.0.into_iter().map(|v| (v.invariant, v.path)).collect::<Vec<_>>()),
        };
        let before = verdict(&old);
        proptest::prop_assert_eq!(&before, &verdict(&new));
        if let Ok(hash) = before {
            proptest::prop_assert_eq!(hash, canon::digest(doc.get("body").unwrap()));
        }
    }
}
