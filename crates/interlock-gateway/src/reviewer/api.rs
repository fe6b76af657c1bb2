//! The reviewer HTTP API (`/api/v1`): the inbox of held items, plans, servers
//! and their drift, decisions (signed statements only), the log and its
//! checkpoints, and an SSE stream of events. `GET /api/v1/openapi.json`
//! describes it.
//!
//! Architecture invariant: the only writes here are signed statements (DSSE
//! envelopes), verified against the registered approver keys. A reviewer API
//! key lets a client *read* and *submit*; it cannot approve anything by itself,
//! and an agent key is refused outright.

use std::convert::Infallible;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};

use futures_util::Stream;
use interlock_canon as canon;
use interlock_core::DsseEnvelope;
use interlock_engine::{PlanRecord, PlanStatus};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::BroadcastStream;

use crate::extract::{ApiError, Body, Param, Query};
use crate::gateway::Gateway;
use crate::reviewer::key::reviewer;
use crate::upstream::LinkState;
use crate::views::{decision_outcome_json, plan_summary};
use interlock_trust::pins::ServerView;

type ApiResult = Result<Json<Value>, ApiError>;

fn link_json(l: &LinkState) -> Value {
    match l {
        LinkState::Connecting => json!({"state": "connecting"}),
        LinkState::Up { stale } if stale.is_empty() => json!({"state": "up"}),
        LinkState::Up { stale } => json!({
            "state": "up",
            "stale_listings": stale
                .iter()
                .map(|s| json!({"method": s.method, "error": s.error}))
                .collect::<Vec<_>>(),
        }),
        LinkState::Down { error, retry_in } => {
            json!({"state": "down", "error": error, "retry_in_ms": retry_in.as_millis() as u64})
        }
    }
}

