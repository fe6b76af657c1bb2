//! The agent-facing MCP endpoint (`/mcp`, Streamable HTTP).
//!
//! - 2025-11-25 (and earlier 2025 revisions): `initialize` opens a session
//!   (`Mcp-Session-Id`); later requests must carry it.
//! - 2026-07-28 (stateless): no handshake and no session; each request names
//!   its protocol version (`MCP-Protocol-Version` header or
//!   `_meta["io.modelcontextprotocol/protocolVersion"]`); `server/discover`.
//!
//! Every request needs an agent API key (`Authorization: Bearer ilk_…`); the
//! key names the agent and its role, which filters `tools/list` and gates
//! `tools/call`. Upstream tools are exposed as `server__tool`; their
//! definitions and results pass through byte for byte.

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use indexmap::IndexMap;
use interlock_canon as canon;
use interlock_store::{ApiKeyKind, ApiKeyRecord};
use serde_json::json;
use serde_json::value::RawValue;
use tokio_stream::StreamExt as _;

use crate::callpath;
use crate::content;
use crate::gateway::{Gateway, Session};
use crate::governance;
use crate::jsonrpc::{self, Incoming, Kind, code};
use crate::pins::NotServed;
use crate::upstream::UpstreamError;
use crate::upstream::relay::LogLevel;

/// Protocol versions served with the initialize handshake, newest first.
pub const SESSION_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The stateless protocol version.
pub const STATELESS_VERSION: &str = "2026-07-28";

const SESSION_HEADER: &str = "mcp-session-id";
/// Deepest nesting accepted in a message (serde_json's own recursion limit is
/// 128; tool arguments this deep are not legitimate).
pub const MAX_NESTING: usize = 128;
const VERSION_HEADER: &str = "mcp-protocol-version";

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn rpc_error(status: StatusCode, id: Option<&RawValue>, code: i64, message: &str) -> Response {
    json_response(status, jsonrpc::error(id, code, message))
}

/// The bearer key of a request, if any.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

async fn agent(gw: &Gateway, headers: &HeaderMap) -> Result<ApiKeyRecord, Response> {
    let unauthorized = |msg: &str| {
        let mut r = rpc_error(StatusCode::UNAUTHORIZED, None, code::INVALID_REQUEST, msg);
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"interlock\""),
        );
        r
    };
    let Some(key) = bearer(headers) else {
        return Err(unauthorized(
            "an agent API key is required (Authorization: Bearer ilk_…; create one with `interlock agents add`)",
        ));
    };
    match gw.authenticate(key, ApiKeyKind::Agent).await {
        Ok(Some(rec)) => Ok(rec),
        Ok(None) => Err(unauthorized("unknown or revoked agent API key")),
        Err(e) => Err(rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            code::INTERNAL_ERROR,
            &format!("the gateway's store is unavailable: {e}"),
        )),
    }
}

