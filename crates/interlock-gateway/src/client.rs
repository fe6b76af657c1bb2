//! A client of the reviewer API (`/api/v1`) of a gateway running elsewhere: a
//! team's `interlock serve`, which the desktop app connects to instead of
//! running the gateway in-process.
//!
//! Why here: this crate alone speaks HTTP, and it owns the API's shapes. The
//! client reads what a reviewer is shown (inbox, plans, servers, approvers),
//! follows the event stream, and submits decisions — signed statements only,
//! made by the caller with a key this client never sees.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use crate::sse::SseParser;
use interlock_trust::events::GatewayEvent;

/// The largest JSON answer read (a plan with its revisions and diff is far
/// smaller); a larger one is an error, not an allocation.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// The largest event of the event stream accepted (its data and name).
const MAX_EVENT: usize = 1024 * 1024;

/// Why a reviewer API call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("the gateway address {0:?} is not an http:// or https:// URL")]
    BadUrl(String),
    #[error("the reviewer key is not a valid header value")]
    BadToken,
    #[error("cannot reach the gateway: {0}")]
    Transport(String),
    /// The API answered with an error: its status and `{error: {code, message}}`.
    #[error("the gateway answered {status}: {message} ({code})")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
    #[error("the gateway's answer is malformed: {0}")]
    Malformed(String),
}

impl ClientError {
    /// The API's error code (`changed`, `decision_refused`, `unauthorized`, …),
    /// if the gateway answered with one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Api { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// Which kind of subject a decision is about, and so which endpoint takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Plan,
    Server,
}

impl Subject {
    fn collection(self) -> &'static str {
        match self {
            Subject::Plan => "plans",
            Subject::Server => "servers",
        }
    }
}

/// The reviewer API of one gateway, with one reviewer key.
#[derive(Clone)]
pub struct ReviewerClient {
    base: Url,
    auth: HeaderValue,
    http: reqwest::Client,
}

