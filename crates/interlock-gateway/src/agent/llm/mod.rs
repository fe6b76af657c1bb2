//! The LLM proxy (issue 42): `POST /v1/chat/completions` and `GET
//! /v1/models` in OpenAI's wire format, `POST /v1/messages` in Anthropic's,
//! `POST /v1beta/models/{model}:generateContent` (and
//! `:streamGenerateContent?alt=sse`) in Gemini's, with an agent's key
//! (`Authorization: Bearer`, or `x-api-key` as Anthropic's SDK sends it, or
//! `x-goog-api-key` as Google's does). One layer of the
//! runtime trust layer, beside the tool-call path: each request is read into
//! every text the model will read ([`interlock_llm::ChatRequest`]), scanned
//! layer by layer (each timed; the first hit decides), its verdict written
//! to the log ([`leaf`]) before anything leaves, and only then relayed to
//! the provider that serves its model — a streamed answer as it arrives.
//!
//! Errors are in the shape of the request's format (OpenAI's `{"error":
//! {"message", "type", "code"}}`, Anthropic's `{"type": "error", "error":
//! {"type", "message"}}`, Google's `{"error": {"code", "message",
//! "status"}}`), so the official SDKs raise them with the message a person
//! reads.

mod held;
mod leaf;

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use interlock_llm::{ChatRequest, Hit, Layer, WireFormat};
use interlock_store::{ApiKeyKind, ApiKeyRecord};
use serde_json::json;

use crate::gateway::Gateway;
use leaf::{LayerTime, LlmVerdict};

/// An error answer in `wire`'s shape. `kind` is OpenAI's error type;
/// Anthropic's is derived from the status.
fn error(
    wire: WireFormat,
    status: StatusCode,
    kind: &str,
    code: &str,
    message: String,
) -> Response {
    let body = match wire {
        WireFormat::OpenAi => {
            json!({"error": {"message": message, "type": kind, "code": code, "param": null}})
        }
        WireFormat::Anthropic => {
            let kind = match status {
                StatusCode::UNAUTHORIZED => "authentication_error",
                StatusCode::FORBIDDEN => "permission_error",
                StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
                StatusCode::NOT_FOUND => "not_found_error",
                StatusCode::BAD_REQUEST => "invalid_request_error",
                StatusCode::SERVICE_UNAVAILABLE => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        WireFormat::Gemini => {
            let status_name = match status {
                StatusCode::UNAUTHORIZED => "UNAUTHENTICATED",
                StatusCode::FORBIDDEN => "PERMISSION_DENIED",
                StatusCode::NOT_FOUND => "NOT_FOUND",
                StatusCode::BAD_REQUEST => "INVALID_ARGUMENT",
                StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
                StatusCode::SERVICE_UNAVAILABLE => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status.as_u16(), "message": message, "status": status_name,
                             "details": [{"reason": code, "domain": "interlock"}]}})
        }
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The agent a request's key names (`Authorization: Bearer`, or
/// `x-api-key`), or the answer refusing it.
async fn agent(
    gw: &Gateway,
    headers: &HeaderMap,
    wire: WireFormat,
) -> Result<ApiKeyRecord, Response> {
    let unauthorized = |message: &str| {
        error(
            wire,
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid_api_key",
            message.to_owned(),
        )
    };
    let key = crate::auth::bearer(headers)
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
        .or_else(|| headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()))
        .ok_or_else(|| {
            unauthorized("Interlock needs an agent key (Authorization: Bearer ilk_… or x-api-key)")
        })?;
    match gw.authenticate(key, ApiKeyKind::Agent).await {
        Ok(Some(agent)) => Ok(agent),
        Ok(None) => Err(unauthorized("unknown or revoked agent key")),
        Err(e) => Err(error(
            wire,
            StatusCode::SERVICE_UNAVAILABLE,
            "api_error",
            "store_unavailable",
            format!("Interlock's store is unavailable: {e}"),
        )),
    }
}

/// `GET /v1/models`: the models the configured providers serve that the
/// key may ask for.
pub(crate) async fn models(State(gw): State<Gateway>, headers: HeaderMap) -> Response {
    let agent = match agent(&gw, &headers, WireFormat::OpenAi).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    let per_key = match crate::llm::per_key::read(&gw, &agent).await {
        Ok(k) => k,
        Err(why) => return settings_unreadable(WireFormat::OpenAi, &why),
    };
    let data: Vec<_> =
        gw.config()
            .llm
            .providers
            .iter()
            .flat_map(|(name, p)| {
                p.models.iter().filter(|m| per_key.limits.allows(m)).map(
                    move |m| json!({"id": m, "object": "model", "created": 0, "owned_by": name}),
                )
            })
            .collect();
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"object": "list", "data": data}).to_string(),
    )
        .into_response()
}

