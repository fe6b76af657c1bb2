//! The governance tools the gateway serves itself: `propose_plan`, `get_plan`,
//! `list_plans`, `execute_plan`.
//!
//! Architecture invariant: there is no approve tool. Nothing an agent key can
//! reach decides a plan; decisions arrive only as statements signed by a
//! registered approver key, on the reviewer surface.
//!
//! Architecture invariant: an agent sees and runs only its own plans. A plan id
//! belongs to the identity that first proposed it (the store refuses anyone
//! else's revision); `get_plan`, `list_plans` and `execute_plan` answer another
//! identity's plan exactly as they answer a plan that does not exist.

use interlock_canon::{self as canon, Value};
use interlock_engine::{EngineError, PlanStatus, StageResult};
use serde_json::json;

use crate::auth::agent_identity;
use crate::gateway::Gateway;
use crate::views::plan_summary;

/// Why a governance tool did not do what it was asked; its message is the
/// tool result's text, which the agent's model reads and acts on.
#[derive(Debug, thiserror::Error)]
pub enum GovernanceError {
    /// The arguments are not what the tool takes.
    #[error("{0}")]
    Arguments(String),
    /// The plan names another proposer than the calling agent.
    #[error(
        "`proposer` is {claimed:?} but your API key is {identity:?}; omit it or use {identity:?}"
    )]
    NotYourIdentity { claimed: String, identity: String },
    #[error("unknown governance tool `{0}`")]
    UnknownTool(String),
    /// No plan with this id is the caller's (none exists, or another identity's:
    /// the answer is the same, so an agent cannot probe for others' plan ids).
    #[error("no plan `{0}`")]
    NoSuchPlan(String),
    /// The engine refused (an invalid plan, a wrong state, storage).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The tools' definitions, as served in `tools/list`.
pub fn definitions() -> serde_json::Value {
    json!([
        {
            "name": "propose_plan",
            "title": "Propose a plan for human approval",
            "description": "Submit a plan (interlock.plan/v1) for review. It is validated against the policy in force and held until a human approves its exact hash. `proposer` is set to your agent identity if absent and must match it if present. Returns the plan id, revision, hash, risk and how many approvals it needs. With `rollback_of` instead of a plan, proposes the rollback plan of one of your HALTED plans: its committed stages' compensating stages, newest first, as a new plan that is reviewed like any other.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "plan": {"type": "object", "description": "The plan document as JSON."},
                    "plan_yaml": {"type": "string", "description": "The plan document as strict YAML 1.2 (instead of `plan`)."},
                    "rollback_of": {"type": "string", "description": "The id of your HALTED plan whose rollback plan to propose (instead of `plan`)."}
                },
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}
        },
        {
            "name": "get_plan",
            "title": "Get a plan's status",
            "description": "The current revision of a plan: status (PROPOSED, APPROVED, REJECTED, EXPIRED, EXECUTING, SUCCEEDED, HALTED), hash, risk, title and the document.",
            "inputSchema": {
                "type": "object",
                "properties": {"plan_id": {"type": "string"}},
                "required": ["plan_id"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "list_plans",
            "title": "List plans",
            "description": "Current revisions of plans, newest first, optionally of one status.",
            "inputSchema": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["PROPOSED", "APPROVED", "REJECTED", "EXPIRED", "SUPERSEDED", "EXECUTING", "SUCCEEDED", "HALTED"]}},
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "execute_plan",
            "title": "Execute an approved plan",
            "description": "Run an APPROVED plan exactly once, stage by stage, re-checking every approval and precondition first. Fails if the plan is not approved, was edited after approval, or already ran.",
            "inputSchema": {
                "type": "object",
                "properties": {"plan_id": {"type": "string"}},
                "required": ["plan_id"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true}
        }
    ])
}

/// Whether `name` is a governance tool.
pub fn is_governance_tool(name: &str) -> bool {
    matches!(
        name,
        "propose_plan" | "get_plan" | "list_plans" | "execute_plan"
    )
}

/// A tool result: the JSON as text content and as structured content.
fn ok(v: serde_json::Value) -> serde_json::Value {
    json!({
        "content": [{"type": "text", "text": serde_json::to_string_pretty(&v).expect("JSON")}],
        "structuredContent": v,
        "isError": false
    })
}

/// A tool-level failure the agent can read and act on.
fn failed(message: String) -> serde_json::Value {
    crate::jsonrpc::tool_error(&message, None)
}

/// Runs a governance tool for `agent`. Errors are tool results with
/// `isError: true` (the agent's model reads them), not protocol errors.
pub async fn call(
    gw: &Gateway,
    agent: &str,
    name: &str,
    args: &serde_json::Value,
) -> serde_json::Value {
    let outcome = match name {
        "propose_plan" => propose(gw, agent, args).await,
        "get_plan" => get(gw, agent, args).await,
        "list_plans" => list(gw, agent, args).await,
        "execute_plan" => execute(gw, agent, args).await,
        other => Err(GovernanceError::UnknownTool(other.to_owned())),
    };
    match outcome {
        Ok(v) => ok(v),
        Err(e) => failed(e.to_string()),
    }
}

fn string_arg<'a>(args: &'a serde_json::Value, key: &str) -> Result<&'a str, GovernanceError> {
    args.get(key)
        .and_then(|v| v.as_str())
        .ok_or_else(|| GovernanceError::Arguments(format!("`{key}` (a string) is required")))
}

