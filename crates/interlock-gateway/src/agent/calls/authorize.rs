//! Authorize: the verdict on an inspected call — stopped (a block), held for
//! a reviewer (unless a standing approval covers it, or a reviewer already
//! approved this very call), or forwarded, and on what basis.

use interlock_canon::{self as canon, Value};
use interlock_trust::standing;
use serde_json::json;

use super::call::Call;
use super::held;
use super::leaf::{Basis, Outcome, Verdict};
use super::progress::Progress;
use super::route::Routed;
use super::stop::Stop;
use crate::jsonrpc;

/// The basis a call is forwarded on; a call stopped or held ends here.
pub(crate) async fn authorize(
    call: &Call<'_>,
    routed: &Routed,
    resume: Option<&str>,
    progress: Option<&Progress>,
) -> Result<Basis, Stop> {
    let (assessment, agent, id) = (call.assessment, call.agent, call.id);
    let tool = routed.tool.as_str();
    let tool_def = routed.view.observed.as_ref().and_then(|s| s.tool(tool));
    let basis = if assessment.blocked() {
        let reasons = assessment.block_reasons.join("; ");
        if !agent.shadow {
            let text = format!("The gateway stopped this call and did not forward it: {reasons}.");
            let answer = jsonrpc::result_value(
                id,
                &jsonrpc::tool_error(
                    &text,
                    Some(json!({"blocked": true, "reasons": assessment.block_reasons,
                                "risk": assessment.risk.name(), "score": assessment.score})),
                ),
            );
            let verdict = Verdict::Stopped {
                reasons: reasons.clone(),
            };
            return Err(Stop::Answered(
                call.settle(&verdict, Outcome::Blocked { reasons }, None, answer)
                    .await,
            ));
        }
        Basis::ShadowWouldStop { reasons }
    } else if assessment.held() {
        let hold_reasons = assessment.hold_reasons.join("; ");
        let lookup = if assessment.inspection_hold {
            // A standing approval never covers a call that looks like an attack.
            standing::Lookup::None
        } else {
            let approved = routed
                .view
                .baseline
                .as_ref()
                .and_then(|s| s.tool(tool))
                .map(|t| t.hash());
            let observed = tool_def.map(|t| t.hash());
            let session_tag = call.session.map(standing::session_tag);
            let caller = standing::Caller {
                role: &agent.role,
                agent: &agent.name,
                session: session_tag.as_deref(),
                arguments_hash: call.args_digest,
            };
            standing::find(
                call.gw.engine(),
                &caller,
                call.exposed,
                call.args,
                approved.as_ref(),
                observed.as_ref(),
            )
            .await
            .unwrap_or(standing::Lookup::None)
        };
        let void_note = match &lookup {
            standing::Lookup::Void { why, .. } => Some(why.clone()),
            _ => None,
        };
        if let standing::Lookup::Covered(standing) = lookup {
            // A reviewer approved this class of call in advance: run it, and say so.
            Basis::Standing {
                id: standing.id,
                hold_reasons,
            }
        } else if let Some((plan_id, plan_hash)) = held::approved_plan_for(call).await {
            // The agent's retry of a call a reviewer has approved: run that
            // plan, once. (Looked up only for calls that would be held: the
            // common path pays no store read.)
            return Err(Stop::Answered(
                held::run_approved(call, &plan_id, &plan_hash).await,
            ));
        } else if agent.shadow {
            Basis::ShadowWouldHold {
                reasons: hold_reasons,
            }
        } else {
            let tool_hash = tool_def
                .map(|t| t.hash())
                .unwrap_or_else(|| canon::digest(&Value::Null));
            let progress = progress.filter(|p| p.takes_progress());
            let answer = match resume {
                Some(plan_id) => held::resume(call, progress, plan_id).await,
                None => held::hold(call, progress, &tool_hash, void_note.as_deref()).await,
            };
            return Err(Stop::Answered(answer));
        }
    } else {
        Basis::Allowed
    };
    Ok(basis)
}
