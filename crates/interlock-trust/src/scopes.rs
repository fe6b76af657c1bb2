//! What a reviewer may approve a held call *for* (issue 18, approvals that do
//! not fatigue): once, for the agent's session, for an hour, or for these exact
//! arguments. *Once* is the held call's own plan approval; each wider scope is
//! a standing approval ([`crate::standing`]) narrowed to the calling agent,
//! signed by the reviewer on top of the plan approval, bound to the tool's
//! approved definition, logged at every use and revocable.
//!
//! Trust computes each scope's document from the held plan (the exact
//! bytes the reviewer signs), so a review UI, the desktop's notification and
//! the CLI all offer the same grants. The offer is only a proposal: a grant is
//! checked again in full when it arrives (`standing::grant`).

use std::collections::BTreeMap;

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_engine::{Engine, PlanStatus};
use interlock_store::ApiKeyKind;

use crate::held_id::{
    AGENT_IDENTITY_PREFIX, HELD_PREFIX, HOOK_HELD_PREFIX, LLM_HELD_PREFIX, arguments_digest,
    hook_tool,
};
use crate::standing::{self, Narrowing};

/// What the gateway that held a call remembers of it while it waits (lost
/// on a restart: a call held before one is approved in its review only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldMemo {
    /// `standing::session_tag` of the call's session; `None` if stateless.
    pub session: Option<String>,
    /// Whether inspection (arguments that look like an attack, or outside
    /// the tool's envelope) held it, not only its risk: such a call is
    /// approved in its review only, and no standing approval covers its kind.
    pub inspection_hold: bool,
    /// The call's own risk as assessed when it was held (its tool's, raised
    /// by what its arguments do) — not its plan's, which is `mcp.call_tool`'s
    /// high for every held call.
    pub risk: interlock_core::RiskLevel,
}

/// What the scopes of one held call are computed from: the engine (its plan,
/// the approved tool, the agent's key), each configured server's tool-name
/// prefix, and the holding gateway's memo of the call.
pub struct HeldCall<'a> {
    pub engine: &'a Engine,
    pub prefixes: &'a BTreeMap<String, String>,
    pub plan_id: &'a str,
    pub memo: Option<HeldMemo>,
}

/// How long each scope stands (before the policy's
/// `standing_max_lifetime_secs` caps it).
const SESSION_SECS: i64 = 8 * 3600;
const HOUR_SECS: i64 = 3600;
const ARGUMENTS_SECS: i64 = 24 * 3600;

/// A scope a held call can be approved for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This call only: the plan approval, nothing standing.
    Once,
    /// This agent's calls of this tool (same argument names, any values) in
    /// this MCP session, for at most [`SESSION_SECS`].
    Session,
    /// This agent's calls of this tool (same argument names, any values) for
    /// an hour.
    Hour,
    /// This agent's calls of this tool with exactly these arguments, for a day.
    Arguments,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Once, Scope::Session, Scope::Hour, Scope::Arguments];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Once => "once",
            Scope::Session => "session",
            Scope::Hour => "hour",
            Scope::Arguments => "arguments",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The button's words.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Once => "Approve once",
            Scope::Session => "For this session",
            Scope::Hour => "For 1 hour",
            Scope::Arguments => "For these exact arguments",
        }
    }

    fn lifetime_secs(self) -> i64 {
        match self {
            Scope::Once => 0,
            Scope::Session => SESSION_SECS,
            Scope::Hour => HOUR_SECS,
            Scope::Arguments => ARGUMENTS_SECS,
        }
    }
}

/// One scope on offer for a held call.
#[derive(Clone, Debug)]
pub struct Offer {
    pub scope: Scope,
    /// The standing approval to sign besides the plan; `None` for
    /// [`Scope::Once`].
    pub grant: Option<GrantOffer>,
}

/// A standing approval document ready to sign.
#[derive(Clone, Debug)]
pub struct GrantOffer {
    pub document: Value,
    pub document_hash: Digest,
    /// Its id (`st-…`) and the subject its statement names (`standing:st-…`).
    pub id: String,
    pub subject: String,
    pub expires_at: i64,
    /// What it covers, in words.
    pub summary: String,
}

