//! An upstream MCP server over Streamable HTTP: each message a POST, answered
//! with JSON or an SSE stream; a session id if the server issues one; an
//! optional GET stream for the server's own notifications.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::value::RawValue;

use super::stdio::handle_unsolicited;
use super::{Signals, UpstreamError, UpstreamSignal};
use crate::jsonrpc::{self, OwnedIncoming};
use crate::sse::SseParser;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

struct Shared {
    client: reqwest::Client,
    /// Parsed once: every request goes to it.
    url: reqwest::Url,
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    max_message: usize,
    signals: Signals,
    server: String,
}

pub struct HttpConnection {
    shared: Arc<Shared>,
    next_id: AtomicU64,
    listen: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How long a pooled connection to an upstream may sit idle and still be reused:
/// less than the 5 s after which the HTTP stacks most MCP servers run on (uvicorn,
/// Node's `http`) close an idle connection. A request written as the server closed
/// such a connection was lost ("error sending request": 2026-12-07, the eras test
/// with five tests at once on two cores), and a tool call is never resent (it may
/// have run).
const IDLE_REUSE_LIMIT: Duration = Duration::from_secs(4);

impl HttpConnection {
    pub fn new(
        url: &str,
        headers: &BTreeMap<String, String>,
        max_message: usize,
        signals: Signals,
    ) -> Result<HttpConnection, UpstreamError> {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| UpstreamError::Unavailable(format!("header {k:?}: {e}")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|e| UpstreamError::Unavailable(format!("header {k:?}: {e}")))?;
            map.insert(name, value);
        }
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| UpstreamError::Unavailable(format!("upstream URL {url:?}: {e}")))?;
        let client = reqwest::Client::builder()
            // A redirect would resend the configured headers (upstream
            // credentials) to whatever host the upstream names; an MCP endpoint
            // has one URL, so a redirect is answered as an error instead
            // (issue 15 item 17).
            .redirect(reqwest::redirect::Policy::none())
            // A host name may not lead to this machine or the cloud's
            // metadata service unless the URL itself says so (issue 38).
            .dns_resolver(Arc::new(super::address_guard::AddressGuard::for_url(
                &parsed,
            )))
            .pool_max_idle_per_host(64)
            .pool_idle_timeout(IDLE_REUSE_LIMIT)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| UpstreamError::Unavailable(format!("HTTP client: {e}")))?;
        Ok(HttpConnection {
            shared: Arc::new(Shared {
                client,
                url: parsed,
                headers: map,
                session: Mutex::new(None),
                version: Mutex::new(None),
                max_message,
                signals,
                server: url.to_owned(),
            }),
            next_id: AtomicU64::new(1),
            listen: Mutex::new(None),
        })
    }

    pub fn set_protocol_version(&self, version: &str) {
        if let Ok(v) = HeaderValue::from_str(version) {
            *self.shared.version.lock().expect("lock") = Some(v);
        }
    }

    /// Sends a request; `headers` are the era's own (stateless-era routing
    /// headers, see `era::http_headers`), added to the configured ones.
    pub async fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Duration,
        initializing: bool,
        headers: &[(&'static str, String)],
    ) -> Result<Box<RawValue>, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = jsonrpc::request(id, method, params);
        match tokio::time::timeout(
            timeout,
            self.shared.exchange(body, Some(id), initializing, headers),
        )
        .await
        {
            Ok(outcome) => outcome.and_then(|r| {
                r.ok_or_else(|| UpstreamError::Unavailable("no response to a request".into()))
            }),
            Err(_) => Err(UpstreamError::Timeout(timeout)),
        }
    }

    pub async fn notify(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), UpstreamError> {
        self.shared
            .exchange(jsonrpc::notification(method, params), None, false, &[])
            .await
            .map(|_| ())
    }

    /// Opens the GET stream on which a server may send notifications such as
    /// `tools/list_changed`. Servers that do not offer one answer 405: fine.
    pub fn open_listen_stream(&self) {
        let shared = Arc::clone(&self.shared);
        let task = tokio::spawn(async move {
            let mut req = shared
                .client
                .get(shared.url.clone())
                .headers(shared.headers.clone())
                .header(ACCEPT, "text/event-stream");
            req = shared.with_session(req);
            let Ok(resp) = req.send().await else { return };
            if !resp.status().is_success() {
                return;
            }
            let mut events = SseReader::new(shared.max_message);
            let mut body = resp.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                let Ok(msgs) = events.push(&chunk) else {
                    return;
                };
                for msg in msgs {
                    shared.unsolicited(msg).await;
                }
            }
        });
        *self.listen.lock().expect("lock") = Some(task);
    }

    pub async fn close(&self) {
        if let Some(task) = self.listen.lock().expect("lock").take() {
            task.abort();
        }
        let session = self.shared.session.lock().expect("lock").clone();
        if let Some(session) = session {
            let _ = self
                .shared
                .client
                .delete(self.shared.url.clone())
                .headers(self.shared.headers.clone())
                .header(SESSION_HEADER, session)
                .timeout(Duration::from_secs(2))
                .send()
                .await;
        }
    }
}