fn server_summary(gw: &Gateway, v: &ServerView) -> Value {
    let drift: Value = serde_json::from_slice(&v.record.drift).unwrap_or(json!([]));
    let worst = drift
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["severity"].as_str())
        .max_by_key(|s| {
            ["info", "low", "medium", "high", "critical"]
                .iter()
                .position(|x| x == s)
        })
        .map(str::to_owned);
    let first = interlock_trust::pins::first_contact_of(&v.record);
    let (power, _) = v
        .observed
        .as_ref()
        .map(interlock_surface::surface_power)
        .unwrap_or_default();
    // The one label (issue 46 item 2), as the tray and notifications show it.
    let risk_level = v.risk().name();
    let power: Vec<Value> = power
        .iter()
        .map(|(tool, p)| json!({"tool": tool, "risk": p.level.name(), "why": p.why}))
        .collect();
    let up = gw.upstream(&v.record.name);
    let up = up.as_ref();
    json!({
        "name": v.record.name,
        "status": v.record.status.as_str(),
        "configured": up.is_some(),
        "transport": up.map(|u| u.transport.describe()),
        // How it is started and what its sandbox grants (issue 38).
        "launch": crate::reviewer::launch::launch_json(
            up.map(|u| &u.transport),
            v.observed.as_ref(),
            v.baseline.as_ref(),
        ),
        "link": up.map(|u| link_json(&u.link())),
        // What approving the surface also lets agents read (served and
        // inspected; pinned when `pinned` names it; see content.rs).
        "also_offers": up
            .and_then(|u| u.hello())
            .map(|h| {
                ["prompts", "resources", "completions"]
                    .into_iter()
                    .filter(|c| h.offers(c))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
        "baseline_hash": v.record.baseline_hash,
        "observed_hash": v.record.observed_hash,
        "tools": v.observed.as_ref().map_or(0, |s| s.tools().len()),
        "served_tools": v.served.keys().filter(|t| v.check(t).is_ok()).count(),
        "blocked_tools": v.blocked.iter().map(|(t, (a, why))| json!({"tool": t, "action": a.name(), "why": why})).collect::<Vec<_>>(),
        // What of the surface is pinned (`pin = [...]`), how many prompts,
        // resources and templates the observed surface pins, and those held.
        "pinned": up.map(|u| u.pin.names()).unwrap_or_default(),
        "pinned_content": v.observed.as_ref().map(|s| json!({
            "prompts": s.contents_of(interlock_surface::ContentKind::Prompt).count(),
            "resources": s.contents_of(interlock_surface::ContentKind::Resource).count(),
            "resource_templates": s.contents_of(interlock_surface::ContentKind::ResourceTemplate).count(),
        })),
        "blocked_content": v.blocked_content.iter().map(|(c, why)| json!({"kind": c.kind.name(), "key": c.key, "why": why})).collect::<Vec<_>>(),
        "drift_count": drift.as_array().map_or(0, Vec::len),
        "worst_severity": worst,
        // A pending server's first-contact risk (its whole surface scanned).
        "risk": first.as_ref().map(|f| f["risk"].clone()),
        // The one risk every view shows (issue 46): the worst of what its
        // tools can do, its first-contact findings while pending, and its
        // open drift.
        "risk_level": risk_level,
        "power": power,
        "version": v.record.version,
        "updated_at": v.record.updated_at,
    })
}

/// `GET /api/v1/inbox`: what waits for a reviewer — proposed plans, pending or
/// quarantined servers, servers with held tools — newest first.
pub async fn inbox(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let items: Vec<Value> = gw
        .waiting()
        .await?
        .iter()
        .map(|w| match w {
            crate::inbox::Waiting::Plan(r) => {
                let mut s = plan_summary(r);
                s["kind"] = json!("plan");
                s
            }
            crate::inbox::Waiting::Server(v) => {
                let mut s = server_summary(&gw, v);
                s["kind"] = json!("server");
                s
            }
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}

#[derive(Deserialize)]
pub struct PlansQuery {
    status: Option<String>,
}

/// `GET /api/v1/plans[?status=S]`.
pub async fn plans(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Query(q): Query<PlansQuery>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let status = match q.status.as_deref() {
        None | Some("") => None,
        Some(s) => Some(s.parse::<PlanStatus>().map_err(|_| {
            ApiError(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("unknown status {s:?}"),
            )
        })?),
    };
    let plans = gw.engine().plans(status).await?;
    Ok(Json(
        json!({"plans": plans.iter().map(plan_summary).collect::<Vec<_>>()}),
    ))
}

/// `GET /api/v1/plans/{id}`: the current revision with its canonical JSON, the
/// document, every revision, decisions so far, and a unified diff of the
/// canonical body against the previous revision.
pub async fn plan(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let engine = gw.engine();
    let current = engine.plan(&id).await?;
    let revisions = engine.revisions(&id).await?;
    let pretty = |r: &PlanRecord| {
        canon::parse_json(&r.document)
            .map(|v| serde_json::to_string_pretty(&canon::to_serde_json(&v)).expect("JSON"))
            .unwrap_or_default()
    };
    let previous = revisions
        .iter()
        .rev()
        .find(|r| r.revision < current.revision);
    let diff = previous.map(|p| {
        similar::TextDiff::from_lines(&pretty(p), &pretty(&current))
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("revision {}", p.revision),
                &format!("revision {}", current.revision),
            )
            .to_string()
    });
    let approvals = engine.store().approvals_for(&id, current.revision).await?;
    // Who decided, by name (issue 46): the identity each key was registered
    // with, revoked keys included (a decision outlives its key's revocation).
    let identities: std::collections::HashMap<String, String> = engine
        .store()
        .approver_keys(true)
        .await?
        .into_iter()
        .map(|k| (k.key_id, k.identity))
        .collect();
    let document = canon::parse_json(&current.document)
        .map(|v| canon::to_serde_json(&v))
        .unwrap_or(Value::Null);
    let validation = match interlock_core::validate(
        &canon::parse_json(&current.document).unwrap_or(canon::Value::Null),
        engine.policy(),
    ) {
        Ok(_) => json!({"ok": true, "violations": []}),
        Err(v) => json!({"ok": false, "violations": v.to_string().lines().collect::<Vec<_>>()}),
    };
    Ok(Json(json!({
        "plan": plan_summary(&current),
        "document": document,
        "canonical": String::from_utf8_lossy(&current.document),
        "policy_digest": engine.policy().digest().to_string(),
        "audience": engine.log().origin(),
        "validation": validation,
        "diff": diff,
        "revisions": revisions.iter().map(plan_summary).collect::<Vec<_>>(),
        "decisions": approvals.iter().map(|a| json!({
            "decision": a.decision.as_str(),
            "reason": a.reason,
            "approver_key_id": a.approver_key_id,
            "approver_identity": identities.get(&a.approver_key_id),
            "created_at": a.created_at,
            "expires_at": a.expires_at,
            "consumed": a.consumed_at.is_some(),
        })).collect::<Vec<_>>(),
    })))
}

pub(super) fn envelope(body: &Value) -> Result<DsseEnvelope, ApiError> {
    DsseEnvelope::from_json(body).map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("not a DSSE envelope: {e}"),
        )
    })
}

