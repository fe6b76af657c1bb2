//! One tool call, from an authenticated agent to its answer: route → served?
//! → inspect and assess → a [`Verdict`] → stop, hold, run the approved plan, or
//! forward and scan the response. Every verdict about a call is written as
//! exactly one `tool.call` leaf, by [`Call::settle`], and a verdict whose leaf
//! cannot be written is never answered as if it were logged.
//!
//! Content reads (`prompts/get`, `resources/read`) share the inspect-and-record
//! step: [`deliver_read`].

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use indexmap::IndexMap;
use interlock_canon::{self as canon, Value};
use interlock_store::ApiKeyRecord;
use serde_json::json;
use serde_json::value::RawValue;

use super::assess::assess_with_roots;
pub(crate) use super::call::Call;
use super::envelope::{self, Answer, Recorded};
use super::held;
use super::leaf::{
    Basis, BlockCause, Bound, CallLeaf, Disposition, NotificationRecord, Outcome, ReadOutcome,
    ReadRecord, ResponseScan, Verdict, new_call_id,
};
use super::notifications::NotificationScan;
use super::progress::{Progress, next_progress_token, set_progress_token};
use super::scan::{Scan, Scanned, response_policy, scan_content, scan_error, scan_result};
use crate::agent::governance;
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::sessions::held_id::arguments_digest;
use crate::sessions::round_trip;
use crate::upstream::UpstreamError;
use interlock_trust::pins::NotServed;
use interlock_trust::standing;

/// A `tools/call`'s params, parsed just enough to route it: the members kept
/// raw (forwarded as received, `name` rewritten).
struct Request {
    members: IndexMap<String, Box<RawValue>>,
    name: String,
}

impl Request {
    fn parse(params: Option<&RawValue>) -> Result<Request, &'static str> {
        let members = params
            .and_then(|p| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(p.get()).ok())
            .ok_or("tools/call needs params {name, arguments}")?;
        let name = members
            .get("name")
            .and_then(|n| serde_json::from_str::<String>(n.get()).ok())
            .ok_or("tools/call needs params.name (a string)")?;
        Ok(Request { members, name })
    }

    fn arguments(&self) -> Option<&RawValue> {
        self.members.get("arguments").map(|a| &**a)
    }
}

impl Call<'_> {
    fn leaf(&self) -> CallLeaf<'_> {
        CallLeaf {
            agent: self.agent,
            server: self.server,
            tool: self.tool,
            arguments_hash: self.args_digest,
            call_id: &self.call_id,
            bound: self.bound.clone(),
            assessment: Some(self.assessment),
            intent: self.intent.get().copied(),
            envelope: self.envelope,
        }
    }

    /// Writes the intent leaf of a call about to be forwarded, before it is
    /// sent: a call whose intent cannot be logged is refused and never reaches
    /// the upstream (evidence before effect).
    pub(crate) async fn log_intent(&self, verdict: &Verdict) -> Result<(), Vec<u8>> {
        self.gw.metrics().decided(self.arrived.elapsed());
        let appending = Instant::now();
        let appended = self.leaf().append_intent(self.gw.engine(), verdict).await;
        self.gw.metrics().appended(appending.elapsed());
        match appended {
            Ok(index) => {
                let _ = self.intent.set(index);
                Ok(())
            }
            Err(e) => Err(jsonrpc::error(
                Some(self.id),
                code::INTERNAL_ERROR,
                &format!("the gateway refused the call: the log append failed: {e}"),
            )),
        }
    }

    /// Writes the leaf of `verdict`: its log index, or (if it cannot be
    /// written) the answer that refuses the call instead.
    pub(crate) async fn record(
        &self,
        verdict: &Verdict,
        outcome: &Outcome,
        response: Option<&ResponseScan>,
    ) -> Result<u64, Vec<u8>> {
        // A verdict not forwarded is decided now; a held one waited for a human.
        if self.intent.get().is_none() && !matches!(verdict, Verdict::Held { .. }) {
            self.gw.metrics().decided(self.arrived.elapsed());
        }
        let appending = Instant::now();
        let appended =
            append_or_refuse(self.gw, self.id, &self.leaf(), verdict, outcome, response).await;
        self.gw.metrics().appended(appending.elapsed());
        appended
    }

    /// Writes the leaf of `verdict` and answers `answer` — or, if the leaf
    /// cannot be written, an error saying so instead (a call whose verdict is
    /// not in the log is refused, never answered as if it were).
    pub(crate) async fn settle(
        &self,
        verdict: &Verdict,
        outcome: Outcome,
        response: Option<&ResponseScan>,
        answer: Vec<u8>,
    ) -> Vec<u8> {
        self.record(verdict, &outcome, response)
            .await
            .map_or_else(|refusal| refusal, |_| answer)
    }
}

