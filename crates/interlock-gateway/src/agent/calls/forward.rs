//! Forward: the call logged as intended (durable before it is sent), the
//! served view checked once more (no tool runs inside a drift window), the
//! request sent upstream under the upstream's own tool name with a progress
//! token of the gateway's, its notifications relayed through the agent's
//! screen; then the answer scanned and the call settled.

use std::sync::Arc;
use std::time::Instant;

use interlock_canon as canon;
use interlock_store::KeySettings;
use interlock_trust::pins::NotServed;
use serde_json::json;
use serde_json::value::RawValue;

use super::call::Call;
use super::envelope::{self, Answer, Recorded};
use super::leaf::{
    Basis, BlockCause, Disposition, NotificationRecord, Outcome, ResponseScan, Verdict,
};
use super::notifications::NotificationScan;
use super::progress::{Progress, next_progress_token, set_progress_token};
use super::reads::inspect_error;
use super::request::Request;
use super::route::Routed;
use super::scan::{Scan, ScanPolicy, Scanned, response_policy, scan_result};
use crate::jsonrpc::{self, code};
use crate::upstream::UpstreamError;

/// Sends the call and answers with what came back.
pub(crate) async fn forward(
    call: &Call<'_>,
    routed: &Routed,
    mut request: Request,
    settings: &KeySettings,
    basis: Basis,
    before: &envelope::Before,
    progress: Option<&Progress>,
) -> Vec<u8> {
    let (gw, id) = (call.gw, call.id);
    let (server, tool, up) = (routed.server(), routed.tool.as_str(), &routed.upstream);
    let verdict = Verdict::Forwarded(basis);

    let Some(conn) = up.connection() else {
        let message = format!(
            "upstream `{server}` is not connected ({:?}); the gateway is reconnecting",
            up.link()
        );
        let answer = jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &message);
        return call
            .settle(&verdict, Outcome::Unavailable { message }, None, answer)
            .await;
    };
    // The key's share of upstream slots (issue 39 item 18), held until the
    // answer is settled. A held call approved later runs as a plan, not
    // here, so a person's approval never meets this refusal.
    let max = gw.config().limits.calls_in_flight_per_key;
    let _slot = match gw.0.key_limits.enter(&call.agent.key_hash, max) {
        Ok(slot) => slot,
        Err(limited) => {
            let answer = super::limit::limited_answer(id, &limited);
            let outcome = Outcome::Refused {
                message: limited.message(),
            };
            return call
                .settle(&Verdict::Limited(limited), outcome, None, answer)
                .await;
        }
    };
    request.members.insert(
        "name".into(),
        serde_json::value::to_raw_value(&routed.exposed.upstream_name)
            .expect("a string serializes"),
    );
    // The key's response policy and caps (issue 20) over the config's.
    let rules = Arc::new(response_policy(gw.config()).for_key(settings));
    // A call that takes progress gets a progress token of the gateway's own
    // upstream (agents' tokens may collide), relayed back as the agent's,
    // its notifications scanned like its result.
    let relay = progress.map(|p| {
        let token = next_progress_token();
        let agent_token = match &p.token {
            Some(t) => {
                set_progress_token(&mut request.members, &token);
                t.clone()
            }
            // Log messages only: the token is never sent upstream.
            None => RawValue::from_string("null".into()).expect("valid JSON"),
        };
        let scan = Arc::new(NotificationScan::new(Arc::clone(&rules)));
        let guard = up.relay(
            token,
            agent_token,
            p.tx.clone(),
            p.log_level,
            Arc::clone(&scan) as Arc<dyn crate::upstream::relay::Screen>,
        );
        (guard, scan)
    });
    let forwarded = serde_json::value::to_raw_value(&request.members).expect("raw JSON serializes");
    if let Err(refusal) = call.log_intent(&verdict).await {
        return refusal;
    }
    // A drift may have been installed while this call was inspected. Pins
    // install the stricter view before they write the drift's leaf, so a call
    // whose intent leaf landed after that leaf sees it now and is not
    // forwarded: no tool runs inside a drift window (`receipts claims`).
    if let Err(why) = gw
        .pins()
        .view(server)
        .map_or(Err(NotServed::UnknownTool), |v| v.check(tool).map(drop))
    {
        let message = why.message(server, tool);
        let answer = jsonrpc::error_with_data(
            Some(id),
            code::TOOL_NOT_SERVED,
            &message,
            Some(&json!({"server": server, "tool": tool})),
        );
        return call
            .settle(
                &Verdict::NotServed,
                Outcome::Refused { message },
                None,
                answer,
            )
            .await;
    }
    let started = Instant::now();
    let outcome = conn
        .request(
            "tools/call",
            Some(&forwarded),
            gw.config().limits.upstream_timeout(),
        )
        .await;
    let elapsed = started.elapsed();
    let notifications = relay
        .map(|(_guard, scan)| scan.record())
        .unwrap_or_default();
    let response = Response {
        verdict,
        outcome,
        elapsed,
        notifications,
        rules,
    };
    respond(call, routed, before, response).await
}

