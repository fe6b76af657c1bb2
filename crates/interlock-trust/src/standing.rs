//! Standing approvals: "role R may call tool T with arguments of shape S until
//! time E", signed by a reviewer, so the same safe call is not held again and
//! again. Every use is still logged; a standing approval is revocable; it never
//! covers a call whose arguments inspection flags as an attack.
//!
//! The shape is a JSON object from argument name to either a literal (the
//! argument must equal it) or `"*"` (any value, but the argument must be
//! present). A call matches only if it carries exactly the shape's arguments:
//! one the shape does not name is not covered, and neither is one that omits an
//! argument the shape names — a tool's defaults for an omitted argument are not
//! what the reviewer approved.
//!
//! The grant names the tool's approved definition hash (`tool_hash`): if the
//! tool's definition changes (drift, or a re-approved server surface), the
//! grant no longer applies and the call is held as usual, saying why. A grant
//! may stand at most the policy's `standing_max_lifetime_secs`.
//!
//! A grant may be narrower than a role (issue 18, approvals that do not
//! fatigue): from a held call's review a reviewer picks *for this session*,
//! *for 1 hour* or *for these exact arguments* ([`crate::scopes::Scope`]), and the document
//! then also names the agent, the agent's session (a hash of its id: session
//! ids are bearer material and stay out of the log) or the arguments' digest.
//! Each named field must match, so a narrow grant never covers another agent,
//! another session or other arguments.

use std::collections::BTreeMap;

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::{Decision, DsseEnvelope};
use interlock_engine::Engine;
use interlock_store::{StandingRecord, StateChange, StoreError};

use crate::events::{EventBus, EventType, GatewayEvent, SubjectKind};
use crate::pins::{PinError, to_canon};

/// Statements about a standing approval name `standing:<id>`.
pub const STANDING_SUBJECT_PREFIX: &str = "standing:";

/// The members every standing approval document has.
const DOCUMENT_FIELDS: [&str; 5] = ["role", "tool", "tool_hash", "shape", "expires_at"];

/// The members that narrow a grant, each optional ([`Narrowing`]).
const NARROWING_FIELDS: [&str; 3] = ["agent", "session", "arguments_hash"];

/// What narrows a grant beyond role, tool and shape; empty for a role-wide
/// grant (`interlock standing grant`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narrowing {
    /// Only this agent (its key's name).
    pub agent: Option<String>,
    /// Only this MCP session: [`session_tag`] of its id.
    pub session: Option<String>,
    /// Only exactly these arguments: their canonical digest.
    pub arguments_hash: Option<Digest>,
}

/// How a session is named in a grant and in the gateway's memory: the SHA-256
/// of its id. A session id lets whoever holds it (with the agent's key) speak
/// in that session, so it is not written to the log.
pub fn session_tag(session_id: &str) -> String {
    Digest::of_bytes(session_id.as_bytes()).to_string()
}

/// The document a reviewer signs (its hash is the statement's `plan_hash`).
/// `tool_hash` is the tool's approved definition hash at grant time.
pub fn document(
    role: &str,
    tool: &str,
    tool_hash: &Digest,
    shape: &Value,
    expires_at: i64,
    narrowing: &Narrowing,
) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    m.insert("tool".into(), tool.into());
    m.insert("tool_hash".into(), tool_hash.to_string().into());
    m.insert("shape".into(), shape.clone());
    m.insert(
        "expires_at".into(),
        Value::Number(
            canon::Number::from_i64(expires_at)
                .unwrap_or_else(|| canon::Number::from_i64(0).expect("0")),
        ),
    );
    if let Some(agent) = &narrowing.agent {
        m.insert("agent".into(), agent.as_str().into());
    }
    if let Some(session) = &narrowing.session {
        m.insert("session".into(), session.as_str().into());
    }
    if let Some(hash) = &narrowing.arguments_hash {
        m.insert("arguments_hash".into(), hash.to_string().into());
    }
    Value::Object(m)
}

