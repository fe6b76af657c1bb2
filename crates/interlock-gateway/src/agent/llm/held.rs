//! A held request to a model (issue 42): with `on_hit = "hold"` (the
//! gateway's `[llm]`, or a key's `llm_policy`), a request a layer stopped
//! becomes a one-stage `llm.permit` plan a reviewer decides like a held
//! tool call — a desktop notification (low and medium risk), the inbox.
//! The plan carries the request a reviewer reads and the digest of its
//! exact bytes. The agent's request waits for the decision (at most `[llm]
//! hold_secs`); approved, the plan runs — the engine's compare-and-swap
//! consumes the one approval — and the request is sent. Not decided in time,
//! the agent is answered "held — retry the exact same request when
//! approved"; the same bytes from the same agent then wait on that plan, or
//! run it once it is approved. A third try is held anew.

use axum::http::StatusCode;
use axum::response::Response;
use interlock_canon as canon;
use interlock_core::time::rfc3339;
use interlock_engine::PlanStatus;
use interlock_llm::{Hit, WireFormat};
use interlock_trust::held_id::LLM_HELD_PREFIX;
use serde_json::json;

use super::leaf::{Leaf, LlmVerdict};
use crate::agent::held_plan::{self, Decided, Existing};
use crate::auth::agent_identity;
use crate::gateway::Gateway;

/// What a held request comes to.
pub(super) enum Held {
    /// Approved and its plan run: send it; the index of the `approved` leaf.
    Send(u64),
    /// The answer the agent gets instead.
    Answer(Response),
}

/// Holds the request `leaf` describes (stopped by `hit`): waits on its
/// plan — an approved one runs at once — proposing it first if none waits.
pub(super) async fn hold(
    gw: &Gateway,
    leaf: Leaf<'_>,
    hit: &Hit,
    wire: WireFormat,
    wait_secs: u64,
) -> Held {
    let binding = binding(leaf);
    let proposer = agent_identity(&leaf.agent.name);
    let answer = |status, code: &str, message: String| {
        Held::Answer(super::error(wire, status, "interlock_held", code, message))
    };
    // Each waiting request holds a task and polls the store: one key may
    // have only `limits.held_calls_per_key` waiting at once, its held tool
    // calls counted with them (as the MCP path does).
    let _slot = match gw.held_slot(&leaf.agent.key_hash) {
        Ok(slot) => slot,
        Err(cap) => {
            return answer(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_held",
                format!(
                    "Interlock: this key has {} requests and calls waiting for a reviewer already; \
                     retry when one is decided",
                    cap.max
                ),
            );
        }
    };
    let (plan_id, plan_hash) = match held_plan::existing(gw, LLM_HELD_PREFIX, &proposer, &binding)
        .await
    {
        // Approved already (this is the retry): run it, once.
        Existing::Approved { plan_id, plan_hash } => {
            return run(gw, leaf, hit, wire, &plan_id, &plan_hash).await;
        }
        // Waiting already (a retry before the decision): wait on it.
        Existing::Pending { plan_id, plan_hash } => (plan_id, plan_hash),
        Existing::None => match propose(gw, leaf, hit, &binding).await {
            Ok(p) => p,
            Err(why) => {
                return answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "prompt_not_held",
                    format!(
                        "Interlock stopped this request and could not hold it for a reviewer: {why}"
                    ),
                );
            }
        },
    };
    match held_plan::wait(gw, &plan_id, wait_secs).await {
        Decided::Approved => return run(gw, leaf, hit, wire, &plan_id, &plan_hash).await,
        Decided::Refused(status) => {
            let verdict = LlmVerdict::Rejected {
                hit: hit.clone(),
                plan_id: plan_id.clone(),
                status: status.as_str(),
            };
            // The refusal is the answer either way; the leaf says so when it
            // can be written.
            let _ = Leaf {
                verdict: &verdict,
                ..leaf
            }
            .append(gw)
            .await;
            return answer(
                StatusCode::FORBIDDEN,
                "prompt_rejected",
                format!(
                    "Interlock: a reviewer did not approve this request (plan `{plan_id}` is {}); it was not sent",
                    status.as_str()
                ),
            );
        }
        Decided::Undecided => {}
    }
    answer(
        StatusCode::FORBIDDEN,
        "prompt_held",
        format!(
            "Interlock held this request for a reviewer as plan `{plan_id}` ({} layer: {}) — \
             retry the exact same request when it is approved; it will then be sent once",
            hit.layer.as_str(),
            hit.reason
        ),
    )
}

