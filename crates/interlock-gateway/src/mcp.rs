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

use crate::gateway::{Gateway, Session};
use crate::governance;
use crate::jsonrpc::{self, Incoming, Kind, code};
use crate::pins::NotServed;
use crate::upstream::UpstreamError;

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
            Some(s) if s.key_hash == agent.key_hash => {}
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
            let body = request(&gw, &agent, id, method, msg.params, stateless).await;
            json_response(StatusCode::OK, body)
        }
    }
}

/// `GET /mcp`: no standalone server-to-client stream is offered.
pub async fn get() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static("POST, DELETE"))],
    )
        .into_response()
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
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: Option<M>,
    }
    #[derive(serde::Deserialize)]
    struct M {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<String>,
    }
    serde_json::from_str::<P>(params?.get()).ok()?.meta?.version
}

fn capabilities() -> serde_json::Value {
    json!({"tools": {"listChanged": false}})
}

const INSTRUCTIONS: &str = "Tools of upstream MCP servers are named server__tool and are served only while a human reviewer has approved the server's surface. Changes you want made outside these tools go through propose_plan: a human approves the exact plan, then execute_plan runs it once.";

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
        "tools/call" => tools_call(gw, agent, id, params).await,
        other => jsonrpc::error(
            Some(id),
            code::METHOD_NOT_FOUND,
            &format!("method `{other}` is not served by the Interlock gateway"),
        ),
    }
}

fn tools_list(gw: &Gateway, agent: &ApiKeyRecord, id: &RawValue, stateless: bool) -> Vec<u8> {
    let roles = gw.roles();
    let mut out = Vec::with_capacity(16 * 1024);
    out.extend_from_slice(b"{\"tools\":[");
    let mut first = true;
    let mut push = |out: &mut Vec<u8>, def: &str| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(def.as_bytes());
    };
    if let serde_json::Value::Array(defs) = governance::definitions() {
        for d in defs {
            let name = d["name"].as_str().unwrap_or_default();
            if roles.allows(&agent.role, name) {
                push(&mut out, &serde_json::to_string(&d).expect("JSON"));
            }
        }
    }
    for view in gw.pins().views() {
        if gw.upstream(&view.record.name).is_none() {
            continue; // no longer configured
        }
        for (tool, exposed) in &view.served {
            if view.check(tool).is_ok() && roles.allows(&agent.role, &exposed.exposed_name) {
                push(&mut out, exposed.definition.get());
            }
        }
    }
    out.extend_from_slice(b"]");
    if stateless {
        out.extend_from_slice(b",\"resultType\":\"complete\"");
    }
    out.push(b'}');
    let raw = RawValue::from_string(String::from_utf8(out).expect("utf-8")).expect("valid JSON");
    jsonrpc::result(id, &raw)
}

async fn tools_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
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
            let _ = record_call(
                gw,
                agent,
                server,
                tool,
                members.get("arguments").map(|a| &**a),
                "refused",
                &message,
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
    let args = members.get("arguments").map(|a| &**a);
    match outcome {
        Ok(result) => {
            if let Err(e) = record_call(
                gw,
                agent,
                server,
                tool,
                args,
                "ok",
                &format!("{} µs", elapsed.as_micros()),
            )
            .await
            {
                // The call happened but could not be recorded: say so rather than
                // hand back an unlogged result.
                return jsonrpc::error(
                    Some(id),
                    code::INTERNAL_ERROR,
                    &format!("the call ran but the log append failed: {e}"),
                );
            }
            jsonrpc::result(id, &result)
        }
        Err(UpstreamError::Rpc(err)) => {
            let _ = record_call(gw, agent, server, tool, args, "upstream_error", err.get()).await;
            let mut out = Vec::with_capacity(err.get().len() + 48);
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            out.extend_from_slice(id.get().as_bytes());
            out.extend_from_slice(b",\"error\":");
            out.extend_from_slice(err.get().as_bytes());
            out.push(b'}');
            out
        }
        Err(e) => {
            let message = format!("upstream `{server}`: {e}");
            let _ = record_call(gw, agent, server, tool, args, "unavailable", &message).await;
            jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &message)
        }
    }
}

/// Logs one tool call: who, which tool, the hash of the exact arguments, and
/// the outcome.
async fn record_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    server: &str,
    tool: &str,
    args: Option<&RawValue>,
    outcome: &str,
    detail: &str,
) -> Result<u64, interlock_engine::EngineError> {
    let args_hash = match args {
        Some(a) => canon::parse_json(a.get().as_bytes())
            .map(|v| canon::digest(&v).to_string())
            .unwrap_or_else(|e| format!("unparseable: {e}")),
        None => canon::digest(&canon::Value::Object(canon::Map::new())).to_string(),
    };
    let mut m = canon::Map::new();
    m.insert("agent".into(), agent.name.as_str().into());
    m.insert("role".into(), agent.role.as_str().into());
    m.insert("server".into(), server.into());
    m.insert("tool".into(), tool.into());
    m.insert("arguments_hash".into(), args_hash.into());
    m.insert("outcome".into(), outcome.into());
    m.insert(
        "detail".into(),
        detail.chars().take(512).collect::<String>().into(),
    );
    Ok(gw.engine().record("tool.call", m).await?.index)
}
