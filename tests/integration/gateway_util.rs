//! A running `interlock serve` with real upstreams, the real MCP client drivers
//! (Python SDK, TypeScript SDK) from `tests/peers`, and raw HTTP for what a
//! client library would refuse to send.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{interlock_with, stderr, stdout};

/// A path from `scripts/peers.sh`'s environment (scripts/test exports it).
pub fn peer(var: &str) -> PathBuf {
    let v = std::env::var_os(var).unwrap_or_else(|| {
        panic!("${var} is not set: run the tests through scripts/test (it runs scripts/peers.sh)")
    });
    PathBuf::from(v)
}

pub fn node_module(rel: &str) -> String {
    peer("INTERLOCK_PEERS_NODE_MODULES")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

pub fn peers_dir() -> PathBuf {
    peer("INTERLOCK_PEERS_DIR")
}

/// One gateway process with its own data directory and keychain service.
pub struct Gateway {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub addr: String,
    pub agent_key: String,
    env: Vec<(String, String)>,
    child: Option<Child>,
}

impl Gateway {
    /// Initializes an approver key and an agent key, writes `gateway.toml`
    /// (`listen` on a free loopback port, plus `config`), and starts serving.
    pub fn start(config: &str) -> Gateway {
        Gateway::start_wrapped(config, &[])
    }

    /// [`Gateway::start`], with `interlock serve` run through `wrapper` (a
    /// command that ends by exec'ing its arguments, so the process id stays).
    pub fn start_wrapped(config: &str, wrapper: &[&str]) -> Gateway {
        Gateway::start_with(config, wrapper, None)
    }

    /// [`Gateway::start`] with `policy` (YAML) as the policy in force
    /// (`<data dir>/policy.yaml`).
    pub fn start_with_policy(config: &str, policy: &str) -> Gateway {
        Gateway::start_with(config, &[], Some(policy))
    }

    /// [`Gateway::start`] with `extra` in the environment of `interlock serve`
    /// and of its CLI calls (a sink's `secret_env`, say).
    pub fn start_with_env(config: &str, extra: &[(&str, &str)]) -> Gateway {
        Gateway::start_full(config, &[], None, extra, false, &mut |_| {})
    }

    fn start_with(config: &str, wrapper: &[&str], policy: Option<&str>) -> Gateway {
        Gateway::start_full(config, wrapper, policy, &[], false, &mut |_| {})
    }

    /// [`Gateway::start_wrapped`] on a SQLite file whatever the run, for what
    /// only an embedded database shows (the gateway's own file-size limit
    /// filling its disk).
    pub fn start_wrapped_on_sqlite(config: &str, wrapper: &[&str]) -> Gateway {
        Gateway::start_full(config, wrapper, None, &[], true, &mut |_| {})
    }

    /// [`Gateway::start`] on a SQLite file, with `extra` in its environment,
    /// in a data directory `prepare` makes first (issue 44: it mounts the
    /// fault filesystem there).
    pub fn start_on_prepared_data(
        config: &str,
        extra: &[(&str, &str)],
        prepare: &mut dyn FnMut(&Path),
    ) -> Gateway {
        Gateway::start_full(config, &[], None, extra, true, prepare)
    }

    fn start_full(
        config: &str,
        wrapper: &[&str],
        policy: Option<&str>,
        extra: &[(&str, &str)],
        sqlite_only: bool,
        prepare: &mut dyn FnMut(&Path),
    ) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        prepare(&data);
        let env: Vec<(String, String)> = [
            (
                "INTERLOCK_DATA_DIR".to_owned(),
                data.to_string_lossy().into_owned(),
            ),
            (
                "INTERLOCK_KEYCHAIN_SERVICE".to_owned(),
                format!("interlock-gw-test-{}-{}", std::process::id(), rand_suffix()),
            ),
        ]
        .into_iter()
        // On a Postgres run ($INTERLOCK_TEST_POSTGRES), a database of its own
        // for this gateway, which its CLI commands share
        // ($INTERLOCK_DATABASE_URL).
        .chain(
            interlock_store::testing::test_postgres()
                .filter(|_| !sqlite_only)
                .map(|_| {
                    let db =
                        interlock_store::testing::fresh_location_blocking(&data.join("unused"));
                    let interlock_store::StoreLocation::Postgres(url) = db else {
                        unreachable!("a Postgres run gives a Postgres database")
                    };
                    ("INTERLOCK_DATABASE_URL".to_owned(), url)
                }),
        )
        .chain(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        )
        .collect();
        let mut gw = Gateway {
            dir,
            url: String::new(),
            addr: String::new(),
            agent_key: String::new(),
            env,
            child: None,
        };
        let out = gw.cli(&["keys", "init", "--identity", "human:reviewer"]);
        assert!(out.status.success(), "keys init: {}", stderr(&out));
        let out = gw.cli(&["agents", "add", "builder"]);
        assert!(out.status.success(), "agents add: {}", stderr(&out));
        gw.agent_key = stdout(&out).trim().to_owned();
        if let Some(policy) = policy {
            std::fs::write(gw.data().join("policy.yaml"), policy).unwrap();
        }
        let config_path = gw.dir.path().join("gateway.toml");
        // A config that names its own `listen` (a fixed port, kept across
        // `restart`) keeps it; otherwise any free port.
        let listen = if config.starts_with("listen") {
            ""
        } else {
            "listen = \"127.0.0.1:0\"\n"
        };
        std::fs::write(&config_path, format!("{listen}{config}")).unwrap();
        gw.serve(wrapper);
        gw
    }

    /// Starts `interlock serve` on the gateway's config and data directory
    /// (through `wrapper`, as [`Gateway::start_wrapped`] says).
    fn serve(&mut self, wrapper: &[&str]) {
        let gw = self;
        let config_path = gw.dir.path().join("gateway.toml");
        let bin = env!("CARGO_BIN_EXE_interlock");
        let mut cmd = match wrapper {
            [] => Command::new(bin),
            [first, rest @ ..] => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin);
                c
            }
        };
        cmd.args(["serve", "--config", config_path.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(gw.dir.path().join("serve.log")).unwrap(),
            ));
        for (k, v) in &gw.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("interlock serve starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let base = first
            .trim()
            .strip_prefix("interlock gateway listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}; log: {}", gw.log()))
            .to_owned();
        gw.addr = base.trim_start_matches("http://").to_owned();
        gw.url = format!("{base}/mcp");
        gw.child = Some(child);
    }

    /// A second gateway process sharing `first`'s database and keychain
    /// service (so its log key: the gateways of a team append to one log,
    /// signed by one key), with a data directory, admin socket and port of its
    /// own — another machine of the team, in effect. On a Postgres run the
    /// database is `first`'s Postgres database; otherwise `first`'s SQLite file,
    /// named by URL. Its workspace is `first`'s (a volume both machines
    /// mount), so a plan names the same files on either. It serves `config`
    /// with `first`'s agent key.
    pub fn start_beside(first: &Gateway, config: &str) -> Gateway {
        let mut gw = Gateway::beside(first, config, None);
        gw.serve(&[]);
        gw
    }

    /// A team member's machine joining `first`'s database: as
    /// [`Gateway::start_beside`], but with a keychain of its own, so it has no
    /// log key yet (it must receive the team's), and not started
    /// ([`Gateway::start_serving`]).
    pub fn joining(first: &Gateway, config: &str) -> Gateway {
        let service = format!("interlock-gw-join-{}-{}", std::process::id(), rand_suffix());
        Gateway::beside(first, config, Some(service))
    }

    /// Starts `interlock serve` for a gateway made by [`Gateway::joining`].
    pub fn start_serving(&mut self) {
        self.serve(&[]);
    }

    fn beside(first: &Gateway, config: &str, keychain: Option<String>) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::os::unix::fs::symlink(first.data().join("workspace"), data.join("workspace")).unwrap();
        let database = match first.database_url() {
            Some(url) => url.to_owned(),
            None => format!(
                "sqlite://{}",
                first.data().join("interlock.sqlite").display()
            ),
        };
        let own_keychain = keychain.is_some();
        let env = first
            .env
            .iter()
            .filter(|(k, _)| {
                k != "INTERLOCK_DATA_DIR"
                    && k != "INTERLOCK_DATABASE_URL"
                    && !(own_keychain && k == "INTERLOCK_KEYCHAIN_SERVICE")
            })
            .cloned()
            .chain([
                (
                    "INTERLOCK_DATA_DIR".to_owned(),
                    data.to_string_lossy().into_owned(),
                ),
                ("INTERLOCK_DATABASE_URL".to_owned(), database),
            ])
            .chain(keychain.map(|k| ("INTERLOCK_KEYCHAIN_SERVICE".to_owned(), k)))
            .collect();
        let gw = Gateway {
            dir,
            url: String::new(),
            addr: String::new(),
            agent_key: first.agent_key.clone(),
            env,
            child: None,
        };
        let listen = if config.starts_with("listen") {
            ""
        } else {
            "listen = \"127.0.0.1:0\"\n"
        };
        std::fs::write(
            gw.dir.path().join("gateway.toml"),
            format!("{listen}{config}"),
        )
        .unwrap();
        gw
    }

    /// Stops `interlock serve` and starts it again on the same data
    /// directory and config (it listens on a new port).
    pub fn restart(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.serve(&[]);
    }

    /// Whether `interlock serve` has ended by itself (or was never started).
    pub fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| c.try_wait().ok().flatten().is_some())
    }

    /// Kills `interlock serve` (as a crash would: nothing is cleaned up).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The environment the gateway's CLI calls use (for other threads).
    /// `interlock audit verify` on the gateway's log passes.
    pub fn assert_audit_clean(&self) {
        let audit = self.cli(&["audit", "verify"]);
        assert!(
            audit.status.success(),
            "{}{}",
            stdout(&audit),
            stderr(&audit)
        );
    }

    /// The `interlock serve` process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("serving").id()
    }

    pub fn env_for_thread(&self) -> Vec<(String, String)> {
        self.env.clone()
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The Postgres database of this gateway on a Postgres run
    /// (`$INTERLOCK_TEST_POSTGRES`); `None` on SQLite (`data()/interlock.sqlite`).
    pub fn database_url(&self) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == "INTERLOCK_DATABASE_URL")
            .map(|(_, v)| v.as_str())
    }

    /// The value of one of the gateway's environment variables (its data
    /// directory, its keychain service).
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The gateway's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }

    /// `interlock KIND approve ID --hash H` with the hash `KIND show ID` prints now.
    pub fn approve(&self, kind: &str, id: &str, reason: &str) -> std::process::Output {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        crate::util::approve_as_shown(kind, id, reason, &[], &env)
    }

    pub fn cli(&self, args: &[&str]) -> std::process::Output {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        interlock_with(args, None, &env)
    }

    /// Waits until `interlock servers list` shows `name` with `status`.
    pub fn wait_for_server(&self, name: &str, status: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = self.cli(&["servers", "list"]);
            let listed = stdout(&out);
            if listed
                .lines()
                .any(|l| l.split_whitespace().take(2).eq([name, status]))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "server {name} never became {status}: {listed}\n{}\ngateway log:\n{}",
                stderr(&out),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn approve_server(&self, name: &str) {
        let out = self.approve("servers", name, "reviewed every tool");
        assert!(
            out.status.success(),
            "approve: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }

    /// Waits until the agent's `tools/list` has (or lacks) `tool`.
    ///
    /// As long as `wait_for_server`: once, on CI with the fault campaigns
    /// loading both cores, a restarted gateway's upstream (a sandboxed Python
    /// server) had not served its tool after 30 s (2026-12-07; the report cut
    /// the gateway's log; 21 runs here under load did not repeat it). On
    /// 2026-12-08 it recurred at 60 s with the log whole: the reload loop had
    /// installed an empty listing over the upstream's first one, 0.6 ms later
    /// (fixed in `Pins::install_keeping_listing`).
    pub fn wait_for_tool(&self, tool: &str, present: bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let listed = self.list_tools();
            if tool_names(&listed).iter().any(|t| t == tool) == present {
                return listed;
            }
            assert!(
                Instant::now() < deadline,
                "tool {tool} never became present={present}: {listed}\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `tools/list` through raw JSON-RPC (one stateless request).
    pub fn list_tools(&self) -> Value {
        let (status, _, body) = self.rpc("tools/list", serde_json::json!({}));
        assert_eq!(status, 200, "{body}");
        body["result"].clone()
    }

    /// One stateless (2026-07-28) JSON-RPC request with the agent key.
    pub fn rpc(&self, method: &str, params: Value) -> (u16, Vec<(String, String)>, Value) {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (status, headers, bytes) = self
            .post_mcp(&body)
            .unwrap_or_else(|e| panic!("{method} on {}: {e}", self.addr));
        (
            status,
            headers,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// POSTs a JSON-RPC message to `/mcp` as the agent.
    fn post_mcp(&self, body: &Value) -> Result<HttpResponse, String> {
        try_http(
            &self.addr,
            "POST",
            "/mcp",
            &[
                ("Authorization", &format!("Bearer {}", self.agent_key)),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2026-07-28"),
            ],
            &serde_json::to_vec(body).unwrap(),
        )
    }

    /// `tools/call` that returns `None` when the gateway is gone or the
    /// answer was cut (a gateway killed meanwhile), and the JSON-RPC
    /// response otherwise.
    pub fn try_call(&self, tool: &str, arguments: Value) -> Option<Value> {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let (status, _, bytes) = self.post_mcp(&body).ok()?;
        (status == 200).then(|| serde_json::from_slice(&bytes).ok())?
    }

    /// A new reviewer API key.
    pub fn reviewer_key(&self) -> String {
        let out = self.cli(&["reviewers", "add", "ui"]);
        assert!(out.status.success(), "reviewers add: {}", stderr(&out));
        stdout(&out).trim().to_owned()
    }

    /// `GET path` on the reviewer API; panics unless 200.
    pub fn api_get(&self, key: &str, path: &str) -> Value {
        let (status, _, body) = http(
            &self.addr,
            "GET",
            path,
            &[("Authorization", &format!("Bearer {key}"))],
            b"",
        );
        assert_eq!(
            status,
            200,
            "GET {path}: {}",
            String::from_utf8_lossy(&body)
        );
        serde_json::from_slice(&body).unwrap()
    }

    /// Polls `GET /api/v1/servers/{name}` until `done` holds on the view. A
    /// 404 is "not yet": `servers list` reads the row as soon as it is
    /// inserted, a moment before the gateway serves its view (this raced in CI).
    pub fn server_view_until(
        &self,
        key: &str,
        name: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        let path = format!("/api/v1/servers/{name}");
        loop {
            let (status, _, body) = http(
                &self.addr,
                "GET",
                &path,
                &[("Authorization", &format!("Bearer {key}"))],
                b"",
            );
            assert!(
                status == 200 || status == 404,
                "GET {path}: {status} {}",
                String::from_utf8_lossy(&body)
            );
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if status == 200 && done(&v) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "server {name} never {what}: {v}\ngateway log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// Runs a client driver (`py` or `mjs`) with `args`; returns its JSON output.
    pub fn client(&self, which: &str, args: &[&str]) -> Value {
        client(which, &self.url, Some(&self.agent_key), args)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        % 1_000_000_007
}

pub fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `POST /mcp` with the agent key `key`, JSON in, JSON or SSE accepted, and
/// `extra` headers (a session id, a protocol version).
pub fn post_mcp(
    addr: &str,
    key: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let auth = format!("Bearer {key}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &headers, body)
}

/// Runs `tests/peers/client.{py,mjs} --url URL [--key K] ARGS`.
pub fn client(which: &str, url: &str, key: Option<&str>, args: &[&str]) -> Value {
    let mut cmd = match which {
        "py" => {
            let mut c = Command::new(peer("INTERLOCK_PEERS_PYTHON"));
            c.arg(peer("INTERLOCK_PEERS_CLIENT_PY"));
            c
        }
        "mjs" => {
            let mut c = Command::new(peer("INTERLOCK_PEERS_NODE"));
            c.arg(peer("INTERLOCK_PEERS_CLIENT_MJS"));
            c
        }
        other => panic!("no client {other}"),
    };
    cmd.args(["--url", url]);
    if let Some(k) = key {
        cmd.args(["--key", k]);
    }
    cmd.args(args);
    let out = cmd.output().expect("the client driver runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{which} client printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// One HTTP/1.1 request over a fresh connection; returns status, headers, body.
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    try_http(addr, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {path} on {addr}: {e}"))
}

/// An HTTP answer: status, lower-cased headers, body.
pub type HttpResponse = (u16, Vec<(String, String)>, Vec<u8>);

/// [`http`] that reports a refused connection or a cut response instead of
/// panicking: for calls to a gateway that may be killed meanwhile.
pub fn try_http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<HttpResponse, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connecting: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())
        .map_err(|e| format!("sending: {e}"))?;
    // The server may answer (413) before reading a huge body: ignore a broken pipe.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no HTTP response: {:?}", String::from_utf8_lossy(&raw)))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line: {head:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body).ok_or("a chunked body cut short")?;
    }
    Ok((status, headers, body))
}

/// The body of a chunked response; `None` if it was cut mid-chunk.
fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(nl) = b.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&b[..nl])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(b.get(nl + 2..nl + 2 + size)?);
        b = b.get(nl + 2 + size + 2..).unwrap_or_default();
    }
    Some(out)
}

/// A free loopback port (bind 0, read it, release it).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A one-stage plan (`propose_plan`'s arguments) that writes "x" to `file` in
/// the gateway's workspace, checked before and after.
pub fn write_file_plan(gw: &Gateway, plan_id: &str, title: &str, file: &str) -> Value {
    serde_json::json!({"plan": {
        "schema_version": "interlock.plan/v1", "plan_id": plan_id, "title": title,
        "created_at": "2026-11-30T10:00:00Z", "description": "d",
        "body": {"stages": [{"id": "w", "action": "fs.write_file",
            "target": gw.data().join("workspace").join(file).to_str().unwrap(),
            "params": {"content": "x"}, "preconditions": [{"probe": "fs.path_absent"}],
            "verify": [{"probe": "fs.file_contains", "params": {"text": "x"}}], "rollback": "Delete it."}]}
    }})
}

/// Issue 44's Postgres faults: gateways on a database the test owns (its own
/// cluster, reached directly or through a proxy), whatever the run.
impl Gateway {
    /// [`Gateway::start`] on the Postgres database `url` (not the run's
    /// `$INTERLOCK_TEST_POSTGRES`, which a SQLite run has not).
    pub fn start_on_database(config: &str, url: &str) -> Gateway {
        Gateway::start_on_prepared_data(config, &[("INTERLOCK_DATABASE_URL", url)], &mut |_| {})
    }

    /// [`Gateway::start_beside`] `first`, reaching the team's database at
    /// `url`: the same database by another route (a proxy of its own).
    pub fn start_beside_on(first: &Gateway, config: &str, url: &str) -> Gateway {
        let mut gw = Gateway::beside(first, config, None);
        gw.env.retain(|(k, _)| k != "INTERLOCK_DATABASE_URL");
        gw.env
            .push(("INTERLOCK_DATABASE_URL".to_owned(), url.to_owned()));
        gw.serve(&[]);
        gw
    }
}