impl std::fmt::Debug for ReviewerClient {
    // Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewerClient")
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

impl ReviewerClient {
    /// `base` is the gateway's origin (`https://interlock.example:8717`); `token`
    /// a reviewer API key (`interlock reviewers add`).
    pub fn new(base: &str, token: &str) -> Result<ReviewerClient, ClientError> {
        let mut url = Url::parse(base).map_err(|_| ClientError::BadUrl(base.to_owned()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(ClientError::BadUrl(base.to_owned()));
        }
        url.set_path("/");
        url.set_query(None);
        url.set_fragment(None);
        let mut auth =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ClientError::BadToken)?;
        auth.set_sensitive(true);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // The gateway's answers are its own: never follow a redirect with
            // the reviewer key to somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        Ok(ReviewerClient {
            base: url,
            auth,
            http,
        })
    }

    /// The gateway's origin, as a browser would write it (no trailing slash).
    pub fn origin(&self) -> String {
        self.base.origin().ascii_serialization()
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("http(s) URLs have paths")
            .clear()
            .extend(["api", "v1"])
            .extend(segments);
        url
    }

    async fn get(&self, segments: &[&str]) -> Result<Value, ClientError> {
        let req = self
            .http
            .get(self.url(segments))
            .timeout(Duration::from_secs(30));
        self.send(req).await
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        let resp = req
            .header(AUTHORIZATION, self.auth.clone())
            .header(ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let status = resp.status();
        let body = read_limited(resp).await?;
        let json: Value = serde_json::from_slice(&body).map_err(|e| {
            ClientError::Malformed(format!("{status}: not JSON ({e}), {} bytes", body.len()))
        })?;
        if status.is_success() {
            return Ok(json);
        }
        Err(ClientError::Api {
            status: status.as_u16(),
            code: json["error"]["code"].as_str().unwrap_or("error").to_owned(),
            message: json["error"]["message"]
                .as_str()
                .unwrap_or_else(|| status.canonical_reason().unwrap_or("error"))
                .to_owned(),
        })
    }

    /// `POST /api/v1/servers/{name}/review` (issue 22): the gateway
    /// classifies `body` (`{"surface": …}`, what the server lists in a
    /// change under review) against its approved baseline, changing nothing.
    /// `idempotency_key` makes a retry get the same answer.
    pub async fn review(
        &self,
        name: &str,
        body: &Value,
        idempotency_key: &str,
    ) -> Result<Value, ClientError> {
        let req = self
            .http
            .post(self.url(&["servers", name, "review"]))
            .header("Idempotency-Key", idempotency_key)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body).expect("JSON serializes"))
            .timeout(Duration::from_secs(60));
        self.send(req).await
    }

    /// `GET /api/v1/inbox`: what waits for a reviewer.
    pub async fn inbox(&self) -> Result<Vec<Value>, ClientError> {
        match self.get(&["inbox"]).await?["items"].take() {
            Value::Array(items) => Ok(items),
            _ => Err(ClientError::Malformed("inbox without `items`".into())),
        }
    }

    /// The inbox as a short list reads it ([`crate::inbox::InboxEntry`]).
    pub async fn inbox_entries(&self) -> Result<Vec<crate::inbox::InboxEntry>, ClientError> {
        Ok(self
            .inbox()
            .await?
            .iter()
            .filter_map(crate::inbox::InboxEntry::from_summary)
            .collect())
    }

    /// `GET /api/v1/plans/{id}` or `/servers/{name}`: the subject as a
    /// reviewer sees it, with the hash a decision must sign and the policy
    /// digest it is made under.
    pub async fn subject(&self, kind: Subject, id: &str) -> Result<Value, ClientError> {
        self.get(&[kind.collection(), id]).await
    }

    /// The gateway's log origin, the audience every statement made for it
    /// names (`GET /api/v1/log/checkpoint`).
    pub async fn audience(&self) -> Result<String, ClientError> {
        // A log origin is one short line (a checkpoint's first); anything
        // else is refused before it could be pinned or shown in a dialog.
        match self.get(&["log", "checkpoint"]).await?["origin"].take() {
            Value::String(a)
                if !a.is_empty()
                    && a.len() <= 256
                    && !a.chars().any(|c| c.is_control() || c.is_whitespace()) =>
            {
                Ok(a)
            }
            _ => Err(ClientError::Malformed(
                "a checkpoint without a valid `origin`".into(),
            )),
        }
    }

    /// `GET /api/v1/approvers`.
    pub async fn approvers(&self) -> Result<Value, ClientError> {
        self.get(&["approvers"]).await
    }

    /// The identity registered for approver key `key_id` on this gateway,
    /// or `None` if it is not registered there.
    pub async fn approver_identity(&self, key_id: &str) -> Result<Option<String>, ClientError> {
        let a = self.approvers().await?;
        Ok(a["approvers"].as_array().and_then(|l| {
            l.iter()
                .find(|k| k["key_id"] == key_id)
                .map(|k| k["identity"].as_str().unwrap_or_default().to_owned())
        }))
    }

    /// Whether the gateway serves the review UI at `/` (`interlock serve --ui`).
    pub async fn serves_ui(&self) -> bool {
        let req = self
            .http
            .get(self.base.clone())
            .timeout(Duration::from_secs(5));
        matches!(req.send().await, Ok(r) if r.status().is_success())
    }

    /// Follows the event stream for good, reconnecting with backoff (1 s to
    /// 30 s), and puts each event on `bus`. Run it as a task; abort it to stop.
    pub async fn relay_events(self, bus: interlock_trust::events::EventBus) {
        let mut backoff = Duration::from_secs(1);
        loop {
            match self.events().await {
                Ok(stream) => {
                    backoff = Duration::from_secs(1);
                    let mut stream = std::pin::pin!(stream);
                    while let Some(e) = stream.next().await {
                        match e {
                            Ok(e) => bus.send(e),
                            Err(e) => tracing::warn!(gateway = %self.origin(), "event stream: {e}"),
                        }
                    }
                }
                Err(e) => tracing::warn!(gateway = %self.origin(), "event stream: {e}"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }

    /// `POST /api/v1/{plans|servers}/{id}/decisions` with a signed statement.
    pub async fn submit(
        &self,
        kind: Subject,
        id: &str,
        envelope: &Value,
    ) -> Result<Value, ClientError> {
        let req = self
            .http
            .post(self.url(&[kind.collection(), id, "decisions"]))
            .timeout(Duration::from_secs(30))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(envelope).expect("JSON serializes"));
        self.send(req).await
    }

    /// `GET /api/v1/events`: the gateway's events as they happen. The stream
    /// ends when the connection does; the caller reconnects.
    pub async fn events(
        &self,
    ) -> Result<impl Stream<Item = Result<GatewayEvent, ClientError>> + use<>, ClientError> {
        let resp = self
            .http
            .get(self.url(&["events"]))
            .header(AUTHORIZATION, self.auth.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        if resp.status() != StatusCode::OK {
            let status = resp.status();
            let body = read_limited(resp).await.unwrap_or_default();
            let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            return Err(ClientError::Api {
                status: status.as_u16(),
                code: json["error"]["code"].as_str().unwrap_or("error").to_owned(),
                message: json["error"]["message"]
                    .as_str()
                    .unwrap_or("cannot follow events")
                    .to_owned(),
            });
        }
        let mut parser = SseParser::new(MAX_EVENT);
        Ok(resp
            .bytes_stream()
            .map(move |chunk| match chunk {
                Ok(bytes) => gateway_events(&mut parser, &bytes),
                Err(e) => vec![Err(ClientError::Transport(e.to_string()))],
            })
            .flat_map(futures_util::stream::iter))
    }
}

async fn read_limited(mut resp: reqwest::Response) -> Result<Vec<u8>, ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientError::Transport(e.to_string()))?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(ClientError::Malformed(format!(
                "answer larger than {MAX_BODY} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The gateway events `bytes` completes on the event stream (an event with
/// empty data is none); an event over [`MAX_EVENT`] is an error, and the stream
/// goes on after it.
fn gateway_events(parser: &mut SseParser, bytes: &[u8]) -> Vec<Result<GatewayEvent, ClientError>> {
    parser
        .feed(bytes)
        .into_iter()
        .filter_map(|event| match event {
            Ok(e) if e.data.is_empty() => None,
            Ok(e) => Some(parse_event(&String::from_utf8_lossy(&e.data))),
            Err(e) => Some(Err(ClientError::Malformed(e.to_string()))),
        })
        .collect()
}

fn parse_event(data: &str) -> Result<GatewayEvent, ClientError> {
    let v: Value = serde_json::from_str(data)
        .map_err(|e| ClientError::Malformed(format!("an event is not JSON: {e}")))?;
    GatewayEvent::from_json(&v)
        .ok_or_else(|| ClientError::Malformed(format!("not a gateway event: {data}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_ids_in_one_segment() {
        let c = ReviewerClient::new("https://gw.example:8717/ignored?x=1", "ilk_k").unwrap();
        assert_eq!(c.origin(), "https://gw.example:8717");
        assert_eq!(
            c.url(&["plans", "a/b?c", "decisions"]).as_str(),
            "https://gw.example:8717/api/v1/plans/a%2Fb%3Fc/decisions"
        );
        for bad in ["ftp://x", "not a url", "http://", "file:///etc"] {
            assert!(ReviewerClient::new(bad, "k").is_err(), "{bad}");
        }
        assert!(matches!(
            ReviewerClient::new("http://x", "bad\nkey"),
            Err(ClientError::BadToken)
        ));
        assert!(!format!("{c:?}").contains("ilk_k"));
    }

    #[test]
    fn sse_events_parse_across_chunk_boundaries() {
        let ev = GatewayEvent::server(
            interlock_trust::events::EventType::ServerPending,
            "fs",
            "t".into(),
            "medium",
            "sha256:ab",
            Some(3),
        );
        let wire = format!(
            ": keep-alive\n\nevent: server.pending\ndata: {}\r\n\r\n",
            serde_json::to_string(&ev).unwrap()
        );
        let mut p = SseParser::new(MAX_EVENT);
        let mut got = Vec::new();
        for chunk in wire.as_bytes().chunks(7) {
            got.extend(gateway_events(&mut p, chunk));
        }
        assert_eq!(got.len(), 1);
        assert_eq!(got.pop().unwrap().unwrap(), ev);
        let bad = gateway_events(&mut p, b"data: {nope\n\n");
        assert!(matches!(bad.as_slice(), [Err(ClientError::Malformed(_))]));
        // An event over the bound is refused, and the next one still read.
        let mut wire = b"data: ".to_vec();
        wire.resize(MAX_EVENT + 7, b'x');
        wire.extend_from_slice(b"\n\ndata:\n\ndata: ");
        wire.extend_from_slice(serde_json::to_string(&ev).unwrap().as_bytes());
        wire.extend_from_slice(b"\n\n");
        let got = gateway_events(&mut p, &wire);
        assert!(
            matches!(&got[..], [Err(ClientError::Malformed(m)), Ok(e)] if m.contains("over 1048576 bytes") && *e == ev),
            "{got:?}"
        );
    }
}