/// The one place a `tool.call` leaf is appended: its index, or the answer
/// that replaces the call's when the append failed.
async fn append_or_refuse(
    gw: &Gateway,
    id: &RawValue,
    leaf: &CallLeaf<'_>,
    verdict: &Verdict,
    outcome: &Outcome,
    response: Option<&ResponseScan>,
) -> Result<u64, Vec<u8>> {
    leaf.append(gw.engine(), verdict, outcome, response)
        .await
        .map_err(|e| {
            if ran_upstream(outcome) {
                jsonrpc::unlogged(id, "call", &e)
            } else {
                jsonrpc::error(
                    Some(id),
                    code::INTERNAL_ERROR,
                    &format!("the gateway refused the call: the log append failed: {e}"),
                )
            }
        })
}

/// A call over its key's rate or quota: its leaf (`rate_limited` /
/// `quota_exceeded`), then the JSON-RPC error with the retry time. `at`:
/// the server, tool, its view and the arguments' hash.
async fn refuse_limited(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    (server, tool, view, arguments_hash): (&str, &str, &interlock_trust::pins::ServerView, &str),
    limited: crate::sessions::limits::Limited,
    origin: &Origin<'_>,
) -> Vec<u8> {
    let call_id = new_call_id();
    let leaf = CallLeaf {
        agent,
        server,
        tool,
        arguments_hash,
        call_id: &call_id,
        bound: Bound::of(view, tool),
        assessment: None,
        intent: None,
        envelope: &[],
    };
    let message = limited.message();
    let data = match &limited.limit {
        crate::sessions::limits::Limit::Rate { per_minute } => json!({
            "limit": "rate", "rate_per_minute": per_minute,
            "retry_after_secs": limited.retry_after_secs,
        }),
        crate::sessions::limits::Limit::Quota { quota, month } => json!({
            "limit": "quota", "monthly_quota": quota, "month": month,
            "retry_after_secs": limited.retry_after_secs,
        }),
    };
    let answer = jsonrpc::error_with_data(Some(id), code::RATE_LIMITED, &message, Some(&data));
    let secs = limited.retry_after_secs;
    let outcome = Outcome::Refused { message };
    match append_or_refuse(gw, id, &leaf, &Verdict::Limited(limited), &outcome, None).await {
        Ok(_) => {
            if let Some(l) = origin.limited {
                let _ = l.set(secs);
            }
            answer
        }
        Err(refusal) => refusal,
    }
}

/// Whether the outcome means the tool ran (or may have) upstream.
fn ran_upstream(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Answered { .. }
            | Outcome::Ran { .. }
            | Outcome::Halted { .. }
            | Outcome::UpstreamError { .. }
    )
}

/// Where a call comes from and how long it may wait, beside its agent.
#[derive(Clone, Copy, Default)]
pub(crate) struct Origin<'a> {
    /// The SSE stream of the agent's request (progress, relayed log messages).
    pub progress: Option<&'a Progress>,
    /// The agent's MCP session id; `None` for a stateless request.
    pub session: Option<&'a str>,
    /// How long a held call waits for a reviewer, if not `calls.hold_secs`
    /// (a task's lifetime: nothing times out on the client's side).
    pub hold_secs: Option<u64>,
    /// Set when the agent cancels the call's task: a held call stops
    /// waiting, and an approval that arrives later runs nothing.
    pub cancelled: Option<&'a std::sync::atomic::AtomicBool>,
    /// Set to the retry time when a rate limit or quota refused the call,
    /// so a plain JSON answer can be HTTP 429 with `Retry-After`.
    pub limited: Option<&'a std::sync::OnceLock<u64>>,
}

