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
    for f in findings(review) {
        let id = format!("interlock/{}", f.kind);
        rules.entry(id.clone()).or_insert_with(|| {
            json!({
                "id": id,
                "shortDescription": {"text": rule_text(f.kind)},
                "properties": {"tags": ["security", "mcp"]},
            })
        });
        results.push(result(&f, &id, artifact, lock_text));
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

/// One thing the review found, before it is a SARIF result.
struct Finding<'a> {
    kind: &'a str,
    server: &'a str,
    tool: Option<&'a str>,
    gate: Gate,
    severity: &'a str,
    message: String,
}

/// Everything the review found, server by server.
fn findings(review: &Review) -> Vec<Finding<'_>> {
    let mut out = Vec::new();
    for s in &review.servers {
        let server = s.server.as_str();
        let whole = |kind, gate, severity, message| Finding {
            kind,
            server,
            tool: None,
            gate,
            severity,
            message,
        };
        match s.status {
            Status::Clean => {}
            Status::Drift => out.extend(s.drift.iter().map(|d| Finding {
                kind: &d.kind,
                server,
                tool: d.tool.as_deref(),
                gate: d.gate(),
                severity: &d.severity,
                message: format!("`{}`: {}", s.server, d.summary),
            })),
            Status::NotApproved => out.push(whole(
                "server_not_approved",
                Gate::Hold,
                "medium",
                format!(
                    "`{}` is configured but has no approved surface (observed {})",
                    s.server,
                    s.observed_hash.as_deref().unwrap_or("?")
                ),
            )),
            Status::Removed => out.push(whole(
                "server_removed",
                Gate::Monitor,
                "info",
                format!("`{}` is approved but no longer configured", s.server),
            )),
            Status::NotObserved => out.push(whole(
                "server_not_observed",
                Gate::Quarantine,
                "high",
                format!(
                    "`{}` could not be observed: {}",
                    s.server,
                    s.error.as_deref().unwrap_or("unknown error")
                ),
            )),
        }
    }
    out
}

/// A finding as a SARIF result of rule `id`, located in the lockfile.
fn result(f: &Finding<'_>, id: &str, artifact: &str, lock_text: Option<&str>) -> Value {
    let (server, tool) = (f.server, f.tool);
    let line = lock_text.map_or(1, |t| super::lockfile::locate(t, server, tool));
    let name = match tool {
        Some(t) => format!("{server}/{t}"),
        None => server.to_owned(),
    };
    json!({
        "ruleId": id,
        "level": level(f.gate),
        "message": {"text": f.message},
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
                format!("{}\u{0}{name}\u{0}{}", f.kind, f.message).as_str()
            )).to_string(),
        },
        "properties": {
            "server": server,
            "tool": tool,
            "severity": f.severity,
            "action": f.gate.name(),
            "security-severity": security_severity(f.severity),
        },
    })
}