/// `POST /mcp`.
pub async fn post(State(gw): State<Gateway>, headers: HeaderMap, body: Bytes) -> Response {
    let agent = match agent(&gw, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    if jsonrpc::nesting_exceeds(&body, MAX_NESTING) {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            code::INVALID_REQUEST,
            &format!("the message nests deeper than {MAX_NESTING} levels"),
        );
    }
    let msg: Incoming = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            let what = if body.first() == Some(&b'[') {
                "JSON-RPC batches are not supported by MCP since 2025-06-18".to_owned()
            } else {
                format!("not a JSON-RPC message: {e}")
            };
            let code = if e.is_syntax() || e.is_eof() {
                code::PARSE_ERROR
            } else {
                code::INVALID_REQUEST
            };
            return rpc_error(StatusCode::BAD_REQUEST, None, code, &what);
        }
    };
    let kind = match msg.kind() {
        Ok(k) => k,
        Err(why) => return rpc_error(StatusCode::BAD_REQUEST, msg.id, code::INVALID_REQUEST, why),
    };
    let method = msg.method.as_deref().unwrap_or("");
    let header_version = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok());
    let meta_version = meta_protocol_version(msg.params);
    let stateless = header_version == Some(STATELESS_VERSION)
        || meta_version.as_deref() == Some(STATELESS_VERSION);

    if method == "initialize" {
        if !matches!(kind, Kind::Request) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                code::INVALID_REQUEST,
                "initialize must be a request",
            );
        }
        return initialize(
            &gw,
            &agent,
            msg.id.expect("a request has an id"),
            msg.params,
        );
    }
    // Which session (or none, for stateless clients) the message belongs to.
    let mut log_level = None;
    if !stateless {
        let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                msg.id,
                code::SESSION,
                "no Mcp-Session-Id: call initialize first (or use protocol version 2026-07-28, which needs no session)",
            );
        };
        match gw.session(sid) {
            Some(s) if s.key_hash == agent.key_hash => {
                log_level = s.log_level;
                if method == "logging/setLevel"
                    && let Some(id) = msg.id
                {
                    return json_response(StatusCode::OK, set_log_level(&gw, sid, id, msg.params));
                }
                if let ("resources/subscribe" | "resources/unsubscribe", Some(id)) =
                    (method, msg.id)
                {
                    let subscribe = method == "resources/subscribe";
                    let body =
                        content::subscription(&gw, &agent, sid, id, msg.params, subscribe).await;
                    return json_response(StatusCode::OK, body);
                }
            }
            Some(_) => {
                return rpc_error(
                    StatusCode::FORBIDDEN,
                    msg.id,
                    code::SESSION,
                    "this session belongs to another API key",
                );
            }
            None => {
                return rpc_error(
                    StatusCode::NOT_FOUND,
                    msg.id,
                    code::SESSION,
                    "unknown or expired session; initialize again",
                );
            }
        }
    } else if let Some(v) = header_version
        && v != STATELESS_VERSION
    {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            msg.id,
            code::INVALID_REQUEST,
            "MCP-Protocol-Version header and _meta disagree",
        );
    }
    match kind {
        Kind::Notification | Kind::Response => StatusCode::ACCEPTED.into_response(),
        Kind::Request => {
            let id = msg.id.expect("a request has an id");
            let accepts_sse = headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|a| a.contains("text/event-stream"));
            let token = progress_token(msg.params);
            if method == "tools/call" && accepts_sse && (token.is_some() || log_level.is_some()) {
                // The client can take progress (or asked for log messages):
                // answer on an SSE stream, so a held call can keep it alive
                // while a reviewer decides, and the upstream's progress and
                // log messages reach it.
                return streamed_call(
                    gw.clone(),
                    agent,
                    id.to_owned(),
                    msg.params.map(|p| p.to_owned()),
                    token,
                    log_level,
                );
            }
            let body = request(&gw, &agent, id, method, msg.params, stateless).await;
            json_response(StatusCode::OK, body)
        }
    }
}

/// The members of a request's `_meta` the gateway reads.
#[derive(serde::Deserialize, Default)]
struct RequestMeta {
    #[serde(rename = "progressToken")]
    progress_token: Option<Box<RawValue>>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<String>,
}

/// A request's `_meta` (empty when absent or malformed).
fn request_meta(params: Option<&RawValue>) -> RequestMeta {
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: Option<RequestMeta>,
    }
    params
        .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
        .and_then(|p| p.meta)
        .unwrap_or_default()
}

/// The `_meta.progressToken` of a request, raw.
fn progress_token(params: Option<&RawValue>) -> Option<Box<RawValue>> {
    request_meta(params).progress_token
}

/// `logging/setLevel`: the least severe level of upstream log messages
/// relayed to this session's calls (those that take progress, so have a
/// stream to carry them).
fn set_log_level(gw: &Gateway, sid: &str, id: &RawValue, params: Option<&RawValue>) -> Vec<u8> {
    #[derive(serde::Deserialize)]
    struct P {
        level: String,
    }
    let Some(level) = params
        .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
        .and_then(|p| LogLevel::parse(&p.level))
    else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "logging/setLevel needs params {level}: debug, info, notice, warning, error, critical, alert or emergency",
        );
    };
    gw.set_log_level(sid, level);
    jsonrpc::result_value(id, &json!({}))
}

