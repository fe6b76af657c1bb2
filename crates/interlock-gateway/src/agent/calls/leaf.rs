//! The log leaves of the call path, as types: what was decided about a call
//! ([`Verdict`]), what came of it ([`Outcome`]), what the response scan did
//! ([`ResponseScan`]); and of a content read ([`ReadRecord`]). [`CallLeaf`]
//! and [`ReadRecord`] are the only writers of `tool.call`, `prompt.get` and
//! `resource.read` leaves; the pipeline calls them in one place per verdict.
//!
//! The leaf's shape (member names and values) is what receipts, the UI's Log
//! view and auditors read: it is unchanged from the string-keyed record it
//! replaces.

use std::time::Duration;

use interlock_canon::{Digest, Map, Value};
use interlock_engine::{Engine, EngineError};
use interlock_inspect::Finding;
use interlock_store::ApiKeyRecord;

use super::assess::{Assessment, findings_value};
use super::scan::{Scan, Scanned, Unscannable};
use interlock_trust::events::EventType;

/// The most characters of an outcome's detail kept in a leaf.
const MAX_DETAIL_CHARS: usize = 512;

/// What the gateway decided about a tool call (the leaf's `verdict.verdict`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The tool is known but not served now (pending, held or quarantined
    /// drift, a rejected server).
    NotServed,
    /// Refused outright (a secret in the arguments): never forwarded.
    Stopped { reasons: String },
    /// Waits for a reviewer as plan `plan_id`.
    Held { plan_id: String, reasons: String },
    /// A reviewer approved the held call: its plan ran (once).
    RunApproved {
        plan_id: String,
        hold_reasons: String,
    },
    /// Forwarded to the upstream, on this basis.
    Forwarded(Basis),
    /// Refused by the key's rate limit or monthly quota (issue 20 item 4):
    /// never assessed, forwarded or held.
    Limited(crate::sessions::limits::Limited),
}

/// Why a forwarded call was allowed to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Nothing held it.
    Allowed,
    /// A reviewer approved this class of call in advance.
    Standing { id: String, hold_reasons: String },
    /// A shadow key: it would have been stopped.
    ShadowWouldStop { reasons: String },
    /// A shadow key: it would have been held.
    ShadowWouldHold { reasons: String },
}

impl Verdict {
    /// The name the leaf records.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::NotServed => "not_served",
            Verdict::Stopped { .. } => "blocked",
            Verdict::Held { .. } => "held",
            Verdict::RunApproved { .. } => "approved_plan",
            Verdict::Forwarded(Basis::Allowed) => "allowed",
            Verdict::Forwarded(Basis::Standing { .. }) => "standing_approval",
            Verdict::Forwarded(Basis::ShadowWouldStop { .. }) => "shadow_would_block",
            Verdict::Forwarded(Basis::ShadowWouldHold { .. }) => "shadow_would_hold",
            Verdict::Limited(l) => l.name(),
        }
    }

    /// The verdict's own members of the leaf's `verdict` object.
    fn write(&self, m: &mut Map) {
        m.insert("verdict".into(), self.name().into());
        match self {
            Verdict::NotServed | Verdict::Forwarded(Basis::Allowed) => {}
            Verdict::Stopped { reasons }
            | Verdict::Forwarded(Basis::ShadowWouldStop { reasons }) => {
                m.insert("block_reasons".into(), reasons.as_str().into());
            }
            Verdict::Forwarded(Basis::ShadowWouldHold { reasons }) => {
                m.insert("hold_reasons".into(), reasons.as_str().into());
            }
            Verdict::Held { plan_id, reasons } => {
                m.insert("hold_reasons".into(), reasons.as_str().into());
                m.insert("plan_id".into(), plan_id.as_str().into());
            }
            Verdict::RunApproved {
                plan_id,
                hold_reasons,
            } => {
                m.insert("hold_reasons".into(), hold_reasons.as_str().into());
                m.insert("plan_id".into(), plan_id.as_str().into());
            }
            Verdict::Forwarded(Basis::Standing { id, hold_reasons }) => {
                m.insert("standing_approval".into(), id.as_str().into());
                m.insert("hold_reasons".into(), hold_reasons.as_str().into());
            }
            Verdict::Limited(l) => write_limited(l, m),
        }
    }
}

