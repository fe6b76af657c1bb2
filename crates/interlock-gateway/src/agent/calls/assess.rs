//! Before a call may run: argument inspection, the tool's risk, and the
//! role's limit. Pure: no I/O; [`pipeline`](super::pipeline) turns the
//! [`Assessment`] into a verdict.
//!
//! - **Risk** of a call: the tool's own (from its annotations: read-only → low,
//!   non-destructive → medium, destructive — the spec's default — → high),
//!   raised by what inspection finds in the arguments; and a 0–100 score.
//! - **Held**: a call whose inspection finds an attack (severity high or
//!   critical), or whose risk is above its role's `max_risk`, must wait for a
//!   reviewer ([`held`](super::held)).
//! - **Stopped**: a secret in the arguments is refused outright.

use interlock_canon::{Map, Value};
use interlock_core::RiskLevel;
use interlock_inspect::{ArgContext, Finding, Severity, inspect_arguments};
use interlock_surface::{Hint, Tool};

use crate::config::GatewayConfig;

/// What the path decided before forwarding.
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    pub tool_risk: RiskLevel,
    pub risk: RiskLevel,
    /// 0–100.
    pub score: u8,
    pub findings: Vec<Finding>,
    /// Why the call must wait for a reviewer (empty: it may run).
    pub hold_reasons: Vec<String>,
    /// Whether inspection (not only the role's risk limit) holds it: a standing
    /// approval never covers a call that looks like an attack.
    pub inspection_hold: bool,
    /// Why the call is refused outright: a secret in the arguments cannot be
    /// held (a plan must not carry secrets) and must not reach an upstream.
    pub block_reasons: Vec<String>,
}

impl Assessment {
    pub fn held(&self) -> bool {
        !self.hold_reasons.is_empty()
    }

    pub fn blocked(&self) -> bool {
        !self.block_reasons.is_empty()
    }

    /// The findings as log/report values (never the offending text).
    pub fn findings_value(&self) -> Value {
        findings_value(&self.findings)
    }
}

/// Findings as log/report values (never the offending text).
pub fn findings_value(findings: &[Finding]) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|f| {
                let mut m = Map::new();
                m.insert("category".into(), f.category.as_str().into());
                m.insert("path".into(), f.path.as_str().into());
                m.insert("rule".into(), f.rule.into());
                m.insert("severity".into(), severity_name(f.severity).into());
                Value::Object(m)
            })
            .collect(),
    )
}

pub fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Low => "low",
        Severity::Medium => "medium",
        Severity::High => "high",
        Severity::Critical => "critical",
    }
}

fn severity_risk(s: Severity) -> RiskLevel {
    match s {
        Severity::Low => RiskLevel::Low,
        Severity::Medium => RiskLevel::Medium,
        Severity::High => RiskLevel::High,
        Severity::Critical => RiskLevel::Critical,
    }
}

/// A tool's own risk, from its annotations (absent hints mean the spec's
/// defaults: not read-only, destructive).
pub fn tool_risk(tool: Option<&Tool>) -> RiskLevel {
    let annotations = tool.and_then(|t| t.field("annotations"));
    if Hint::ReadOnly.effective(annotations) {
        RiskLevel::Low
    } else if !Hint::Destructive.effective(annotations) {
        RiskLevel::Medium
    } else {
        RiskLevel::High
    }
}

/// The role's ceiling: `max_risk` from the config, `high` by default.
pub fn role_max_risk(config: &GatewayConfig, role: &str) -> RiskLevel {
    config
        .roles
        .get(role)
        .and_then(|r| r.max_risk.as_deref())
        .and_then(RiskLevel::from_name)
        .unwrap_or(RiskLevel::High)
}

/// Inspects the arguments and decides whether the call may run.
pub fn assess(
    config: &GatewayConfig,
    server: &str,
    role: &str,
    tool: Option<&Tool>,
    arguments: &Value,
) -> Assessment {
    let roots = config
        .servers
        .get(server)
        .map(|s| s.roots.clone())
        .unwrap_or_default();
    assess_with_roots(config, roots, role, tool, arguments)
}

/// [`assess`] with the server's `roots` given (a server added at run time
/// is not in `config`).
pub fn assess_with_roots(
    config: &GatewayConfig,
    roots: Vec<String>,
    role: &str,
    tool: Option<&Tool>,
    arguments: &Value,
) -> Assessment {
    assess_at(config, roots, role, tool_risk(tool), arguments)
}

/// [`assess_with_roots`] for a request whose own risk is `tool_risk`: a
/// content read (`prompts/get`, `resources/read`, `completion/complete`)
/// has no tool definition, and acts on nothing, so it starts low like a
/// read-only tool (issue 39 item 11); what its arguments carry raises it.
pub fn assess_at(
    config: &GatewayConfig,
    roots: Vec<String>,
    role: &str,
    tool_risk: RiskLevel,
    arguments: &Value,
) -> Assessment {
    let findings = inspect_arguments(arguments, &ArgContext::with_roots(roots));
    assess_findings(config, role, tool_risk, findings)
}

