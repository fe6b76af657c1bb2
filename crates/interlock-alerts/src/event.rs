//! One committed leaf as an alert event: what kind of thing happened
//! ([`Category`]), how urgent it is ([`Severity`]), the facts a reader needs,
//! and the [`Record`] that ties it to the signed log.

use interlock_canon::{Map, Value};
use interlock_receipts::{ReceiptSummary, open_leaf_unverified, summarize};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::severity::Severity;

/// Where an event sits in the log: enough to verify it against a receipts
/// bundle or the live log (the leaf at `index` hashes to `leaf_hash`, and is
/// included in the tree of `checkpoint_size` leaves the log key signed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The log's origin (its checkpoints' first line).
    pub origin: String,
    /// The leaf's index, from 0: also the idempotency key of its delivery.
    pub index: u64,
    /// RFC 6962 leaf hash of the stored leaf bytes.
    pub leaf_hash: [u8; 32],
    /// The size of the latest signed checkpoint when the event was sent
    /// (always more than `index`: only signed leaves are delivered).
    pub checkpoint_size: u64,
}

/// What kind of thing a leaf records, as a sink filters it (`events = [...]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A tool call (or prompt/resource read) answered or forwarded.
    Call,
    /// A tool call held for a reviewer (a plan proposed for it).
    Hold,
    /// A tool call or read stopped by the gateway.
    Block,
    /// A server's surface changed (or a probe showed more power).
    Drift,
    /// A server quarantined.
    Quarantine,
    /// A reviewer's signed decision (plans, servers, tools, standing approvals,
    /// envelopes, approver keys).
    Decision,
    /// A plan's life: proposed, executing, a stage, succeeded, halted.
    Plan,
    /// The log's own bookkeeping and a forwarded call's intent leaf (its
    /// outcome leaf is the event): not sent unless a sink asks.
    Internal,
    /// Anything else the log records (connected clients, sign-in links).
    Other,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::Call,
        Category::Hold,
        Category::Block,
        Category::Drift,
        Category::Quarantine,
        Category::Decision,
        Category::Plan,
        Category::Internal,
        Category::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Call => "call",
            Category::Hold => "hold",
            Category::Block => "block",
            Category::Drift => "drift",
            Category::Quarantine => "quarantine",
            Category::Decision => "decision",
            Category::Plan => "plan",
            Category::Internal => "internal",
            Category::Other => "other",
        }
    }
}

/// The kind every leaf that does not open is reported under.
pub const UNREADABLE: &str = "unreadable";

/// A leaf's category and severity: the one typed mapping from what the log
/// says (kind, verdict, outcome) to how urgent it is.
pub fn classify(kind: &str, verdict: Option<&str>, outcome: Option<&str>) -> (Category, Severity) {
    use Category as C;
    use Severity as S;
    match kind {
        "tool.call" | "prompt.get" | "resource.read" | "completion.complete" => {
            match (verdict, outcome) {
                (Some("blocked"), _) | (_, Some("blocked")) => (C::Block, S::High),
                (Some("held"), _) | (_, Some("held")) => (C::Hold, S::Medium),
                (Some("shadow_would_block" | "shadow_would_hold"), _) => (C::Call, S::Low),
                (Some("not_served"), _) | (_, Some("not_served" | "refused")) => (C::Block, S::Low),
                _ => (C::Call, S::Info),
            }
        }
        "tool.call.intent" => (C::Internal, S::Info),
        // A coding agent's own tool use, reported by its hook (issue 40).
        "hook.call" => match verdict {
            Some("blocked") => (C::Block, S::High),
            Some("held") => (C::Hold, S::Medium),
            Some("not_allowed" | "rejected") => (C::Block, S::Low),
            Some("shadow_would_block" | "shadow_would_hold") => (C::Call, S::Low),
            _ => (C::Call, S::Info),
        },
        // A request to a model through the LLM proxy (issue 42).
        "llm.call" => match verdict {
            Some("blocked") => (C::Block, S::High),
            Some("held") => (C::Hold, S::Medium),
            Some("rejected" | "model_not_allowed" | "rate_limited" | "quota_exceeded") => {
                (C::Block, S::Low)
            }
            Some("shadow_would_block") => (C::Call, S::Low),
            _ => (C::Call, S::Info),
        },
        // The gateway's own probe of a tool (issue 39 item 17).
        "server.probe_call" => (C::Call, S::Info),
        "server.quarantined" => (C::Quarantine, S::High),
        "server.probe_drift" => (C::Drift, S::High),
        "server.drift" | "server.drift_held" => (C::Drift, S::Medium),
        "server.pending" => (C::Drift, S::Low),
        // A program a reviewer asked to run, waiting for the owner.
        "server.requested" => (C::Other, S::Medium),
        "plan.decision"
        | "plan.approved"
        | "plan.rejected"
        | "server.approved"
        | "server.rejected"
        | "tool.approved"
        | "tool.blocked"
        | "standing.granted"
        | "standing.revoked"
        | "tool.envelope_widened"
        | "approver.registered" => (C::Decision, S::Low),
        "plan.halted" | "executor.lost" => (C::Plan, S::Medium),
        k if k.starts_with("plan.") || k.starts_with("stage.") => (C::Plan, S::Info),
        // A witness saw another history under this log's key (issue 43).
        "log.witness_refused" => (C::Other, S::Critical),
        k if k.starts_with("log.") => (C::Internal, S::Info),
        UNREADABLE => (C::Other, S::Critical),
        _ => (C::Other, S::Info),
    }
}