/// `tools/call`: the whole path of one call.
pub(crate) async fn tools_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    origin: &Origin<'_>,
) -> Vec<u8> {
    let arrived = Instant::now();
    let Origin {
        progress, session, ..
    } = *origin;
    let mut request = match Request::parse(params) {
        Ok(r) => r,
        Err(why) => return jsonrpc::error(Some(id), code::INVALID_PARAMS, why),
    };
    let name = request.name.clone();
    if !gw.roles().allows(&agent.role, &name) {
        return jsonrpc::error_with_data(
            Some(id),
            code::FORBIDDEN,
            &format!("role `{}` may not call `{name}`", agent.role),
            Some(&json!({"tool": name, "role": agent.role})),
        );
    }
    if governance::is_governance_tool(&name) {
        let args: serde_json::Value = request
            .arguments()
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or(json!({}));
        let result = governance::call(gw, &agent.name, &name, &args).await;
        return jsonrpc::result_value(id, &result);
    }
    let unknown = || {
        jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            &format!("unknown tool `{name}`"),
        )
    };
    let Some((view, tool)) = gw.pins().resolve(&name) else {
        return unknown();
    };
    let server = view.record.name.as_str();
    let Some(up) = gw.upstream(server) else {
        return unknown();
    };
    let exposed = match view.check(&tool) {
        Ok(e) => Arc::clone(e),
        Err(NotServed::UnknownTool) => return unknown(),
        Err(why) => {
            let message = why.message(server, &tool);
            let arguments_hash = request
                .arguments()
                .and_then(|a| canon::parse_json(a.get().as_bytes()).ok())
                .map(|v| arguments_digest(&v).to_string())
                .unwrap_or_default();
            let call_id = new_call_id();
            let leaf = CallLeaf {
                agent,
                server,
                tool: &tool,
                arguments_hash: &arguments_hash,
                call_id: &call_id,
                bound: Bound::of(&view, &tool),
                assessment: None,
                intent: None,
                envelope: &[],
            };
            let answer = jsonrpc::error_with_data(
                Some(id),
                code::TOOL_NOT_SERVED,
                &message,
                Some(
                    &json!({"server": server, "tool": tool, "status": view.record.status.as_str()}),
                ),
            );
            let outcome = Outcome::Refused { message };
            return append_or_refuse(gw, id, &leaf, &Verdict::NotServed, &outcome, None)
                .await
                .map_or_else(|refusal| refusal, |_| answer);
        }
    };
    let args = match request.arguments() {
        None => Value::Object(canon::Map::new()),
        Some(a) => match canon::parse_json(a.get().as_bytes()) {
            Ok(v) => v,
            Err(e) => {
                return jsonrpc::error(
                    Some(id),
                    code::INVALID_PARAMS,
                    &format!("the arguments are not acceptable JSON: {e}"),
                );
            }
        },
    };
    let args_digest = arguments_digest(&args).to_string();
    // A stateless client's retry of a held call (the 2026-07-28 round trip):
    // its sealed state names the held plan to go on waiting for. A state that
    // is not the gateway's is an upstream's own round trip and passes through.
    let mut resume: Option<String> = None;
    if session.is_none()
        && let Some(presented) = round_trip::presented_state(&request.members)
    {
        match gw.sealer().open(
            &presented,
            &agent.key_hash,
            &name,
            &args_digest,
            gw.engine().now(),
        ) {
            round_trip::Presented::NotOurs => {}
            round_trip::Presented::Refused(why) => {
                return jsonrpc::error(
                    Some(id),
                    code::INVALID_PARAMS,
                    &format!("requestState refused ({why}); call again without it"),
                );
            }
            round_trip::Presented::Held(state) => {
                request.members.shift_remove("requestState");
                request.members.shift_remove("inputResponses");
                resume = Some(state.plan);
            }
        }
    }
    // The key's rate and monthly quota (issue 20 item 4), before anything
    // else is decided: a refused call is never assessed, forwarded or held.
    // A held call's stateless retry is the same call, not another.
    let limits = &gw.0.key_limits;
    let store = gw.engine().store();
    let settings = match limits.settings(store, &agent.key_hash).await {
        Ok(s) => s,
        Err(e) => {
            return jsonrpc::error(
                Some(id),
                code::INTERNAL_ERROR,
                &format!("the gateway refused the call: its limits could not be read: {e}"),
            );
        }
    };
    if resume.is_none() {
        let limited = crate::sessions::limits::check(
            limits,
            store,
            &agent.key_hash,
            &settings,
            gw.engine().now(),
        )
        .await;
        match limited {
            Ok(None) => {}
            Ok(Some(l)) => {
                let at = (server, tool.as_str(), view.as_ref(), args_digest.as_str());
                return refuse_limited(gw, agent, id, at, l, origin).await;
            }
            Err(e) => {
                return jsonrpc::error(
                    Some(id),
                    code::INTERNAL_ERROR,
                    &format!("the gateway refused the call: its limits could not be read: {e}"),
                );
            }
        }
    }
    let tool_def = view.observed.as_ref().and_then(|s| s.tool(&tool));
    let mut assessment = assess_with_roots(
        gw.config(),
        up.config.roots.clone(),
        &agent.role,
        tool_def,
        &args,
    );
    // The arguments against the tool's envelope: a host or path root outside
    // it holds the call, and no standing approval covers that.
    let before = envelope::before(gw, server, &tool, &args, agent.shadow).await;
    let envelope_holds = before.hold_reasons();
    if !envelope_holds.is_empty() {
        assessment.hold_reasons.extend(envelope_holds);
        assessment.inspection_hold = true;
    }
    let approved_def = view.baseline.as_ref().and_then(|s| s.tool(&tool));
    let call = Call {
        gw,
        agent,
        id,
        exposed: &name,
        server,
        tool: &tool,
        args: &args,
        args_digest: &args_digest,
        assessment: &assessment,
        session,
        hold_secs: origin.hold_secs.unwrap_or(gw.config().calls.hold_secs),
        cancelled: origin.cancelled,
        call_id: new_call_id(),
        bound: Bound::of(&view, &tool),
        envelope: &before.findings,
        intent: OnceLock::new(),
        arrived,
    };

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
            return call
                .settle(&verdict, Outcome::Blocked { reasons }, None, answer)
                .await;
        }
        Basis::ShadowWouldStop { reasons }
    } else if assessment.held() {
        let hold_reasons = assessment.hold_reasons.join("; ");
        let lookup = if assessment.inspection_hold {
            // A standing approval never covers a call that looks like an attack.
            standing::Lookup::None
        } else {
            let approved = view
                .baseline
                .as_ref()
                .and_then(|s| s.tool(&tool))
                .map(|t| t.hash());
            let observed = tool_def.map(|t| t.hash());
            let session_tag = session.map(standing::session_tag);
            let caller = standing::Caller {
                role: &agent.role,
                agent: &agent.name,
                session: session_tag.as_deref(),
                arguments_hash: &args_digest,
            };
            standing::find(
                gw.engine(),
                &caller,
                &name,
                &args,
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
        } else if let Some((plan_id, plan_hash)) = held::approved_plan_for(&call).await {
            // The agent's retry of a call a reviewer has approved: run that
            // plan, once. (Looked up only for calls that would be held: the
            // common path pays no store read.)
            return held::run_approved(&call, &plan_id, &plan_hash).await;
        } else if agent.shadow {
            Basis::ShadowWouldHold {
                reasons: hold_reasons,
            }
        } else {
            let tool_hash = tool_def
                .map(|t| t.hash())
                .unwrap_or_else(|| canon::digest(&Value::Null));
            let progress = progress.filter(|p| p.takes_progress());
            if let Some(plan_id) = &resume {
                return held::resume(&call, progress, plan_id).await;
            }
            return held::hold(&call, progress, &tool_hash, void_note.as_deref()).await;
        }
    } else {
        Basis::Allowed
    };
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
    request.members.insert(
        "name".into(),
        serde_json::value::to_raw_value(&exposed.upstream_name).expect("a string serializes"),
    );
    // The key's response policy and caps (issue 20) over the config's.
    let rules = Arc::new(response_policy(gw.config()).for_key(&settings));
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
        .map_or(Err(NotServed::UnknownTool), |v| v.check(&tool).map(drop))
    {
        let message = why.message(server, &tool);
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
    match outcome {
        Ok(result) => {
            let scan = scan_result(result.get(), &rules);
            let mut disposition = Disposition::of(&scan, agent.shadow);
            let outside = envelope::after(
                gw,
                server,
                approved_def,
                &tool,
                &before,
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
                _ => jsonrpc::result(id, &result),
            };
            let scan = response_scan(disposition, scan, notifications, outside);
            call.settle(&verdict, Outcome::Answered { elapsed }, Some(&scan), answer)
                .await
        }
        Err(UpstreamError::Rpc(err)) => {
            let (answer, error, scan) = inspect_error(id, err.get(), &rules, agent.shadow);
            let outside = envelope::after(
                gw,
                server,
                approved_def,
                &tool,
                &before,
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

/// An upstream's JSON-RPC error, scanned like a result: the answer to send
/// (its bytes, redacted, or a gateway error saying it was withheld), the
/// text to keep in the leaf (never the unredacted error), and the scan.
fn inspect_error(
    id: &RawValue,
    err: &str,
    rules: &super::scan::ScanPolicy,
    shadow: bool,
) -> (Vec<u8>, String, (Disposition, Scan)) {
    let scan = scan_error(err, rules);
    let disposition = Disposition::of(&scan, shadow);
    let (answer, kept) = match (&disposition, &scan.scanned) {
        (Disposition::Blocked(_), _) => {
            let text = scan.withheld_message("error").expect("withheld");
            (jsonrpc::error(Some(id), code::FORBIDDEN, &text), text)
        }
        (Disposition::Redacted, Scanned::Redacted(v)) => {
            let raw = serde_json::value::to_raw_value(v).expect("JSON");
            (jsonrpc::error_raw(id, &raw), raw.get().to_owned())
        }
        (Disposition::Forwarded, _) => {
            let raw = RawValue::from_string(err.to_owned()).expect("the upstream's JSON");
            (jsonrpc::error_raw(id, &raw), err.to_owned())
        }
        // Flagged (a shadow key, an `allow` policy): forwarded as sent, but
        // the leaf keeps only what was found, not the text.
        _ => {
            let raw = RawValue::from_string(err.to_owned()).expect("the upstream's JSON");
            let kept = format!(
                "an error with findings: {}",
                super::scan::categories(&scan.findings)
            );
            (jsonrpc::error_raw(id, &raw), kept)
        }
    };
    (answer, kept, (disposition, scan))
}

/// What a content read sends back once the upstream answered: the result as
/// inspected and logged (the leaf appended before the content is handed
/// back), or an error saying why not.
pub(crate) async fn deliver_read(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    outcome: Result<Box<RawValue>, UpstreamError>,
) -> Vec<u8> {
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            let (outcome, findings) = match &e {
                UpstreamError::Rpc(err) => {
                    let scan = scan_error(err.get(), &response_policy(gw.config()));
                    (ReadOutcome::UpstreamError, scan.findings)
                }
                _ => (ReadOutcome::Unavailable, Vec::new()),
            };
            // The read failed upstream; its leaf is evidence only, and the
            // agent gets the upstream's failure (inspected) either way.
            if let Err(log) = record.append(gw.engine(), outcome, &findings).await {
                tracing::warn!(error = %log, server = record.server, "a failed read was not logged");
            }
            return upstream_failure(gw, id, record.server, e);
        }
    };
    let scan = scan_content(result.get(), &response_policy(gw.config()));
    let disposition = Disposition::of(&scan, record.agent.shadow);
    if let Err(e) = record
        .append(
            gw.engine(),
            ReadOutcome::Scanned(disposition.clone()),
            &scan.findings,
        )
        .await
    {
        return jsonrpc::unlogged(id, "read", &e);
    }
    let member = record.kind.member();
    match (&disposition, &scan.scanned) {
        (Disposition::Blocked(_), _) => jsonrpc::error_with_data(
            Some(id),
            code::FORBIDDEN,
            &scan.withheld_message(record.kind.noun()).expect("withheld"),
            Some(&json!({"server": record.server, member: record.what})),
        ),
        (Disposition::Redacted, Scanned::Redacted(v)) => jsonrpc::result_value(id, v),
        _ => jsonrpc::result(id, &result),
    }
}

/// A read refused before it reached the upstream (a held or unlisted pinned
/// entry): its leaf first, as for every read, then the refusal saying why.
pub(crate) async fn refuse_read(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    why: String,
) -> Vec<u8> {
    if let Err(e) = record
        .append(gw.engine(), ReadOutcome::NotServed(why.clone()), &[])
        .await
    {
        return jsonrpc::unlogged(id, "read", &e);
    }
    jsonrpc::error(Some(id), code::FORBIDDEN, &why)
}

/// The answer to a request an upstream failed: its own JSON-RPC error as
/// inspected (redacted, or withheld by the response policy), or -32001
/// saying why it could not be reached.
pub(crate) fn upstream_failure(
    gw: &Gateway,
    id: &RawValue,
    server: &str,
    e: UpstreamError,
) -> Vec<u8> {
    match e {
        UpstreamError::Rpc(err) => {
            inspect_error(id, err.get(), &response_policy(gw.config()), false).0
        }
        e => jsonrpc::error(
            Some(id),
            code::UPSTREAM_UNAVAILABLE,
            &format!("upstream `{server}`: {e}"),
        ),
    }
}
