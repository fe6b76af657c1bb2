//! The universal invariants every plan must keep, and the hook for a deployment's own.
//!
//! [`validate`] is the single gate between "a document an agent sent" and "a plan the
//! engine may hold for review": the engine re-runs it before execution, so an
//! approval can never carry a plan past a rule that the current policy enforces.

use crate::canon::{Digest, Value};
use crate::plan::{Check, Plan, PlanSchema, Rollback, Stage, stage_path};
use crate::policy::Policy;
use crate::registry::check_params;
use crate::risk::{self, Risk};
use crate::schema::child_path;
use crate::target::ObjectTarget;

pub use crate::policy::CustomInvariant;
pub use crate::violation::{InvariantId, Violation, Violations};

/// A plan that keeps every invariant, with its hash and risk.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedPlan {
    pub plan: Plan,
    pub hash: Digest,
    pub risk: Risk,
}

/// Checks every invariant of `doc` under `policy`. On failure, returns *all*
/// violations found (schema problems first), so one round trip shows every mistake.
pub fn validate(doc: &Value, policy: &Policy) -> Result<ValidatedPlan, Violations> {
    let mut violations = Vec::new();
    let plan = match Plan::read(doc, PlanSchema::of(policy)) {
        Ok(plan) => Some(plan),
        Err(errors) => {
            violations.extend(errors.into_iter().map(|e| Violation {
                stage: stage_of_path(doc, &e.path),
                invariant: InvariantId::SchemaValid,
                path: e.path,
                message: e.message,
            }));
            None
        }
    };
    // Secrets are looked for even in a schema-invalid body: the document is about to
    // be shown in an error, and a secret must be named before it spreads.
    if let Some(body) = doc.get("body") {
        for finding in policy.secrets.scan_value(body, "$.body") {
            violations.push(Violation {
                invariant: InvariantId::NoSecrets,
                stage: stage_of_path(doc, &finding.path),
                message: format!(
                    "the body contains what looks like a secret ({}); pass a reference to a secret store instead",
                    finding.kind
                ),
                path: finding.path,
            });
        }
    }
    let Some(plan) = plan else {
        violations.sort_by(|a, b| a.invariant.cmp(&b.invariant));
        return Err(Violations(violations));
    };
    let hash = plan.hash();
    if let Some(claimed) = plan.claimed_hash
        && claimed != hash
    {
        violations.push(Violation {
            invariant: InvariantId::HashRecomputes,
            stage: None,
            path: "$.plan_hash".into(),
            message: format!("the stated hash {claimed} does not match the body's hash {hash}"),
        });
    }
    check_stages(&plan, policy, &mut violations);
    for custom in &policy.custom_invariants {
        violations.extend(custom.check(&plan, policy));
    }
    if violations.is_empty() {
        let risk = risk::assess(&plan, &policy.registry);
        Ok(ValidatedPlan { plan, hash, risk })
    } else {
        // Stable order: by invariant, then by document order within one invariant.
        violations.sort_by(|a, b| a.invariant.cmp(&b.invariant));
        Err(Violations(violations))
    }
}

fn check_stages(plan: &Plan, policy: &Policy, out: &mut Vec<Violation>) {
    let mut seen = std::collections::BTreeMap::new();
    for (i, stage) in plan.body.stages.iter().enumerate() {
        if let Some(first) = seen.insert(stage.id.as_str(), i) {
            out.push(Violation {
                invariant: InvariantId::StagesKnown,
                stage: Some(stage.id.clone()),
                path: stage_path(i, Some("id")),
                message: format!("duplicate stage id (first used by stage {first})"),
            });
        }
        let base = stage_path(i, None);
        let mutating = check_stage(stage, &stage.id, &base, policy, out);
        match &stage.rollback {
            None if mutating => out.push(Violation {
                invariant: InvariantId::MutatingHasRollback,
                stage: Some(stage.id.clone()),
                path: stage_path(i, Some("rollback")),
                message: format!(
                    "`{}` changes state, so the stage must give its rollback (a compensating stage, `{{irreversible: true, justification}}` or a description)",
                    stage.action
                ),
            }),
            // A compensating stage is checked like any stage: known action, typed
            // params, its own preconditions when it mutates, nothing forbidden.
            Some(Rollback::Compensate(undo)) => {
                check_stage(undo, &stage.id, &child_path(&base, "rollback"), policy, out);
            }
            _ => {}
        }
    }
}

