//! The review as SARIF 2.1.0 (OASIS), the format code-scanning UIs read:
//! each drift is a result with its rule (the drift kind), its level (what
//! the gateway would do), its severity, and a location in the lockfile (the
//! server's or the tool's block), so a pull request shows it on the line a
//! reviewer approved.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Gate, Review, Status};

/// SARIF level for a gate: quarantine is an error, hold a warning, monitor a note.
fn level(g: Gate) -> &'static str {
    match g {
        Gate::Quarantine => "error",
        Gate::Hold => "warning",
        Gate::Monitor => "note",
    }
}

/// The `security-severity` score code-scanning UIs rank by (CVSS-like, 0–10).
fn security_severity(severity: &str) -> &'static str {
    match severity {
        "critical" => "9.5",
        "high" => "8.0",
        "medium" => "5.5",
        "low" => "3.0",
        _ => "1.0",
    }
}

/// What each rule is about, by the drift kind's machine name.
fn rule_text(kind: &str) -> String {
    match kind {
        "server_not_approved" => "A configured MCP server has no approved surface".into(),
        "server_removed" => "An approved MCP server is no longer configured".into(),
        "server_not_observed" => "A configured MCP server could not be observed".into(),
        other => format!("MCP surface drift: {}", other.replace('_', " ")),
    }
}

/// The SARIF log of `review`. `artifact` is the URI results point into
/// (the lockfile's path relative to the repository, or the configuration
/// file's); `lock_text`, when given, places each result on its server's or
/// tool's line.
pub fn sarif(review: &Review, artifact: &str, lock_text: Option<&str>) -> Value {
    let mut rules: BTreeMap<String, Value> = BTreeMap::new();
    let mut results = Vec::new();
    let mut add = |kind: &str,
                   server: &str,
                   tool: Option<&str>,
                   gate: Gate,
                   severity: &str,
                   message: String| {
        let id = format!("interlock/{kind}");
        rules.entry(id.clone()).or_insert_with(|| {
            json!({
                "id": id,
                "shortDescription": {"text": rule_text(kind)},
                "properties": {"tags": ["security", "mcp"]},
            })
        });
        let line = lock_text.map_or(1, |t| super::lockfile::locate(t, server, tool));
        let name = match tool {
            Some(t) => format!("{server}/{t}"),
            None => server.to_owned(),
        };
        results.push(json!({
            "ruleId": id,
            "level": level(gate),
            "message": {"text": message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact},
                    "region": {"startLine": line},
                },
                "logicalLocations": [{
                    "name": tool.unwrap_or(server),
                    "fullyQualifiedName": name,
                    "kind": if tool.is_some() { "function" } else { "module" },
                }],
            }],
            "partialFingerprints": {
                "interlockDrift/v1": interlock_canon::digest(&interlock_canon::Value::from(
                    format!("{kind}\u{0}{name}\u{0}{message}").as_str()
                )).to_string(),
            },
            "properties": {
                "server": server,
                "tool": tool,
                "severity": severity,
                "action": gate.name(),
                "security-severity": security_severity(severity),
            },
        }));
    };
    for s in &review.servers {
        match s.status {
            Status::Clean => {}
            Status::Drift => {
                for d in &s.drift {
                    add(
                        &d.kind,
                        &s.server,
                        d.tool.as_deref(),
                        d.gate(),
                        &d.severity,
                        format!("`{}`: {}", s.server, d.summary),
                    );
                }
            }
            Status::NotApproved => add(
                "server_not_approved",
                &s.server,
                None,
                Gate::Hold,
                "medium",
                format!(
                    "`{}` is configured but has no approved surface (observed {})",
                    s.server,
                    s.observed_hash.as_deref().unwrap_or("?")
                ),
            ),
            Status::Removed => add(
                "server_removed",
                &s.server,
                None,
                Gate::Monitor,
                "info",
                format!("`{}` is approved but no longer configured", s.server),
            ),
            Status::NotObserved => add(
                "server_not_observed",
                &s.server,
                None,
                Gate::Quarantine,
                "high",
                format!(
                    "`{}` could not be observed: {}",
                    s.server,
                    s.error.as_deref().unwrap_or("unknown error")
                ),
            ),
        }
    }
    let index: BTreeMap<String, usize> = rules
        .keys()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();
    for r in &mut results {
        let i = index[r["ruleId"].as_str().expect("set above")];
        r["ruleIndex"] = json!(i);
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "interlock",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules.into_values().collect::<Vec<_>>(),
            }},
            "results": results,
        }],
    })
}
