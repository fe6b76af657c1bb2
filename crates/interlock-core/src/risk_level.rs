//! The four risk levels, apart from how a plan's risk is assessed ([`crate::risk`]):
//! the registry labels each action with one and the policy maps each to a quorum,
//! while assessing a plan needs the plan and the registry; kept apart, none of the
//! three depends on another in a circle.

use std::fmt;

/// A coarse risk label; ordered from least to most risky.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RiskLevel {
    Low,
    Medium,
    High,
    Critical,
}

impl RiskLevel {
    pub fn name(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }

    pub fn from_name(name: &str) -> Option<RiskLevel> {
        Some(match name {
            "low" => RiskLevel::Low,
            "medium" => RiskLevel::Medium,
            "high" => RiskLevel::High,
            "critical" => RiskLevel::Critical,
            _ => return None,
        })
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
