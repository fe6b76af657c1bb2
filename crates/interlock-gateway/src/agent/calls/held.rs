//! The held call's lifecycle: a call that needs a reviewer becomes a
//! one-stage plan (`mcp.call_tool` with the exact arguments); the agent's
//! request waits for the decision (at most `calls.hold_secs`, reporting
//! progress), then the approved plan runs exactly once and its tool result is
//! the answer. A call not decided in time answers with the plan to poll; the
//! agent's retry of the exact call then runs the approved plan (once).

use std::time::{Duration, Instant};

use interlock_canon::{self as canon, Digest, Value};
use interlock_engine::{PlanRecord, PlanStatus};
use serde_json::json;
use serde_json::value::RawValue;

use super::assess::Assessment;
use super::call::Call;
use super::forward::judge_result;
use super::leaf::{Outcome, Verdict};
use super::progress::Progress;
use super::scan::response_policy;
use crate::auth::agent_identity;
use crate::jsonrpc;
use interlock_core::time::rfc3339;

/// Marks a held-call plan's id (`call-<args digest prefix>-<random>`).
use interlock_trust::held_id::HELD_PREFIX;

/// How often a waiting held call polls for its decision (made in this
/// process or another: the store is the truth).
const POLL_EVERY: Duration = Duration::from_millis(250);

/// How often a waiting held call tells its agent it is still waiting.
const REPORT_EVERY: Duration = Duration::from_secs(2);

/// Holds a call: proposes it as a plan, logs the verdict, waits (at most
/// `calls.hold_secs`) for a reviewer, then runs it if approved, or answers
/// with the plan to retry. `note` is one more reason the verdict records (a
/// standing approval that would have covered the call but no longer applies).
pub(crate) async fn hold(
    call: &Call<'_>,
    progress: Option<&Progress>,
    tool_hash: &Digest,
    note: Option<&str>,
) -> Vec<u8> {
    let (gw, id, assessment) = (call.gw, call.id, call.assessment);
    // Each waiting call holds a task and polls the store: one key may have
    // only so many at once.
    let _slot = match gw.held_slot(&call.agent.key_hash) {
        Ok(slot) => slot,
        Err(cap) => return jsonrpc::error(Some(id), jsonrpc::code::LIMIT, &cap.to_string()),
    };
    let mut rnd = [0u8; 4];
    getrandom::fill(&mut rnd).expect("OS randomness");
    let digest_hex = call.args_digest.trim_start_matches("sha256:");
    let plan_id = format!("{HELD_PREFIX}{}-{}", &digest_hex[..12], hex::encode(rnd));
    // Remembered before the plan is proposed: the proposal's event is what a
    // desktop notification is raised for, and it asks what was remembered.
    gw.remember_held_call(
        &plan_id,
        interlock_trust::scopes::HeldMemo {
            session: call.session.map(interlock_trust::standing::session_tag),
            inspection_hold: assessment.inspection_hold,
            risk: assessment.risk,
        },
    );
    let doc = held_plan(&plan_id, call, tool_hash, gw.engine().now());
    let proposal = match gw.engine().propose(&doc).await {
        Ok(p) => p,
        Err(e) => {
            return jsonrpc::error(
                Some(id),
                jsonrpc::code::INTERNAL_ERROR,
                &format!("the call needs a reviewer but could not be held: {e}"),
            );
        }
    };
    let mut reasons = assessment.hold_reasons.join("; ");
    if let Some(note) = note {
        reasons = format!("{reasons}; {note}");
    }
    let verdict = Verdict::Held {
        plan_id: plan_id.clone(),
        reasons: reasons.clone(),
    };
    let outcome = Outcome::Held {
        plan_id: plan_id.clone(),
    };
    if let Err(refusal) = call.record(&verdict, &outcome, None).await {
        // The held verdict is not in the log: refuse rather than wait on it.
        return refusal;
    }
    let plan_hash = proposal.plan_hash.to_string();
    wait(call, progress, &plan_id, &plan_hash, &reasons).await
}

/// A stateless client's retry of a held call (the 2026-07-28 round trip,
/// [`crate::sessions::round_trip`]): waits again for the plan its sealed state names,
/// without proposing a new one or logging another hold.
pub(crate) async fn resume(call: &Call<'_>, progress: Option<&Progress>, plan_id: &str) -> Vec<u8> {
    let (gw, id) = (call.gw, call.id);
    let _slot = match gw.held_slot(&call.agent.key_hash) {
        Ok(slot) => slot,
        Err(cap) => return jsonrpc::error(Some(id), jsonrpc::code::LIMIT, &cap.to_string()),
    };
    let plan = match gw.engine().plan(plan_id).await {
        Ok(p) => p,
        Err(e) => {
            let text = format!(
                "held call `{plan_id}` cannot be resumed: {e}. Call again to be held anew."
            );
            return jsonrpc::result_value(id, &jsonrpc::tool_error(&text, None));
        }
    };
    let reasons = call.assessment.hold_reasons.join("; ");
    wait(call, progress, plan_id, &plan.plan_hash, &reasons).await
}