/// `POST /api/v1/plans/{id}/decisions`: a DSSE envelope around a signed
/// approval statement about this plan.
pub async fn decide_plan(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
    Body(body): Body<Value>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let env = statement_about(&body, &id, || format!("plan {id:?}"))?;
    let o = gw.engine().decide(&env).await?;
    Ok(Json(decision_outcome_json(&o)))
}

/// `POST /api/v1/plans/{id}/rollback`: proposes the rollback plan of halted plan
/// `id` (issue 23 item 1) — its committed stages' compensating stages, newest
/// first, as a new plan linked to it by `body.rollback_of` and proposed by the
/// halted plan's proposer. Nothing runs: the new plan is held for review.
pub async fn propose_rollback(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let engine = gw.engine();
    let p = engine.propose_rollback(&id).await?;
    let record = engine.plan(&p.plan_id).await?;
    Ok(Json(json!({ "plan": plan_summary(&record) })))
}

/// The DSSE envelope in `body`, if its statement is about `subject`: a
/// statement about something else is refused before any signature check, so
/// one endpoint never decides another's subject.
fn statement_about(
    body: &Value,
    subject: &str,
    what: impl FnOnce() -> String,
) -> Result<DsseEnvelope, ApiError> {
    let env = envelope(body)?;
    let claimed = interlock_core::decision::ApprovalStatement::claimed_by(&env).ok();
    if claimed.as_ref().map(|s| s.plan_id.as_str()) != Some(subject) {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("the statement is not about {}", what()),
        ));
    }
    Ok(env)
}

/// `GET /api/v1/servers`.
pub async fn servers(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let mut list: Vec<Value> = gw
        .pins()
        .views()
        .iter()
        .map(|v| server_summary(&gw, v))
        .collect();
    // Configured servers not seen yet (never connected).
    for up in gw.upstreams() {
        if gw.pins().view(&up.name).is_none() {
            list.push(json!({
                "name": up.name, "status": "UNSEEN", "configured": true,
                "transport": up.transport.describe(), "link": link_json(&up.link()),
            }));
        }
    }
    Ok(Json(json!({"servers": list})))
}

