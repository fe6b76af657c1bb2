//! The behavioural envelope on the call path (issue 16 item 2): each served
//! tool's [`Envelope`] is learned from the calls the gateway forwards, fixed
//! after the policy's learning period (`[envelope]`), and then every call is
//! checked against it.
//!
//! What is checked when:
//! - **Before the call** ([`before`]): the hosts and path roots its arguments
//!   name. One outside the envelope holds the call (it is proposed as a plan
//!   a reviewer approves, like any held call): it has not run yet, so it can
//!   still be stopped.
//! - **After the call** ([`after`]): what the result carries — PII and secret
//!   kinds, hosts and roots it names, its size, `structuredContent`'s members
//!   and types — and whether `structuredContent` validates against the
//!   approved `outputSchema` (checked from the first call, no learning). A
//!   result can't be un-run, so one outside is withheld from the agent (like
//!   the response scan withholding injected text) and the finding recorded.
//!   An error rate far above the learned one is reported, never enforced.
//!
//! Every finding goes into the call's one `tool.call` leaf
//! (`verdict.envelope`, records of `docs/schemas/envelope-finding.schema.json`),
//! written before the agent gets the answer. Fixing an envelope is a
//! `tool.envelope_fixed` leaf committed with the stored row; a reviewer's
//! widening a `tool.envelope_widened` leaf committed with its compare-and-swap.
//!
//! State is per `(server, tool)`, loaded from the store on first use (so it
//! survives a restart) and kept in memory; the checks themselves are the pure
//! `interlock-envelope` crate.

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_envelope::{ArgFacts, Bounds, Envelope, EnvelopeFinding, ResultFacts, Stage};
use interlock_inspect::Finding;
use interlock_store::StateChange;
use interlock_surface::Tool;

use crate::config::EnvelopeMode;
use crate::gateway::Gateway;
use interlock_trust::envelopes::Phase;

/// What the gateway did about a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The call was held for a reviewer.
    Held,
    /// The result was withheld from the agent.
    Withheld,
    /// Recorded only (`mode = "monitor"`, a shadow key, an error rate).
    Reported,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Held => "held",
            Action::Withheld => "withheld",
            Action::Reported => "reported",
        }
    }
}

/// One finding as the leaf records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub finding: EnvelopeFinding,
    pub action: Action,
    /// The envelope checked against (`None`: the `outputSchema` check, which
    /// needs no learned envelope).
    pub envelope_hash: Option<Digest>,
}

impl Recorded {
    /// The record's canonical form (`docs/schemas/envelope-finding.schema.json`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), self.finding.kind.as_str().into());
        m.insert(
            "stage".into(),
            match self.finding.kind.stage() {
                Stage::Call => "call",
                Stage::Result => "result",
            }
            .into(),
        );
        m.insert("subject".into(), self.finding.subject.as_str().into());
        m.insert("explanation".into(), self.finding.explanation().into());
        m.insert("action".into(), self.action.as_str().into());
        if let Some(h) = &self.envelope_hash {
            m.insert("envelope_hash".into(), h.to_string().into());
        }
        Value::Object(m)
    }
}

/// What the arguments showed, and what of it is outside.
pub(crate) struct Before {
    pub facts: ArgFacts,
    pub findings: Vec<Recorded>,
}

impl Before {
    /// The sentences that hold the call (empty: nothing does).
    pub fn hold_reasons(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|r| r.action == Action::Held)
            .map(|r| format!("outside the tool's envelope: {}", r.finding.explanation()))
            .collect()
    }
}

fn mode(gw: &Gateway) -> EnvelopeMode {
    gw.config().envelope.mode
}

fn action(gw: &Gateway, shadow: bool, finding: &EnvelopeFinding) -> Action {
    if mode(gw) != EnvelopeMode::Hold || shadow || !finding.kind.enforced() {
        return Action::Reported;
    }
    match finding.kind.stage() {
        Stage::Call => Action::Held,
        Stage::Result => Action::Withheld,
    }
}

/// Before forwarding: the arguments against the fixed envelope.
pub(crate) async fn before(
    gw: &Gateway,
    server: &str,
    tool: &str,
    args: &Value,
    shadow: bool,
) -> Before {
    if mode(gw) == EnvelopeMode::Off {
        return Before {
            facts: ArgFacts::default(),
            findings: Vec::new(),
        };
    }
    let facts = ArgFacts::of(args);
    let entry = gw.envelopes().entry(gw.engine(), server, tool).await;
    let entry = entry.lock().expect("envelope lock");
    let findings = match &entry.phase {
        Phase::Learning { .. } => Vec::new(),
        Phase::Fixed { hash } => entry
            .envelope
            .check_arguments(&facts)
            .into_iter()
            .map(|finding| Recorded {
                action: action(gw, shadow, &finding),
                finding,
                envelope_hash: Some(*hash),
            })
            .collect(),
    };
    Before { facts, findings }
}

/// The upstream's answer, as the envelope reads it.
pub(crate) enum Answer<'a> {
    /// A tool result's raw JSON, the response scan's findings, and the
    /// document the scan parsed (when it passed unchanged; else parsed here).
    Result(&'a str, &'a [Finding], Option<&'a serde_json::Value>),
    /// A JSON-RPC error's raw JSON and the scan's findings.
    Error(&'a str, &'a [Finding]),
}