/// The digest a held request is bound by: its exact bytes — and, for
/// Gemini's format, whose path names the model and whether it streams,
/// those too, so an approval for one model sends nothing to another.
fn binding(leaf: Leaf<'_>) -> String {
    match leaf.request.format {
        WireFormat::Gemini => {
            let mut bound = format!(
                "{}:{}\n",
                leaf.request.model,
                if leaf.request.stream {
                    "streamGenerateContent"
                } else {
                    "generateContent"
                }
            )
            .into_bytes();
            bound.extend_from_slice(leaf.body);
            canon::Digest::of_bytes(&bound).to_string()
        }
        _ => canon::Digest::of_bytes(leaf.body).to_string(),
    }
}

/// Proposes the plan and logs the hold: its id and hash.
async fn propose(
    gw: &Gateway,
    leaf: Leaf<'_>,
    hit: &Hit,
    binding: &str,
) -> Result<(String, String), String> {
    let request: serde_json::Value = serde_json::from_slice(leaf.body)
        .map_err(|e| format!("its body is not JSON a reviewer can read: {e}"))?;
    let mut rnd = [0u8; 4];
    getrandom::fill(&mut rnd).expect("OS randomness");
    let hex = binding.trim_start_matches("sha256:");
    let plan_id = format!("{LLM_HELD_PREFIX}{}-{}", &hex[..12], hex::encode(rnd));
    let (score, level) = hit.risk();
    let risk =
        interlock_core::RiskLevel::from_name(level).unwrap_or(interlock_core::RiskLevel::High);
    // Remembered before the plan is proposed: a desktop notification is
    // raised for the proposal, and asks this. A hit of high risk is
    // approved in its review only.
    gw.remember_held_call(
        &plan_id,
        interlock_trust::scopes::HeldMemo {
            session: None,
            inspection_hold: risk >= interlock_core::RiskLevel::High,
            risk,
        },
    );
    let (agent, model) = (&leaf.agent.name, &leaf.request.model);
    let doc = json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": plan_id,
        "title": format!("Held model request: {agent} → {model}"),
        "proposer": agent_identity(agent),
        "created_at": rfc3339(gw.engine().now()),
        "description": format!(
            "Agent `{agent}` asked {model} at {}; the gateway held it ({} layer): {}. Risk {level} (score {score}). Approving sends these exact bytes once.",
            leaf.provider,
            hit.layer.as_str(),
            hit.reason
        ),
        "body": {"stages": [{
            "id": "send",
            "action": "llm.permit",
            "target": leaf.provider,
            "params": {
                "provider": leaf.provider,
                "model": model,
                "binding_hash": binding,
                "request": request,
                "layer": hit.layer.as_str(),
                "reason": hit.reason,
                "risk": level,
            },
        }]}
    });
    let doc = canon::from_serde_json(&doc)
        .map_err(|e| format!("its body cannot be written as a plan: {e}"))?;
    let proposal = gw.engine().propose(&doc).await.map_err(|e| e.to_string())?;
    // The hold is on the log before the agent is answered.
    let verdict = LlmVerdict::Held {
        hit: hit.clone(),
        plan_id: plan_id.clone(),
    };
    Leaf {
        verdict: &verdict,
        ..leaf
    }
    .append(gw)
    .await
    .map_err(|e| format!("its log could not be written: {e}"))?;
    Ok((plan_id, proposal.plan_hash.to_string()))
}

/// Runs the approved plan (its one run); the `approved` leaf's index.
async fn run(
    gw: &Gateway,
    leaf: Leaf<'_>,
    hit: &Hit,
    wire: WireFormat,
    plan_id: &str,
    plan_hash: &str,
) -> Held {
    let proposer = agent_identity(&leaf.agent.name);
    let refused = |message: String| {
        Held::Answer(super::error(
            wire,
            StatusCode::FORBIDDEN,
            "interlock_held",
            "prompt_not_sent",
            message,
        ))
    };
    match gw
        .engine()
        .execute_exactly(plan_id, &proposer, plan_hash)
        .await
    {
        Ok(report) if report.status == PlanStatus::Succeeded => {
            let verdict = LlmVerdict::Approved {
                hit: hit.clone(),
                plan_id: plan_id.to_owned(),
            };
            match (Leaf {
                verdict: &verdict,
                ..leaf
            })
            .append(gw)
            .await
            {
                Ok(index) => Held::Send(index),
                Err(e) => Held::Answer(super::error(
                    wire,
                    StatusCode::SERVICE_UNAVAILABLE,
                    "api_error",
                    "log_unavailable",
                    format!("Interlock refused the request: its log could not be written: {e}"),
                )),
            }
        }
        Ok(report) => refused(format!(
            "Interlock: plan `{plan_id}` ended {}; the request was not sent",
            report.status.as_str()
        )),
        Err(e) => refused(format!(
            "Interlock: plan `{plan_id}` could not run ({e}); retry to be held anew"
        )),
    }
}