/// Checks one stage (or a compensating stage at `base`) against the registry and
/// the forbidden lists; returns whether its action mutates.
fn check_stage(
    stage: &Stage,
    stage_id: &str,
    base: &str,
    policy: &Policy,
    out: &mut Vec<Violation>,
) -> bool {
    let registry = &policy.registry;
    let at = |field: &str| child_path(base, field);
    let v = |invariant: InvariantId, path: String, message: String| Violation {
        invariant,
        stage: Some(stage_id.to_owned()),
        path,
        message,
    };
    let spec = registry.resolve(&stage.action);
    match &spec {
        None => out.push(v(
            InvariantId::StagesKnown,
            at("action"),
            format!("unknown action `{}`", stage.action),
        )),
        Some(spec) => {
            if let Some(params) = &spec.params {
                for (name, message) in check_params(params, &stage.params) {
                    out.push(v(
                        InvariantId::StagesKnown,
                        child_path(&at("params"), &name),
                        message,
                    ));
                }
            }
        }
    }
    for (list, checks) in [
        ("preconditions", &stage.preconditions),
        ("verify", &stage.verify),
    ] {
        for (j, check) in checks.iter().enumerate() {
            check_check(check, &|| format!("{}[{j}]", at(list)), policy, &v, out);
        }
    }
    let mutating = spec.as_ref().is_some_and(|s| s.mutating);
    if mutating && stage.preconditions.is_empty() {
        out.push(v(
            InvariantId::MutatingHasPreconditions,
            at("preconditions"),
            format!(
                "`{}` changes state, so the stage needs at least one precondition probed against live state",
                stage.action
            ),
        ));
    }
    if let Some(glob) = policy.forbidden.action(&stage.action) {
        out.push(v(
            InvariantId::NothingForbidden,
            at("action"),
            format!(
                "action `{}` is forbidden by policy (`{glob}`)",
                stage.action
            ),
        ));
    }
    // Paths are formatted only for a violation: validation runs on every propose
    // and before every execution, and most plans break nothing.
    let mut forbidden = |path: &dyn Fn() -> String, target: &str, object: Option<&ObjectTarget>| {
        if let Some(glob) = policy.forbidden.target(target) {
            out.push(v(
                InvariantId::NothingForbidden,
                path(),
                format!("target `{target}` is forbidden by policy (`{glob}`)"),
            ));
        }
        if let Some(object) = object
            && let Some((kind, glob)) = policy.forbidden.object(&object.kind, &object.id)
        {
            out.push(v(
                InvariantId::NothingForbidden,
                path(),
                format!(
                    "{kind} `{}` is forbidden by policy (kind `{kind}`, id `{glob}`)",
                    object.id
                ),
            ));
        }
    };
    forbidden(
        &|| at("target"),
        &stage.target,
        stage.target_object.as_ref(),
    );
    for (list, checks) in [
        ("preconditions", &stage.preconditions),
        ("verify", &stage.verify),
    ] {
        for (j, c) in checks.iter().enumerate() {
            if let Some(t) = c.target.as_deref() {
                forbidden(
                    &|| format!("{}[{j}].target", at(list)),
                    t,
                    c.target_object.as_ref(),
                );
            }
        }
    }
    mutating
}

/// A check's probe is registered with the right params, and its `expect` suits
/// what the probe returns (a probe that returns a value must be given one).
fn check_check(
    check: &Check,
    path: &dyn Fn() -> String,
    policy: &Policy,
    v: &dyn Fn(InvariantId, String, String) -> Violation,
    out: &mut Vec<Violation>,
) {
    let Some(probe) = policy.registry.probe(&check.probe) else {
        out.push(v(
            InvariantId::StagesKnown,
            format!("{}.probe", path()),
            format!("unknown probe `{}`", check.probe),
        ));
        return;
    };
    if let Some(params) = &probe.params {
        for (name, message) in check_params(params, &check.params) {
            out.push(v(
                InvariantId::StagesKnown,
                child_path(&format!("{}.params", path()), &name),
                message,
            ));
        }
    }
    match (probe.returns, &check.expect) {
        (Some(ty), Some(expect)) => {
            if let Err(message) = expect.check_against(ty) {
                out.push(v(InvariantId::StagesKnown, format!("{}.expect", path()), message));
            }
        }
        (Some(ty), None) => out.push(v(
            InvariantId::StagesKnown,
            format!("{}.expect", path()),
            format!(
                "probe `{}` returns a {ty}, so the check must say what it expects (`expect {{op, value}}`)",
                check.probe
            ),
        )),
        (None, Some(_)) => out.push(v(
            InvariantId::StagesKnown,
            format!("{}.expect", path()),
            format!(
                "probe `{}` returns no typed value, so there is nothing for `expect` to compare",
                check.probe
            ),
        )),
        (None, None) => {}
    }
}

/// The id of the stage a `$.body.stages[N]…` path points into, if it has one.
fn stage_of_path(doc: &Value, path: &str) -> Option<String> {
    let rest = path.strip_prefix("$.body.stages[")?;
    let index: usize = rest[..rest.find(']')?].parse().ok()?;
    doc.get("body")?
        .get("stages")?
        .as_array()?
        .get(index)?
        .get("id")?
        .as_str()
        .map(str::to_owned)
}