/// A document's narrowing, or why it is malformed.
fn narrowing_of(doc: &Value) -> Result<Narrowing, &'static str> {
    let text = |key: &str| -> Result<Option<String>, &'static str> {
        match field(doc, key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err("`agent`, `session` and `arguments_hash` must be non-empty strings"),
        }
    };
    let session = text("session")?;
    if session
        .as_ref()
        .is_some_and(|s| s.parse::<Digest>().is_err())
    {
        return Err("`session` must be a session's tag (sha256:…)");
    }
    let arguments_hash = match text("arguments_hash")? {
        None => None,
        Some(h) => Some(
            h.parse::<Digest>()
                .map_err(|_| "`arguments_hash` must be a digest (sha256:…)")?,
        ),
    };
    Ok(Narrowing {
        agent: text("agent")?,
        session,
        arguments_hash,
    })
}

/// Who makes a call, as the standing approvals need to know.
#[derive(Clone, Copy, Debug)]
pub struct Caller<'a> {
    pub role: &'a str,
    /// The agent key's name.
    pub agent: &'a str,
    /// [`session_tag`] of the call's session; `None` for a stateless call.
    pub session: Option<&'a str>,
    /// The call's arguments digest (`crate::held_id::arguments_digest`).
    pub arguments_hash: &'a str,
}

impl Narrowing {
    /// Whether every field this narrowing names matches the caller.
    pub fn admits(&self, caller: &Caller<'_>) -> bool {
        self.agent.as_deref().is_none_or(|a| a == caller.agent)
            && self
                .session
                .as_deref()
                .is_none_or(|s| Some(s) == caller.session)
            && self
                .arguments_hash
                .as_ref()
                .is_none_or(|h| h.to_string() == caller.arguments_hash)
    }
}

/// The id of a document: `st-` + 16 hex digits of its hash.
pub fn id_of(hash: &Digest) -> String {
    format!("st-{}", &hex::encode(hash.as_bytes())[..16])
}

pub fn subject(id: &str) -> String {
    format!("{STANDING_SUBJECT_PREFIX}{id}")
}

/// Whether `args` fit `shape`: the same argument names, each equal to its
/// literal (or anything, for `"*"`).
pub fn matches(shape: &Value, args: &Value) -> bool {
    let (Some(shape), Some(args)) = (shape.as_object(), args.as_object()) else {
        return false;
    };
    // Every argument the shape names must be present (a `"*"` one too): an
    // omitted argument takes whatever default the tool applies, which is not
    // what the reviewer approved.
    shape.len() == args.len()
        && args.iter().all(|(k, v)| match shape.get(k) {
            None => false,
            Some(Value::String(s)) if s == "*" => true,
            Some(expected) => canon::canonical_bytes(expected) == canon::canonical_bytes(v),
        })
}

fn field<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    doc.as_object()?.get(key)
}

/// [`grant`], first checking that the document binds the tool's *approved*
/// definition: a grant made for an older (or never approved) definition
/// would never apply, so it is refused now with what to do instead.
/// `prefixes` are the configured servers' tool-name prefixes.
pub async fn grant_for_approved(
    engine: &Engine,
    events: &EventBus,
    prefixes: &BTreeMap<String, String>,
    doc: &Value,
    envelope: &DsseEnvelope,
) -> Result<StandingRecord, PinError> {
    // A coding agent's own tool use (issue 40) has no approved definition:
    // its grant is bound to one exact binding, for one agent.
    if field(doc, "tool")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with(crate::held_id::HOOK_TOOL_PREFIX))
    {
        let exact = field(doc, "tool_hash").and_then(Value::as_str).is_some()
            && field(doc, "tool_hash") == field(doc, "arguments_hash")
            && field(doc, "agent").and_then(Value::as_str).is_some();
        if !exact {
            return Err(PinError::BadSurface {
                name: "standing approval".into(),
                message: "a native tool use's approval names one agent and one exact use: \
                          `arguments_hash` equal to `tool_hash`, and `agent`"
                    .into(),
            });
        }
        return grant(engine, events, doc, envelope).await;
    }
    if let (Some(tool), Some(granted)) = (
        field(doc, "tool").and_then(Value::as_str),
        field(doc, "tool_hash").and_then(Value::as_str),
    ) {
        let approved = approved_tool_hash(engine, prefixes, tool).await?;
        if granted != approved.to_string() {
            return Err(PinError::GrantForAnotherDefinition {
                tool: tool.to_owned(),
                granted: granted.to_owned(),
                approved: approved.to_string(),
            });
        }
    }
    grant(engine, events, doc, envelope).await
}