/// The verdict on what inspection found in a request whose own risk is
/// `tool_risk`: an MCP call's arguments, or an agent's native tool use
/// (issue 40, `agent::hooks`) — one rule for both.
pub fn assess_findings(
    config: &GatewayConfig,
    role: &str,
    tool_risk: RiskLevel,
    findings: Vec<Finding>,
) -> Assessment {
    let worst = findings.iter().map(|f| f.severity).max();
    let risk = worst
        .map(severity_risk)
        .map_or(tool_risk, |r| r.max(tool_risk));
    let base: f32 = match tool_risk {
        RiskLevel::Low => 10.0,
        RiskLevel::Medium => 35.0,
        RiskLevel::High => 60.0,
        RiskLevel::Critical => 85.0,
    };
    let found = worst.map_or(0.0, |s| s.score() * 100.0);
    let extra = findings.len().saturating_sub(1) as f32 * 5.0;
    let score = (base.max(found) + extra).min(100.0) as u8;
    let mut hold_reasons = Vec::new();
    let mut block_reasons = Vec::new();
    let mut inspection_hold = false;
    let secrets: std::collections::BTreeSet<&str> = findings
        .iter()
        .filter(|f| {
            f.category == interlock_inspect::Category::Secret && f.severity >= Severity::High
        })
        .map(|f| f.rule)
        .collect();
    if !secrets.is_empty() {
        block_reasons.push(format!(
            "the arguments carry what looks like a secret ({}); pass a reference to a secret store instead",
            secrets.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(s) = worst
        && s >= Severity::High
    {
        let cats: std::collections::BTreeSet<&str> = findings
            .iter()
            .filter(|f| f.severity >= Severity::High)
            .filter(|f| f.category != interlock_inspect::Category::Secret)
            .map(|f| f.category.as_str())
            .collect();
        if !cats.is_empty() {
            inspection_hold = true;
            hold_reasons.push(format!(
                "inspection found {} in the arguments",
                cats.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let ceiling = role_max_risk(config, role);
    if risk > ceiling {
        hold_reasons.push(format!(
            "risk {} is above role `{role}`'s limit ({})",
            risk.name(),
            ceiling.name()
        ));
    }
    Assessment {
        tool_risk,
        risk,
        score,
        findings,
        hold_reasons,
        inspection_hold,
        block_reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attacks_are_held_and_look_alikes_pass() {
        let config = GatewayConfig::default();
        let args = |s: &str| interlock_canon::parse_json(s.as_bytes()).unwrap();
        let a = assess(
            &config,
            "db",
            "default",
            None,
            &args(r#"{"query":"SELECT * FROM users WHERE id = 1; DROP TABLE users; --"}"#),
        );
        assert!(a.held(), "{a:?}");
        let b = assess(
            &config,
            "db",
            "default",
            None,
            &args(r#"{"query":"SELECT name FROM users WHERE name = 'O''Brien'"}"#),
        );
        assert!(!b.held(), "{b:?}");
        assert!(b.score <= 60);
    }

    /// Issue 24 item 1: each new argument category holds the call (its risk is
    /// high or critical) and is named in the reason; its look-alike runs.
    #[test]
    fn regression_new_argument_categories_hold_the_call() {
        let config = GatewayConfig::default();
        let args = |k: &str, v: &str| {
            let mut m = Map::new();
            m.insert(k.into(), v.into());
            Value::Object(m)
        };
        for (key, value, category, risk) in [
            (
                "query",
                "DELETE FROM users",
                "sql-destructive",
                RiskLevel::High,
            ),
            ("code", "eval(input())", "code", RiskLevel::Critical),
            ("path", "/workspace/.env", "sensitive-file", RiskLevel::High),
            (
                "cmd",
                "./xmrig -o stratum+tcp://pool.example:3333",
                "mining",
                RiskLevel::Critical,
            ),
        ] {
            let a = assess(&config, "db", "default", None, &args(key, value));
            assert!(a.held() && a.inspection_hold, "{value}: {a:?}");
            assert!(a.hold_reasons[0].contains(category), "{value}: {a:?}");
            assert_eq!(a.risk, risk, "{value}");
        }
        for (key, value) in [
            ("query", "DELETE FROM sessions WHERE id = ?"),
            ("code", "model.eval()"),
            ("path", "/workspace/environment.md"),
            ("text", "Data mining pipeline"),
        ] {
            let a = assess(&config, "db", "default", None, &args(key, value));
            assert!(!a.inspection_hold, "{value}: {a:?}");
        }
    }
}
