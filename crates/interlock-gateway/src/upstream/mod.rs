//! Connections to upstream MCP servers, and the supervisor that keeps each one
//! connected (reconnecting with backoff) and re-reads its surface.
//!
//! The gateway is an MCP *client* here, over stdio or Streamable HTTP, in the
//! protocol era each upstream serves ([`era`]): 2026-07-28 stateless where
//! `server/discover` offers it, else the 2025-11-25 handshake (`initialize`,
//! `notifications/initialized`). It forwards requests as raw JSON, put into
//! the connection's era on the way out; what the upstream answers reaches the
//! agent byte for byte.

mod address_guard;
pub mod egress;
pub mod era;
mod http;
pub mod pages;
pub mod relay;
mod stdio;
pub mod table;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};

use crate::config::{Limits, Transport};
use era::{Era, EraChoice};

/// The protocol version the gateway asks handshake-era upstreams for.
pub const UPSTREAM_PROTOCOL_VERSION: &str = era::HANDSHAKE_VERSION;

/// How long a `server/discover` probe may take before the gateway tries the
/// handshake instead (a handshake-only server may ignore it); the official
/// SDKs' clients wait as long.
const DISCOVER_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a forwarded request got no result.
#[derive(Clone, Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The upstream answered with a JSON-RPC error: forwarded as is. Shown
    /// with its code and (bounded, one-line) message, so a log line that says
    /// a server is down says why (issue 45 item 6).
    #[error("the upstream returned an error{}", rpc_summary(.0))]
    Rpc(Arc<RawValue>),
    /// Not connected, died, or answered something that is not JSON-RPC.
    #[error("{0}")]
    Unavailable(String),
    #[error("the upstream did not answer within {0:?}")]
    Timeout(Duration),
}

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

impl UpstreamError {
    /// The JSON-RPC error code the upstream answered with, if it answered one.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            UpstreamError::Rpc(raw) => rpc_fields(raw).0,
            _ => None,
        }
    }
}

fn rpc_fields(raw: &RawValue) -> (Option<i64>, Option<String>) {
    #[derive(Deserialize)]
    struct Fields {
        code: Option<i64>,
        message: Option<String>,
    }
    match serde_json::from_str::<Fields>(raw.get()) {
        Ok(f) => (f.code, f.message),
        Err(_) => (None, None),
    }
}

/// ` <code>: <message>` of a JSON-RPC error object, the message on one line
/// and at most 200 characters (it is the upstream's text, bound for a log).
fn rpc_summary(raw: &RawValue) -> String {
    let (code, message) = rpc_fields(raw);
    let mut out = String::new();
    if let Some(code) = code {
        out.push_str(&format!(" {code}"));
    }
    if let Some(message) = message {
        out.push_str(": ");
        out.push_str(&interlock_core::one_line::one_line(&message, 200));
    }
    out
}

/// What the upstream said about itself in `initialize` (or `server/discover`).
#[derive(Clone, Debug)]
pub struct ServerHello {
    pub protocol_version: String,
    pub server_info: Option<Box<RawValue>>,
    pub instructions: Option<String>,
    /// The top-level capabilities it declared (`resources`, `prompts`, …).
    pub capabilities: Vec<String>,
}

impl ServerHello {
    /// Whether the server declared `capability` (e.g. `prompts`).
    pub fn offers(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }
}

/// Something an upstream sent that was not an answer to us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamSignal {
    /// `notifications/tools/list_changed`, `…/prompts/list_changed` or
    /// `…/resources/list_changed`: what it lists may have changed (the
    /// gateway re-lists everything it pins).
    SurfaceChanged,
    /// `notifications/resources/updated` for `uri`: `message` is the
    /// notification to relay (its params as the upstream sent them).
    ResourceUpdated { uri: String, message: Vec<u8> },
    /// The connection ended.
    Closed(String),
}

/// Where a connection's reader sends what is not an answer: signals for the
/// supervisor, and a call's progress and log messages straight to its relay.
#[derive(Clone)]
pub struct Signals {
    tx: mpsc::UnboundedSender<UpstreamSignal>,
    pub(crate) relays: Arc<relay::Relays>,
}

impl Signals {
    pub fn new(tx: mpsc::UnboundedSender<UpstreamSignal>, relays: Arc<relay::Relays>) -> Signals {
        Signals { tx, relays }
    }

