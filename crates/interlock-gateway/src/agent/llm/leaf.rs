//! The `llm.call` leaf: one per request the proxy judged — who (agent,
//! role), what (the model, its provider, the request body's digest, whether
//! it streams, what the scan could not read; never the prompt's text unless
//! the key's `llm_policy.keep_prompt_text` opts in), each layer's time, and
//! the verdict with the layer, rule and place that decided it, and its risk
//! (0–100, as on the MCP path). Written before the request leaves for the
//! provider. A held request has one leaf when held and one when decided.

use interlock_canon::{Map, Value};
use interlock_llm::{ChatRequest, Hit, Layer};
use interlock_store::ApiKeyRecord;
use interlock_trust::events::EventType;

use crate::gateway::Gateway;

/// What the proxy decided about a request.
pub(super) enum LlmVerdict {
    /// No layer stopped it: relayed.
    Allowed,
    /// A layer stopped it: refused, nothing sent.
    Blocked(Hit),
    /// A shadow key: a layer would have stopped it; relayed.
    ShadowWouldBlock(Hit),
    /// A layer stopped it and it waits for a reviewer as `plan_id`.
    Held { hit: Hit, plan_id: String },
    /// A reviewer approved its plan, which ran: sent.
    Approved { hit: Hit, plan_id: String },
    /// Its plan was rejected (or expired, or superseded): not sent.
    Rejected {
        hit: Hit,
        plan_id: String,
        status: &'static str,
    },
    /// Refused before the scan by the key's own limits on the proxy
    /// (`model_not_allowed`, `rate_limited`, `quota_exceeded`).
    Limited { name: &'static str, message: String },
}

impl LlmVerdict {
    fn name(&self) -> &'static str {
        match self {
            LlmVerdict::Allowed => "allowed",
            LlmVerdict::Blocked(_) => "blocked",
            LlmVerdict::ShadowWouldBlock(_) => "shadow_would_block",
            LlmVerdict::Held { .. } => "held",
            LlmVerdict::Approved { .. } => "approved",
            LlmVerdict::Rejected { .. } => "rejected",
            LlmVerdict::Limited { name, .. } => name,
        }
    }

    fn hit(&self) -> Option<&Hit> {
        match self {
            LlmVerdict::Allowed | LlmVerdict::Limited { .. } => None,
            LlmVerdict::Blocked(h)
            | LlmVerdict::ShadowWouldBlock(h)
            | LlmVerdict::Held { hit: h, .. }
            | LlmVerdict::Approved { hit: h, .. }
            | LlmVerdict::Rejected { hit: h, .. } => Some(h),
        }
    }

    fn plan_id(&self) -> Option<&str> {
        match self {
            LlmVerdict::Held { plan_id, .. }
            | LlmVerdict::Approved { plan_id, .. }
            | LlmVerdict::Rejected { plan_id, .. } => Some(plan_id),
            _ => None,
        }
    }
}

/// How long one layer took.
pub(super) struct LayerTime {
    pub layer: Layer,
    pub micros: u128,
}

/// What the leaf is made of.
#[derive(Clone, Copy)]
pub(super) struct Leaf<'a> {
    pub agent: &'a ApiKeyRecord,
    pub provider: &'a str,
    pub request: &'a ChatRequest,
    pub body: &'a [u8],
    pub times: &'a [LayerTime],
    /// What asking the judge came to, and the fail mode, if it was asked.
    pub judged: Option<&'a (crate::llm::judge::Judged, interlock_llm::judge::FailMode)>,
    /// With a judge: the request's fingerprint, and the verdict learned for
    /// it before, if any.
    pub fingerprint: Option<(&'a str, Option<&'a interlock_llm::fingerprint::Known>)>,
    pub verdict: &'a LlmVerdict,
    /// The key opted in to keeping its prompts' texts on its leaves.
    pub keep_text: bool,
}

