//! What the gateway benches share (`gateway_proxy`, `alerts_delivery`): a minimal
//! but real MCP Streamable HTTP upstream, the MCP client both drive, the
//! gateway started and stopped through the CLI, and CPU read from /proc.

// Each bench uses its own part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::PROTOCOL;

// The upstream: a minimal but real MCP Streamable HTTP server.

static UPSTREAM_SESSIONS: AtomicU64 = AtomicU64::new(1);

#[derive(Deserialize)]
pub struct UpMsg<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub struct CallParams {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<EchoArgs>,
}

#[derive(Deserialize)]
pub struct EchoArgs {
    pub message: String,
}

pub fn up_json(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

pub fn up_result(id: &RawValue, result: serde_json::Value) -> Response {
    up_json(serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap())
}

pub fn up_error(id: Option<&RawValue>, code: i64, message: &str) -> Response {
    up_json(
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        )
        .unwrap(),
    )
}

pub async fn upstream_post(_headers: HeaderMap, body: Bytes) -> Response {
    let Ok(msg) = serde_json::from_slice::<UpMsg>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON-RPC").into_response();
    };
    let Some(id) = msg.id else {
        // A notification (notifications/initialized, …) or a response.
        return StatusCode::ACCEPTED.into_response();
    };
    match msg.method.as_deref().unwrap_or("") {
        "initialize" => {
            let sid = format!(
                "upstream-session-{}",
                UPSTREAM_SESSIONS.fetch_add(1, Ordering::Relaxed)
            );
            let mut r = up_result(
                id,
                json!({
                    "protocolVersion": PROTOCOL,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bench-upstream", "version": "1.0.0"},
                }),
            );
            r.headers_mut()
                .insert("mcp-session-id", HeaderValue::from_str(&sid).unwrap());
            r
        }
        "ping" => up_result(id, json!({})),
        "tools/list" => up_result(
            id,
            json!({"tools": [{
                "name": "echo",
                "description": "Echoes back the message",
                "inputSchema": {
                    "type": "object",
                    "properties": {"message": {"type": "string", "description": "Text to echo"}},
                    "required": ["message"],
                    "additionalProperties": false,
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
            }]}),
        ),
        "tools/call" => {
            let Some(p) = msg
                .params
                .and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok())
            else {
                return up_error(Some(id), -32602, "tools/call needs {name, arguments}");
            };
            match (p.name.as_str(), p.arguments) {
                ("echo", Some(a)) => up_result(
                    id,
                    json!({"content": [{"type": "text", "text": a.message}]}),
                ),
                _ => up_error(Some(id), -32602, "unknown tool or missing message"),
            }
        }
        other => up_error(Some(id), -32601, &format!("no method {other}")),
    }
}

/// Starts the upstream on its own runtime thread; returns its address.
pub fn start_upstream() -> std::net::SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("upstream".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("upstream-rt")
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                use axum::routing::post;
                use axum::serve::ListenerExt as _;
                let app = axum::Router::new().route(
                    "/mcp",
                    post(upstream_post)
                        .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                        .delete(|| async { StatusCode::OK }),
                );
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                axum::serve(listener, app).await.unwrap();
            });
        })
        .unwrap();
    rx.recv().unwrap()
}

#[derive(Clone)]
pub struct McpClient {
    pub http: reqwest::Client,
    pub url: String,
    pub auth: Option<String>,
    pub session: Option<String>,
    pub next_id: u64,
}

impl McpClient {
    pub fn new(http: reqwest::Client, url: String, auth: Option<String>) -> McpClient {
        McpClient {
            http,
            url,
            auth,
            session: None,
            next_id: 1,
        }
    }