/// A progress token unique in this gateway process.
fn next_progress_token() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!(
        "interlock-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Sets `_meta.progressToken` in a request's params, keeping the rest of
/// `_meta` as the agent sent it.
fn set_progress_token(members: &mut IndexMap<String, Box<RawValue>>, token: &str) {
    let mut meta = members
        .get("_meta")
        .and_then(|m| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(m.get()).ok())
        .unwrap_or_default();
    meta.insert(
        "progressToken".into(),
        serde_json::value::to_raw_value(token).expect("a string serializes"),
    );
    members.insert(
        "_meta".into(),
        serde_json::value::to_raw_value(&meta).expect("raw JSON serializes"),
    );
}

/// Where a long call reports progress: `notifications/progress` messages on
/// the request's SSE stream.
#[derive(Clone)]
pub(crate) struct Progress {
    /// The agent's progress token; `None` when the stream is for log
    /// messages only.
    token: Option<Box<RawValue>>,
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
    /// The session's log level, for upstream log messages relayed here.
    log_level: Option<LogLevel>,
}

impl Progress {
    async fn report(&self, progress: u64, message: &str) {
        let Some(token) = &self.token else { return };
        let params = json!({
            "progressToken": serde_json::from_str::<serde_json::Value>(token.get()).unwrap_or(serde_json::Value::Null),
            "progress": progress,
            "message": message,
        });
        let raw = serde_json::value::to_raw_value(&params).expect("JSON");
        let _ = self
            .tx
            .send(jsonrpc::notification("notifications/progress", Some(&raw)))
            .await;
    }
}

/// Runs a `tools/call` answering on an SSE stream: progress notifications
/// (while held), then the response.
fn streamed_call(
    gw: Gateway,
    agent: ApiKeyRecord,
    id: Box<RawValue>,
    params: Option<Box<RawValue>>,
    token: Option<Box<RawValue>>,
    log_level: Option<LogLevel>,
) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    let progress = Progress {
        token,
        tx: tx.clone(),
        log_level,
    };
    tokio::spawn(async move {
        let body = tools_call(&gw, &agent, &id, params.as_deref(), Some(&progress)).await;
        let _ = tx.send(body).await;
    });
    sse_response(rx)
}

/// An SSE response whose events are the JSON-RPC messages `rx` yields; it
/// ends when every sender is gone.
fn sse_response(rx: tokio::sync::mpsc::Receiver<Vec<u8>>) -> Response {
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(|msg| {
        let mut event = Vec::with_capacity(msg.len() + 24);
        event.extend_from_slice(b"event: message\ndata: ");
        event.extend_from_slice(&msg);
        event.extend_from_slice(b"\n\n");
        Ok::<_, std::convert::Infallible>(Bytes::from(event))
    });
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

/// `GET /mcp`: a session's standalone stream (SSE), which carries the
/// `notifications/resources/updated` of the resources it subscribed to.
/// Opening another closes the previous one. Without a session (stateless
/// clients) there is nothing to stream: 405.
pub async fn get(State(gw): State<Gateway>, headers: HeaderMap) -> Response {
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, HeaderValue::from_static("POST, DELETE"))],
        )
            .into_response();
    };
    let agent = match agent(&gw, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    match gw.session(sid) {
        Some(s) if s.key_hash == agent.key_hash => {}
        Some(_) => {
            return rpc_error(
                StatusCode::FORBIDDEN,
                None,
                code::SESSION,
                "this session belongs to another API key",
            );
        }
        None => {
            return rpc_error(
                StatusCode::NOT_FOUND,
                None,
                code::SESSION,
                "unknown or expired session; initialize again",
            );
        }
    }
    let accepts_sse = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream"));
    if !accepts_sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            code::INVALID_REQUEST,
            "GET /mcp opens an event stream: send Accept: text/event-stream",
        );
    }
    sse_response(gw.0.subscriptions.open_stream(sid))
}