impl Leaf<'_> {
    /// Appends the leaf; its index, or why it could not be written.
    pub(super) async fn append(&self, gw: &Gateway) -> Result<u64, String> {
        let mut m = Map::new();
        m.insert("agent".into(), self.agent.name.as_str().into());
        m.insert("role".into(), self.agent.role.as_str().into());
        if self.agent.shadow {
            m.insert("shadow".into(), true.into());
        }
        m.insert("model".into(), self.request.model.as_str().into());
        m.insert("provider".into(), self.provider.into());
        m.insert(
            "request_hash".into(),
            interlock_canon::Digest::of_bytes(self.body)
                .to_string()
                .into(),
        );
        m.insert("stream".into(), self.request.stream.into());
        m.insert("parts".into(), int_u(self.request.parts.len() as u64));
        if self.keep_text {
            m.insert(
                "prompt".into(),
                Value::Array(
                    self.request
                        .parts
                        .iter()
                        .map(|p| {
                            let mut t = Map::new();
                            t.insert("role".into(), p.role.as_str().into());
                            t.insert("path".into(), p.path.as_str().into());
                            t.insert("text".into(), p.text.as_str().into());
                            Value::Object(t)
                        })
                        .collect(),
                ),
            );
        }
        if !self.request.unread.is_empty() {
            m.insert(
                "unread".into(),
                Value::Array(
                    self.request
                        .unread
                        .iter()
                        .map(|u| u.as_str().into())
                        .collect(),
                ),
            );
        }
        m.insert(
            "layers".into(),
            Value::Array(
                self.times
                    .iter()
                    .map(|t| {
                        let mut l = Map::new();
                        l.insert("layer".into(), t.layer.as_str().into());
                        l.insert("micros".into(), int_u(t.micros as u64));
                        Value::Object(l)
                    })
                    .collect(),
            ),
        );
        if let Some((fp, known)) = self.fingerprint {
            let mut f = Map::new();
            f.insert("digest".into(), fp.into());
            f.insert(
                "known".into(),
                match known {
                    None => "no",
                    Some(k) if k.is_unsafe => "unsafe",
                    Some(_) => "safe",
                }
                .into(),
            );
            m.insert("fingerprint".into(), Value::Object(f));
        }
        if let Some((judged, fail_mode)) = self.judged {
            let mut j = Map::new();
            j.insert("outcome".into(), judged.name().into());
            j.insert("fail_mode".into(), fail_mode.as_str().into());
            if let crate::llm::judge::Judged::Failed(e) = judged {
                j.insert("error".into(), e.to_string().into());
            }
            m.insert("judge".into(), Value::Object(j));
        }
        let mut v = Map::new();
        v.insert("verdict".into(), self.verdict.name().into());
        let (score, level) = self.verdict.hit().map_or((0, "low"), Hit::risk);
        v.insert("risk_score".into(), int_u(u64::from(score)));
        v.insert("risk".into(), level.into());
        if let Some(hit) = self.verdict.hit() {
            v.insert("layer".into(), hit.layer.as_str().into());
            v.insert("rule".into(), hit.rule.as_str().into());
            v.insert("path".into(), hit.path.as_str().into());
            v.insert("reason".into(), hit.reason.as_str().into());
        }
        if let Some(plan_id) = self.verdict.plan_id() {
            v.insert("plan_id".into(), plan_id.into());
        }
        if let LlmVerdict::Rejected { status, .. } = self.verdict {
            v.insert("plan_status".into(), (*status).into());
        }
        if let LlmVerdict::Limited { message, .. } = self.verdict {
            v.insert("reason".into(), message.as_str().into());
        }
        m.insert("verdict".into(), Value::Object(v));
        gw.engine()
            .record(EventType::LlmCall.as_str(), m)
            .await
            .map(|a| a.index)
            .map_err(|e| e.to_string())
    }
}

/// The `llm.response` leaf: what the answer scan found in the answer to
/// the request logged at `call_index`, and whether it redacted any of it.
pub(super) async fn append_response(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    call_index: u64,
    found: &interlock_llm::answer::Found,
    policy: &interlock_inspect::ResponsePolicy,
) -> Result<u64, String> {
    let mut m = Map::new();
    m.insert("agent".into(), agent.name.as_str().into());
    m.insert("call_index".into(), int_u(call_index));
    m.insert(
        "findings".into(),
        Value::Array(
            found
                .iter()
                .map(|(category, rule)| {
                    let mut f = Map::new();
                    f.insert("category".into(), category.as_str().into());
                    f.insert("rule".into(), (*rule).into());
                    f.insert(
                        "action".into(),
                        match policy.action(*category) {
                            interlock_inspect::Action::Allow => "reported",
                            _ => "redacted",
                        }
                        .into(),
                    );
                    Value::Object(f)
                })
                .collect(),
        ),
    );
    gw.engine()
        .record(EventType::LlmResponse.as_str(), m)
        .await
        .map(|a| a.index)
        .map_err(|e| e.to_string())
}

/// A leaf integer from a count or a time.
fn int_u(i: u64) -> Value {
    Value::clamped_int(i64::try_from(i).unwrap_or(i64::MAX))
}