/// A limit's refusal as leaf members: the retry time and the limit that
/// refused (a tool call's `verdict`, a read's leaf itself).
fn write_limited(l: &crate::sessions::limits::Limited, m: &mut Map) {
    let secs = i64::try_from(l.retry_after_secs).unwrap_or(i64::MAX >> 11);
    m.insert("retry_after_secs".into(), Value::clamped_int(secs));
    match &l.limit {
        crate::sessions::limits::Limit::Rate { per_minute } => {
            m.insert("rate_per_minute".into(), Value::clamped_int(*per_minute));
        }
        crate::sessions::limits::Limit::Quota { quota, month } => {
            m.insert("monthly_quota".into(), Value::clamped_int(*quota));
            m.insert("month".into(), month.as_str().into());
        }
        crate::sessions::limits::Limit::InFlight { max } => {
            let max = i64::try_from(*max).unwrap_or(i64::MAX >> 11);
            m.insert("calls_in_flight_per_key".into(), Value::clamped_int(max));
        }
    }
}

/// What came of a call (the leaf's `outcome` and `detail`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not served: the message the agent got.
    Refused { message: String },
    /// Stopped by inspection: why.
    Blocked { reasons: String },
    /// Proposed as a plan; waiting for a reviewer.
    Held { plan_id: String },
    /// The upstream answered a result, after this long.
    Answered { elapsed: Duration },
    /// An approved held call's plan succeeded.
    Ran { plan_id: String },
    /// An approved held call's plan halted (a precondition, the dispatch).
    Halted { plan_id: String },
    /// The upstream answered a JSON-RPC error (its bytes).
    UpstreamError { error: String },
    /// The upstream could not be reached or answered nonsense.
    Unavailable { message: String },
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Refused { .. } => "refused",
            Outcome::Blocked { .. } => "blocked",
            Outcome::Held { .. } => "held",
            Outcome::Answered { .. } | Outcome::Ran { .. } => "ok",
            Outcome::Halted { .. } => "halted",
            Outcome::UpstreamError { .. } => "upstream_error",
            Outcome::Unavailable { .. } => "unavailable",
        }
    }

    fn detail(&self) -> String {
        let text = match self {
            Outcome::Answered { elapsed } => return format!("{} µs", elapsed.as_micros()),
            Outcome::Refused { message } | Outcome::Unavailable { message } => message,
            Outcome::Blocked { reasons } => reasons,
            Outcome::Held { plan_id } | Outcome::Ran { plan_id } | Outcome::Halted { plan_id } => {
                plan_id
            }
            Outcome::UpstreamError { error } => error,
        };
        text.chars().take(MAX_DETAIL_CHARS).collect()
    }
}

/// What the response scan did to a result the upstream answered (or to its
/// error), and what it found in the call's relayed notifications.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseScan {
    pub disposition: Disposition,
    pub findings: Vec<Finding>,
    /// Found in the progress and log notifications relayed to the agent
    /// while the call ran.
    pub notifications: NotificationRecord,
    /// What of the answer is outside the tool's envelope.
    pub envelope: Vec<super::envelope::Recorded>,
}

/// What the scan of a call's relayed notifications found and withheld.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NotificationRecord {
    pub findings: Vec<Finding>,
    /// Notifications withheld (blocked by policy, or unscannable).
    pub withheld: u32,
}

/// What the agent was given of a scanned answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Nothing found: the upstream's bytes.
    Forwarded,
    /// Withheld: an error saying why.
    Blocked(BlockCause),
    /// Served with the findings redacted.
    Redacted,
    /// Found, but served unchanged (a shadow key, or a monitor-only policy).
    Flagged,
}