/// Waits (at most the call's `hold_secs`) for a reviewer's decision on the
/// held plan `plan_id`, then runs it if approved; otherwise answers how the
/// agent goes on waiting: a stateless client gets the round trip's sealed
/// state, any other the plan to poll and retry.
async fn wait(
    call: &Call<'_>,
    progress: Option<&Progress>,
    plan_id: &str,
    plan_hash: &str,
    reasons: &str,
) -> Vec<u8> {
    let (gw, id, assessment) = (call.gw, call.id, call.assessment);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(call.hold_secs);
    let mut last_report: Option<Instant> = None;
    while Instant::now() < deadline {
        if call
            .cancelled
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst))
        {
            let text = format!(
                "The agent cancelled this call while it was held as plan `{plan_id}`; it was not run."
            );
            return jsonrpc::result_value(
                id,
                &jsonrpc::tool_error(
                    &text,
                    Some(json!({"held": true, "plan_id": plan_id, "cancelled": true})),
                ),
            );
        }
        if let Some(p) = progress
            && last_report.is_none_or(|t| t.elapsed() >= REPORT_EVERY)
        {
            p.report(
                started.elapsed().as_secs(),
                &format!("held for human review as plan `{plan_id}`; waiting for a reviewer"),
            )
            .await;
            last_report = Some(Instant::now());
        }
        match gw.engine().plan(plan_id).await.map(|p| p.status) {
            Ok(PlanStatus::Approved) => return run_approved(call, plan_id, plan_hash).await,
            Ok(PlanStatus::Proposed) => {}
            Ok(other) => {
                let text = match other {
                    PlanStatus::Rejected | PlanStatus::Expired | PlanStatus::Superseded => format!(
                        "A reviewer did not approve this call (plan `{plan_id}` is {}). It was not run.",
                        other.as_str()
                    ),
                    // A retry of a held call that has run already (its one run).
                    _ => format!(
                        "Held call `{plan_id}` ran already (it is {}); it runs once. Call again to be held anew.",
                        other.as_str()
                    ),
                };
                return jsonrpc::result_value(
                    id,
                    &jsonrpc::tool_error(
                        &text,
                        Some(json!({"held": true, "plan_id": plan_id, "status": other.as_str()})),
                    ),
                );
            }
            Err(_) => break,
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
    if call.session.is_none() {
        // A stateless (2026-07-28) client retries with the sealed state by
        // itself and keeps waiting for this plan.
        let state = crate::sessions::round_trip::state_for(
            plan_id,
            &call.agent.key_hash,
            call.exposed,
            call.args_digest,
            gw.engine().now(),
        );
        let sealed = gw.sealer().seal(&state);
        return jsonrpc::result_value(
            id,
            &crate::sessions::round_trip::input_required(&sealed, plan_id),
        );
    }
    let text = format!(
        "This call was held for human review as plan `{plan_id}` ({reasons}). It has not run. \
         Call get_plan with plan_id `{plan_id}`; once it is APPROVED, repeat this exact call \
         and it runs once.",
    );
    jsonrpc::result_value(
        id,
        &jsonrpc::tool_error(
            &text,
            Some(json!({
                "held": true, "plan_id": plan_id, "plan_hash": plan_hash,
                "risk": assessment.risk.name(), "score": assessment.score,
                "reasons": assessment.hold_reasons,
            })),
        ),
    )
}