/// `GET /api/v1/servers/{name}`: its state, both surfaces and the drift.
pub async fn server(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(name): Param<String>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let v = gw.pins().view(&name).ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no server named {name:?}"),
        )
    })?;
    let surface = |s: &Option<interlock_surface::Surface>| {
        s.as_ref().map(|s| canon::to_serde_json(&s.to_value()))
    };
    let drift: Value = serde_json::from_slice(&v.record.drift).unwrap_or(json!([]));
    let envelopes: Vec<Value> = gw
        .envelopes()
        .of_server(gw.engine(), &name)
        .await?
        .iter()
        .map(|e| {
            json!({
                "tool": e.tool,
                "state": e.state.as_str(),
                "hash": e.hash.to_string(),
                "subject": interlock_trust::envelopes::envelope_subject(&name, &e.tool),
                "envelope": canon::to_serde_json(&e.envelope.to_value()),
            })
        })
        .collect();
    Ok(Json(json!({
        "server": server_summary(&gw, &v),
        "subject": interlock_trust::pins::server_subject(&name),
        "policy_digest": gw.engine().policy().digest().to_string(),
        "audience": gw.engine().log().origin(),
        "baseline": surface(&v.baseline),
        "observed": surface(&v.observed),
        "drift": drift,
        "first_contact": interlock_trust::pins::first_contact_of(&v.record),
        // What a decision about one tool signs (`tool:<name>/<tool>` at this
        // hash), and whether it is served now.
        "observed_tools": v.observed.as_ref().map(|s| s.tools().iter().map(|(t, d)| json!({
            "name": t,
            "definition_hash": d.hash().to_string(),
            "served": v.check(t).is_ok(),
            "blocked": v.blocked.get(t).map(|(b, _)| b.name()),
        })).collect::<Vec<_>>()).unwrap_or_default(),
        "probes": crate::probes::probes_view(gw.engine().store(), &name).await?,
        "envelopes": envelopes,
    })))
}

/// `GET /api/v1/claims`: the auditor's question answered from this log alone
/// (issue 16 item 9) — was any tool executed after its drift was detected and
/// before a reviewer decided? (`interlock receipts claims` also verifies the
/// log first; `GET /api/v1/log` and its proofs let a client do the same.)
pub async fn claims(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let claim = interlock_log::drift_window_claim_of(gw.engine().store())
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    Ok(Json(canon::to_serde_json(&claim.to_value())))
}

/// `GET /api/v1/surfaces/{hash}`: a surface a reviewer approved, by its hash
/// (issue 16 item 7) — kept after the server's baseline moves on, so a
/// receipt's `baseline_hash` or `definition_hash` can be shown as the exact
/// definitions that were approved. Each tool comes with its definition hash.
pub async fn surface(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(hash): Param<String>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let not_found = || {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no approved surface {hash:?}"),
        )
    };
    if hash.parse::<canon::Digest>().is_err() {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("{hash:?} is not a sha256:<64 hex> digest"),
        ));
    }
    let kept = gw
        .engine()
        .store()
        .approved_surface(&hash)
        .await?
        .ok_or_else(not_found)?;
    let surface = interlock_trust::pins::decode_surface(&kept.server, Some(&kept.surface))
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
        .ok_or_else(not_found)?;
    let tools: Vec<Value> = surface
        .tools()
        .iter()
        .map(|(name, t)| json!({"name": name, "definition_hash": t.hash().to_string()}))
        .collect();
    Ok(Json(json!({
        "hash": kept.hash,
        "server": kept.server,
        "first_approved_at": kept.first_approved_at,
        "tools": tools,
        "surface": canon::to_serde_json(&surface.to_value()),
    })))
}

#[derive(Deserialize)]
pub struct WideningQuery {
    leaf: u64,
}

fn widening_json(gw: &Gateway, w: &interlock_trust::envelopes::Widening) -> Value {
    json!({
        "server": w.server,
        "tool": w.tool,
        "leaf": w.leaf,
        "subject": w.subject(),
        "policy_digest": gw.engine().policy().digest().to_string(),
        "audience": gw.engine().log().origin(),
        "findings": w.findings.iter().map(|f| json!({
            "kind": f.kind.as_str(), "subject": f.subject, "explanation": f.explanation(),
        })).collect::<Vec<_>>(),
        "current_hash": w.current_hash.to_string(),
        "widened_hash": w.widened_hash.to_string(),
        "widened": canon::to_serde_json(&w.widened.to_value()),
    })
}