/// Why an answer was withheld.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockCause {
    /// A finding's category is set to `block`.
    Policy,
    /// The scan could not read it (the scanner fails closed).
    Unscannable(Unscannable),
    /// It is outside the tool's behavioural envelope (the leaf's
    /// `verdict.envelope` says what).
    Envelope,
}

impl Disposition {
    /// From a scan: a shadow key is never blocked or redacted by policy, but
    /// what could not be scanned is withheld from every key.
    pub fn of(scan: &Scan, shadow: bool) -> Disposition {
        match &scan.scanned {
            Scanned::Unscannable(why) => Disposition::Blocked(BlockCause::Unscannable(why.clone())),
            _ if scan.findings.is_empty() => Disposition::Forwarded,
            _ if shadow => Disposition::Flagged,
            Scanned::Blocked => Disposition::Blocked(BlockCause::Policy),
            Scanned::Redacted(_) => Disposition::Redacted,
            Scanned::Unchanged => Disposition::Flagged,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Disposition::Forwarded => "forwarded",
            Disposition::Blocked(_) => "blocked",
            Disposition::Redacted => "redacted",
            Disposition::Flagged => "flagged",
        }
    }

    /// Why it was withheld, when the scan could not read it.
    pub fn reason(&self) -> Option<String> {
        match self {
            Disposition::Blocked(BlockCause::Unscannable(why)) => Some(why.reason()),
            Disposition::Blocked(BlockCause::Envelope) => {
                Some("it is outside the tool's behavioural envelope".into())
            }
            _ => None,
        }
    }
}

/// Who called which tool with which arguments, and what the path found: the
/// part of a `tool.call` leaf every verdict about the call shares.
pub struct CallLeaf<'a> {
    pub agent: &'a ApiKeyRecord,
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments_hash: &'a str,
    /// The gateway's id of this call, on its intent and outcome leaves (and
    /// on any evidence about it), so an auditor can join them.
    pub call_id: &'a str,
    /// What the call ran against: the tool's approved definition and the
    /// server's baseline (issue 16 item 8).
    pub bound: Bound,
    /// `None` when the call was refused before inspection (not served).
    pub assessment: Option<&'a Assessment>,
    /// The index of the call's `tool.call.intent` leaf, once written.
    pub intent: Option<u64>,
    /// What of the arguments is outside the tool's envelope.
    pub envelope: &'a [super::envelope::Recorded],
}

/// The approved surface a call is bound to: the tool's definition hash in the
/// server's baseline, the served definition's when it differs (a monitored
/// drift is served), and the baseline's hash. `None`s mean there is no
/// baseline (a pending server's call, refused).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bound {
    pub definition_hash: Option<Digest>,
    pub served_definition_hash: Option<Digest>,
    pub baseline_hash: Option<String>,
}

impl Bound {
    /// What `view` binds a call of `tool` to.
    pub fn of(view: &interlock_trust::pins::ServerView, tool: &str) -> Bound {
        let approved = view
            .baseline
            .as_ref()
            .and_then(|s| s.tool(tool))
            .map(|t| t.hash());
        let served = view
            .observed
            .as_ref()
            .and_then(|s| s.tool(tool))
            .map(|t| t.hash());
        Bound {
            served_definition_hash: served.filter(|h| Some(h) != approved.as_ref()),
            definition_hash: approved,
            baseline_hash: view.record.baseline_hash.clone(),
        }
    }

    fn write(&self, m: &mut Map) {
        let hash = |d: &Option<Digest>| d.map_or(Value::Null, |d| d.to_string().into());
        m.insert("definition_hash".into(), hash(&self.definition_hash));
        if self.served_definition_hash.is_some() {
            m.insert(
                "served_definition_hash".into(),
                hash(&self.served_definition_hash),
            );
        }
        m.insert(
            "baseline_hash".into(),
            self.baseline_hash
                .as_deref()
                .map_or(Value::Null, Value::from),
        );
    }
}

/// A fresh call id: `call_` and 16 random bytes in hex.
pub fn new_call_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    format!("call_{}", hex::encode(bytes))
}

