//! `interlock mcp`: a stdio MCP server that bridges to a running gateway, for
//! clients that spawn their servers (newline-delimited JSON-RPC on
//! stdin/stdout). Messages are relayed as they are, byte for byte; the bridge
//! only adds the API key and the session id.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use interlock_gateway::jsonrpc::{self, code};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

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
        if resp.status() == reqwest::StatusCode::ACCEPTED {
            return;
        }
        let body = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => return fail(format!("the gateway's answer broke off: {e}")),
        };
        if is_init
            && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
            && let Some(pv) = v["result"]["protocolVersion"].as_str()
        {
            *self.version.lock().expect("lock") = Some(pv.to_owned());
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