impl Drop for HttpConnection {
    fn drop(&mut self) {
        if let Some(task) = self.listen.lock().expect("lock").take() {
            task.abort();
        }
    }
}

impl Shared {
    fn with_session(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(s) = self.session.lock().expect("lock").clone() {
            req = req.header(SESSION_HEADER, s);
        }
        if let Some(v) = self.version.lock().expect("lock").clone() {
            req = req.header(VERSION_HEADER, v);
        }
        req
    }

    /// POSTs one message; for a request, reads until the response with `id`.
    async fn exchange(
        &self,
        body: Vec<u8>,
        id: Option<u64>,
        initializing: bool,
        era_headers: &[(&'static str, String)],
    ) -> Result<Option<Box<RawValue>>, UpstreamError> {
        let mut req = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body);
        for (name, value) in era_headers {
            req = req.header(*name, value);
        }
        let resp =
            self.with_session(req).send().await.map_err(|e| {
                UpstreamError::Unavailable(format!("cannot reach the upstream: {e}"))
            })?;
        let status = resp.status();
        if initializing && let Some(s) = resp.headers().get(SESSION_HEADER) {
            *self.session.lock().expect("lock") = Some(s.clone());
        }
        if status == reqwest::StatusCode::NOT_FOUND && self.session.lock().expect("lock").is_some()
        {
            // The server forgot our session: reconnect.
            let _ = self.signals.send(UpstreamSignal::Closed(
                "the upstream ended the session".into(),
            ));
            return Err(UpstreamError::Unavailable(
                "the upstream ended the session; reconnecting".into(),
            ));
        }
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let snippet: String = text.chars().take(200).collect();
            return Err(UpstreamError::Unavailable(format!(
                "the upstream answered HTTP {status}: {snippet}"
            )));
        }
        let Some(id) = id else { return Ok(None) };
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") {
            let mut events = SseReader::new(self.max_message);
            let mut body = Box::pin(resp.bytes_stream());
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| {
                    UpstreamError::Unavailable(format!("the upstream's stream broke: {e}"))
                })?;
                for msg in events.push(&chunk).map_err(UpstreamError::Unavailable)? {
                    if msg.method.is_none() {
                        if msg.id.as_deref().map(|i| i.get()) == Some(id.to_string().as_str()) {
                            finish_stream(body).await;
                            return answer(msg).map(Some);
                        }
                    } else {
                        self.unsolicited(msg).await;
                    }
                }
            }
            Err(UpstreamError::Unavailable(
                "the upstream's stream ended without a response".into(),
            ))
        } else {
            let bytes = read_limited(resp, self.max_message).await?;
            let msg: OwnedIncoming = serde_json::from_slice(&bytes).map_err(|e| {
                UpstreamError::Unavailable(format!(
                    "the upstream answered something not JSON-RPC: {e}"
                ))
            })?;
            answer(msg).map(Some)
        }
    }

    /// Handles a message the server sent on its own; a reply (to its `ping`,
    /// or refusing what is not relayed) is POSTed back without waiting.
    async fn unsolicited(&self, msg: OwnedIncoming) {
        if let Some(reply) = handle_unsolicited(&self.server, &msg, &self.signals) {
            let req = self
                .client
                .post(self.url.clone())
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .body(reply);
            let _ = self.with_session(req).send().await;
        }
    }
}

fn answer(msg: OwnedIncoming) -> Result<Box<RawValue>, UpstreamError> {
    match (msg.result, msg.error) {
        (Some(r), None) => Ok(r),
        (None, Some(e)) => Err(UpstreamError::Rpc(Arc::from(e))),
        _ => Err(UpstreamError::Unavailable(
            "the upstream sent a response with neither result nor error".into(),
        )),
    }
}