impl CallLeaf<'_> {
    /// The members naming the call and what it ran against, shared by its
    /// intent and outcome leaves.
    fn subject(&self) -> Map {
        let mut m = who(self.agent, self.server);
        m.insert("call_id".into(), self.call_id.into());
        m.insert("tool".into(), self.tool.into());
        m.insert("arguments_hash".into(), self.arguments_hash.into());
        self.bound.write(&mut m);
        m
    }

    /// Appends the intent leaf of a call about to be forwarded (who, which
    /// tool, which arguments, on which basis); the log index.
    pub async fn append_intent(
        &self,
        engine: &Engine,
        verdict: &Verdict,
    ) -> Result<u64, EngineError> {
        let mut v = Map::new();
        verdict.write(&mut v);
        let mut m = self.subject();
        m.insert("verdict".into(), Value::Object(v));
        Ok(engine
            .record(EventType::ToolCallIntent.as_str(), m)
            .await?
            .index)
    }

    /// Appends the leaf of one verdict and its outcome; the log index.
    pub async fn append(
        &self,
        engine: &Engine,
        verdict: &Verdict,
        outcome: &Outcome,
        response: Option<&ResponseScan>,
    ) -> Result<u64, EngineError> {
        let mut v = Map::new();
        if let Some(a) = self.assessment {
            v.insert("risk".into(), a.risk.name().into());
            v.insert("tool_risk".into(), a.tool_risk.name().into());
            v.insert("score".into(), Value::clamped_int(i64::from(a.score)));
            v.insert("findings".into(), a.findings_value());
            v.insert("shadow".into(), Value::Bool(self.agent.shadow));
        }
        verdict.write(&mut v);
        let envelope: Vec<_> = self
            .envelope
            .iter()
            .chain(response.iter().flat_map(|r| r.envelope.iter()))
            .cloned()
            .collect();
        if !envelope.is_empty() {
            v.insert("envelope".into(), super::envelope::records_value(&envelope));
        }
        if let Some(r) = response {
            v.insert("response".into(), r.disposition.name().into());
            v.insert("response_findings".into(), findings_value(&r.findings));
            if let Some(why) = r.disposition.reason() {
                v.insert("response_reason".into(), why.into());
            }
            let n = &r.notifications;
            if !n.findings.is_empty() || n.withheld > 0 {
                v.insert("notification_findings".into(), findings_value(&n.findings));
                v.insert(
                    "notifications_withheld".into(),
                    Value::clamped_int(i64::from(n.withheld)),
                );
            }
        }
        let mut m = self.subject();
        m.insert("outcome".into(), outcome.name().into());
        m.insert("detail".into(), outcome.detail().into());
        m.insert("verdict".into(), Value::Object(v));
        let Some(intent) = self.intent else {
            // Nothing was forwarded: this leaf is the only evidence, durable.
            return Ok(engine.record(EventType::ToolCall.as_str(), m).await?.index);
        };
        m.insert("intent_index".into(), Value::clamped_int(intent as i64));
        // The intent leaf was durable before the call was forwarded; the
        // outcome is committed before the agent sees the answer (the log's
        // durability contract, docs/ARCHITECTURE.md).
        Ok(engine
            .record_outcome(EventType::ToolCall.as_str(), m)
            .await?
            .index)
    }
}

/// Which content was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    Prompt,
    Resource,
    /// `completion/complete`: suggestions for a prompt's or a resource
    /// template's argument. The request carries what the agent typed and the
    /// answer text it will use, so it is inspected and logged like a read
    /// (issue 39 item 11).
    Completion,
}

impl ReadKind {
    pub fn event(self) -> EventType {
        match self {
            ReadKind::Prompt => EventType::PromptGet,
            ReadKind::Resource => EventType::ResourceRead,
            ReadKind::Completion => EventType::CompletionComplete,
        }
    }

    /// What an agent reads of this kind, in a message.
    pub fn noun(self) -> &'static str {
        match self {
            ReadKind::Prompt => "prompt",
            ReadKind::Resource => "resource",
            ReadKind::Completion => "completion",
        }
    }

    /// The member naming what was read (`prompt` or `uri`; a completion's
    /// `ref`: the prompt's upstream name or the resource's URI).
    pub fn member(self) -> &'static str {
        match self {
            ReadKind::Prompt => "prompt",
            ReadKind::Resource => "uri",
            ReadKind::Completion => "ref",
        }
    }
}