/// `DELETE /mcp`: ends a session.
pub async fn delete(State(gw): State<Gateway>, headers: HeaderMap) -> Response {
    let agent = match agent(&gw, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    match gw.session(sid) {
        Some(s) if s.key_hash == agent.key_hash => {
            gw.end_session(sid);
            StatusCode::NO_CONTENT.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn meta_protocol_version(params: Option<&RawValue>) -> Option<String> {
    request_meta(params).protocol_version
}

fn capabilities() -> serde_json::Value {
    json!({
        "tools": {"listChanged": false},
        "logging": {},
        "prompts": {"listChanged": false},
        "resources": {"subscribe": true, "listChanged": false},
        "completions": {},
    })
}

const INSTRUCTIONS: &str = "Tools of upstream MCP servers are named server__tool (their prompts likewise; resources keep their URIs) and are served only while a human reviewer has approved the server's surface. Changes you want made outside these tools go through propose_plan: a human approves the exact plan, then execute_plan runs it once.";

fn server_info() -> serde_json::Value {
    json!({"name": "interlock-gateway", "title": "Interlock gateway", "version": env!("CARGO_PKG_VERSION")})
}

fn initialize(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Response {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        protocol_version: String,
    }
    let Some(p) = params.and_then(|p| serde_json::from_str::<Params>(p.get()).ok()) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            Some(id),
            code::INVALID_PARAMS,
            "initialize needs params.protocolVersion",
        );
    };
    let version = if SESSION_VERSIONS.contains(&p.protocol_version.as_str()) {
        p.protocol_version
    } else {
        SESSION_VERSIONS[0].to_owned()
    };
    let sid = gw.new_session(Session {
        agent: agent.name.clone(),
        key_hash: agent.key_hash.clone(),
        protocol_version: version.clone(),
        log_level: None,
    });
    let body = jsonrpc::result_value(
        id,
        &json!({
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS,
        }),
    );
    let mut r = json_response(StatusCode::OK, body);
    r.headers_mut()
        .insert(SESSION_HEADER, HeaderValue::from_str(&sid).expect("ascii"));
    r
}

async fn request(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    method: &str,
    params: Option<&RawValue>,
    stateless: bool,
) -> Vec<u8> {
    match method {
        "ping" => jsonrpc::result_value(id, &json!({})),
        "server/discover" => jsonrpc::result_value(
            id,
            &json!({
                "resultType": "complete",
                "supportedVersions": [STATELESS_VERSION],
                "capabilities": capabilities(),
                "serverInfo": server_info(),
                "instructions": INSTRUCTIONS,
                "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
            }),
        ),
        "tools/list" => tools_list(gw, agent, id, stateless),
        "tools/call" => tools_call(gw, agent, id, params, None).await,
        "prompts/list" => content::prompts_list(gw, agent, id, stateless).await,
        "prompts/get" => content::prompts_get(gw, agent, id, params).await,
        "resources/list" => {
            content::resources_list(gw, agent, id, method, "resources", stateless).await
        }
        "resources/templates/list" => {
            content::resources_list(gw, agent, id, method, "resourceTemplates", stateless).await
        }
        "resources/read" => content::resources_read(gw, agent, id, params).await,
        "completion/complete" => content::complete(gw, agent, id, params).await,
        // (Sessions' subscriptions are handled in `post`, which knows the session.)
        "resources/subscribe" | "resources/unsubscribe" => jsonrpc::error(
            Some(id),
            code::INVALID_REQUEST,
            "resource subscriptions need a session, whose GET /mcp stream carries the updates: initialize with protocol version 2025-11-25",
        ),
        other => jsonrpc::error(
            Some(id),
            code::METHOD_NOT_FOUND,
            &format!("method `{other}` is not served by the Interlock gateway"),
        ),
    }
}

fn tools_list(gw: &Gateway, agent: &ApiKeyRecord, id: &RawValue, stateless: bool) -> Vec<u8> {
    let roles = gw.roles();
    let mut defs: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    if let serde_json::Value::Array(governance) = governance::definitions() {
        for d in governance {
            let name = d["name"].as_str().unwrap_or_default();
            if roles.allows(&agent.role, name) {
                defs.push(serde_json::to_string(&d).expect("JSON").into());
            }
        }
    }
    let views = gw.pins().views();
    for view in &views {
        if gw.upstream(&view.record.name).is_none() {
            continue; // no longer configured
        }
        for (tool, exposed) in &view.served {
            if view.check(tool).is_ok() && roles.allows(&agent.role, &exposed.exposed_name) {
                defs.push(exposed.definition.get().into());
            }
        }
    }
    jsonrpc::listing(id, "tools", defs, stateless)
}

async fn tools_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    progress: Option<&Progress>,
) -> Vec<u8> {
    let Some(mut members) =
        params.and_then(|p| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(p.get()).ok())
    else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "tools/call needs params {name, arguments}",
        );
    };
    let Some(name) = members
        .get("name")
        .and_then(|n| serde_json::from_str::<String>(n.get()).ok())
    else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "tools/call needs params.name (a string)",
        );
    };
    if !gw.roles().allows(&agent.role, &name) {
        return jsonrpc::error_with_data(
            Some(id),
            code::FORBIDDEN,
            &format!("role `{}` may not call `{name}`", agent.role),
            Some(&json!({"tool": name, "role": agent.role})),
        );
    }
    if governance::is_governance_tool(&name) {
        let args: serde_json::Value = members
            .get("arguments")
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or(json!({}));
        let result = governance::call(gw, &agent.name, &name, &args).await;
        return jsonrpc::result_value(id, &result);
    }
    let Some((view, tool)) = gw.pins().resolve(&name) else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            &format!("unknown tool `{name}`"),
        );
    };
    let (server, tool) = (view.record.name.as_str(), tool.as_str());
    let Some(up) = gw.upstream(server) else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            &format!("unknown tool `{name}`"),
        );
    };
    let exposed = match view.check(tool) {
        Ok(e) => std::sync::Arc::clone(e),
        Err(NotServed::UnknownTool) => {
            return jsonrpc::error(
                Some(id),
                code::INVALID_PARAMS,
                &format!("unknown tool `{name}`"),
            );
        }
        Err(why) => {
            let message = why.message(server, tool);
            let args_digest = members
                .get("arguments")
                .and_then(|a| canon::parse_json(a.get().as_bytes()).ok())
                .map(|v| canon::digest(&v).to_string())
                .unwrap_or_default();
            let mut verdict = canon::Map::new();
            verdict.insert("verdict".into(), "not_served".into());
            let _ = record_call(
                gw,
                agent,
                server,
                tool,
                &args_digest,
                "refused",
                &message,
                verdict,
            )
            .await;
            return jsonrpc::error_with_data(
                Some(id),
                code::TOOL_NOT_SERVED,
                &message,
                Some(
                    &json!({"server": server, "tool": tool, "status": view.record.status.as_str()}),
                ),
            );
        }
    };
    // Inspection, risk and the role's limit (the path of every forwarded call).
    let args_raw = members.get("arguments").map(|a| &**a);
    let args_value = match args_raw {
        None => canon::Value::Object(canon::Map::new()),
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
    let args_digest = callpath::arguments_digest(&args_value).to_string();
    let tool_def = view.observed.as_ref().and_then(|s| s.tool(tool));
    let assessment = callpath::assess(gw.config(), server, &agent.role, tool_def, &args_value);
    let mut verdict = canon::Map::new();
    verdict.insert("risk".into(), assessment.risk.name().into());
    verdict.insert("tool_risk".into(), assessment.tool_risk.name().into());
    verdict.insert("score".into(), int(assessment.score as i64));
    verdict.insert("findings".into(), assessment.findings_value());
    verdict.insert("shadow".into(), canon::Value::Bool(agent.shadow));

    if assessment.blocked() {
        let reasons = assessment.block_reasons.join("; ");
        verdict.insert("block_reasons".into(), reasons.as_str().into());
        if agent.shadow {
            verdict.insert("verdict".into(), "shadow_would_block".into());
        } else {
            verdict.insert("verdict".into(), "blocked".into());
            let _ = record_call(
                gw,
                agent,
                server,
                tool,
                &args_digest,
                "blocked",
                &reasons,
                verdict,
            )
            .await;
            let text = format!("The gateway stopped this call and did not forward it: {reasons}.");
            return jsonrpc::result_value(
                id,
                &json!({"content": [{"type": "text", "text": text}], "isError": true,
                        "structuredContent": {"blocked": true, "reasons": assessment.block_reasons,
                                              "risk": assessment.risk.name(), "score": assessment.score}}),
            );
        }
    } else if assessment.held()
        && !assessment.inspection_hold
        && let Ok(Some(standing)) =
            crate::standing::find(gw.engine(), &agent.role, &name, &args_value).await
    {
        // A reviewer approved this class of call in advance: run it, and say so.
        verdict.insert("verdict".into(), "standing_approval".into());
        verdict.insert("standing_approval".into(), standing.id.as_str().into());
        verdict.insert(
            "hold_reasons".into(),
            assessment.hold_reasons.join("; ").into(),
        );
    } else if assessment.held()
        && let Some(plan_id) = approved_held_plan(gw, agent, server, tool, &args_digest).await
    {
        // The agent's retry of a call a reviewer has approved: run that plan,
        // once. (Looked up only for calls that would be held: the common path
        // pays no store read.)
        return run_held(
            gw,
            agent,
            id,
            &plan_id,
            server,
            tool,
            &args_value,
            &args_digest,
            verdict,
        )
        .await;
    } else if assessment.held() {
        let reasons = assessment.hold_reasons.join("; ");
        verdict.insert("hold_reasons".into(), reasons.as_str().into());
        if agent.shadow {
            verdict.insert("verdict".into(), "shadow_would_hold".into());
        } else {
            let tool_hash = tool_def
                .map(|t| t.hash())
                .unwrap_or_else(|| canon::digest(&canon::Value::Null));
            return hold(
                gw,
                progress.filter(|p| p.token.is_some()),
                agent,
                id,
                &name,
                server,
                tool,
                &tool_hash,
                &args_value,
                &args_digest,
                &assessment,
                verdict,
            )
            .await;
        }
    } else {
        verdict.insert("verdict".into(), "allowed".into());
    }

    let Some(conn) = up.connection() else {
        let message = format!(
            "upstream `{server}` is not connected ({:?}); the gateway is reconnecting",
            up.link()
        );
        return jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &message);
    };
    members.insert(
        "name".into(),
        serde_json::value::to_raw_value(&exposed.upstream_name).expect("a string serializes"),
    );
    // A call that takes progress gets a progress token of the gateway's own
    // upstream (agents' tokens may collide), relayed back as the agent's.
    let _relay = progress.map(|p| {
        let token = next_progress_token();
        let agent_token = match &p.token {
            Some(t) => {
                set_progress_token(&mut members, &token);
                t.clone()
            }
            // Log messages only: the token is never sent upstream.
            None => RawValue::from_string("null".into()).expect("valid JSON"),
        };
        up.relay(token, agent_token, p.tx.clone(), p.log_level)
    });
    let forwarded = serde_json::value::to_raw_value(&members).expect("raw JSON serializes");
    let started = Instant::now();
    let outcome = conn
        .request(
            "tools/call",
            Some(&forwarded),
            gw.config().limits.upstream_timeout(),
        )
        .await;
    let elapsed = started.elapsed();
    match outcome {
        Ok(result) => {
            let (replacement, findings, blocked) =
                callpath::scan_result(result.get(), &callpath::response_policy(gw.config()));
            let response = if findings.is_empty() {
                "forwarded"
            } else if blocked && !agent.shadow {
                "blocked"
            } else if replacement.is_some() && !agent.shadow {
                "redacted"
            } else {
                "flagged"
            };
            verdict.insert("response".into(), response.into());
            verdict.insert(
                "response_findings".into(),
                callpath::Assessment {
                    findings,
                    ..assessment.clone()
                }
                .findings_value(),
            );
            if let Err(e) = record_call(
                gw,
                agent,
                server,
                tool,
                &args_digest,
                "ok",
                &format!("{} µs", elapsed.as_micros()),
                verdict,
            )
            .await
            {
                return jsonrpc::unlogged(id, "call", &e);
            }
            match replacement {
                Some(v) if !agent.shadow => jsonrpc::result_value(id, &v),
                _ => jsonrpc::result(id, &result),
            }
        }
        Err(UpstreamError::Rpc(err)) => {
            let _ = record_call(
                gw,
                agent,
                server,
                tool,
                &args_digest,
                "upstream_error",
                err.get(),
                verdict,
            )
            .await;
            jsonrpc::error_raw(id, &err)
        }
        Err(e) => {
            let message = format!("upstream `{server}`: {e}");
            let _ = record_call(
                gw,
                agent,
                server,
                tool,
                &args_digest,
                "unavailable",
                &message,
                verdict,
            )
            .await;
            jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &message)
        }
    }
}

