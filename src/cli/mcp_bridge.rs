//! `interlock mcp`: a stdio MCP server that bridges to a running gateway, for
//! clients that spawn their servers (newline-delimited JSON-RPC on
//! stdin/stdout). Messages are relayed as they are, byte for byte; the bridge
//! only adds the API key and the session id. An answer the gateway streams as
//! SSE is relayed event by event (each event's message on its own line), and
//! an HTTP error becomes a JSON-RPC error for the request it answers.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use interlock_gateway::jsonrpc::{self, code};
use interlock_gateway::sse::SseParser;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest JSON-RPC message read from one SSE event (the gateway's
/// default `max_upstream_message_bytes`).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The gateway's MCP endpoint.
    #[arg(
        long,
        env = "INTERLOCK_GATEWAY_URL",
        default_value = "http://127.0.0.1:8717/mcp"
    )]
    url: String,
    /// The agent API key (prefer the environment variable: argv is visible to
    /// other users of the machine).
    #[arg(long, env = "INTERLOCK_API_KEY", hide_env_values = true)]
    key: String,
}

#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

struct Bridge {
    client: reqwest::Client,
    url: String,
    key: String,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

impl Bridge {
    async fn relay(&self, line: Vec<u8>) {
        let (id, is_init) = match serde_json::from_slice::<Envelope>(&line) {
            Ok(e) => (
                e.id.map(|i| i.to_owned()),
                e.method == Some("initialize") && e.params.is_some(),
            ),
            Err(e) => {
                let _ = self.out.send(jsonrpc::error(
                    None,
                    code::PARSE_ERROR,
                    &format!("not JSON-RPC: {e}"),
                ));
                return;
            }
        };
        let mut req = self
            .client
            .post(&self.url)
            .bearer_auth(&self.key)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(line);
        if let Some(s) = self.session.lock().expect("lock").clone() {
            req = req.header("mcp-session-id", s);
        }
        if let Some(v) = self.version.lock().expect("lock").clone() {
            req = req.header("mcp-protocol-version", v);
        }
        let fail = |msg: String| {
            if let Some(id) = &id {
                let _ = self
                    .out
                    .send(jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &msg));
            }
        };
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                return fail(format!(
                    "cannot reach the Interlock gateway at {}: {e}",
                    self.url
                ));
            }
        };
        if is_init
            && let Some(s) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().expect("lock") = Some(s.to_owned());
        }
        let status = resp.status();
        if status == reqwest::StatusCode::ACCEPTED {
            return;
        }
        let is_sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
        if status.is_success() && is_sse {
            return self.relay_sse(resp, id.as_deref(), is_init).await;
        }
        let body = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => return fail(format!("the gateway's answer broke off: {e}")),
        };
        if !status.is_success() {
            // The gateway's own JSON-RPC error for this request (e.g. a 401
            // with the request's id) says most; anything else (an id-less
            // error, a proxy's HTML page) is turned into an error for this id,
            // so the client is never left waiting. A notification gets nothing.
            if let Some(id) = &id
                && answers(&body, id)
            {
                let _ = self.out.send(body.to_vec());
            } else {
                let text = String::from_utf8_lossy(&body);
                let snippet: String = text.chars().take(200).collect();
                fail(format!(
                    "the Interlock gateway answered HTTP {status}: {}",
                    snippet.trim()
                ));
            }
            return;
        }
        if is_init {
            self.remember_version(&body);
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok() {
            let _ = self.out.send(body.to_vec());
        } else {
            fail(format!(
                "the gateway answered something that is not JSON ({} bytes)",
                body.len()
            ));
        }
    }

    /// An SSE answer (the gateway streams one when the call carries a
    /// progress token, or has notifications to send before its response):
    /// each event's JSON-RPC message goes to stdout as it arrives, in order —
    /// notifications, then the response. Events are read by the gateway's own
    /// SSE parser. A stream that ends before the response arrived gets an error
    /// for the request, so the client neither waits forever nor sees the call
    /// as failed when its response did arrive.
    async fn relay_sse(&self, mut resp: reqwest::Response, id: Option<&RawValue>, is_init: bool) {
        let mut parser = SseParser::new(MAX_MESSAGE);
        let mut answered = false;
        let mut broke_off = None;
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    broke_off = Some(format!("the gateway's answer broke off: {e}"));
                    break;
                }
            };
            for event in parser.feed(&chunk) {
                let data = match event {
                    Ok(e) if e.data.iter().all(u8::is_ascii_whitespace) => continue,
                    Ok(e) => e.data,
                    Err(e) => {
                        broke_off = Some(format!("the gateway sent {e}"));
                        continue;
                    }
                };
                if serde_json::from_slice::<serde::de::IgnoredAny>(&data).is_err() {
                    broke_off = Some(format!(
                        "the gateway sent an event that is not JSON ({} bytes)",
                        data.len()
                    ));
                    continue;
                }
                if let Some(id) = id
                    && answers(&data, id)
                {
                    answered = true;
                    if is_init {
                        self.remember_version(&data);
                    }
                }
                let _ = self.out.send(data);
            }
        }
        if let Some(id) = id
            && !answered
        {
            let why = broke_off
                .unwrap_or_else(|| "the gateway's answer ended without a response".to_owned());
            let _ = self
                .out
                .send(jsonrpc::error(Some(id), code::UPSTREAM_UNAVAILABLE, &why));
        }
    }

    fn remember_version(&self, body: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body)
            && let Some(pv) = v["result"]["protocolVersion"].as_str()
        {
            *self.version.lock().expect("lock") = Some(pv.to_owned());
        }
    }
}

/// Whether `msg` is the JSON-RPC response (a result or an error, no method)
/// to the request with `id`.
fn answers(msg: &[u8], id: &RawValue) -> bool {
    serde_json::from_slice::<Envelope>(msg)
        .is_ok_and(|e| e.method.is_none() && e.id.is_some_and(|i| i.get() == id.get()))
}

pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let (out, mut outbox) = mpsc::unbounded_channel::<Vec<u8>>();
    let bridge = Arc::new(Bridge {
        client: reqwest::Client::builder().build().context("HTTP client")?,
        url: args.url,
        key: args.key,
        session: Mutex::new(None),
        version: Mutex::new(None),
        out,
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut msg) = outbox.recv().await {
            msg.retain(|&b| b != b'\n');
            msg.push(b'\n');
            if stdout.write_all(&msg).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).split(b'\n');
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_segment().await? {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let is_init =
            serde_json::from_slice::<Envelope>(&line).is_ok_and(|e| e.method == Some("initialize"));
        if is_init {
            // The session must exist before anything else is relayed.
            bridge.relay(line).await;
        } else {
            let b = Arc::clone(&bridge);
            tasks.spawn(async move { b.relay(line).await });
        }
    }
    while tasks.join_next().await.is_some() {}
    drop(bridge);
    let _ = writer.await;
    Ok(ExitCode::SUCCESS)
}