/// How long the gateway waits, before it relays an answer, for the end of the
/// stream that carried it, and how long a task then reads what still comes
/// (after which the connection is closed instead of reused).
const STREAM_END_WAIT: Duration = Duration::from_millis(2);
const STREAM_TAIL_LIMIT: Duration = Duration::from_secs(10);

/// Reads what is left of a response stream once its answer has arrived, so
/// that the connection goes back to the client's pool.
///
/// A server ends the stream right after the answer (the TypeScript and Python
/// SDKs do), but the end is a frame of its own. Dropping the body before it was
/// read closed the connection: every tool call through a Streamable HTTP
/// upstream that answers with SSE opened a new TCP connection, which cost the
/// gateway (and the upstream) CPU and a connection set-up per call
/// (issue 17, the unexplained time on the sequential path). The end follows
/// within microseconds and is awaited for at most [`STREAM_END_WAIT`], so the
/// next call finds the connection idle; a stream that goes on is read (and
/// discarded: what follows an answer on its stream is not relayed, as before)
/// by a task, for at most [`STREAM_TAIL_LIMIT`].
async fn finish_stream<S>(mut body: std::pin::Pin<Box<S>>)
where
    S: futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send + 'static,
{
    let ended = tokio::time::timeout(STREAM_END_WAIT, async {
        while let Some(Ok(_)) = body.next().await {}
    })
    .await
    .is_ok();
    if !ended {
        tokio::spawn(async move {
            let drain = async { while let Some(Ok(_)) = body.next().await {} };
            let _ = tokio::time::timeout(STREAM_TAIL_LIMIT, drain).await;
        });
    }
}

