//! The path of every forwarded `tools/call`, after the tool is known to be
//! served: argument inspection → role and risk policy → (held as a plan, or
//! forwarded) → response scan. Each step's verdict and reason go into the
//! call's log leaf.
//!
//! - **Risk** of a call: the tool's own (from its annotations: read-only → low,
//!   non-destructive → medium, destructive — the spec's default — → high),
//!   raised by what inspection finds in the arguments; and a 0–100 score.
//! - **Held**: a call whose inspection finds an attack (severity high or
//!   critical), or whose risk is above its role's `max_risk`, becomes a
//!   one-stage plan (`mcp.call_tool` with the exact arguments) that a reviewer
//!   approves or rejects like any plan. Once approved, the same call (or a
//!   retry naming the plan) runs it exactly once.
//! - **Shadow** keys: everything is decided and logged, nothing is held.

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::RiskLevel;
use interlock_inspect::{ArgContext, Finding, ResponsePolicy, Severity, inspect_arguments};
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
    let findings = inspect_arguments(arguments, &ArgContext::with_roots(roots));
    let tool_risk = tool_risk(tool);
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

/// The response policy from the config (checked at load).
pub fn response_policy(config: &GatewayConfig) -> ResponsePolicy {
    let parse = |s: &str| s.parse().unwrap_or(interlock_inspect::Action::Redact);
    ResponsePolicy {
        pii: parse(&config.calls.response_pii),
        secrets: parse(&config.calls.response_secrets),
        injection: parse(&config.calls.response_injection),
        scanner: None,
    }
}

/// The response policy applied to text after text, redacting in place and
/// collecting what it found.
struct TextScan<'a> {
    policy: &'a ResponsePolicy,
    findings: Vec<Finding>,
    blocked: bool,
    changed: bool,
}

