//! How risky a plan is, derived only from its body and the registry, so the reviewer,
//! the notification and the quorum rule all see the same label.

use crate::plan::{Plan, Stage};
use crate::registry::{ActionSpec, Registry};
pub use crate::risk_level::RiskLevel;

/// A plan's risk and the reasons for it, one per contributing stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Risk {
    pub level: RiskLevel,
    pub reasons: Vec<String>,
}

/// The `risk` a stage declares, where its action takes one.
fn declared_risk(stage: &Stage, spec: &ActionSpec) -> Option<RiskLevel> {
    let takes = spec
        .params
        .as_ref()
        .is_some_and(|ps| ps.iter().any(|p| p.name == "risk"));
    if !takes {
        return None;
    }
    stage
        .params
        .get("risk")
        .and_then(|v| v.as_str())
        .and_then(RiskLevel::from_name)
}

/// The plan's risk is its riskiest stage's action (raised by what a stage
/// whose action takes a `risk` declares); a plan with more than five
/// mutating stages is raised one level, because a long chain of writes is harder to
/// review and to remedy forward.
pub fn assess(plan: &Plan, registry: &Registry) -> Risk {
    let mut level = RiskLevel::Low;
    let mut reasons = Vec::new();
    let mut mutating = 0usize;
    for stage in &plan.body.stages {
        let Some(spec) = registry.resolve(&stage.action) else {
            continue;
        };
        if spec.mutating {
            mutating += 1;
        }
        if spec.risk > RiskLevel::Low {
            reasons.push(format!(
                "stage `{}`: {} is {} risk",
                stage.id, stage.action, spec.risk
            ));
        }
        level = level.max(spec.risk);
        // An action whose parameters include `risk` (a coding agent's held
        // tool use, `hook.permit`: the gateway assessed what it does) may
        // raise its stage's risk, never lower it below the action's own.
        if let Some(declared) = declared_risk(stage, &spec)
            && declared > spec.risk
        {
            reasons.push(format!(
                "stage `{}`: its {} is assessed {declared} risk",
                stage.id, stage.action
            ));
            level = level.max(declared);
        }
    }
    if mutating > 5 {
        level = match level {
            RiskLevel::Low => RiskLevel::Medium,
            RiskLevel::Medium => RiskLevel::High,
            _ => RiskLevel::Critical,
        };
        reasons.push(format!("{mutating} mutating stages"));
    }
    Risk { level, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook_plan(risk: &str) -> Plan {
        let doc = crate::canon::parse_json(
            format!(
                r#"{{"schema_version":"interlock.plan/v1","plan_id":"call-hook-1","title":"t",
                "proposer":"agent:a","created_at":"2026-12-06T00:00:00Z","body":{{"stages":[{{
                "id":"permit","action":"hook.permit","target":"claude-code","params":{{
                "client":"claude-code","tool":"Bash","binding_hash":"sha256:00","cwd":"/w",
                "risk":"{risk}"}}}}]}}}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        Plan::from_value(&doc, &[]).unwrap()
    }

    /// Issue 40: a held tool use's plan carries the risk the gateway
    /// assessed, so a destructive command is not one click away in a
    /// notification; a declared risk never lowers the action's own.
    #[test]
    fn a_declared_risk_raises_a_stage_never_lowers_it() {
        let registry = Registry::builtin();
        assert_eq!(
            assess(&hook_plan("critical"), &registry).level,
            RiskLevel::Critical
        );
        assert_eq!(
            assess(&hook_plan("low"), &registry).level,
            RiskLevel::Medium
        );
        assert_eq!(
            assess(&hook_plan("nonsense"), &registry).level,
            RiskLevel::Medium
        );
    }
}
