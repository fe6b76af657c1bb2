//! After a call ran, or content was read: the upstream's answer scanned
//! text by text (PII, secrets, injection), redacted in place or withheld by
//! the response policy. Pure: no I/O.

use interlock_inspect::{Finding, ResponsePolicy};

use crate::config::GatewayConfig;

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

#[cfg(test)]
mod tests {
    use super::*;

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