/// One leaf, ready for a sink.
#[derive(Clone, Debug)]
pub struct AlertEvent {
    pub record: Record,
    /// The predicate's type (`tool.call`, `server.drift`, ...), or
    /// [`UNREADABLE`].
    pub kind: String,
    pub category: Category,
    pub severity: Severity,
    /// The decoded facts (server, agent, tool, verdict, approver, findings, ...).
    pub summary: ReceiptSummary,
    /// The hashes of a call's arguments and result, when the leaf has them:
    /// never the values.
    pub arguments_hash: Option<String>,
    pub result_hash: Option<String>,
    /// A call's id, joining its intent and outcome leaves.
    pub call_id: Option<String>,
    /// A *Send test* event (`alerts test`): not a delivery of its leaf, so
    /// its idempotency keys differ from the leaf's.
    pub test: bool,
    /// A forwarded call's intent leaf (the outcome leaf's `intent_index`):
    /// where its span starts. The leaf names only the index; delivery fills
    /// in the intent's hash and time from the log for the formats that use
    /// them (OTLP traces).
    pub intent: Option<Intent>,
}

/// The intent leaf of a forwarded call, as far as it is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    pub index: u64,
    /// RFC 6962 leaf hash of the intent leaf (filled in by delivery).
    pub leaf_hash: Option<[u8; 32]>,
    /// Its time, Unix seconds (filled in by delivery).
    pub time: Option<i64>,
}

fn text(m: &Map, k: &str) -> Option<String> {
    m.get(k).and_then(Value::as_str).map(str::to_owned)
}

impl AlertEvent {
    /// The event of the leaf `data` at `record.index` (unverified here: the
    /// log's audit and the receiver's verification check the signatures).
    pub fn from_leaf(data: &[u8], record: Record, appended_at: i64) -> AlertEvent {
        match open_leaf_unverified(data) {
            Ok(opened) => {
                let summary = summarize(&opened);
                let (category, severity) = classify(
                    &summary.kind,
                    summary.verdict.as_deref(),
                    summary.outcome.as_deref(),
                );
                let p = &opened.predicate;
                AlertEvent {
                    record,
                    kind: summary.kind.clone(),
                    category,
                    severity,
                    arguments_hash: text(p, "arguments_hash"),
                    result_hash: text(p, "result_hash").or_else(|| text(p, "response_hash")),
                    call_id: text(p, "call_id"),
                    intent: p
                        .get("intent_index")
                        .and_then(Value::as_number)
                        .and_then(|n| n.as_i64())
                        .and_then(|i| u64::try_from(i).ok())
                        .map(|index| Intent {
                            index,
                            leaf_hash: None,
                            time: None,
                        }),
                    summary,
                    test: false,
                }
            }
            Err(_) => {
                let (category, severity) = classify(UNREADABLE, None, None);
                AlertEvent {
                    record,
                    kind: UNREADABLE.into(),
                    category,
                    severity,
                    summary: ReceiptSummary {
                        kind: UNREADABLE.into(),
                        time: appended_at,
                        ..ReceiptSummary::default()
                    },
                    arguments_hash: None,
                    result_hash: None,
                    call_id: None,
                    test: false,
                    intent: None,
                }
            }
        }
    }

    /// The test event of a sink (`alerts test`, *Send test*): the record of
    /// the latest signed leaf (so the receiver can try verifying it), kind
    /// `alert.test`, informational, marked `"test": true`.
    pub fn test_event(record: Record, time: i64) -> AlertEvent {
        AlertEvent {
            record,
            kind: "alert.test".into(),
            category: Category::Other,
            severity: Severity::Info,
            summary: ReceiptSummary {
                kind: "alert.test".into(),
                time,
                reasons: Some("a test event sent from Interlock's alert settings".into()),
                ..ReceiptSummary::default()
            },
            arguments_hash: None,
            result_hash: None,
            call_id: None,
            test: true,
            intent: None,
        }
    }