/// What came of a content read (the leaf's `outcome`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    Scanned(Disposition),
    UpstreamError,
    Unavailable,
    /// Refused before reaching the upstream: a pinned prompt or resource
    /// held for review, or not in the listing a reviewer approved (why).
    NotServed(String),
    /// Refused by the key's rate limit, quota or in-flight cap, as a tool
    /// call is: never inspected or forwarded.
    Limited(crate::sessions::limits::Limited),
    /// Refused by argument inspection (why): a secret, or what would hold a
    /// tool call. A read is not held for a reviewer (no plan can run it), so
    /// what would hold a call refuses a read.
    Blocked(String),
}

impl ReadOutcome {
    fn name(&self) -> &'static str {
        match self {
            ReadOutcome::Scanned(Disposition::Forwarded) => "ok",
            ReadOutcome::Scanned(d) => d.name(),
            ReadOutcome::UpstreamError => "upstream_error",
            ReadOutcome::Unavailable => "unavailable",
            ReadOutcome::NotServed(_) => "not_served",
            ReadOutcome::Limited(_) => "refused",
            ReadOutcome::Blocked(_) => "blocked",
        }
    }
}

/// What argument inspection found in a read's request (its prompt
/// arguments, its URI, a completion's argument and context).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadInspection {
    pub findings: Vec<Finding>,
    /// A shadow key's read that inspection would have refused (why): it
    /// went on, and the leaf says so.
    pub shadow_would_block: Option<String>,
}

/// A `prompt.get` or `resource.read` leaf.
pub struct ReadRecord<'a> {
    pub kind: ReadKind,
    pub agent: &'a ApiKeyRecord,
    pub server: &'a str,
    /// The prompt's name or the resource's URI.
    pub what: &'a str,
    pub arguments_hash: Option<&'a str>,
}

impl ReadRecord<'_> {
    /// Appends the read's leaf: `findings` are the answer's, `inspection`
    /// what its request carried.
    pub async fn append(
        &self,
        engine: &Engine,
        outcome: ReadOutcome,
        inspection: &ReadInspection,
        findings: &[Finding],
    ) -> Result<u64, EngineError> {
        let mut m = who(self.agent, self.server);
        m.insert(self.kind.member().into(), self.what.into());
        if let Some(h) = self.arguments_hash {
            m.insert("arguments_hash".into(), h.into());
        }
        m.insert("outcome".into(), outcome.name().into());
        match &outcome {
            ReadOutcome::Scanned(d) => {
                if let Some(why) = d.reason() {
                    m.insert("reason".into(), why.into());
                }
            }
            ReadOutcome::NotServed(why) | ReadOutcome::Blocked(why) => {
                m.insert("reason".into(), why.as_str().into());
            }
            ReadOutcome::Limited(l) => {
                m.insert("limit".into(), l.name().into());
                m.insert("reason".into(), l.message().into());
                write_limited(l, &mut m);
            }
            ReadOutcome::UpstreamError | ReadOutcome::Unavailable => {}
        }
        if !inspection.findings.is_empty() {
            m.insert(
                "argument_findings".into(),
                findings_value(&inspection.findings),
            );
        }
        if let Some(why) = &inspection.shadow_would_block {
            m.insert("shadow_would_block".into(), why.as_str().into());
        }
        m.insert("findings".into(), findings_value(findings));
        Ok(engine.record(self.kind.event().as_str(), m).await?.index)
    }
}

/// The members every call-path leaf starts with: which agent (and role)
/// reached which server.
fn who(agent: &ApiKeyRecord, server: &str) -> Map {
    let mut m = Map::new();
    m.insert("agent".into(), agent.name.as_str().into());
    m.insert("role".into(), agent.role.as_str().into());
    m.insert("server".into(), server.into());
    m
}