/// `POST /v1/chat/completions` (OpenAI's format).
pub(crate) async fn chat_completions(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    proxy(&gw, &headers, body, Route::Body(WireFormat::OpenAi)).await
}

/// `POST /v1/messages` (Anthropic's format).
pub(crate) async fn messages(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    proxy(&gw, &headers, body, Route::Body(WireFormat::Anthropic)).await
}

/// `POST /v1beta/models/{model}:generateContent` and
/// `…:streamGenerateContent?alt=sse` (Gemini's format): the model and
/// whether it streams are in the path.
pub(crate) async fn gemini(
    State(gw): State<Gateway>,
    axum::extract::Path(model_action): axum::extract::Path<String>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let wire = WireFormat::Gemini;
    let bad = |message: String| {
        error(
            wire,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "invalid_request",
            message,
        )
    };
    let (model, stream) = match model_action.rsplit_once(':') {
        Some((m, "generateContent")) => (m, false),
        Some((m, "streamGenerateContent")) => {
            let sse = query
                .as_deref()
                .is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
            if !sse {
                return bad(
                    "Interlock relays Gemini's stream as server-sent events: ask \
                     :streamGenerateContent?alt=sse"
                        .into(),
                );
            }
            (m, true)
        }
        _ => {
            return bad(format!(
                "{model_action:?}: Interlock serves models/{{model}}:generateContent and \
                 :streamGenerateContent"
            ));
        }
    };
    let route = Route::Gemini {
        model: model.to_owned(),
        stream,
    };
    proxy(&gw, &headers, body, route).await
}

/// Where a request's model and streaming are read from.
enum Route {
    /// The body (OpenAI's and Anthropic's formats).
    Body(WireFormat),
    /// Gemini's path.
    Gemini { model: String, stream: bool },
}

impl Route {
    fn wire(&self) -> WireFormat {
        match self {
            Route::Body(w) => *w,
            Route::Gemini { .. } => WireFormat::Gemini,
        }
    }

    fn parse(&self, body: &[u8]) -> Result<ChatRequest, interlock_llm::RequestError> {
        match self {
            Route::Body(w) => ChatRequest::parse(*w, body),
            Route::Gemini { model, stream } => ChatRequest::parse_gemini(model, *stream, body),
        }
    }
}

/// A request refused because its key's settings could not be read (failing
/// closed).
fn settings_unreadable(wire: WireFormat, why: &str) -> Response {
    error(
        wire,
        StatusCode::SERVICE_UNAVAILABLE,
        "api_error",
        "settings_unavailable",
        format!("Interlock refused the request: {why}"),
    )
}