    pub fn send(&self, s: UpstreamSignal) -> Result<(), mpsc::error::SendError<UpstreamSignal>> {
        self.tx.send(s)
    }
}

/// One live connection.
pub struct Connection {
    link: Link,
    /// The upstream's relays: every request counts as in flight there, so a
    /// log message is attributed only when one request could have sent it.
    relays: Arc<relay::Relays>,
    /// The era this connection speaks; every request is put into it.
    era: Era,
}

/// The transport of a connection.
enum Link {
    Stdio(stdio::StdioConnection),
    Http(http::HttpConnection),
}

impl Connection {
    /// Connects in the era `choice` allows: discovers a stateless-era server,
    /// or completes the initialize handshake.
    pub async fn open(
        name: &str,
        transport: &Transport,
        choice: EraChoice,
        limits: &Limits,
        signals: Signals,
        confiner: &interlock_sandbox::Confiner,
    ) -> Result<(Connection, ServerHello), UpstreamError> {
        let relays = Arc::clone(&signals.relays);
        let link = match transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                sandbox,
            } => Link::Stdio(stdio::StdioConnection::spawn(
                name,
                &interlock_sandbox::Launch {
                    command,
                    args,
                    env,
                    cwd: cwd.as_deref(),
                },
                sandbox,
                confiner,
                limits.max_upstream_message_bytes,
                signals.clone(),
            )?),
            Transport::Http { url, headers } => Link::Http(http::HttpConnection::new(
                url,
                headers,
                limits.max_upstream_message_bytes,
                signals.clone(),
            )?),
        };
        let mut conn = Connection {
            link,
            relays,
            era: Era::Stateless,
        };
        let timeout = limits.upstream_timeout().min(Duration::from_secs(60));
        if choice != EraChoice::Handshake {
            match conn.discover(timeout.min(DISCOVER_TIMEOUT)).await {
                Ok(hello) => return Ok((conn, hello)),
                Err(e) if choice == EraChoice::Stateless => return Err(e),
                // Anything but a server listing 2026-07-28 is a handshake-era
                // server (an unknown method, an HTTP 400 for a request
                // without a session, silence): the handshake decides.
                Err(e) => tracing::debug!(server = name, error = %e, "no stateless era; handshake"),
            }
        }
        conn.era = Era::Handshake;
        let params = serde_json::value::to_raw_value(&serde_json::json!({
            "protocolVersion": UPSTREAM_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": era::client_info(),
        }))
        .expect("JSON serializes");
        // A stdio server is a process we started: while it lives it is
        // still starting (downloading itself, warming a venv on a busy
        // machine), and killing it to start it again only starts over
        // (issue 45 item 6). It gets `upstream_start_secs`; an exit ends the
        // wait at once.
        let handshake = match &conn.link {
            Link::Stdio(_) => limits.upstream_start_timeout().max(timeout),
            Link::Http(_) => timeout,
        };
        let result = conn
            .request_inner("initialize", Some(&params), handshake, true)
            .await?;
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitResult {
            protocol_version: String,
            #[serde(default)]
            server_info: Option<Box<RawValue>>,
            #[serde(default)]
            instructions: Option<String>,
            #[serde(default)]
            capabilities: Option<serde_json::Map<String, serde_json::Value>>,
        }
        let init: InitResult = serde_json::from_str(result.get()).map_err(|e| {
            UpstreamError::Unavailable(format!("initialize returned a malformed result: {e}"))
        })?;
        if let Link::Http(h) = &conn.link {
            h.set_protocol_version(&init.protocol_version);
        }
        conn.notify("notifications/initialized", None).await?;
        if let Link::Http(h) = &conn.link {
            h.open_listen_stream();
        }
        Ok((
            conn,
            ServerHello {
                protocol_version: init.protocol_version,
                server_info: init.server_info,
                instructions: init.instructions,
                capabilities: init
                    .capabilities
                    .map(|c| c.into_iter().map(|(k, _)| k).collect())
                    .unwrap_or_default(),
            },
        ))
    }

    /// `server/discover` in the stateless era: the server's hello if it
    /// serves 2026-07-28, else an error.
    async fn discover(&self, timeout: Duration) -> Result<ServerHello, UpstreamError> {
        let result = self
            .request_inner("server/discover", None, timeout, true)
            .await?;
        let found = era::discovered(&result).map_err(|e| {
            UpstreamError::Unavailable(format!("server/discover returned a malformed result: {e}"))
        })?;
        if !found.stateless {
            return Err(UpstreamError::Unavailable(format!(
                "server/discover does not list protocol version {}",
                era::STATELESS_VERSION
            )));
        }
        Ok(ServerHello {
            protocol_version: era::STATELESS_VERSION.to_owned(),
            server_info: found.server_info,
            instructions: found.instructions,
            capabilities: found.capabilities,
        })
    }

    /// The era this connection speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Sends a request and waits (at most `timeout`) for its result.
    pub async fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, UpstreamError> {
        self.request_inner(method, params, timeout, false).await
    }

    async fn request_inner(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Duration,
        initializing: bool,
    ) -> Result<Box<RawValue>, UpstreamError> {
        let _in_flight = self.relays.in_flight();
        // The one place a request is put into the connection's era.
        let out = if method == "initialize" {
            era::Outgoing {
                params: params.map(std::borrow::Cow::Borrowed),
                http_headers: Vec::new(),
            }
        } else {
            era::outgoing(self.era, method, params)
        };
        let params = out.params.as_deref();
        match &self.link {
            Link::Stdio(s) => s.request(method, params, timeout).await,
            Link::Http(h) => {
                h.request(method, params, timeout, initializing, &out.http_headers)
                    .await
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), UpstreamError> {
        match &self.link {
            Link::Stdio(s) => s.notify(method, params).await,
            Link::Http(h) => h.notify(method, params).await,
        }
    }

    /// Every tool the upstream lists (following `nextCursor`), raw — within
    /// `caps` in all: a listing that outgrows them (pages without end, a huge
    /// surface) is refused whole, and the server is not served.
    pub async fn list_tools(
        &self,
        timeout: Duration,
        caps: crate::config::ListCaps,
    ) -> Result<Vec<Box<RawValue>>, UpstreamError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Page {
            tools: Vec<Box<RawValue>>,
            #[serde(default)]
            next_cursor: Option<String>,
        }
        let mut tools = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = cursor.as_ref().map(|c| {
                serde_json::value::to_raw_value(&serde_json::json!({ "cursor": c }))
                    .expect("JSON serializes")
            });
            let result = self
                .request("tools/list", params.as_deref(), timeout)
                .await?;
            let page: Page = serde_json::from_str(result.get()).map_err(|e| {
                UpstreamError::Unavailable(format!("tools/list returned a malformed result: {e}"))
            })?;
            bytes = bytes.saturating_add(page.tools.iter().map(|t| t.get().len()).sum::<usize>());
            tools.extend(page.tools);
            if bytes > caps.max_bytes || tools.len() > caps.max_items {
                return Err(UpstreamError::Unavailable(format!(
                    "tools/list is larger than the gateway accepts ({} tools, {bytes} bytes so far; limits.max_tools = {}, limits.max_tools_list_bytes = {})",
                    tools.len(),
                    caps.max_items,
                    caps.max_bytes
                )));
            }
            match page.next_cursor {
                Some(c) if !c.is_empty() => cursor = Some(c),
                _ => return Ok(tools),
            }
        }
        Err(UpstreamError::Unavailable(
            "tools/list did not end after 1000 pages".into(),
        ))
    }

    /// Ends the connection (kills a child process, deletes an HTTP session).
    pub async fn close(&self) {
        match &self.link {
            Link::Stdio(s) => s.close(),
            Link::Http(h) => h.close().await,
        }
    }
}

/// Backoff between reconnect attempts: 250 ms doubling to 30 s.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250u64.saturating_mul(1 << attempt.min(7))).min(Duration::from_secs(30))
}

/// The state of an upstream's link, for status displays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    /// Connected and listed; `stale` names the listings that answered with
    /// an error last time and are served as last listed.
    Up {
        stale: Vec<StaleListing>,
    },
    Down {
        error: String,
        retry_in: Duration,
    },
}

/// A content listing (`prompts/list`, `resources/list`, ...) that answered
/// with an error while the rest of the server listed (issue 45 item 6): its
/// last answer is kept and pinned in its place, and the error is shown with
/// the server until a listing succeeds again. One broken listing is not a
/// reason to take a server's tools down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleListing {
    /// The listing's method.
    pub method: &'static str,
    /// What the upstream answered (its code and message).
    pub error: String,
}

/// A watch on an upstream's link state.
pub type LinkWatch = watch::Receiver<LinkState>;