/// `GET /api/v1/servers/{name}/envelopes/{tool}/widening?leaf=N`: what
/// widening the tool's envelope by log entry N's findings gives, and the
/// hash a reviewer signs to approve it.
pub async fn envelope_widening(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param((name, tool)): Param<(String, String)>,
    Query(q): Query<WideningQuery>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let w = interlock_trust::envelopes::widening(gw.engine(), &name, &tool, q.leaf).await?;
    Ok(Json(widening_json(&gw, &w)))
}

#[derive(Deserialize)]
pub struct WideningDecision {
    leaf: u64,
    envelope: Value,
}

/// `POST /api/v1/servers/{name}/envelopes/{tool}/decisions`: `{leaf,
/// envelope}`, a DSSE envelope around a signed approval of
/// `envelope:<name>/<tool>` at the widened envelope's hash.
pub async fn decide_envelope(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param((name, tool)): Param<(String, String)>,
    Body(body): Body<WideningDecision>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let subject = interlock_trust::envelopes::envelope_subject(&name, &tool);
    let env = statement_about(&body.envelope, &subject, || {
        format!("the envelope of {name}/{tool}")
    })?;
    let w = interlock_trust::envelopes::decide_widening(gw.engine(), &env, body.leaf).await?;
    gw.envelopes().forget(&name, &tool);
    Ok(Json(widening_json(&gw, &w)))
}

/// `POST /api/v1/servers/{name}/decisions`: a DSSE envelope around a signed
/// statement about `server:<name>` at its observed surface hash.
pub async fn decide_server(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(name): Param<String>,
    Body(body): Body<Value>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let env = statement_about(&body, &interlock_trust::pins::server_subject(&name), || {
        format!("server {name:?}")
    })?;
    let record = gw.pins().decide(&env).await?;
    let v = gw.pins().view(&record.name).expect("just installed");
    Ok(Json(server_summary(&gw, &v)))
}

/// `POST /api/v1/servers/{name}/tools/{tool}/decisions`: a DSSE envelope
/// around a signed statement about `tool:<name>/<tool>` at the tool's observed
/// definition hash — approve that definition into the baseline, or (reject)
/// block the tool, leaving the rest of the server as it is.
pub async fn decide_tool(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param((name, tool)): Param<(String, String)>,
    Body(body): Body<Value>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let subject = interlock_trust::tool_decision::tool_subject(&name, &tool);
    let env = statement_about(&body, &subject, || format!("tool {tool:?} of {name:?}"))?;
    let record = gw.pins().decide_tool(&env).await?;
    let v = gw.pins().view(&record.name).expect("just installed");
    Ok(Json(server_summary(&gw, &v)))
}