/// Judges a request in `wire`'s format, logs the verdict, and relays it to
/// the provider serving its model when nothing stopped it (or a reviewer
/// approved it).
async fn proxy(gw: &Gateway, headers: &HeaderMap, body: Bytes, route: Route) -> Response {
    let wire = route.wire();
    let error = |status, kind, code, message| error(wire, status, kind, code, message);
    let agent = match agent(gw, headers, wire).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    let request = match route.parse(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_request",
                e.to_string(),
            );
        }
    };
    let config = &gw.config().llm;
    let Some((provider_name, provider)) = config.provider_for(&request.model) else {
        return error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "model_not_found",
            format!(
                "no provider in this gateway's [llm] serves the model {:?}",
                request.model
            ),
        );
    };
    if provider.format.wire() != wire {
        let (path, other) = match provider.format.wire() {
            WireFormat::OpenAi => ("/v1/chat/completions", "OpenAI's"),
            WireFormat::Anthropic => ("/v1/messages", "Anthropic's"),
            WireFormat::Gemini => ("/v1beta/models/{model}:generateContent", "Gemini's"),
        };
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "wrong_format",
            format!(
                "the model {:?} is served in {other} format: send it to {path}",
                request.model
            ),
        );
    }
    let per_key = match crate::llm::per_key::read(gw, &agent).await {
        Ok(k) => k,
        Err(why) => return settings_unreadable(wire, &why),
    };
    let base = leaf::Leaf {
        agent: &agent,
        provider: provider_name,
        request: &request,
        body: &body,
        times: &[],
        judged: None,
        fingerprint: None,
        verdict: &LlmVerdict::Allowed,
        keep_text: per_key.policy.keep_prompt_text,
    };
    if let Some(refused) = within_limits(gw, base, &per_key.limits, wire).await {
        return refused;
    }
    // Layer 1, with a judge: what it said before about the same request.
    let fingerprint = interlock_llm::fingerprint::fingerprint(&request);
    let mut times = Vec::new();
    let mut known = None;
    if let Some(judge) = &config.judge {
        let started = Instant::now();
        known = crate::llm::fingerprints::lookup(gw, judge, &fingerprint).await;
        times.push(LayerTime {
            layer: Layer::Fingerprint,
            micros: started.elapsed().as_micros(),
        });
    }
    let mut hit = known.as_ref().filter(|k| k.is_unsafe).map(|k| Hit {
        layer: Layer::Fingerprint,
        rule: format!("learned:{}", k.category),
        path: "$".into(),
        reason: format!(
            "the judge found this request unsafe before ({}): {}",
            k.category, k.reason
        ),
    });
    if hit.is_none() {
        let policy = per_key.policy.narrow(&config.policy.prompt_policy());
        let (layer_hit, layer_times) = scan(&request, &policy);
        hit = layer_hit;
        times.extend(layer_times);
    }
    // The judge, last, when nothing before it stopped the request and it has
    // not found the same request safe before.
    let mut judged = None;
    if hit.is_none()
        && known.is_none()
        && let Some(judge) = &config.judge
    {
        let started = Instant::now();
        let outcome = crate::llm::judge::ask(config, judge, &request).await;
        times.push(LayerTime {
            layer: Layer::Judge,
            micros: started.elapsed().as_micros(),
        });
        if let crate::llm::judge::Judged::Verdict(v) = &outcome {
            crate::llm::fingerprints::learn(gw, judge, fingerprint.clone(), v).await;
        }
        let fail_mode = per_key.policy.fail_mode.unwrap_or(judge.fail_mode());
        hit = judge_hit(&outcome, fail_mode, &request);
        judged = Some((outcome, fail_mode));
    }
    let on_hit = per_key.policy.on_hit.unwrap_or(config.on_hit());
    let leaf = leaf::Leaf {
        times: &times,
        judged: judged.as_ref(),
        fingerprint: config
            .judge
            .as_ref()
            .map(|_| (fingerprint.as_str(), known.as_ref())),
        ..base
    };
    let verdict = match hit {
        None => LlmVerdict::Allowed,
        Some(hit) if agent.shadow => LlmVerdict::ShadowWouldBlock(hit),
        Some(hit) if on_hit == interlock_llm::key::OnHit::Hold => {
            return match held::hold(gw, leaf, &hit, wire, config.hold_secs).await {
                held::Held::Send(call_index) => {
                    let to = (provider_name, provider);
                    send(gw, agent.clone(), to, &request, body, call_index).await
                }
                held::Held::Answer(answer) => answer,
            };
        }
        Some(hit) => LlmVerdict::Blocked(hit),
    };
    let leaf = leaf::Leaf {
        verdict: &verdict,
        ..leaf
    };
    // Evidence before effect: no leaf, no request to the provider.
    let call_index = match leaf.append(gw).await {
        Ok(index) => index,
        Err(e) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                "log_unavailable",
                format!("Interlock refused the request: its log could not be written: {e}"),
            );
        }
    };
    if let LlmVerdict::Blocked(hit) = &verdict {
        return error(
            StatusCode::FORBIDDEN,
            "interlock_blocked",
            "prompt_blocked",
            format!(
                "Interlock blocked this request ({} layer): {}",
                hit.layer.as_str(),
                hit.reason
            ),
        );
    }
    send(
        gw,
        agent,
        (provider_name, provider),
        &request,
        body,
        call_index,
    )
    .await
}