    pub async fn post(&self, body: String) -> Result<(StatusCode, HeaderMap, Bytes), String> {
        let mut req = self
            .http
            .post(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(body);
        if let Some(a) = &self.auth {
            req = req.header(header::AUTHORIZATION, a);
        }
        if let Some(s) = &self.session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", PROTOCOL);
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
        Ok((status, headers, bytes))
    }

    pub async fn initialize(&mut self) -> Result<(), String> {
        self.session = None;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"gateway-proxy-bench","version":"1.0.0"}}}}}}"#
        );
        let (status, headers, bytes) = self.post(body).await?;
        if status != StatusCode::OK {
            return Err(format!(
                "initialize: HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        self.session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let (status, _, bytes) = self
            .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned())
            .await?;
        if status != StatusCode::ACCEPTED {
            return Err(format!(
                "notifications/initialized: HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        Ok(())
    }

    pub async fn request(&mut self, method: &str, params: &str) -> Result<Bytes, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let (status, _, bytes) = self.post(body).await?;
        if status != StatusCode::OK || !contains(&bytes, b"\"result\"") {
            return Err(format!(
                "{method}: HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        Ok(bytes)
    }

    /// One `tools/call` with `params` (pre-built `{"name":…,"arguments":…}`).
    pub async fn call(&mut self, params: &str) -> Result<Bytes, String> {
        self.request("tools/call", params).await
    }
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(64)
        .no_proxy()
        .build()
        .unwrap()
}

/// Nearest-rank percentile of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// utime + stime of a process, in clock ticks (every thread, live or exited).
pub fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

pub struct Cpu<'a> {
    pub pid: &'a str,
    pub ticks: u64,
}

impl<'a> Cpu<'a> {
    pub fn start(pid: &'a str) -> Cpu<'a> {
        Cpu {
            pid,
            ticks: cpu_ticks(pid),
        }
    }

    /// CPU milliseconds per call since `start`.
    pub fn ms_per_call(&self, calls: u64, clk_tck: f64) -> f64 {
        (cpu_ticks(self.pid) - self.ticks) as f64 * 1e3 / clk_tck / calls as f64
    }
}

/// The `interlock` binary under test: this build's, or `GATEWAY_PROXY_BIN` (an
/// older build kept aside, to compare two builds in alternating runs).
pub fn bin() -> String {
    std::env::var("GATEWAY_PROXY_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_interlock").to_owned())
}

pub fn cli(env: &[(&str, String)], args: &[&str]) -> String {
    let out = Command::new(bin())
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run interlock");
    if !out.status.success() {
        panic!(
            "interlock {}: {}\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).expect("utf-8")
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Served {
    pub child: Child,
    pub addr: String,
}

pub fn start_gateway(env: &[(&str, String)], config: &Path, log: &Path) -> Served {
    let mut child = Command::new(bin())
        .args(["serve", "--config"])
        .arg(config)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("spawn interlock serve");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let Some(addr) = line
        .trim()
        .strip_prefix("interlock gateway listening on http://")
    else {
        let _ = child.kill();
        panic!(
            "interlock serve did not start: {line:?}\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    };
    let addr = addr.to_owned();
    // Keep draining stdout so the gateway never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = out.read_to_end(&mut sink);
    });
    Served { child, addr }
}

pub fn stop_gateway(mut s: Served) {
    let _ = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if let Ok(Some(_)) = s.child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = s.child.kill();
    let _ = s.child.wait();
}

pub fn poll<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Approves `server` at the surface the gateway observed (`interlock servers
/// show`), once the gateway lists it.
pub fn approve(env: &[(&str, String)], server: &str) {
    poll("the server listed", Duration::from_secs(30), || {
        cli(env, &["servers", "list"])
            .lines()
            .any(|l| l.starts_with(&format!("{server} ")))
            .then_some(())
    });
    let shown = cli(env, &["servers", "show", server]);
    let hash = shown
        .lines()
        .find_map(|l| l.strip_prefix("observed").map(str::trim))
        .expect("the observed hash")
        .to_owned();
    cli(
        env,
        &[
            "servers", "approve", server, "--reason", "bench", "--hash", &hash,
        ],
    );
}

/// Clock ticks per second, the unit of /proc's CPU times.
pub fn clk_tck() -> f64 {
    String::from_utf8(
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf CLK_TCK")
            .stdout,
    )
    .expect("UTF-8")
    .trim()
    .parse()
    .expect("CLK_TCK")
}

/// A running `interlock witness serve`, stopped when dropped.
pub struct Witness {
    pub child: Child,
    pub addr: String,
    pub vkey: String,
}

impl Drop for Witness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `n` witnesses cosigning for the log of `env`'s data directory
/// (which must exist: its key is read from an exported bundle), each with a
/// data directory of its own under `dir`.
pub fn start_witnesses(env: &[(&str, String)], dir: &Path, n: usize) -> Vec<Witness> {
    if n == 0 {
        return Vec::new();
    }
    let bundle = dir.join("witness-bundle");
    cli(env, &["receipts", "export", bundle.to_str().unwrap()]);
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("bundle.json")).unwrap()).unwrap();
    let log_vkey = b["trust"]["log_key"].as_str().unwrap().to_owned();
    (1..=n)
        .map(|i| {
            let data = dir.join(format!("witness-{i}"));
            let mut child = Command::new(bin())
                .args(["--data-dir", data.to_str().unwrap()])
                .args(["witness", "serve", "--name", &format!("w{i}.bench/witness")])
                .args(["--listen", "127.0.0.1:0", "--log", &log_vkey])
                .envs(
                    env.iter()
                        .filter(|(k, _)| *k != "INTERLOCK_DATA_DIR")
                        .map(|(k, v)| (*k, v.as_str())),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn interlock witness serve");
            let mut out = BufReader::new(child.stdout.take().unwrap());
            let (mut first, mut second) = (String::new(), String::new());
            out.read_line(&mut first).unwrap();
            out.read_line(&mut second).unwrap();
            let addr = first
                .trim()
                .strip_prefix("interlock witness listening on http://")
                .unwrap_or_else(|| panic!("witness did not start: {first:?}"))
                .to_owned();
            let vkey = second
                .trim()
                .strip_prefix("witness key: ")
                .unwrap()
                .to_owned();
            Witness { child, addr, vkey }
        })
        .collect()
}

/// The checkpoint-to-cosigned times (µs) the gateway logged at debug level
/// (`interlock_gateway::witnessing`), from its log file.
pub fn cosign_micros(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("cosigned"))
        .filter_map(|l| {
            let at = l.find("micros=")? + "micros=".len();
            l[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}