async fn propose(
    gw: &Gateway,
    agent: &str,
    args: &serde_json::Value,
) -> Result<serde_json::Value, GovernanceError> {
    let bad = GovernanceError::Arguments;
    if let Some(halted) = args.get("rollback_of") {
        let (Some(halted), None, None) = (halted.as_str(), args.get("plan"), args.get("plan_yaml"))
        else {
            return Err(bad(
                "`rollback_of` is a plan id (a string), given instead of `plan` and `plan_yaml`"
                    .into(),
            ));
        };
        // Only the agent's own halted plan; the rollback plan keeps its proposer.
        own_plan(gw, agent, halted).await?;
        let p = gw.engine().propose_rollback(halted).await?;
        return Ok(proposed(&p));
    }
    let mut doc = match (args.get("plan"), args.get("plan_yaml")) {
        (Some(plan), None) => {
            canon::from_serde_json(plan).map_err(|e| bad(format!("plan: {e}")))?
        }
        (None, Some(serde_json::Value::String(yaml))) => {
            canon::parse_yaml(yaml.as_bytes()).map_err(|e| bad(format!("plan_yaml: {e}")))?
        }
        _ => {
            return Err(bad(
                "give exactly one of `plan` (an object) or `plan_yaml` (a string)".into(),
            ));
        }
    };
    let identity = agent_identity(agent);
    let Value::Object(m) = &mut doc else {
        return Err(bad("the plan must be an object".into()));
    };
    match m.get("proposer").and_then(Value::as_str) {
        None => {
            m.insert("proposer".into(), identity.as_str().into());
        }
        Some(p) if p == identity => {}
        Some(p) => {
            return Err(GovernanceError::NotYourIdentity {
                claimed: p.to_owned(),
                identity,
            });
        }
    }
    // `call-…` names the gateway's own held calls, which a reviewer may approve
    // for a session or an hour from their review: an agent's plan cannot pose
    // as one (issue 18).
    if m.get("plan_id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with(interlock_trust::held_id::HELD_PREFIX))
    {
        return Err(bad(format!(
            "plan ids starting with `{}` are the gateway's held calls; choose another plan_id",
            interlock_trust::held_id::HELD_PREFIX
        )));
    }
    let p = gw.engine().propose(&doc).await?;
    Ok(proposed(&p))
}

fn proposed(p: &interlock_engine::Proposal) -> serde_json::Value {
    json!({
        "plan_id": p.plan_id,
        "revision": p.revision,
        "plan_hash": p.plan_hash.to_string(),
        "risk": p.risk.name(),
        "approvals_required": p.approvals_required,
        "status": "PROPOSED",
        "log_index": p.log_index,
        "next": "A human reviewer must approve this exact hash. Poll get_plan; when APPROVED, call execute_plan."
    })
}

/// The current revision of `id` if it is `agent`'s.
async fn own_plan(
    gw: &Gateway,
    agent: &str,
    id: &str,
) -> Result<interlock_store::PlanRecord, GovernanceError> {
    match gw.engine().plan(id).await {
        Ok(r) if r.proposer == agent_identity(agent) => Ok(r),
        Ok(_) | Err(EngineError::NoSuchPlan(_)) => Err(GovernanceError::NoSuchPlan(id.to_owned())),
        Err(e) => Err(e.into()),
    }
}

async fn get(
    gw: &Gateway,
    agent: &str,
    args: &serde_json::Value,
) -> Result<serde_json::Value, GovernanceError> {
    let id = string_arg(args, "plan_id")?;
    let r = own_plan(gw, agent, id).await?;
    let document = canon::parse_json(&r.document)
        .map(|v| canon::to_serde_json(&v))
        .unwrap_or(serde_json::Value::Null);
    let mut plan = plan_summary(&r);
    plan["document"] = document;
    Ok(plan)
}

async fn list(
    gw: &Gateway,
    agent: &str,
    args: &serde_json::Value,
) -> Result<serde_json::Value, GovernanceError> {
    let status = match args.get("status").and_then(|v| v.as_str()) {
        None => None,
        Some(s) => Some(
            s.parse::<PlanStatus>()
                .map_err(|_| GovernanceError::Arguments(format!("unknown status {s:?}")))?,
        ),
    };
    let identity = agent_identity(agent);
    let plans = gw.engine().plans(status).await?;
    Ok(json!({
        "plans": plans
            .iter()
            .filter(|p| p.proposer == identity)
            .map(plan_summary)
            .collect::<Vec<_>>()
    }))
}

async fn execute(
    gw: &Gateway,
    agent: &str,
    args: &serde_json::Value,
) -> Result<serde_json::Value, GovernanceError> {
    let id = string_arg(args, "plan_id")?;
    let plan = own_plan(gw, agent, id).await?;
    let report = gw
        .engine()
        .execute_exactly(id, &plan.proposer, &plan.plan_hash)
        .await?;
    Ok(json!({
        "plan_id": report.plan_id,
        "revision": report.revision,
        "status": report.status.as_str(),
        "stages": report.stages.iter().map(|s| json!({
            "id": s.stage_id,
            "result": match &s.result {
                StageResult::Committed => "committed".to_owned(),
                StageResult::PreconditionFailed(w) => format!("precondition failed: {w}"),
                StageResult::DispatchFailed(w) => format!("dispatch failed: {w}"),
                StageResult::VerifyFailed(w) => format!("verify failed: {w}"),
                StageResult::NotRun => "not run".to_owned(),
            },
            "summary": s.summary,
        })).collect::<Vec<_>>()
    }))
}