impl<'a> TextScan<'a> {
    fn new(policy: &'a ResponsePolicy) -> TextScan<'a> {
        TextScan {
            policy,
            findings: Vec::new(),
            blocked: false,
            changed: false,
        }
    }

    fn text(&mut self, text: &mut String) {
        let s = interlock_inspect::scan_response(text, self.policy);
        if s.findings.is_empty() {
            return;
        }
        self.blocked |= s.blocked;
        if s.redacted != *text {
            *text = s.redacted;
            self.changed = true;
        }
        self.findings.extend(s.findings);
    }
}

/// The findings' categories, `a, b` (for a message that says what was withheld).
pub fn categories(findings: &[Finding]) -> String {
    let cats: std::collections::BTreeSet<&str> =
        findings.iter().map(|f| f.category.as_str()).collect();
    cats.into_iter().collect::<Vec<_>>().join(", ")
}

/// Scans every text item of a tool result; returns the result to send (`None`:
/// unchanged, forward the upstream's bytes), the findings and whether it is
/// blocked. Non-text content passes; a blocked result is replaced by an error
/// result that says why, never silently dropped.
pub fn scan_result(
    result: &str,
    policy: &ResponsePolicy,
) -> (Option<serde_json::Value>, Vec<Finding>, bool) {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(result) else {
        return (None, Vec::new(), false);
    };
    let mut scan = TextScan::new(policy);
    let mut scan_text = |text: &mut String| scan.text(text);
    if let Some(items) = v.get_mut("content").and_then(|c| c.as_array_mut()) {
        for item in items {
            if let Some(serde_json::Value::String(t)) = item.get_mut("text") {
                scan_text(t);
            }
        }
    }
    if let Some(sc) = v.get_mut("structuredContent") {
        let mut text = sc.to_string();
        let before = text.clone();
        scan_text(&mut text);
        if text != before {
            // Redacted inside a JSON document: keep it JSON if it still parses.
            *sc = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        }
    }
    let TextScan {
        findings,
        blocked,
        changed,
        ..
    } = scan;
    if blocked {
        let message = format!(
            "the gateway withheld this tool result: it contained {} (blocked by policy)",
            categories(&findings)
        );
        return (
            Some(
                serde_json::json!({"content": [{"type": "text", "text": message}], "isError": true}),
            ),
            findings,
            true,
        );
    }
    (changed.then_some(v), findings, false)
}

/// Scans read-only content an upstream returns outside a tool call (a prompt, a
/// resource, a listing of them): every `text` and `description` string, at any
/// depth, since prompts nest their text in messages and embedded resources.
/// Returns the redacted document if anything changed, the findings, and whether
/// policy blocks it (the caller answers with an error; nothing is dropped
/// silently). Base64 `blob`s are not text and pass.
pub fn scan_content(
    result: &str,
    policy: &ResponsePolicy,
) -> (Option<serde_json::Value>, Vec<Finding>, bool) {
    fn walk(v: &mut serde_json::Value, scan: &mut dyn FnMut(&mut String), depth: usize) {
        // Upstream messages are bounded in size; this bounds the recursion too.
        if depth > 64 {
            return;
        }
        match v {
            serde_json::Value::Object(m) => {
                for (k, item) in m.iter_mut() {
                    match item {
                        serde_json::Value::String(t) if k == "text" || k == "description" => {
                            scan(t)
                        }
                        _ => walk(item, scan, depth + 1),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    walk(item, scan, depth + 1);
                }
            }
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(result) else {
        return (None, Vec::new(), false);
    };
    let mut scan = TextScan::new(policy);
    walk(&mut v, &mut |text: &mut String| scan.text(text), 0);
    (scan.changed.then_some(v), scan.findings, scan.blocked)
}

/// The SHA-256 of the canonical arguments (what a held call's plan and a log
/// leaf name).
pub fn arguments_digest(arguments: &Value) -> Digest {
    canon::digest(arguments)
}

/// RFC 3339 UTC for unix seconds (plans carry `created_at` as text).
pub fn rfc3339(secs: i64) -> String {
    interlock_core::time::rfc3339(secs)
}

/// The plan a held call becomes: one `mcp.call_tool` stage with the exact
/// arguments, guarded by `mcp.tool_pinned` (the tool is still served exactly as
/// it was when held).
#[allow(clippy::too_many_arguments)]
pub fn held_plan(
    plan_id: &str,
    agent: &str,
    exposed_name: &str,
    server: &str,
    tool: &str,
    tool_hash: &Digest,
    arguments: &Value,
    assessment: &Assessment,
    now: i64,
) -> Value {
    let doc = serde_json::json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": plan_id,
        "title": format!("Held tool call: {exposed_name}"),
        "proposer": format!("agent:{agent}"),
        "created_at": rfc3339(now),
        "description": format!(
            "Agent `{agent}` called `{exposed_name}`; the gateway held it: {}. Risk {} (score {}).",
            assessment.hold_reasons.join("; "),
            assessment.risk.name(),
            assessment.score
        ),
        "body": {"stages": [{
            "id": "call",
            "action": "mcp.call_tool",
            "target": server,
            "params": {"tool": tool, "arguments": canon::to_serde_json(arguments)},
            "preconditions": [{
                "probe": "mcp.tool_pinned",
                "params": {"tool": tool, "tool_hash": tool_hash.to_string()},
                "description": "the tool is still served exactly as it was when the call was held"
            }],
            "rollback": "The gateway cannot undo a tool call; undo its effect by hand if needed."
        }]}
    });
    canon::from_serde_json(&doc).expect("a plan built from JSON converts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_083_200), "2026-12-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn attacks_are_held_and_look_alikes_pass() {
        let config = GatewayConfig::default();
        let args = |s: &str| canon::parse_json(s.as_bytes()).unwrap();
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

    #[test]
    fn results_are_redacted_not_dropped() {
        let policy = ResponsePolicy::default();
        let (out, findings, blocked) = scan_result(
            r#"{"content":[{"type":"text","text":"contact jane.doe@example.com, order 12345"}]}"#,
            &policy,
        );
        assert!(!blocked && !findings.is_empty());
        let text = out.unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.contains("[REDACTED:") && text.contains("order 12345"),
            "{text}"
        );
        let (out, _, _) = scan_result(
            r#"{"content":[{"type":"text","text":"order 12345 shipped"}]}"#,
            &policy,
        );
        assert!(out.is_none(), "benign results pass untouched");
    }
}