/// After the upstream answered: learn from it, or check it.
pub(crate) async fn after(
    gw: &Gateway,
    server: &str,
    approved: Option<&Tool>,
    tool: &str,
    before: &Before,
    answer: Answer<'_>,
    shadow: bool,
) -> Vec<Recorded> {
    if mode(gw) == EnvelopeMode::Off {
        return Vec::new();
    }
    let reparsed: Option<serde_json::Value>;
    let (facts, parsed) = match answer {
        Answer::Result(raw, findings, scanned) => {
            let parsed = match scanned {
                Some(doc) => Some(doc),
                None => {
                    reparsed = serde_json::from_str(raw).ok();
                    reparsed.as_ref()
                }
            };
            let facts = parsed
                .map(|v| ResultFacts::of(v, raw.len(), findings))
                .unwrap_or_else(|| ResultFacts::of_error(raw.len(), findings));
            (facts, parsed)
        }
        Answer::Error(raw, findings) => (ResultFacts::of_error(raw.len(), findings), None),
    };
    let mut out = Vec::new();
    if let (Some(result), Some(schema)) = (parsed, approved.and_then(|t| gw.envelopes().schema(t)))
        && let Some(finding) = schema.check(result)
    {
        out.push(Recorded {
            action: action(gw, shadow, &finding),
            finding,
            envelope_hash: None,
        });
    }
    let entry = gw.envelopes().entry(gw.engine(), server, tool).await;
    let mut to_fix = None;
    let mut to_save = None;
    {
        let mut e = entry.lock().expect("envelope lock");
        match e.phase.clone() {
            Phase::Fixed { hash } => {
                let bounds = Bounds {
                    size_factor: gw.config().envelope.size_factor,
                };
                let learned_rate = e.envelope.error_rate();
                let mut found = e.envelope.check_result(&facts, bounds);
                found.extend(e.recent.record(facts.is_error, learned_rate));
                let is_error = matches!(answer, Answer::Error(..));
                out.extend(found.into_iter().map(|finding| Recorded {
                    // An upstream error is reported only: withholding it
                    // would hide nothing the scan does not already redact.
                    action: if is_error {
                        Action::Reported
                    } else {
                        action(gw, shadow, &finding)
                    },
                    finding,
                    envelope_hash: Some(hash),
                }));
            }
            Phase::Learning { since } => {
                e.envelope.observe_arguments(&before.facts);
                e.envelope.observe_result(&facts);
                let policy = &gw.config().envelope;
                let learned = e.envelope.calls >= policy.learn_calls
                    && gw.engine().now().saturating_sub(since)
                        >= i64::try_from(policy.learn_secs).unwrap_or(i64::MAX);
                if learned {
                    let hash = e.envelope.hash();
                    e.phase = Phase::Fixed { hash };
                    to_fix = Some((e.envelope.clone(), hash));
                } else {
                    to_save = Some((e.envelope.clone(), since));
                }
            }
        }
    }
    if let Some((envelope, since)) = to_save {
        let value = envelope.to_value();
        let bytes = canon::canonical_bytes(&value);
        let hash = canon::digest(&value).to_string();
        if let Err(e) = gw
            .engine()
            .store()
            .save_learning_envelope(server, tool, &bytes, &hash, since)
            .await
        {
            tracing::warn!(error = %e, server, tool, "a learning envelope was not stored");
        }
    }
    if let Some((envelope, hash)) = to_fix {
        fix(gw, server, tool, &envelope, hash).await;
    }
    out
}

/// Records a fixed envelope: its `tool.envelope_fixed` leaf (the whole
/// envelope, so the log shows what was fixed) and its row, in one transaction.
async fn fix(gw: &Gateway, server: &str, tool: &str, envelope: &Envelope, hash: Digest) {
    let value = envelope.to_value();
    let mut m = Map::new();
    m.insert("server".into(), server.into());
    m.insert("tool".into(), tool.into());
    m.insert("envelope_hash".into(), hash.to_string().into());
    m.insert("envelope".into(), value.clone());
    let change = StateChange::FixEnvelope {
        server: server.to_owned(),
        tool: tool.to_owned(),
        envelope: canon::canonical_bytes(&value),
        hash: hash.to_string(),
        now: gw.engine().now(),
    };
    if let Err(e) = gw
        .engine()
        .record_with_change(
            interlock_trust::events::EventType::ToolEnvelopeFixed.as_str(),
            m,
            change,
        )
        .await
    {
        tracing::warn!(error = %e, server, tool, "the fixed envelope was not recorded");
        // Whatever the store holds (another process fixed it first) is the truth.
        gw.envelopes().forget(server, tool);
    }
}

/// The answer when a result is withheld: the explanations, never the result.
pub(crate) fn withheld_text(found: &[Recorded]) -> Option<String> {
    let reasons: Vec<String> = found
        .iter()
        .filter(|r| r.action == Action::Withheld)
        .map(|r| r.finding.explanation())
        .collect();
    (!reasons.is_empty()).then(|| {
        format!(
            "the gateway withheld this result: it is outside the tool's approved behaviour ({}); a reviewer can widen the tool's envelope",
            reasons.join("; ")
        )
    })
}

/// The leaf's `verdict.envelope` member.
pub(crate) fn records_value(found: &[Recorded]) -> Value {
    Value::Array(found.iter().map(Recorded::to_value).collect())
}