fn int(i: i64) -> canon::Value {
    canon::Value::Number(canon::Number::from_i64(i).expect("small"))
}

/// Marks a held-call plan's id (`call-<args digest prefix>-<random>`).
const HELD_PREFIX: &str = "call-";

/// An APPROVED held-call plan of this agent for exactly this tool and these
/// arguments, if any.
async fn approved_held_plan(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    server: &str,
    tool: &str,
    args_digest: &str,
) -> Option<String> {
    let proposer = format!("agent:{}", agent.name);
    let plans = gw
        .engine()
        .plans(Some(interlock_engine::PlanStatus::Approved))
        .await
        .ok()?;
    plans
        .into_iter()
        .filter(|p| p.plan_id.starts_with(HELD_PREFIX) && p.proposer == proposer)
        .find(|p| {
            let Ok(doc) = canon::parse_json(&p.document) else {
                return false;
            };
            let stage = canon::to_serde_json(&doc)["body"]["stages"][0].clone();
            let args = stage["params"]["arguments"].clone();
            stage["target"] == server
                && stage["params"]["tool"] == tool
                && canon::from_serde_json(&args)
                    .map(|a| canon::digest(&a).to_string() == args_digest)
                    .unwrap_or(false)
        })
        .map(|p| p.plan_id)
}

