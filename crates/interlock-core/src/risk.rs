//! How risky a plan is, derived only from its body and the registry, so the reviewer,
//! the notification and the quorum rule all see the same label.

use crate::plan::Plan;
use crate::registry::Registry;
pub use crate::risk_level::RiskLevel;

/// A plan's risk and the reasons for it, one per contributing stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Risk {
    pub level: RiskLevel,
    pub reasons: Vec<String>,
}

/// The plan's risk is its riskiest stage's action; a plan with more than five
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