/// `POST /api/v1/servers/{name}/review` (issue 22 item 3): classifies the
/// surface in the body (`{"surface": {"instructions", "tools"}}`, what the
/// server lists in a change under review) against this gateway's approved
/// baseline with its drift policy — the answer `interlock review` gives.
/// It changes nothing: no approval, baseline, quarantine or log entry. Any
/// reviewer key may call it, a review-only key only it. Bounded by
/// `limits.max_tools_list_bytes`, `limits.max_tools` and
/// `limits.upstream_timeout_secs`; an `Idempotency-Key` replays its first
/// answer and refuses another request under the same key.
pub async fn review_server(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(name): Param<String>,
    Body(body): Body<Value>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse as _;
    use interlock_trust::review::idempotency::Lookup;
    let caller = crate::reviewer::key::any_reviewer(&gw, &headers).await?;
    if caller.role == crate::roles::METRICS_ONLY_ROLE {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "metrics_only",
            "this key is metrics-only: it can only GET /metrics".into(),
        ));
    }
    let bad = |code: &'static str, message: String| {
        ApiError(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    };
    let idempotency = idempotency_key(&headers).map_err(|m| bad("bad_idempotency_key", m))?;
    let limits = &gw.config().limits;
    let bytes = serde_json::to_vec(&body).expect("JSON serializes");
    if bytes.len() > limits.max_tools_list_bytes {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "the surface is {} bytes; limits.max_tools_list_bytes is {}",
                bytes.len(),
                limits.max_tools_list_bytes
            ),
        ));
    }
    // What the key is bound to: the server and the body's bytes.
    let request = canon::digest(&canon::Value::from(
        format!("{name}\u{0}{}", String::from_utf8_lossy(&bytes)).as_str(),
    ))
    .to_string();
    if let Some(key) = &idempotency {
        match gw.review_answers().lookup(&caller.key_hash, key, &request) {
            Lookup::Fresh => {}
            Lookup::Replay(answer) => {
                return Ok(([("idempotent-replayed", "true")], Json(answer)).into_response());
            }
            Lookup::Conflict => {
                return Err(bad(
                    "idempotency_key_reused",
                    "this Idempotency-Key was used for another request".into(),
                ));
            }
        }
    }
    let Some(surface) = body.get("surface") else {
        return Err(bad(
            "bad_request",
            "the body must be {\"surface\": {\"instructions\", \"tools\"}}".into(),
        ));
    };
    let surface_bytes = canon::canonical_bytes(&interlock_trust::pins::to_canon(surface));
    let observed = interlock_trust::pins::decode_surface(&name, Some(&surface_bytes))
        .map_err(|e| bad("bad_surface", e.to_string()))?
        .expect("bytes given");
    if observed.tools().len() > limits.max_tools {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "the surface has {} tools; limits.max_tools is {}",
                observed.tools().len(),
                limits.max_tools
            ),
        ));
    }
    let record = gw.engine().store().server(&name).await?.ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no server named {name:?}"),
        )
    })?;
    let baseline = interlock_trust::pins::decode_surface(&name, record.baseline.as_deref())?;
    let policy = *gw.pins().policy();
    let classified = tokio::time::timeout(
        limits.upstream_timeout(),
        tokio::task::spawn_blocking(move || {
            interlock_trust::review::classify(&name, baseline.as_ref(), &observed, &policy)
        }),
    )
    .await
    .map_err(|_| {
        ApiError(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            "the review took longer than limits.upstream_timeout_secs".into(),
        )
    })?
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let answer = serde_json::to_value(&classified).expect("JSON serializes");
    if let Some(key) = &idempotency {
        gw.review_answers()
            .store(&caller.key_hash, key, &request, answer.clone());
    }
    Ok(Json(answer).into_response())
}

/// A request's `Idempotency-Key` header, if it has one that is usable.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, String> {
    use interlock_trust::review::idempotency::MAX_KEY_LEN;
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    v.to_str()
        .ok()
        .filter(|v| !v.is_empty() && v.len() <= MAX_KEY_LEN)
        .map(|v| Some(v.to_owned()))
        .ok_or_else(|| {
            format!("Idempotency-Key must be 1 to {MAX_KEY_LEN} visible ASCII characters")
        })
}

/// `GET /api/v1/approvers`: the registered approver keys.
pub async fn approvers(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let keys = gw.engine().store().approver_keys(false).await?;
    Ok(Json(json!({"approvers": keys.iter().map(|k| json!({
        "key_id": k.key_id, "identity": k.identity, "label": k.label, "added_at": k.added_at,
    })).collect::<Vec<_>>()})))
}

#[derive(Deserialize)]
pub struct LogQuery {
    from: Option<u64>,
    limit: Option<u64>,
}

/// `GET /api/v1/log?from=N&limit=M`: entries (the receipts' predicates).
pub async fn log(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Query(q): Query<LogQuery>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let log = gw.engine().log();
    // Entries other processes appended (a CLI decision on the same file) count too.
    log.refresh()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()))?;
    let size = log.size();
    let limit = q.limit.unwrap_or(100).min(1000);
    let from = q.from.unwrap_or_else(|| size.saturating_sub(limit));
    let to = from.saturating_add(limit).min(size);
    let mut entries = Vec::new();
    for i in from..to {
        let entry = log
            .entry(i)
            .await
            .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()))?;
        entries.push(json!({"index": i, "entry": canon::to_serde_json(&entry)}));
    }
    Ok(Json(
        json!({"size": size, "from": from, "entries": entries}),
    ))
}