    /// The key a receiver drops repeats by: the leaf index, or for a test
    /// event `test-<index>-<time>` (never a real delivery's key).
    pub fn idempotency_key(&self) -> String {
        if self.test {
            format!("test-{}-{}", self.record.index, self.summary.time)
        } else {
            self.record.index.to_string()
        }
    }

    /// The leaf hash as lower-case hex.
    pub fn leaf_hash_hex(&self) -> String {
        hex::encode(self.record.leaf_hash)
    }

    /// RFC 3339 UTC time of the leaf.
    pub fn time_rfc3339(&self) -> String {
        interlock_core::time::rfc3339(self.summary.time)
    }

    /// One line a human reads first (a chat message, a pager summary).
    pub fn headline(&self) -> String {
        let s = &self.summary;
        let mut line = format!("[{}] {}", self.severity, self.kind);
        if let Some(v) = &s.verdict {
            line.push_str(&format!(" {v}"));
        }
        match (&s.server, &s.tool) {
            (Some(server), Some(tool)) => line.push_str(&format!(" {server}/{tool}")),
            (Some(server), None) => line.push_str(&format!(" server {server}")),
            _ => {}
        }
        if let Some(a) = &s.agent {
            line.push_str(&format!(" by {a}"));
        }
        if let Some(p) = &s.plan_id {
            line.push_str(&format!(" (plan {p})"));
        }
        if let Some(r) = &s.reasons {
            line.push_str(&format!(": {r}"));
        }
        line
    }

    /// The event as JSON: the body of the generic webhook, and the document
    /// every other format wraps. Stable member names (`interlock.alert/v1`).
    pub fn to_json(&self) -> serde_json::Value {
        let s = &self.summary;
        let mut v = json!({
            "schema": "interlock.alert/v1",
            "origin": self.record.origin,
            "index": self.record.index,
            "leaf_hash": self.leaf_hash_hex(),
            "checkpoint_size": self.record.checkpoint_size,
            "kind": self.kind,
            "category": self.category.as_str(),
            "severity": self.severity.as_str(),
            "time": self.time_rfc3339(),
        });
        let m = v.as_object_mut().expect("an object");
        let mut put = |k: &str, val: &Option<String>| {
            if let Some(val) = val {
                m.insert(k.into(), val.clone().into());
            }
        };
        put("server", &s.server);
        put("agent", &s.agent);
        put("tool", &s.tool);
        put("plan_id", &s.plan_id);
        put("verdict", &s.verdict);
        put("outcome", &s.outcome);
        put("approver", &s.approver);
        put("reasons", &s.reasons);
        put("call_id", &self.call_id);
        put("arguments_hash", &self.arguments_hash);
        put("result_hash", &self.result_hash);
        if let Some((name, value)) = &s.hash {
            m.insert("bound_hash".into(), json!({ "name": name, "value": value }));
        }
        if let Some(shadow) = s.shadow {
            m.insert("shadow".into(), shadow.into());
        }
        if let Some(f) = &s.findings {
            m.insert("findings".into(), f.clone());
        }
        if self.test {
            m.insert("test".into(), true.into());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopping_outranks_holding_and_holding_outranks_allowing() {
        assert_eq!(
            classify("tool.call", Some("blocked"), Some("blocked")),
            (Category::Block, Severity::High)
        );
        assert_eq!(
            classify("tool.call", Some("held"), Some("held")),
            (Category::Hold, Severity::Medium)
        );
        assert_eq!(
            classify("tool.call", Some("allowed"), Some("ok")),
            (Category::Call, Severity::Info)
        );
        assert_eq!(
            classify("server.quarantined", None, None),
            (Category::Quarantine, Severity::High)
        );
        assert_eq!(
            classify("server.drift_held", None, None),
            (Category::Drift, Severity::Medium)
        );
        assert_eq!(
            classify("plan.approved", None, None),
            (Category::Decision, Severity::Low)
        );
        assert_eq!(
            classify("tool.call.intent", Some("allowed"), None).0,
            Category::Internal
        );
        assert_eq!(
            classify("log.tail_adopted", None, None).0,
            Category::Internal
        );
        // A witness refusing the log's checkpoint is a fork: delivered, critical.
        assert_eq!(
            classify("log.witness_refused", None, None),
            (Category::Other, Severity::Critical)
        );
    }

    #[test]
    fn a_leaf_that_does_not_open_is_critical_not_dropped() {
        let record = Record {
            origin: "o".into(),
            index: 3,
            leaf_hash: [7; 32],
            checkpoint_size: 4,
        };
        let e = AlertEvent::from_leaf(b"not a leaf", record, 1_700_000_000);
        assert_eq!(e.kind, UNREADABLE);
        assert_eq!(e.severity, Severity::Critical);
        assert_eq!(e.to_json()["index"], 3);
        assert_eq!(e.to_json()["time"], "2023-11-14T22:13:20Z");
    }
}