/// What the upstream answered a forwarded call, with what the call's scan
/// needs: its verdict, how long it took, what its notifications carried.
struct Response {
    verdict: Verdict,
    outcome: Result<Box<RawValue>, UpstreamError>,
    elapsed: std::time::Duration,
    notifications: NotificationRecord,
    rules: Arc<ScanPolicy>,
}

/// Scan: the upstream's answer (a result or an error) scanned and checked
/// against the tool's envelope — forwarded as sent, redacted, or withheld —
/// and settled with its leaf.
async fn respond(
    call: &Call<'_>,
    routed: &Routed,
    before: &envelope::Before,
    response: Response,
) -> Vec<u8> {
    let (gw, agent, id) = (call.gw, call.agent, call.id);
    let (server, tool) = (routed.server(), routed.tool.as_str());
    let approved_def = routed.view.baseline.as_ref().and_then(|s| s.tool(tool));
    let Response {
        verdict,
        outcome,
        elapsed,
        notifications,
        rules,
    } = response;
    match outcome {
        Ok(result) => {
            let (answer, scan) = judge_result(call, approved_def, &result, &rules).await;
            let scan = ResponseScan {
                notifications,
                ..scan
            };
            call.settle(&verdict, Outcome::Answered { elapsed }, Some(&scan), answer)
                .await
        }
        Err(UpstreamError::Rpc(err)) => {
            let (answer, error, scan) = inspect_error(id, err.get(), &rules, agent.shadow);
            let outside = envelope::after(
                gw,
                server,
                approved_def,
                tool,
                before,
                Answer::Error(err.get(), &scan.1.findings),
                agent.shadow,
            )
            .await;
            let scan = response_scan(scan.0, scan.1, notifications, outside);
            let outcome = Outcome::UpstreamError { error };
            call.settle(&verdict, outcome, Some(&scan), answer).await
        }
        Err(e) => {
            let message = format!("upstream `{server}`: {e}");
            let answer = jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &message);
            // No answer to scan; the leaf says only what its notifications carried.
            let scan = (notifications != NotificationRecord::default()).then(|| {
                response_scan(
                    Disposition::Forwarded,
                    Scan::default(),
                    notifications,
                    Vec::new(),
                )
            });
            call.settle(
                &verdict,
                Outcome::Unavailable { message },
                scan.as_ref(),
                answer,
            )
            .await
        }
    }
}

/// A tool result the upstream answered, judged: scanned under `rules` (the
/// key's response settings) and checked against the tool's behavioural
/// envelope (`approved`: its approved definition, for the `outputSchema`)
/// — the answer the agent gets (the result, redacted, or withheld saying
/// why) and what the leaf records. A forwarded call's result and an approved
/// held call's (issue 39 item 12) both go through here.
pub(crate) async fn judge_result(
    call: &Call<'_>,
    approved: Option<&interlock_surface::Tool>,
    result: &RawValue,
    rules: &ScanPolicy,
) -> (Vec<u8>, ResponseScan) {
    let (gw, agent, id) = (call.gw, call.agent, call.id);
    let scan = scan_result(result.get(), rules);
    let mut disposition = Disposition::of(&scan, agent.shadow);
    let outside = envelope::after(
        gw,
        call.server,
        approved,
        call.tool,
        call.before,
        Answer::Result(result.get(), &scan.findings, scan.document.as_ref()),
        agent.shadow,
    )
    .await;
    let withheld = envelope::withheld_text(&outside);
    let answer = match (&disposition, &scan.scanned, &withheld) {
        (Disposition::Blocked(_), _, _) => {
            let text = scan.withheld_message("result").expect("withheld");
            let data = json!({"blocked": true, "reason": text});
            jsonrpc::result_value(id, &jsonrpc::tool_error(&text, Some(data)))
        }
        (_, _, Some(text)) => {
            disposition = Disposition::Blocked(BlockCause::Envelope);
            let data = json!({"blocked": true, "reason": text, "envelope": outside
                .iter()
                .map(|r| canon::to_serde_json(&r.to_value()))
                .collect::<Vec<_>>()});
            jsonrpc::result_value(id, &jsonrpc::tool_error(text, Some(data)))
        }
        (Disposition::Redacted, Scanned::Redacted(v), _) => jsonrpc::result_value(id, v),
        _ => jsonrpc::result(id, result),
    };
    let scan = response_scan(disposition, scan, NotificationRecord::default(), outside);
    (answer, scan)
}

fn response_scan(
    disposition: Disposition,
    scan: Scan,
    notifications: NotificationRecord,
    envelope: Vec<Recorded>,
) -> ResponseScan {
    ResponseScan {
        disposition,
        findings: scan.findings,
        notifications,
        envelope,
    }
}
