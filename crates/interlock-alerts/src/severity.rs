//! Severity: one typed scale every sink maps onto its own (syslog's levels,
//! PagerDuty's four, Datadog's status).

use serde::{Deserialize, Serialize};

/// How urgently a human should look, lowest first (ordered, so a sink's
/// minimum is a comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Routine evidence: an allowed call, a plan's progress.
    Info,
    /// A reviewer's decision, a shadow key's would-be stop.
    Low,
    /// Something waits for a human: a held call, a drift held for review.
    Medium,
    /// Something was stopped: a blocked call, a quarantined server.
    High,
    /// Evidence the log itself may be unsound (a leaf that does not open).
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// The RFC 5424 severity (section 6.2.1): 2 critical … 6 informational.
    pub fn syslog(self) -> u8 {
        match self {
            Severity::Critical => 2,
            Severity::High => 3,
            Severity::Medium => 4,
            Severity::Low => 5,
            Severity::Info => 6,
        }
    }

    /// PagerDuty Events v2 `payload.severity`.
    pub fn pagerduty(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low | Severity::Info => "info",
        }
    }

    /// Datadog's log `status`.
    pub fn datadog(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "error",
            Severity::Medium => "warn",
            Severity::Low => "notice",
            Severity::Info => "info",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