/// `GET /api/v1/log/checkpoint`: the latest signed checkpoint (C2SP note),
/// signed now if the newest entries had none yet (checkpoints are signed at
/// most once per interval while the log grows).
pub async fn checkpoint(State(gw): State<Gateway>, headers: HeaderMap) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let log = gw.engine().log();
    let storage = |e: interlock_log::LogError| {
        ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
    };
    // Entries other processes appended count too.
    log.refresh().await.map_err(storage)?;
    let note = log.seal().await.map_err(storage)?;
    Ok(Json(json!({
        "origin": log.origin(),
        "size": log.size(),
        "root": hex::encode(log.root()),
        "note": note.map(|n| n.to_string()),
        "verifier_key": log.verifier_key(),
    })))
}

/// `GET /api/v1/log/{index}/proof`: entry `index`'s stored leaf (its
/// statement, or an older log's signed envelope) and its RFC 6962 inclusion proof against the latest signed
/// checkpoint, with that checkpoint's note — so a reviewer's browser checks
/// that the entry is in the log the log key signed, without trusting this
/// gateway.
pub async fn log_proof(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(index): Param<u64>,
) -> ApiResult {
    reviewer(&gw, &headers).await?;
    let log = gw.engine().log();
    let storage = |e: interlock_log::LogError| {
        ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
    };
    log.refresh()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()))?;
    // A checkpoint covering the entry: signed now if it is newer than the
    // latest one.
    let latest = if index >= log.sealed_size() {
        log.seal().await.map_err(storage)?
    } else {
        log.latest_checkpoint()
    };
    // The size and root come from the note itself, so the proof is against
    // exactly what was signed (a later append cannot slip in between).
    let note = latest.ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            "no checkpoint has been signed yet".into(),
        )
    })?;
    let body = note
        .split_once("\n\n")
        .map(|(b, _)| format!("{b}\n"))
        .unwrap_or_default();
    let cp = interlock_merkle::Checkpoint::parse(&body).map_err(|e| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage",
            format!("the latest checkpoint is malformed: {e}"),
        )
    })?;
    if index >= cp.size {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!(
                "entry {index} is not covered by the latest checkpoint (size {})",
                cp.size
            ),
        ));
    }
    let leaf = log.leaf(index).await.map_err(storage)?;
    let proof = log.inclusion_proof(index, cp.size).await.map_err(storage)?;
    use base64::Engine as _;
    Ok(Json(json!({
        "index": index,
        "size": cp.size,
        "root": hex::encode(cp.root),
        "leaf": base64::engine::general_purpose::STANDARD.encode(&leaf),
        "leaf_hash": hex::encode(interlock_merkle::leaf_hash(&leaf)),
        "proof": proof.iter().map(hex::encode).collect::<Vec<_>>(),
        "note": note.to_string(),
    })))
}

/// `GET /api/v1/events`: Server-Sent Events, one JSON [`interlock_trust::GatewayEvent`]
/// per `data:` line, event name = its type.
pub async fn events(
    State(gw): State<Gateway>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    reviewer(&gw, &headers).await?;
    let stream = BroadcastStream::new(gw.events().subscribe()).filter_map(|e| {
        let e = e.ok()?;
        Some(Ok(Event::default()
            .event(e.kind.as_str())
            .data(serde_json::to_string(&e).expect("JSON"))))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// `GET /api/v1/openapi.json` (no key needed: it is documentation).
pub async fn openapi() -> Json<Value> {
    Json(serde_json::from_str(include_str!("openapi.json")).expect("openapi.json is valid JSON"))
}
