//! The `hook.call` leaf: one per answer the gateway gives a hook — who
//! (agent, role, client, session), what (the canonical tool, the binding's
//! hash, the working directory; never the command or the file's text), the
//! verdict and its basis, the risk and findings, and for an after-event the
//! outcome the client reported. Written before the answer leaves: an allow
//! whose leaf cannot be written is a deny.

use interlock_canon::{Map, Value};
use interlock_hooks::{Answer, HookEvent};
use interlock_store::ApiKeyRecord;
use interlock_trust::events::EventType;

use super::super::calls::assess::Assessment;
use crate::gateway::Gateway;

/// What the gateway decided about a hook's tool use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HookVerdict {
    /// Nothing held it.
    Allowed,
    /// The role does not allow this native tool use.
    NotAllowed { reason: String },
    /// Refused outright (a secret in the command or the URL).
    Blocked { reasons: String },
    /// Waits for a reviewer as plan `plan_id` (the hook was answered deny).
    Held { plan_id: String, reasons: String },
    /// A reviewer approved the held use: its plan ran (once), the hook was
    /// answered allow.
    Approved { plan_id: String },
    /// A reviewer rejected it, or its plan expired.
    Rejected { plan_id: String, status: String },
    /// A reviewer approved exactly this use for a while: a standing approval.
    Standing { id: String, reasons: String },
    /// A shadow key: it would have been blocked or held, and was allowed.
    Shadow {
        would: &'static str,
        reasons: String,
    },
    /// An after-event: the outcome the client reported.
    Reported,
}

impl HookVerdict {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            HookVerdict::Allowed => "allowed",
            HookVerdict::NotAllowed { .. } => "not_allowed",
            HookVerdict::Blocked { .. } => "blocked",
            HookVerdict::Held { .. } => "held",
            HookVerdict::Approved { .. } => "approved_plan",
            HookVerdict::Standing { .. } => "standing_approval",
            HookVerdict::Rejected { .. } => "rejected",
            HookVerdict::Shadow { would: "block", .. } => "shadow_would_block",
            HookVerdict::Shadow { .. } => "shadow_would_hold",
            HookVerdict::Reported => "reported",
        }
    }

    fn write(&self, m: &mut Map) {
        m.insert("verdict".into(), self.name().into());
        match self {
            HookVerdict::Allowed | HookVerdict::Reported => {}
            HookVerdict::NotAllowed { reason } => {
                m.insert("reason".into(), reason.as_str().into());
            }
            HookVerdict::Blocked { reasons } => {
                m.insert("block_reasons".into(), reasons.as_str().into());
            }
            HookVerdict::Held { plan_id, reasons } => {
                m.insert("plan_id".into(), plan_id.as_str().into());
                m.insert("hold_reasons".into(), reasons.as_str().into());
            }
            HookVerdict::Standing { id, reasons } => {
                m.insert("standing_approval".into(), id.as_str().into());
                m.insert("hold_reasons".into(), reasons.as_str().into());
            }
            HookVerdict::Approved { plan_id } => {
                m.insert("plan_id".into(), plan_id.as_str().into());
            }
            HookVerdict::Rejected { plan_id, status } => {
                m.insert("plan_id".into(), plan_id.as_str().into());
                m.insert("status".into(), status.as_str().into());
            }
            HookVerdict::Shadow { would, reasons } => {
                let key = if *would == "block" {
                    "block_reasons"
                } else {
                    "hold_reasons"
                };
                m.insert(key.into(), reasons.as_str().into());
            }
        }
    }
}

/// Appends the leaf; its index, or why it could not be written.
pub(crate) async fn append(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    verdict: &HookVerdict,
    assessment: Option<&Assessment>,
) -> Result<u64, String> {
    let mut m = Map::new();
    m.insert("agent".into(), agent.name.as_str().into());
    m.insert("role".into(), agent.role.as_str().into());
    m.insert("client".into(), event.client.slug().into());
    m.insert("event".into(), event.event_name.as_str().into());
    m.insert("phase".into(), event.phase.as_str().into());
    m.insert(
        "session".into(),
        event.session.as_deref().map_or(Value::Null, Value::from),
    );
    m.insert("tool".into(), event.canonical_tool().into());
    m.insert("tool_name".into(), event.tool_name.as_str().into());
    m.insert("binding_hash".into(), event.input_hash().to_string().into());
    m.insert("cwd".into(), event.cwd.as_str().into());
    if agent.shadow {
        m.insert("shadow".into(), true.into());
    }
    let mut v = Map::new();
    verdict.write(&mut v);
    if let Some(a) = assessment {
        v.insert("risk".into(), a.risk.name().into());
        v.insert("score".into(), Value::clamped_int(i64::from(a.score)));
        v.insert("findings".into(), a.findings_value());
    }
    m.insert("verdict".into(), Value::Object(v));
    if let Some(outcome) = &event.outcome {
        let mut o = Map::new();
        o.insert(
            "exit_code".into(),
            outcome.exit_code.map_or(Value::Null, Value::clamped_int),
        );
        o.insert("failed".into(), outcome.failed.into());
        o.insert(
            "files_changed".into(),
            Value::Array(
                outcome
                    .files_changed
                    .iter()
                    .map(|f| f.as_str().into())
                    .collect(),
            ),
        );
        m.insert("outcome".into(), Value::Object(o));
    }
    gw.engine()
        .record(EventType::HookCall.as_str(), m)
        .await
        .map(|a| a.index)
        .map_err(|e| e.to_string())
}

/// Writes the leaf, then answers `answer` — or a deny if it cannot be
/// written (nothing runs unlogged).
pub(super) async fn logged(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    verdict: &HookVerdict,
    assessment: Option<&Assessment>,
    answer: Answer,
) -> Answer {
    match append(gw, agent, event, verdict, assessment).await {
        Ok(_) => answer,
        Err(e) => Answer::Deny {
            reason: format!("Interlock refused this tool use: its log could not be written: {e}"),
        },
    }
}