/// The standing approval, if any, that lets `agent` (of `role`) run the
/// native tool use `tool` (`held_id::hook_tool`) whose binding is
/// `binding` again (issue 40): its id.
pub async fn find_hook(
    engine: &Engine,
    role: &str,
    agent: &str,
    tool: &str,
    binding: &Digest,
) -> Result<Option<String>, StoreError> {
    let binding = binding.to_string();
    for s in engine.store().standing(Some(engine.now())).await? {
        if s.role != role || s.tool != tool {
            continue;
        }
        let Ok(doc) = canon::parse_json(&s.document) else {
            continue;
        };
        let text = |k: &str| field(&doc, k).and_then(Value::as_str);
        if text("agent") == Some(agent)
            && text("arguments_hash") == Some(binding.as_str())
            && text("tool_hash") == Some(binding.as_str())
        {
            return Ok(Some(s.id));
        }
    }
    Ok(None)
}

/// Verifies a reviewer's signed approval of `doc` and stores it.
pub async fn grant(
    engine: &Engine,
    events: &EventBus,
    doc: &Value,
    envelope: &DsseEnvelope,
) -> Result<StandingRecord, PinError> {
    let bad = |m: &str| PinError::BadSurface {
        name: "standing approval".into(),
        message: m.to_owned(),
    };
    let role = field(doc, "role")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`role` (a string) is required"))?;
    let tool = field(doc, "tool")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`tool` (a string) is required"))?;
    field(doc, "tool_hash")
        .and_then(Value::as_str)
        .and_then(|h| h.parse::<Digest>().ok())
        .ok_or_else(|| {
            bad("`tool_hash` (the tool's approved definition hash, sha256:…) is required")
        })?;
    field(doc, "shape")
        .filter(|s| s.as_object().is_some())
        .ok_or_else(|| bad("`shape` (an object) is required"))?;
    let expires_at = field(doc, "expires_at")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        .ok_or_else(|| bad("`expires_at` (unix seconds) is required"))?;
    if doc.as_object().is_none_or(|m| {
        m.keys().any(|k| {
            !DOCUMENT_FIELDS.contains(&k.as_str()) && !NARROWING_FIELDS.contains(&k.as_str())
        })
    }) {
        return Err(bad(
            "only role, tool, tool_hash, shape, expires_at, and optionally agent, session and arguments_hash",
        ));
    }
    let narrowing = narrowing_of(doc).map_err(bad)?;
    let now = engine.now();
    if expires_at <= now {
        return Err(bad("it has already expired"));
    }
    let max = engine.policy().standing_max_lifetime_secs;
    if expires_at - now > max {
        return Err(bad(&format!(
            "it would stand {}s, longer than the policy allows (standing_max_lifetime_secs = {max}); grant a shorter one",
            expires_at - now
        )));
    }
    let hash = canon::digest(doc);
    let id = id_of(&hash);
    let verified = engine
        .accept_subject_decision(envelope, &subject(&id), hash)
        .await?;
    if verified.statement.decision != Decision::Approve {
        return Err(bad("a standing approval must be an approve decision"));
    }
    let record = StandingRecord {
        id: id.clone(),
        role: role.to_owned(),
        tool: tool.to_owned(),
        document: canon::canonical_bytes(doc),
        document_hash: hash.to_string(),
        expires_at,
        approver_key_id: verified.statement.approver_key_id.to_string(),
        envelope: serde_json::to_vec(&envelope.to_json()).expect("JSON"),
        created_at: engine.now(),
        revoked_at: None,
    };
    let mut m = Map::new();
    m.insert("id".into(), id.as_str().into());
    m.insert("document".into(), doc.clone());
    m.insert("approver".into(), verified.identity.as_str().into());
    m.insert("reason".into(), verified.statement.reason.as_str().into());
    m.insert("envelope".into(), to_canon(&envelope.to_json()));
    // The grant and its receipt in one transaction: stored first on its own,
    // a grant a stopped process left was in force with no receipt (issue 44).
    let index = engine
        .record_with_change(
            EventType::StandingGranted.as_str(),
            m,
            StateChange::AddStanding(Box::new(record.clone())),
        )
        .await?
        .index;
    let who = match (&narrowing.agent, &narrowing.session) {
        (Some(agent), Some(_)) => format!("Agent `{agent}` (this session)"),
        (Some(agent), None) => format!("Agent `{agent}`"),
        (None, _) => format!("Role `{role}`"),
    };
    let args = if narrowing.arguments_hash.is_some() {
        " with these exact arguments"
    } else {
        ""
    };
    events.send(GatewayEvent {
        kind: EventType::StandingGranted,
        subject_kind: SubjectKind::Standing,
        subject: id,
        title: format!("{who} may call `{tool}`{args} without review"),
        risk: "info".into(),
        plan_hash: None,
        observed_hash: None,
        revision: None,
        log_index: Some(index),
    });
    Ok(record)
}