/// Whether the key may ask for this model now: its allowed models, then its
/// rate and quota on the proxy. The refusal (logged first) if not.
async fn within_limits(
    gw: &Gateway,
    base: leaf::Leaf<'_>,
    limits: &interlock_llm::key::KeyLimits,
    wire: WireFormat,
) -> Option<Response> {
    let model = &base.request.model;
    let (verdict, status, retry_after) = if !limits.allows(model) {
        let message = format!("this key may not ask for the model {model:?}");
        (
            LlmVerdict::Limited {
                name: "model_not_allowed",
                message,
            },
            StatusCode::FORBIDDEN,
            None,
        )
    } else {
        match crate::llm::per_key::admit(gw, base.agent, limits).await {
            Ok(None) => return None,
            Ok(Some(limited)) => {
                let secs = limited.retry_after_secs;
                let message = match &limited.limit {
                    crate::sessions::limits::Limit::Quota { quota, month } => format!(
                        "monthly quota: this key has made its {quota} model requests for {month}; retry in {secs} s (next month)"
                    ),
                    _ => format!(
                        "rate limit: this key may make {} model requests a minute; retry in {secs} s",
                        limits.rate_per_minute.unwrap_or_default()
                    ),
                };
                (
                    LlmVerdict::Limited {
                        name: limited.name(),
                        message,
                    },
                    StatusCode::TOO_MANY_REQUESTS,
                    Some(secs),
                )
            }
            Err(why) => return Some(settings_unreadable(wire, &why)),
        }
    };
    let LlmVerdict::Limited { name, message } = &verdict else {
        unreachable!("built as Limited above")
    };
    let (name, message) = (*name, message.clone());
    if let Err(e) = (leaf::Leaf {
        verdict: &verdict,
        ..base
    })
    .append(gw)
    .await
    {
        return Some(error(
            wire,
            StatusCode::SERVICE_UNAVAILABLE,
            "api_error",
            "log_unavailable",
            format!("Interlock refused the request: its log could not be written: {e}"),
        ));
    }
    let kind = if status == StatusCode::FORBIDDEN {
        "permission_error"
    } else {
        "rate_limit_error"
    };
    let mut answer = error(wire, status, kind, name, format!("Interlock: {message}"));
    if let Some(secs) = retry_after {
        answer
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    Some(answer)
}

/// Sends a request the proxy let through (logged at `call_index`) to its
/// provider and relays the answer through the answer scan.
async fn send(
    gw: &Gateway,
    agent: ApiKeyRecord,
    (provider_name, provider): (&str, &crate::llm::config::ProviderConfig),
    request: &ChatRequest,
    body: Bytes,
    call_index: u64,
) -> Response {
    let wire = request.format;
    let config = &gw.config().llm;
    let timeout = Duration::from_secs(config.timeout_secs);
    let route = (request.model.as_str(), request.stream);
    match crate::llm::provider::send(provider_name, provider, route, body, timeout).await {
        Ok(answer) => {
            let scanned = Scanned {
                gw: gw.clone(),
                agent,
                call_index,
                wire,
                policy: config.response.policy(),
            };
            relay(answer, scanned).await
        }
        Err(e) => error(
            wire,
            StatusCode::BAD_GATEWAY,
            "api_error",
            "provider_unavailable",
            e.to_string(),
        ),
    }
}

/// What the judge's outcome makes of a request: an unsafe verdict stops
/// it; no verdict (a failure, an open breaker) stops it unless the fail mode
/// relays it.
fn judge_hit(
    outcome: &crate::llm::judge::Judged,
    fail_mode: interlock_llm::judge::FailMode,
    request: &ChatRequest,
) -> Option<Hit> {
    use crate::llm::judge::Judged;
    use interlock_llm::judge::JudgeVerdict;
    let hit = |rule: String, reason: String| Hit {
        layer: Layer::Judge,
        rule,
        path: "$".into(),
        reason,
    };
    match outcome {
        Judged::Verdict(JudgeVerdict::Safe) => None,
        Judged::Verdict(JudgeVerdict::Unsafe { category, reason }) => Some(hit(
            format!("unsafe:{category}"),
            format!("the judge found it unsafe ({category}): {reason}"),
        )),
        _ if fail_mode.relays(request) => None,
        unjudged => Some(hit(
            format!("{}:{}", fail_mode.as_str(), unjudged.name()),
            format!(
                "the judge gave no verdict ({}) and this gateway fails closed{}",
                unjudged.name().replace('_', " "),
                if fail_mode == interlock_llm::judge::FailMode::OpenSafe {
                    " for requests carrying tool results or unread content"
                } else {
                    ""
                }
            ),
        )),
    }
}

/// The scan's layers in order, each timed; the first hit ends it.
fn scan(
    request: &ChatRequest,
    policy: &interlock_llm::PromptPolicy,
) -> (Option<Hit>, Vec<LayerTime>) {
    let mut times = Vec::new();
    for layer in Layer::ORDER {
        let started = Instant::now();
        let hit = interlock_llm::run_layer(layer, request, policy);
        times.push(LayerTime {
            layer,
            micros: started.elapsed().as_micros(),
        });
        if hit.is_some() {
            return (hit, times);
        }
    }
    (None, times)
}

/// Who and what an answer's scan reports to (its `llm.response` leaf).
struct Scanned {
    gw: Gateway,
    agent: ApiKeyRecord,
    call_index: u64,
    wire: WireFormat,
    policy: interlock_inspect::ResponsePolicy,
}

impl Scanned {
    /// Writes the `llm.response` leaf when the scan found anything.
    async fn report(&self, found: &interlock_llm::answer::Found) -> Result<(), String> {
        if found.is_empty() {
            return Ok(());
        }
        leaf::append_response(&self.gw, &self.agent, self.call_index, found, &self.policy)
            .await
            .map(|_| ())
    }
}

/// The provider's answer, scanned: its status and content type, and its body
/// — a stream scanned and let out as it passes ([`interlock_llm::answer`]),
/// a whole answer read (bounded), scanned, its leaf written, then sent.
async fn relay(answer: reqwest::Response, scanned: Scanned) -> Response {
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let content_type = answer
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let streamed = content_type.starts_with("text/event-stream");
    let body = if streamed {
        Body::from_stream(scan_stream(answer, scanned))
    } else {
        let max = scanned.gw.config().limits.max_upstream_message_bytes;
        let bytes = match read_bounded(answer, max).await {
            Ok(b) => b,
            Err(why) => {
                return error(
                    scanned.wire,
                    StatusCode::BAD_GATEWAY,
                    "api_error",
                    "provider_answer_unread",
                    why,
                );
            }
        };
        let (rewritten, found) =
            interlock_llm::answer::scan_whole(scanned.wire, &bytes, &scanned.policy);
        if let Err(e) = scanned.report(&found).await {
            return error(
                scanned.wire,
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                "log_unavailable",
                format!("Interlock withheld the answer: its log could not be written: {e}"),
            );
        }
        Body::from(rewritten.map_or(bytes, Bytes::from))
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(&content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    if streamed {
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-cache"),
        );
    }
    response
}

/// A whole answer, at most `max` bytes.
async fn read_bounded(mut answer: reqwest::Response, max: usize) -> Result<Bytes, String> {
    let mut body = Vec::new();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|e| format!("the provider's answer broke off: {e}"))?
    {
        if body.len() + chunk.len() > max {
            return Err(format!("the provider's answer exceeds {max} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// A streamed answer let out through the scan as it arrives; its
/// `llm.response` leaf is written when it ends.
fn scan_stream(
    answer: reqwest::Response,
    scanned: Scanned,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    use futures_util::StreamExt as _;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let mut scan = interlock_llm::answer::StreamScan::new(scanned.wire, scanned.policy.clone());
        let mut upstream = answer.bytes_stream();
        let mut cut_off = false;
        while let Some(chunk) = upstream.next().await {
            match chunk {
                Ok(bytes) => match scan.push(&bytes) {
                    Ok(out) => {
                        if !out.is_empty() && tx.send(Ok(Bytes::from(out))).await.is_err() {
                            // The agent went away; the leaf still says what was found.
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                        cut_off = true;
                        break;
                    }
                },
                Err(e) => {
                    let _ = tx
                        .send(Err(std::io::Error::other(format!(
                            "the provider's stream broke off: {e}"
                        ))))
                        .await;
                    cut_off = true;
                    break;
                }
            }
        }
        // What was held is scanned either way (the leaf says what it held);
        // after an error nothing more is sent.
        let rest = scan.finish();
        if let Err(e) = scanned.report(scan.found()).await {
            tracing::warn!(error = %e, "the answer scan's leaf could not be written");
        }
        if !rest.is_empty() && !cut_off {
            let _ = tx.send(Ok(Bytes::from(rest))).await;
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