/// Holds a call: proposes it as a plan, waits (at most `calls.hold_secs`) for
/// a reviewer, then runs it if approved, or answers with the plan to retry.
#[allow(clippy::too_many_arguments)]
async fn hold(
    gw: &Gateway,
    progress: Option<&Progress>,
    agent: &ApiKeyRecord,
    id: &RawValue,
    exposed: &str,
    server: &str,
    tool: &str,
    tool_hash: &interlock_canon::Digest,
    args: &canon::Value,
    args_digest: &str,
    assessment: &callpath::Assessment,
    mut verdict: canon::Map,
) -> Vec<u8> {
    let mut rnd = [0u8; 4];
    getrandom::fill(&mut rnd).expect("OS randomness");
    let digest_hex = args_digest.trim_start_matches("sha256:");
    let plan_id = format!("{HELD_PREFIX}{}-{}", &digest_hex[..12], hex::encode(rnd));
    let doc = callpath::held_plan(
        &plan_id,
        &agent.name,
        exposed,
        server,
        tool,
        tool_hash,
        args,
        assessment,
        gw.engine().now(),
    );
    let proposal = match gw.engine().propose(&doc).await {
        Ok(p) => p,
        Err(e) => {
            return jsonrpc::error(
                Some(id),
                code::INTERNAL_ERROR,
                &format!("the call needs a reviewer but could not be held: {e}"),
            );
        }
    };
    verdict.insert("verdict".into(), "held".into());
    verdict.insert("plan_id".into(), plan_id.as_str().into());
    let _ = record_call(
        gw,
        agent,
        server,
        tool,
        args_digest,
        "held",
        &plan_id,
        verdict.clone(),
    )
    .await;
    // Wait for a decision (made in this process or another: poll the store).
    let started = Instant::now();
    let deadline = started + std::time::Duration::from_secs(gw.config().calls.hold_secs);
    let mut last_report: Option<Instant> = None;
    while Instant::now() < deadline {
        if let Some(p) = progress
            && last_report.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(2))
        {
            p.report(
                started.elapsed().as_secs(),
                &format!("held for human review as plan `{plan_id}`; waiting for a reviewer"),
            )
            .await;
            last_report = Some(Instant::now());
        }
        match gw.engine().plan(&plan_id).await.map(|p| p.status) {
            Ok(interlock_engine::PlanStatus::Approved) => {
                return run_held(
                    gw,
                    agent,
                    id,
                    &plan_id,
                    server,
                    tool,
                    args,
                    args_digest,
                    verdict,
                )
                .await;
            }
            Ok(interlock_engine::PlanStatus::Proposed) => {}
            Ok(other) => {
                let text = format!(
                    "A reviewer did not approve this call (plan `{plan_id}` is {}). It was not run.",
                    other.as_str()
                );
                return jsonrpc::result_value(
                    id,
                    &json!({"content": [{"type": "text", "text": text}], "isError": true,
                            "structuredContent": {"held": true, "plan_id": plan_id, "status": other.as_str()}}),
                );
            }
            Err(_) => break,
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    let text = format!(
        "This call was held for human review as plan `{plan_id}` ({}). It has not run. \
         Call get_plan with plan_id `{plan_id}`; once it is APPROVED, repeat this exact call \
         and it runs once.",
        assessment.hold_reasons.join("; ")
    );
    jsonrpc::result_value(
        id,
        &json!({
            "content": [{"type": "text", "text": text}],
            "isError": true,
            "structuredContent": {
                "held": true, "plan_id": plan_id, "plan_hash": proposal.plan_hash.to_string(),
                "risk": assessment.risk.name(), "score": assessment.score,
                "reasons": assessment.hold_reasons,
            }
        }),
    )
}

/// Runs an approved held-call plan (exactly once: the engine consumes the
/// approval by compare-and-swap) and answers with the tool's own result.
#[allow(clippy::too_many_arguments)]
async fn run_held(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    plan_id: &str,
    server: &str,
    tool: &str,
    args: &canon::Value,
    args_digest: &str,
    mut verdict: canon::Map,
) -> Vec<u8> {
    verdict.insert("verdict".into(), "approved_plan".into());
    verdict.insert("plan_id".into(), plan_id.into());
    let report = match gw.engine().execute(plan_id).await {
        Ok(r) => r,
        Err(e) => {
            return jsonrpc::result_value(
                id,
                &json!({"content": [{"type": "text", "text": format!("plan `{plan_id}` did not run: {e}")}], "isError": true}),
            );
        }
    };
    let key = crate::executor::result_key(server, tool, args);
    let raw = gw.take_held_result(&key);
    let ok = report.status == interlock_engine::PlanStatus::Succeeded;
    let _ = record_call(
        gw,
        agent,
        server,
        tool,
        args_digest,
        if ok { "ok" } else { "halted" },
        plan_id,
        verdict,
    )
    .await;
    match (ok, raw) {
        (true, Some(raw)) => {
            let (replacement, _, _) =
                callpath::scan_result(raw.get(), &callpath::response_policy(gw.config()));
            match replacement {
                Some(v) => jsonrpc::result_value(id, &v),
                None => jsonrpc::result(id, &raw),
            }
        }
        _ => {
            let why = report
                .stages
                .first()
                .map(|s| format!("{:?}", s.result))
                .unwrap_or_default();
            jsonrpc::result_value(
                id,
                &json!({"content": [{"type": "text", "text": format!("plan `{plan_id}` ended {}: {why}", report.status.as_str())}], "isError": true}),
            )
        }
    }
}

/// Logs one tool call: who, which tool, the hash of the exact arguments, the
/// outcome, and every step's verdict.
#[allow(clippy::too_many_arguments)]
async fn record_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    server: &str,
    tool: &str,
    args_digest: &str,
    outcome: &str,
    detail: &str,
    verdict: canon::Map,
) -> Result<u64, interlock_engine::EngineError> {
    let mut m = canon::Map::new();
    m.insert("agent".into(), agent.name.as_str().into());
    m.insert("role".into(), agent.role.as_str().into());
    m.insert("server".into(), server.into());
    m.insert("tool".into(), tool.into());
    m.insert("arguments_hash".into(), args_digest.into());
    m.insert("outcome".into(), outcome.into());
    m.insert(
        "detail".into(),
        detail.chars().take(512).collect::<String>().into(),
    );
    m.insert("verdict".into(), canon::Value::Object(verdict));
    Ok(gw.engine().record("tool.call", m).await?.index)
}