async fn read_limited(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, UpstreamError> {
    let mut out = Vec::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| {
            UpstreamError::Unavailable(format!("reading the upstream's answer: {e}"))
        })?;
        if out.len() + chunk.len() > max {
            return Err(UpstreamError::Unavailable(format!(
                "the upstream's answer is over {max} bytes"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The JSON-RPC messages in an SSE stream's events ([`SseParser`]); an event
/// over `max` bytes is an error, which ends the stream.
pub(crate) struct SseReader {
    events: SseParser,
}

impl SseReader {
    pub(crate) fn new(max: usize) -> SseReader {
        SseReader {
            events: SseParser::new(max),
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<OwnedIncoming>, String> {
        let mut out = Vec::new();
        for event in self.events.feed(chunk) {
            let event = event.map_err(|e| e.to_string())?;
            // An event with no data (MCP's priming event: an id, empty data)
            // carries no message.
            if event.data.is_empty() {
                continue;
            }
            match serde_json::from_slice::<OwnedIncoming>(&event.data) {
                Ok(m) => out.push(m),
                Err(e) => tracing::warn!(error = %e, "an SSE event that is not JSON-RPC"),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection to a real HTTP/1 listener serving `app`, and the number of
    /// TCP connections that listener has accepted.
    async fn counting_upstream(
        app: axum::Router,
    ) -> (HttpConnection, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&accepted);
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                counted.fetch_add(1, Ordering::SeqCst);
                let app = app.clone();
                tokio::spawn(async move {
                    let service = hyper_util::service::TowerToHyperService::new(app);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let conn = HttpConnection::new(
            &url,
            &BTreeMap::new(),
            1 << 20,
            Signals::new(tx, Arc::default()),
        )
        .unwrap();
        (conn, accepted)
    }

    /// Issue 15 item 17: an upstream answering 307 towards another host/port
    /// must not make the gateway resend the request, with the configured
    /// credentials, there. Two real listeners: the redirecting upstream, and
    /// the place it points at, which records every request it gets.
    #[tokio::test]
    async fn regression_upstream_redirect_is_not_followed() {
        use axum::http::{HeaderMap as AxumHeaders, StatusCode, header::LOCATION};

        let hits: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
        let seen = Arc::clone(&hits);
        let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let elsewhere_url = format!("http://{}/mcp", elsewhere.local_addr().unwrap());
        let record = axum::Router::new().fallback(move |headers: AxumHeaders| {
            let seen = Arc::clone(&seen);
            async move {
                let auth = headers
                    .get("authorization")
                    .map(|v| v.to_str().unwrap_or_default().to_owned());
                seen.lock().unwrap().push(auth);
                axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
            }
        });
        tokio::spawn(async move { axum::serve(elsewhere, record).await });

        let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream_url = format!("http://{}/mcp", upstream.local_addr().unwrap());
        let redirect = axum::Router::new().fallback(move || {
            let to = elsewhere_url.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, to)]) }
        });
        tokio::spawn(async move { axum::serve(upstream, redirect).await });

        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let headers = BTreeMap::from([(
            "Authorization".to_owned(),
            "Bearer upstream-secret".to_owned(),
        )]);
        let conn = HttpConnection::new(
            &upstream_url,
            &headers,
            1 << 20,
            Signals::new(tx, Arc::default()),
        )
        .unwrap();
        let params = RawValue::from_string(
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}"#
                .to_owned(),
        )
        .unwrap();
        let err = conn
            .request(
                "initialize",
                Some(&params),
                Duration::from_secs(10),
                true,
                &[],
            )
            .await
            .expect_err("a redirect is an error, not followed");
        assert!(
            err.to_string().contains("307"),
            "the error names the redirect: {err}"
        );
        assert_eq!(
            *hits.lock().unwrap(),
            Vec::<Option<String>>::new(),
            "the redirect target was reached (with these Authorization headers)"
        );
    }

    /// Issue 17: an upstream that answers each request as an SSE stream (as
    /// the TypeScript and Python SDKs' Streamable HTTP servers do) must see its
    /// connection reused from one request to the next. The gateway used to drop
    /// the stream once the answer was read, before its end, which closed the
    /// connection: a new TCP connection per tool call. A real listener counts
    /// the connections it accepts; axum's SSE answers in chunks, ending the
    /// stream after the answer.
    #[tokio::test]
    async fn regression_an_sse_answer_leaves_the_connection_reusable() {
        let app = axum::Router::new().fallback(|body: String| async move {
            let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["id"].clone();
            let event = axum::response::sse::Event::default().event("message").data(
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}).to_string(),
            );
            axum::response::Sse::new(futures_util::stream::iter([Ok::<
                _,
                std::convert::Infallible,
            >(event)]))
        });
        let (conn, accepted) = counting_upstream(app).await;
        for _ in 0..10 {
            let answer = conn
                .request("tools/list", None, Duration::from_secs(10), false, &[])
                .await
                .expect("the SSE answer is read");
            assert_eq!(answer.get(), r#"{"ok":true}"#);
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "ten sequential requests should share one connection"
        );
    }

    /// A connection idle for longer than [`IDLE_REUSE_LIMIT`] is not reused: the
    /// next request opens a new one instead of racing the server's own close of
    /// an idle connection (uvicorn and Node close after 5 s). A real listener
    /// counts the connections it accepts.
    #[tokio::test]
    async fn regression_issue_45_a_connection_idle_near_the_server_s_keep_alive_is_not_reused() {
        let app = axum::Router::new().fallback(|body: String| async move {
            let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["id"].clone();
            axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}))
        });
        let (conn, accepted) = counting_upstream(app).await;
        let call = || conn.request("tools/list", None, Duration::from_secs(10), false, &[]);
        call().await.unwrap();
        call().await.unwrap();
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "back to back: one connection"
        );
        tokio::time::sleep(IDLE_REUSE_LIMIT + Duration::from_millis(300)).await;
        call().await.unwrap();
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "after the idle limit the request went on a new connection"
        );
    }

    #[test]
    fn sse_events_split_across_chunks() {
        let mut r = SseReader::new(1 << 20);
        assert!(
            r.push(b"event: message\ndata: {\"jsonrpc\":\"2.0\",")
                .unwrap()
                .is_empty()
        );
        let msgs = r
            .push(b"\"id\":1,\"result\":{}}\n\n: keepalive\n\n")
            .unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].id.as_deref().unwrap().get(), "1");
        let msgs = r
            .push(b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\n")
            .unwrap();
        assert_eq!(
            msgs[0].method.as_deref(),
            Some("notifications/tools/list_changed")
        );
    }

    #[test]
    fn sse_priming_events_carry_nothing_and_big_events_end_the_stream() {
        let mut r = SseReader::new(64);
        assert!(r.push(b"id: 1\ndata:\n\n").unwrap().is_empty());
        let msgs = r
            .push(b"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
            .unwrap();
        assert_eq!(msgs[0].id.as_deref().unwrap().get(), "2");
        let big = format!("data: {}\n\n", "x".repeat(65));
        assert_eq!(
            r.push(big.as_bytes()).err().as_deref(),
            Some("an SSE event over 64 bytes")
        );
    }
}
