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

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use interlock_store::{ApiKeyKind, ApiKeyRecord};
use serde_json::json;
use serde_json::value::RawValue;
use tokio_stream::StreamExt as _;

use crate::agent::calls::progress::Progress;
use crate::agent::calls::{listing, pipeline, tasks};
use crate::agent::content;
use crate::gateway::{Gateway, Session};
use crate::jsonrpc::{self, Incoming, Kind, code};
use crate::protocol::{SESSION_VERSIONS, STATELESS_VERSION, TASKS_VERSION};
use crate::upstream::relay::LogLevel;

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

/// The connection a request came on, when served by `crate::http::serve`.
type OnConnection = Option<axum::Extension<crate::connections::ConnectionId>>;

/// The calling agent's key, counted against its share of the connections
/// (`crate::connections`): over it, 429 and the connection closed.
async fn agent(
    gw: &Gateway,
    headers: &HeaderMap,
    connection: OnConnection,
) -> Result<ApiKeyRecord, Response> {
    let rec = authenticated(gw, headers).await?;
    let Some(axum::Extension(connection)) = connection else {
        return Ok(rec);
    };
    let share = gw.config().limits.connections_per_key;
    match gw
        .connection_shares()
        .claim(connection, &rec.key_hash, share)
    {
        Ok(()) => Ok(rec),
        Err(over) => {
            let mut r = rpc_error(
                StatusCode::TOO_MANY_REQUESTS,
                None,
                code::LIMIT,
                &over.message(),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(r)
        }
    }
}

async fn authenticated(gw: &Gateway, headers: &HeaderMap) -> Result<ApiKeyRecord, Response> {
    let unauthorized = |msg: &str| {
        let mut r = rpc_error(StatusCode::UNAUTHORIZED, None, code::INVALID_REQUEST, msg);
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"interlock\""),
        );
        r
    };
    let Some(key) = crate::auth::bearer(headers) else {
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
pub async fn post(
    State(gw): State<Gateway>,
    connection: OnConnection,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let agent = match agent(&gw, &headers, connection).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let msg = match read_message(&body) {
        Ok(m) => m,
        Err((code, why)) => return rpc_error(StatusCode::BAD_REQUEST, None, code, &why),
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
    let session = if stateless {
        if let Some(v) = header_version
            && v != STATELESS_VERSION
        {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                msg.id,
                code::INVALID_REQUEST,
                "MCP-Protocol-Version header and _meta disagree",
            );
        }
        SessionOf::default()
    } else {
        match session_of(&gw, &agent, &headers, &msg, method).await {
            Ok(s) => s,
            Err(answered) => return answered,
        }
    };
    match kind {
        Kind::Notification | Kind::Response => StatusCode::ACCEPTED.into_response(),
        Kind::Request => answer_request(&gw, agent, &headers, &msg, stateless, session).await,
    }
}

/// The body as one JSON-RPC message, or the error code and message of the
/// 400 that says why it is not one.
fn read_message(body: &[u8]) -> Result<Incoming<'_>, (i64, String)> {
    if jsonrpc::nesting_exceeds(body, MAX_NESTING) {
        return Err((
            code::INVALID_REQUEST,
            format!("the message nests deeper than {MAX_NESTING} levels"),
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
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
        (code, what)
    })
}

/// What a message's session says about it (nothing, for a stateless one).
#[derive(Default)]
struct SessionOf {
    log_level: Option<LogLevel>,
    id: Option<String>,
    takes_tasks: bool,
}

/// The session a message belongs to — or the answer, when the session is
/// missing, unknown or another key's, or the message is one the session
/// itself answers (`logging/setLevel`, resource subscriptions).
async fn session_of(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    headers: &HeaderMap,
    msg: &Incoming<'_>,
    method: &str,
) -> Result<SessionOf, Response> {
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            msg.id,
            code::SESSION,
            "no Mcp-Session-Id: call initialize first (or use protocol version 2026-07-28, which needs no session)",
        ));
    };
    match gw.session(sid) {
        Some(s) if s.key_hash == agent.key_hash => {
            if method == "logging/setLevel"
                && let Some(id) = msg.id
            {
                return Err(json_response(
                    StatusCode::OK,
                    set_log_level(gw, sid, id, msg.params),
                ));
            }
            if let ("resources/subscribe" | "resources/unsubscribe", Some(id)) = (method, msg.id) {
                let subscribe = method == "resources/subscribe";
                let body = content::subscription(gw, agent, sid, id, msg.params, subscribe).await;
                return Err(json_response(StatusCode::OK, body));
            }
            Ok(SessionOf {
                log_level: s.log_level,
                id: Some(sid.to_owned()),
                takes_tasks: s.protocol_version == TASKS_VERSION,
            })
        }
        Some(_) => Err(rpc_error(
            StatusCode::FORBIDDEN,
            msg.id,
            code::SESSION,
            "this session belongs to another API key",
        )),
        None => Err(rpc_error(
            StatusCode::NOT_FOUND,
            msg.id,
            code::SESSION,
            "unknown or expired session; initialize again",
        )),
    }
}