/// Runs an approved held-call plan (exactly once: the engine consumes the
/// approval by compare-and-swap) and answers with the tool's own result,
/// scanned as any result is. Only the calling agent's plan at exactly
/// `plan_hash` runs: never a revision someone else made.
pub(crate) async fn run_approved(call: &Call<'_>, plan_id: &str, plan_hash: &str) -> Vec<u8> {
    let (gw, id) = (call.gw, call.id);
    let verdict = Verdict::RunApproved {
        plan_id: plan_id.to_owned(),
        hold_reasons: call.assessment.hold_reasons.join("; "),
    };
    let proposer = agent_identity(&call.agent.name);
    let report = match gw
        .engine()
        .execute_exactly(plan_id, &proposer, plan_hash)
        .await
    {
        Ok(r) => r,
        Err(e) => {
            let text = format!("plan `{plan_id}` did not run: {e}");
            return jsonrpc::result_value(id, &jsonrpc::tool_error(&text, None));
        }
    };
    let output = report
        .stages
        .first()
        .and_then(|s| s.output.as_deref())
        .and_then(|o| RawValue::from_string(o.to_owned()).ok());
    let (outcome, answer) = match (report.status, output) {
        (PlanStatus::Succeeded, Some(raw)) => {
            // The calling key's own response settings apply here as on a
            // forwarded call's answer (issue 39 item 12: a held call's
            // result skipped them). Unreadable settings fail closed.
            let settings = match gw
                .0
                .key_limits
                .settings(gw.engine().store(), &call.agent.key_hash)
                .await
            {
                Ok(s) => s,
                Err(e) => {
                    let text = format!(
                        "plan `{plan_id}` ran, but its result is withheld: the key's response settings could not be read: {e}"
                    );
                    let outcome = Outcome::Ran {
                        plan_id: plan_id.to_owned(),
                    };
                    let answer = jsonrpc::result_value(id, &jsonrpc::tool_error(&text, None));
                    return call.settle(&verdict, outcome, None, answer).await;
                }
            };
            let rules = response_policy(gw.config()).for_key(&settings);
            // And the tool's behavioural envelope (issue 39 item 12): a
            // reviewer approved running the call, not whatever it returns;
            // a result outside what the tool was seen to return is withheld
            // as a forwarded call's is, and the leaf records it.
            let view = gw.pins().view(call.server);
            let approved = view
                .as_ref()
                .and_then(|v| v.baseline.as_ref())
                .and_then(|s| s.tool(call.tool));
            let (answer, scan) = judge_result(call, approved, &raw, &rules).await;
            let outcome = Outcome::Ran {
                plan_id: plan_id.to_owned(),
            };
            return call.settle(&verdict, outcome, Some(&scan), answer).await;
        }
        (status, _) => {
            let why = report
                .stages
                .first()
                .map(|s| format!("{:?}", s.result))
                .unwrap_or_default();
            let text = format!("plan `{plan_id}` ended {}: {why}", status.as_str());
            let plan_id = plan_id.to_owned();
            let outcome = if status == PlanStatus::Succeeded {
                Outcome::Ran { plan_id }
            } else {
                Outcome::Halted { plan_id }
            };
            (
                outcome,
                jsonrpc::result_value(id, &jsonrpc::tool_error(&text, None)),
            )
        }
    };
    call.settle(&verdict, outcome, None, answer).await
}

/// An APPROVED held-call plan of this agent for exactly this tool and these
/// arguments, if any: its id and hash.
pub(crate) async fn approved_plan_for(call: &Call<'_>) -> Option<(String, String)> {
    let proposer = agent_identity(&call.agent.name);
    let plans = call
        .gw
        .engine()
        .plans(Some(PlanStatus::Approved))
        .await
        .ok()?;
    plans
        .into_iter()
        .filter(|p| p.plan_id.starts_with(HELD_PREFIX) && p.proposer == proposer)
        .find(|p| calls_exactly(p, call))
        .map(|p| (p.plan_id, p.plan_hash))
}

/// Whether a held-call plan is for exactly this server, tool and arguments.
fn calls_exactly(plan: &PlanRecord, call: &Call<'_>) -> bool {
    let Ok(doc) = canon::parse_json(&plan.document) else {
        return false;
    };
    let stage = canon::to_serde_json(&doc)["body"]["stages"][0].clone();
    let args = stage["params"]["arguments"].clone();
    stage["target"] == call.server
        && stage["params"]["tool"] == call.tool
        && canon::from_serde_json(&args)
            .map(|a| canon::digest(&a).to_string() == call.args_digest)
            .unwrap_or(false)
}

/// The plan a held call becomes: one `mcp.call_tool` stage with the exact
/// arguments, guarded by `mcp.tool_pinned` (the tool is still served exactly as
/// it was when held).
fn held_plan(plan_id: &str, call: &Call<'_>, tool_hash: &Digest, now: i64) -> Value {
    let Call {
        agent,
        exposed,
        server,
        tool,
        args,
        assessment,
        ..
    } = call;
    let agent = agent.name.as_str();
    let doc = json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": plan_id,
        "title": format!("Held tool call: {exposed}"),
        "proposer": agent_identity(agent),
        "created_at": rfc3339(now),
        "description": description(agent, exposed, assessment),
        "body": {"stages": [{
            "id": "call",
            "action": "mcp.call_tool",
            "target": server,
            "params": {"tool": tool, "arguments": canon::to_serde_json(args)},
            "preconditions": [{
                "probe": "mcp.tool_pinned",
                "params": {"tool": tool, "tool_hash": tool_hash.to_string()},
                "description": "the tool is still served exactly as it was when the call was held"
            }],
            "rollback": "The gateway cannot undo a tool call; undo its effect by hand if needed."
        }]}
    });
    canon::from_serde_json(&doc).expect("a plan built from JSON converts")
}

fn description(agent: &str, exposed: &str, assessment: &Assessment) -> String {
    format!(
        "Agent `{agent}` called `{exposed}`; the gateway held it: {}. Risk {} (score {}).",
        assessment.hold_reasons.join("; "),
        assessment.risk.name(),
        assessment.score
    )
}