/// Why a held call's scopes cannot be offered.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    #[error("`{0}` is not a held tool call")]
    NotHeldCall(String),
    #[error("held call `{plan_id}` is {status}: there is nothing to approve")]
    Decided { plan_id: String, status: String },
    #[error(transparent)]
    Engine(#[from] interlock_engine::EngineError),
    #[error(transparent)]
    Store(#[from] interlock_store::StoreError),
}

/// The facts of a held call, read back from its plan.
struct HeldFacts {
    agent: String,
    role: String,
    /// The exposed name (`server__tool`), what a grant names.
    exposed: String,
    tool_hash: Digest,
    arguments: Value,
}

/// The scopes a held call may be approved for, narrowest first; *once* is
/// always there, the others only where they can apply: not for a call that
/// inspection held (no standing approval covers those); a session scope needs
/// the call's session to be known; every grant needs the held tool to be at
/// its approved definition and its agent's key to exist.
pub async fn offers(call: &HeldCall<'_>) -> Result<Vec<Offer>, ScopeError> {
    let (engine, plan_id) = (call.engine, call.plan_id);
    let plan = engine.plan(plan_id).await?;
    if !plan_id.starts_with(HELD_PREFIX) {
        return Err(ScopeError::NotHeldCall(plan_id.to_owned()));
    }
    if plan.status != PlanStatus::Proposed {
        return Err(ScopeError::Decided {
            plan_id: plan_id.to_owned(),
            status: plan.status.as_str().to_owned(),
        });
    }
    let mut out = vec![Offer {
        scope: Scope::Once,
        grant: None,
    }];
    // A coding agent's own tool use (issue 40): once, or exactly this use
    // (its binding: client, tool, input, working directory) for an hour —
    // what the reviewer saw, byte for byte, so an inspection hold may be
    // approved for it too; nothing wider.
    // A held request to a model (issue 42): these exact bytes, once.
    if plan_id.starts_with(LLM_HELD_PREFIX) {
        return Ok(out);
    }
    if plan_id.starts_with(HOOK_HELD_PREFIX) {
        if let Some(offer) = hook_hour(call, &plan.document, &plan.proposer).await? {
            out.push(offer);
        }
        return Ok(out);
    }
    let memo = call.memo.as_ref();
    if memo.is_some_and(|m| m.inspection_hold) {
        return Ok(out);
    }
    let Some(facts) = held_facts(call, &plan.document, &plan.proposer).await? else {
        return Ok(out);
    };
    // A grant binds to the approved definition; a call held on another one
    // (the tool drifted since it was approved) gets no standing offer.
    match standing::approved_tool_hash(engine, call.prefixes, &facts.exposed).await {
        Ok(approved) if approved == facts.tool_hash => {}
        _ => return Ok(out),
    }
    let session = memo.and_then(|m| m.session.clone());
    let now = engine.now();
    let max = engine.policy().standing_max_lifetime_secs;
    for scope in [Scope::Session, Scope::Hour, Scope::Arguments] {
        if scope == Scope::Session && session.is_none() {
            continue;
        }
        let expires_at = now + scope.lifetime_secs().min(max);
        let narrowing = Narrowing {
            agent: Some(facts.agent.clone()),
            session: (scope == Scope::Session).then(|| session.clone()).flatten(),
            arguments_hash: (scope == Scope::Arguments).then(|| arguments_digest(&facts.arguments)),
        };
        let document = standing::document(
            &facts.role,
            &facts.exposed,
            &facts.tool_hash,
            &any_value_shape(&facts.arguments),
            expires_at,
            &narrowing,
        );
        let document_hash = canon::digest(&document);
        let id = standing::id_of(&document_hash);
        let summary = summary(scope, &facts);
        out.push(Offer {
            scope,
            grant: Some(GrantOffer {
                subject: standing::subject(&id),
                document,
                document_hash,
                id,
                expires_at,
                summary,
            }),
        });
    }
    Ok(out)
}

/// The hour's offer for a held native tool use: this agent, exactly this
/// binding (`tool_hash` and `arguments_hash` are both the binding's hash).
/// `None` when the plan does not read back or the agent's key is gone.
async fn hook_hour(
    call: &HeldCall<'_>,
    document: &[u8],
    proposer: &str,
) -> Result<Option<Offer>, ScopeError> {
    let Some(stage) = first_stage(document) else {
        return Ok(None);
    };
    let params = stage.get("params");
    let text = |k: &str| params.and_then(|p| p.get(k)).and_then(Value::as_str);
    let (Some(client), Some(tool), Some(binding), Some(cwd)) = (
        text("client"),
        text("tool"),
        text("binding_hash").and_then(|h| h.parse::<Digest>().ok()),
        text("cwd"),
    ) else {
        return Ok(None);
    };
    let Some(agent) = proposer.strip_prefix(AGENT_IDENTITY_PREFIX) else {
        return Ok(None);
    };
    let Some(role) = agent_role(call.engine, agent).await? else {
        return Ok(None);
    };
    let now = call.engine.now();
    let expires_at = now
        + Scope::Hour
            .lifetime_secs()
            .min(call.engine.policy().standing_max_lifetime_secs);
    let narrowing = Narrowing {
        agent: Some(agent.to_owned()),
        session: None,
        arguments_hash: Some(binding),
    };
    let document = standing::document(
        &role,
        &hook_tool(client, tool),
        &binding,
        &Value::Object(Map::new()),
        expires_at,
        &narrowing,
    );
    let document_hash = canon::digest(&document);
    let id = standing::id_of(&document_hash);
    Ok(Some(Offer {
        scope: Scope::Hour,
        grant: Some(GrantOffer {
            subject: standing::subject(&id),
            document,
            document_hash,
            id,
            expires_at,
            summary: format!(
                "`{agent}` may run exactly this {tool} use again in `{cwd}` for 1 hour"
            ),
        }),
    }))
}

/// The one stage of a held call's plan document.
fn first_stage(document: &[u8]) -> Option<Value> {
    let doc = canon::parse_json(document).ok()?;
    doc.get("body")?.get("stages")?.as_array()?.first().cloned()
}

/// The role of the agent key named `agent`, if it is not revoked.
async fn agent_role(engine: &Engine, agent: &str) -> Result<Option<String>, ScopeError> {
    Ok(engine
        .store()
        .api_keys(ApiKeyKind::Agent)
        .await?
        .into_iter()
        .find(|k| k.name == agent && k.revoked_at.is_none())
        .map(|k| k.role))
}

/// Whether a held call may be approved from a desktop notification for a
/// scope wider than once: only when this process held it and inspection did
/// not (so its risk or the role's limit held it, and what a grant covers —
/// this agent, this tool — is exactly what the notification names), and only
/// for a call of low or medium risk — *Approve*'s rule for a notification
/// (issue 39 item 8): a high or critical call is approved in its review, for
/// once or longer. A call held before a restart is approved in its review.
pub fn grantable_from_notification(memo: Option<&HeldMemo>) -> bool {
    use interlock_core::RiskLevel;
    memo.is_some_and(|m| !m.inspection_hold && m.risk <= RiskLevel::Medium)
}

/// The offer of `scope` for a held call, if it is on offer.
pub async fn offer(call: &HeldCall<'_>, scope: Scope) -> Result<Option<Offer>, ScopeError> {
    Ok(offers(call).await?.into_iter().find(|o| o.scope == scope))
}

fn summary(scope: Scope, f: &HeldFacts) -> String {
    let (agent, tool) = (&f.agent, &f.exposed);
    match scope {
        Scope::Once => format!("run this call of `{tool}` once"),
        Scope::Session => {
            format!(
                "`{agent}` may call `{tool}` with any values in this session, for 8 hours at most"
            )
        }
        Scope::Hour => format!("`{agent}` may call `{tool}` with any values for 1 hour"),
        Scope::Arguments => {
            format!("`{agent}` may call `{tool}` with exactly these arguments for 24 hours")
        }
    }
}

/// The shape "the same argument names, any values": a wider scope still
/// covers only calls that name exactly the arguments the reviewer saw.
fn any_value_shape(arguments: &Value) -> Value {
    let mut m = Map::new();
    if let Some(args) = arguments.as_object() {
        for k in args.keys() {
            m.insert(k.clone(), "*".into());
        }
    }
    Value::Object(m)
}

/// Reads a held call's agent, exposed tool, held definition and arguments
/// back from its plan (`held::held_plan` wrote it). `None` when the agent's
/// key is gone or the plan's server is no longer configured.
async fn held_facts(
    call: &HeldCall<'_>,
    document: &[u8],
    proposer: &str,
) -> Result<Option<HeldFacts>, ScopeError> {
    let Some(stage) = first_stage(document) else {
        return Ok(None);
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let server = text(stage.get("target"));
    let params = stage.get("params");
    let tool = text(params.and_then(|p| p.get("tool")));
    let arguments = params.and_then(|p| p.get("arguments")).cloned();
    let tool_hash = stage
        .get("preconditions")
        .and_then(|p| p.as_array())
        .and_then(|p| p.first())
        .and_then(|p| p.get("params"))
        .and_then(|p| p.get("tool_hash"))
        .and_then(Value::as_str)
        .and_then(|h| h.parse::<Digest>().ok());
    let (Some(server), Some(tool), Some(arguments), Some(tool_hash)) =
        (server, tool, arguments, tool_hash)
    else {
        return Ok(None);
    };
    let Some(prefix) = call.prefixes.get(&server) else {
        return Ok(None);
    };
    let exposed = format!("{prefix}{tool}");
    let Some(agent) = proposer.strip_prefix(AGENT_IDENTITY_PREFIX) else {
        return Ok(None);
    };
    let Some(role) = agent_role(call.engine, agent).await? else {
        return Ok(None);
    };
    Ok(Some(HeldFacts {
        agent: agent.to_owned(),
        role,
        exposed,
        tool_hash,
        arguments,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use interlock_core::RiskLevel;

    fn memo(risk: RiskLevel, inspection_hold: bool) -> HeldMemo {
        HeldMemo {
            session: None,
            inspection_hold,
            risk,
        }
    }

    /// Issue 39 item 8: *Approve for 1 hour* was offered from a notification
    /// for any held call, critical ones included, where *Approve* is offered
    /// only for low and medium plans. The hour's grant now follows the same
    /// rule for the call's own risk; the rest are approved in their review.
    #[test]
    fn regression_issue_39_approve_for_an_hour_follows_approves_risk_rule() {
        for risk in [RiskLevel::Low, RiskLevel::Medium] {
            assert!(
                grantable_from_notification(Some(&memo(risk, false))),
                "{risk}"
            );
            // Held for what inspection found: review only, whatever the risk.
            assert!(
                !grantable_from_notification(Some(&memo(risk, true))),
                "{risk}"
            );
        }
        for risk in [RiskLevel::High, RiskLevel::Critical] {
            assert!(
                !grantable_from_notification(Some(&memo(risk, false))),
                "{risk}"
            );
        }
        // Held before a restart: nothing remembered, review only.
        assert!(!grantable_from_notification(None));
    }
}