/// Revokes a standing approval: logged (who, why) and announced. Revoking only
/// takes a permission away, so it needs no signed statement — a reviewer (or the
/// CLI on the gateway's machine) can stop a class of calls at once. Returns
/// whether an active one was revoked.
pub async fn revoke(
    engine: &Engine,
    events: &EventBus,
    id: &str,
    by: &str,
    reason: &str,
) -> Result<bool, PinError> {
    let mut m = Map::new();
    m.insert("id".into(), id.into());
    m.insert("by".into(), by.into());
    m.insert("reason".into(), reason.into());
    // The revocation and its receipt in one transaction (issue 44).
    let change = StateChange::RevokeStanding {
        id: id.to_owned(),
        now: engine.now(),
    };
    let recorded = engine
        .record_with_change(EventType::StandingRevoked.as_str(), m, change)
        .await;
    let done = match recorded {
        Ok(appended) => Some(appended.index),
        Err(interlock_engine::EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(index) = done {
        events.send(GatewayEvent {
            kind: EventType::StandingRevoked,
            subject_kind: SubjectKind::Standing,
            subject: id.to_owned(),
            title: format!("Standing approval {id} revoked ({by})"),
            risk: "info".into(),
            plan_hash: None,
            observed_hash: None,
            revision: None,
            log_index: Some(index),
        });
    }
    Ok(done.is_some())
}

/// What the standing approvals say about one call.
#[derive(Debug)]
pub enum Lookup {
    /// This active grant covers it.
    Covered(StandingRecord),
    /// A grant fits the call's role, tool and arguments but was made for
    /// another definition of the tool (it drifted, or a reviewer approved a
    /// new surface since): it does not apply, and the hold says so.
    Void { id: String, why: String },
    /// No active grant fits.
    None,
}

/// The standing approval covering this call. `approved` and `observed` are the
/// tool's definition hashes now — the reviewer-approved one and the one the
/// upstream lists — and a grant applies only when both are the hash it names.
pub async fn find(
    engine: &Engine,
    caller: &Caller<'_>,
    tool: &str,
    args: &Value,
    approved: Option<&Digest>,
    observed: Option<&Digest>,
) -> Result<Lookup, StoreError> {
    let mut void = Lookup::None;
    for s in engine.store().standing(Some(engine.now())).await? {
        if s.role != caller.role || s.tool != tool {
            continue;
        }
        let Ok(doc) = canon::parse_json(&s.document) else {
            continue;
        };
        if !field(&doc, "shape").is_some_and(|shape| matches(shape, args)) {
            continue;
        }
        // A malformed narrowing (never stored: `grant` refuses it) covers nothing.
        if !narrowing_of(&doc).is_ok_and(|n| n.admits(caller)) {
            continue;
        }
        let granted = field(&doc, "tool_hash")
            .and_then(Value::as_str)
            .and_then(|h| h.parse::<Digest>().ok());
        match granted {
            Some(h) if Some(&h) == approved && Some(&h) == observed => {
                return Ok(Lookup::Covered(s));
            }
            _ => {
                let now = |d: Option<&Digest>| d.map_or("none".to_owned(), Digest::to_string);
                void = Lookup::Void {
                    why: format!(
                        "standing approval {} does not apply: it was granted for definition {} of `{tool}`, which is now approved at {} and listed at {}",
                        s.id,
                        granted.map_or("(none)".to_owned(), |h| h.to_string()),
                        now(approved),
                        now(observed),
                    ),
                    id: s.id,
                };
            }
        }
    }
    Ok(void)
}

/// The approved definition hash of the exposed tool `exposed` (`server__tool`)
/// among the configured servers, given as their tool prefixes by name: what a
/// new grant binds to. An error says why there is none.
pub async fn approved_tool_hash(
    engine: &Engine,
    tool_prefixes: &BTreeMap<String, String>,
    exposed: &str,
) -> Result<Digest, PinError> {
    let unknown = |m: String| PinError::BadSurface {
        name: "standing approval".into(),
        message: m,
    };
    for (name, prefix) in tool_prefixes {
        let Some(tool) = exposed.strip_prefix(prefix.as_str()) else {
            continue;
        };
        let record = engine.store().server(name).await?.ok_or_else(|| {
            unknown(format!(
                "server `{name}` has never been listed; nothing is approved"
            ))
        })?;
        let baseline = crate::pins::decode_surface(name, record.baseline.as_deref())?
            .ok_or_else(|| unknown(format!("server `{name}` has no approved surface")))?;
        if let Some(t) = baseline.tool(tool) {
            return Ok(t.hash());
        }
    }
    Err(unknown(format!(
        "`{exposed}` is not a tool of any approved server surface in the config"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_match_literals_and_wildcards_only() {
        let v = |s: &str| canon::parse_json(s.as_bytes()).unwrap();
        let shape = v(r#"{"path":"/srv/report.txt","lines":"*"}"#);
        assert!(matches(
            &shape,
            &v(r#"{"path":"/srv/report.txt","lines":10}"#)
        ));
        assert!(!matches(&shape, &v(r#"{"path":"/srv/report.txt"}"#)));
        assert!(!matches(&shape, &v(r#"{"path":"/etc/passwd"}"#)));
        assert!(!matches(
            &shape,
            &v(r#"{"path":"/srv/report.txt","mode":"w"}"#)
        ));
    }

    #[test]
    fn regression_standing_shape_requires_every_constrained_argument() {
        let v = |s: &str| canon::parse_json(s.as_bytes()).unwrap();
        let shape = v(r#"{"path":"/srv/report.txt","dry_run":true}"#);
        assert!(matches(
            &shape,
            &v(r#"{"path":"/srv/report.txt","dry_run":true}"#)
        ));
        // Omitting `dry_run` would let the tool's default (perhaps false) run.
        assert!(!matches(&shape, &v(r#"{"path":"/srv/report.txt"}"#)));
        assert!(!matches(&shape, &v("{}")));
        assert!(matches(&v("{}"), &v("{}")));
    }
}
