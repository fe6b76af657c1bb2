//! A receipt decoded for a reader (issue 18): what was decided, about what,
//! by whom, on which hash, with which findings — taken from the statement's
//! predicate, whose members differ by kind (a tool call keeps its verdict,
//! findings and plan in a `verdict` object; a plan decision has them at the
//! top). The same facts select receipts in the store (`receipt_facts`).

use interlock_canon::{self as canon, Map, Value};
use serde::Serialize;

use crate::leaf::OpenedLeaf;

/// The facts of one receipt a reviewer reads and filters by.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReceiptSummary {
    /// The predicate's type (`tool.call`, `plan.approved`, ...).
    pub kind: String,
    /// Unix seconds.
    pub time: i64,
    pub plan_id: Option<String>,
    pub server: Option<String>,
    pub agent: Option<String>,
    pub tool: Option<String>,
    /// A tool call's verdict (`allowed`, `held`, `blocked`, `shadow_would_block`, ...).
    pub verdict: Option<String>,
    /// What came of it (`ok`, `held`, `blocked`, ...).
    pub outcome: Option<String>,
    /// Whether the call came from a shadow-mode key.
    pub shadow: Option<bool>,
    /// Who decided: the approver's identity, for a human decision.
    pub approver: Option<String>,
    /// The hash the decision is bound to, named (`plan_hash`,
    /// `definition_hash`, `surface_hash`, ...), first one found.
    pub hash: Option<(String, String)>,
    /// The findings recorded with it (an array, as logged), if any.
    pub findings: Option<serde_json::Value>,
    /// Why it was held or blocked, if it was.
    pub reasons: Option<String>,
}

/// The members a bound hash may be recorded under, in order of preference.
const HASH_MEMBERS: [&str; 6] = [
    "plan_hash",
    "definition_hash",
    "surface_hash",
    "envelope_hash",
    "baseline_hash",
    "arguments_hash",
];

fn text(m: &Map, k: &str) -> Option<String> {
    m.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A signed decision's verdict (`plan.decision`'s `decision`), as a
/// tool call's is worded: `approve` → `approved`, `reject` → `rejected`.
fn decision_verdict(p: &Map) -> Option<String> {
    Some(match text(p, "decision")?.as_str() {
        "approve" => "approved".to_owned(),
        "reject" => "rejected".to_owned(),
        other => other.to_owned(),
    })
}

/// Decodes an opened leaf's predicate.
pub fn summarize(opened: &OpenedLeaf) -> ReceiptSummary {
    let p = &opened.predicate;
    let verdict = match p.get("verdict") {
        Some(Value::Object(v)) => Some(v),
        _ => None,
    };
    // A member of the predicate, or else of its `verdict` object.
    let either = |k: &str| text(p, k).or_else(|| verdict.and_then(|v| text(v, k)));
    let findings = p
        .get("findings")
        .or_else(|| verdict.and_then(|v| v.get("findings")))
        .filter(|f| f.as_array().is_some_and(|a| !a.is_empty()))
        .map(canon::to_serde_json);
    ReceiptSummary {
        kind: opened.kind.clone(),
        time: opened.time,
        plan_id: either("plan_id"),
        server: text(p, "server"),
        agent: text(p, "agent"),
        tool: text(p, "tool"),
        verdict: verdict
            .and_then(|v| text(v, "verdict"))
            .or_else(|| text(p, "verdict"))
            .or_else(|| decision_verdict(p)),
        outcome: text(p, "outcome"),
        shadow: verdict
            .and_then(|v| v.get("shadow"))
            .and_then(Value::as_bool),
        approver: text(p, "approver").or_else(|| text(p, "identity")),
        hash: HASH_MEMBERS
            .iter()
            .find_map(|k| text(p, k).map(|h| ((*k).to_owned(), h))),
        findings,
        reasons: ["block_reasons", "hold_reasons", "reason"]
            .iter()
            .find_map(|k| either(k)),
    }
}

/// An opened leaf whose predicate is `json` (its `type` the kind), at `time`:
/// what the readers' tests read.
#[cfg(test)]
pub(crate) fn opened_for_test(json: &str, time: i64) -> OpenedLeaf {
    use crate::leaf::LeafSeal;
    let predicate = match canon::parse_json(json.as_bytes()).unwrap() {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    OpenedLeaf {
        seal: LeafSeal::Tree,
        statement: Value::Null,
        kind: text(&predicate, "type").unwrap(),
        time,
        seq: 0,
        predicate,
        payload: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(json: &str) -> OpenedLeaf {
        opened_for_test(json, 7)
    }

    #[test]
    fn a_tool_call_is_read_from_its_verdict_object() {
        let s = summarize(&opened(
            r#"{"type":"tool.call","agent":"builder","server":"files","tool":"read_file",
               "definition_hash":"sha256:ab","arguments_hash":"sha256:cd","outcome":"held",
               "verdict":{"verdict":"held","plan_id":"p1","hold_reasons":"risky","shadow":false,
               "findings":[{"kind":"secret"}]}}"#,
        ));
        assert_eq!(s.kind, "tool.call");
        assert_eq!(s.plan_id.as_deref(), Some("p1"));
        assert_eq!(s.verdict.as_deref(), Some("held"));
        assert_eq!(s.shadow, Some(false));
        assert_eq!(s.hash, Some(("definition_hash".into(), "sha256:ab".into())));
        assert_eq!(s.reasons.as_deref(), Some("risky"));
        assert_eq!(s.findings.unwrap()[0]["kind"], "secret");
    }

    #[test]
    fn a_plan_decision_names_its_approver_and_hash() {
        let s = summarize(&opened(
            r#"{"type":"plan.approved","plan_id":"p1","plan_hash":"sha256:ee","approver":"alice@example.com","findings":[]}"#,
        ));
        assert_eq!(s.approver.as_deref(), Some("alice@example.com"));
        assert_eq!(s.hash, Some(("plan_hash".into(), "sha256:ee".into())));
        assert_eq!(s.findings, None, "an empty findings array is no findings");
        assert_eq!(s.verdict, None);
    }

    #[test]
    fn regression_issue_46_a_plan_decision_says_its_verdict() {
        for (decision, verdict) in [("reject", "rejected"), ("approve", "approved")] {
            let s = summarize(&opened(&format!(
                r#"{{"type":"plan.decision","plan_id":"p1","decision":"{decision}","approver":"ed25519:ab","reason":"no"}}"#
            )));
            assert_eq!(s.verdict.as_deref(), Some(verdict));
            assert_eq!(s.reasons.as_deref(), Some("no"));
        }
    }
}