/// A request's answer: a task started, a call streamed on SSE, or a JSON body.
async fn answer_request(
    gw: &Gateway,
    agent: ApiKeyRecord,
    headers: &HeaderMap,
    msg: &Incoming<'_>,
    stateless: bool,
    session: SessionOf,
) -> Response {
    let method = msg.method.as_deref().unwrap_or("");
    let id = msg.id.expect("a request has an id");
    let SessionOf {
        log_level,
        id: session_id,
        takes_tasks,
    } = session;
    let accepts_sse = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream"));
    if method == "tools/call"
        && takes_tasks
        && let Some(sid) = &session_id
        && tasks::asks_for_task(msg.params)
    {
        // Answered at once with a task; the call goes on without
        // the request (a held call waits as long as the task lives).
        return json_response(
            StatusCode::OK,
            tasks::start(gw, &agent, sid, id, msg.params),
        );
    }
    let limited = std::sync::OnceLock::new();
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
            session_id,
        );
    }
    let body = match method {
        "tasks/get" if takes_tasks => tasks::get(gw, &agent, id, msg.params),
        "tasks/result" if takes_tasks => tasks::result(gw, &agent, id, msg.params).await,
        "tasks/list" if takes_tasks => tasks::list(gw, &agent, id, msg.params),
        "tasks/cancel" if takes_tasks => tasks::cancel(gw, &agent, id, msg.params),
        "tools/list" if takes_tasks => listing::tools_list(gw, &agent, id, false, true),
        _ => {
            let body = request(
                gw,
                &agent,
                id,
                method,
                msg.params,
                session_id.as_deref(),
                Some(&limited),
            )
            .await;
            if stateless {
                jsonrpc::for_stateless(body, cacheable(method))
            } else {
                body
            }
        }
    };
    // A call refused by the key's rate or quota (issue 20): 429
    // with Retry-After, the JSON-RPC error in the body — for a
    // stateless request only: a session's SDK client (the official
    // Python one) takes any non-2xx as its transport failing and
    // loses the session, so a session gets the JSON-RPC error alone.
    if let Some(secs) = limited.get()
        && stateless
    {
        let mut r = json_response(StatusCode::TOO_MANY_REQUESTS, body);
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(*secs));
        return r;
    }
    json_response(StatusCode::OK, body)
}

/// Whether a 2026-07-28 result of `method` carries caching directives
/// (`ttlMs`, `cacheScope`).
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "server/discover"
    )
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

/// Runs a `tools/call` answering on an SSE stream: progress notifications
/// (while held), then the response.
fn streamed_call(
    gw: Gateway,
    agent: ApiKeyRecord,
    id: Box<RawValue>,
    params: Option<Box<RawValue>>,
    token: Option<Box<RawValue>>,
    log_level: Option<LogLevel>,
    session_id: Option<String>,
) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    let progress = Progress::new(token, tx.clone(), log_level);
    tokio::spawn(async move {
        let origin = pipeline::Origin {
            progress: Some(&progress),
            session: session_id.as_deref(),
            ..Default::default()
        };
        let body = pipeline::tools_call(&gw, &agent, &id, params.as_deref(), &origin).await;
        let body = if session_id.is_none() {
            jsonrpc::for_stateless(body, false)
        } else {
            body
        };
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
pub async fn get(
    State(gw): State<Gateway>,
    connection: OnConnection,
    headers: HeaderMap,
) -> Response {
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, HeaderValue::from_static("POST, DELETE"))],
        )
            .into_response();
    };
    let agent = match agent(&gw, &headers, connection).await {
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
pub async fn delete(
    State(gw): State<Gateway>,
    connection: OnConnection,
    headers: HeaderMap,
) -> Response {
    let agent = match agent(&gw, &headers, connection).await {
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

/// The capabilities of a session at `version`: tasks where they exist.
fn session_capabilities(version: &str) -> serde_json::Value {
    let mut c = capabilities();
    if version == TASKS_VERSION {
        c["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    c
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
    let sid = match gw.new_session(Session {
        agent: agent.name.clone(),
        key_hash: agent.key_hash.clone(),
        protocol_version: version.clone(),
        log_level: None,
    }) {
        Ok(sid) => sid,
        Err(refused) => {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(id),
                code::LIMIT,
                &refused.to_string(),
            );
        }
    };
    let body = jsonrpc::result_value(
        id,
        &json!({
            "protocolVersion": version,
            "capabilities": session_capabilities(&version),
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
    // The request's session; `None`: a stateless (2026-07-28) request.
    session_id: Option<&str>,
    // Set when a rate limit or quota refused a `tools/call` or a read.
    limited: Option<&std::sync::OnceLock<u64>>,
) -> Vec<u8> {
    let stateless = session_id.is_none();
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
        "tools/list" => listing::tools_list(gw, agent, id, stateless, false),
        "tools/call" => {
            let origin = pipeline::Origin {
                session: session_id,
                limited,
                ..Default::default()
            };
            pipeline::tools_call(gw, agent, id, params, &origin).await
        }
        "prompts/list" => content::prompts_list(gw, agent, id, stateless).await,
        "prompts/get" => content::prompts_get(gw, agent, id, params, limited).await,
        "resources/list" => {
            content::resources_list(gw, agent, id, method, "resources", stateless).await
        }
        "resources/templates/list" => {
            content::resources_list(gw, agent, id, method, "resourceTemplates", stateless).await
        }
        "resources/read" => content::resources_read(gw, agent, id, params, limited).await,
        "completion/complete" => content::complete(gw, agent, id, params, limited).await,
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
