//! A held native tool use: a one-stage `hook.permit` plan a reviewer
//! decides like a held MCP call (a desktop notification, the inbox). The
//! hook waits for the decision up to its client's timeout, then answers
//! deny with "held for review — retry when approved". The same use retried
//! (the same binding: client, tool, exact input, cwd) waits on that plan
//! rather than proposing another, and once it is approved runs the plan —
//! the engine's compare-and-swap consumes the approval — and is answered
//! allow, exactly once; a third try is held anew.

use interlock_canon::{self as canon, Value};
use interlock_core::time::rfc3339;
use interlock_engine::PlanStatus;
use interlock_hooks::{Answer, HookEvent};
use interlock_store::ApiKeyRecord;
use serde_json::json;

use super::super::calls::assess::Assessment;
use super::leaf::{HookVerdict, logged};
use crate::agent::held_plan::{self, Decided, Existing};
use crate::auth::agent_identity;
use crate::gateway::Gateway;

/// A held hook plan's id: `call-hook-<binding prefix>-<random>` (the held
/// call prefix, so no agent can run it through `execute_plan`).
use interlock_trust::held_id::HOOK_HELD_PREFIX as HOOK_PLAN_PREFIX;

pub(super) async fn hold(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    assessment: &Assessment,
    wait_secs: u64,
) -> Answer {
    let binding = event.input_hash().to_string();
    let proposer = agent_identity(&agent.name);
    let reasons = assessment.hold_reasons.join("; ");
    // Each waiting use holds a task and polls the store: counted with the
    // key's held calls (`limits.held_calls_per_key`), as the MCP path's are.
    let _slot = match gw.held_slot(&agent.key_hash) {
        Ok(slot) => slot,
        Err(cap) => {
            return Answer::Deny {
                reason: format!("Interlock: {cap}"),
            };
        }
    };
    let (plan_id, plan_hash) =
        match held_plan::existing(gw, HOOK_PLAN_PREFIX, &proposer, &binding).await {
            // Approved already (this is the retry): run it, once.
            Existing::Approved { plan_id, plan_hash } => {
                return run(gw, agent, event, assessment, &plan_id, &plan_hash).await;
            }
            // Waiting already (a retry before the decision): wait on it.
            Existing::Pending { plan_id, plan_hash } => (plan_id, plan_hash),
            Existing::None => match propose(gw, agent, event, assessment, &binding).await {
                Ok(p) => p,
                Err(answer) => return answer,
            },
        };
    match held_plan::wait(gw, &plan_id, wait_secs).await {
        Decided::Approved => {
            return run(gw, agent, event, assessment, &plan_id, &plan_hash).await;
        }
        Decided::Refused(status) => {
            let verdict = HookVerdict::Rejected {
                plan_id: plan_id.clone(),
                status: status.as_str().to_owned(),
            };
            let deny = Answer::Deny {
                reason: format!(
                    "Interlock: a reviewer did not approve this {} use (plan `{plan_id}` is {}). It must not run.",
                    event.canonical_tool(),
                    status.as_str()
                ),
            };
            return logged(gw, agent, event, &verdict, Some(assessment), deny).await;
        }
        Decided::Undecided => {}
    }
    Answer::Deny {
        reason: format!(
            "Interlock held this {} use for review as plan `{plan_id}` ({reasons}) — retry the exact same call when it is approved; it will then run once.",
            event.canonical_tool()
        ),
    }
}

/// Proposes the plan and logs the hold; its id and hash, or the answer that
/// refuses the use when either fails.
async fn propose(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    assessment: &Assessment,
    binding: &str,
) -> Result<(String, String), Answer> {
    let mut rnd = [0u8; 4];
    getrandom::fill(&mut rnd).expect("OS randomness");
    let hex = binding.trim_start_matches("sha256:");
    let plan_id = format!("{HOOK_PLAN_PREFIX}{}-{}", &hex[..12], hex::encode(rnd));
    gw.remember_held_call(
        &plan_id,
        interlock_trust::scopes::HeldMemo {
            session: event
                .session
                .as_deref()
                .map(interlock_trust::standing::session_tag),
            inspection_hold: assessment.inspection_hold,
            risk: assessment.risk,
        },
    );
    let doc = plan(
        &plan_id,
        agent,
        event,
        assessment,
        binding,
        gw.engine().now(),
    );
    let proposal = gw.engine().propose(&doc).await.map_err(|e| Answer::Deny {
        reason: format!("Interlock: this tool use needs a reviewer but could not be held: {e}"),
    })?;
    let verdict = HookVerdict::Held {
        plan_id: plan_id.clone(),
        reasons: assessment.hold_reasons.join("; "),
    };
    // The hold is on the log before the hook is answered.
    let logged = logged(
        gw,
        agent,
        event,
        &verdict,
        Some(assessment),
        Answer::Nothing,
    )
    .await;
    if let Answer::Deny { reason } = logged {
        return Err(Answer::Deny { reason });
    }
    Ok((plan_id, proposal.plan_hash.to_string()))
}

/// Runs the approved plan (its one run) and answers allow.
async fn run(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    assessment: &Assessment,
    plan_id: &str,
    plan_hash: &str,
) -> Answer {
    let proposer = agent_identity(&agent.name);
    match gw
        .engine()
        .execute_exactly(plan_id, &proposer, plan_hash)
        .await
    {
        Ok(report) if report.status == PlanStatus::Succeeded => {
            let verdict = HookVerdict::Approved {
                plan_id: plan_id.to_owned(),
            };
            let allow = Answer::Allow {
                reason: format!(
                    "Interlock: a reviewer approved this use (plan `{plan_id}`); it runs once"
                ),
            };
            logged(gw, agent, event, &verdict, Some(assessment), allow).await
        }
        Ok(report) => Answer::Deny {
            reason: format!(
                "Interlock: plan `{plan_id}` ended {}; the use must not run",
                report.status.as_str()
            ),
        },
        Err(e) => Answer::Deny {
            reason: format!(
                "Interlock: plan `{plan_id}` could not run ({e}); retry to be held anew"
            ),
        },
    }
}

/// The plan a held use becomes: one `hook.permit` stage naming the client,
/// the tool, the binding and the exact input a reviewer reads.
fn plan(
    plan_id: &str,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    assessment: &Assessment,
    binding: &str,
    now: i64,
) -> Value {
    let tool = event.canonical_tool();
    let summary = event.tool.summary();
    let doc = json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": plan_id,
        "title": format!(
            "{} in {}: {tool} `{}` in {}",
            agent.name,
            event.client.display_name(),
            one_line(&summary),
            event.cwd
        ),
        "proposer": agent_identity(&agent.name),
        "created_at": rfc3339(now),
        "description": format!(
            "Agent `{}` in {} wants to run {tool} in `{}`; the gateway held it: {}. Risk {} (score {}).",
            agent.name,
            event.client.display_name(),
            event.cwd,
            assessment.hold_reasons.join("; "),
            assessment.risk.name(),
            assessment.score
        ),
        "body": {"stages": [{
            "id": "permit",
            "action": "hook.permit",
            "target": event.client.slug(),
            "params": {
                "client": event.client.slug(),
                "tool": tool,
                "binding_hash": binding,
                "cwd": event.cwd,
                "input": canon::to_serde_json(&event.input),
                "risk": assessment.risk.name(),
            },
        }]}
    });
    canon::from_serde_json(&doc).expect("a plan built from JSON converts")
}

/// At most 80 characters of the first line, for a title.
fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(80).collect();
    if line.chars().count() > 80 || s.lines().count() > 1 {
        out.push('…');
    }
    out
}
