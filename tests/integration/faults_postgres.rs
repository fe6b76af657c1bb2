//! Issue 44, the Postgres faults of the fault campaign: a team's gateways on a
//! Postgres cluster the test owns, under a burst of tool calls, while
//!
//! - the Postgres server crashes (`pg_ctl stop -m immediate`) and restarts;
//! - a gateway's connections to it are cut, partitioned (bytes held, new
//!   connections left waiting) and delayed by a TCP proxy in this file;
//! - one gateway of two is cut off that way while the other is not, so the
//!   two no longer hear each other (they talk only through Postgres: its
//!   `LISTEN`/`NOTIFY` and its rows).
//!
//! What must hold after each fault: every call an agent got a success answer
//! for has its `tool.call` leaf on the log; every call the upstream received
//! has one too (its intent leaf was durable before it was forwarded; the
//! upstream's stdin is recorded by `tee`); a call the gateway could not
//! record gets a JSON-RPC error that says why, never a hang or a cut answer;
//! each gateway serves again once Postgres is back, without a restart;
//! decisions stay one-shot across the gateways; `audit verify` is clean.
//!
//! The cluster is the test's own (Debian's `initdb`/`pg_ctl`, as
//! `scripts/pg-cluster`; a Unix socket in its directory only), so these tests
//! run on a SQLite run too. `INTERLOCK_FAULT_KILLS` (the campaign's kills per
//! path) sets the faults per test as a tenth of it, at least 4 (4 in the test
//! command; `scripts/fault-campaign`'s 350 gives 35), and
//! `INTERLOCK_FAULT_SEED` replays a campaign: each test prints its seed and
//! its figures.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};
use crate::util::{stderr, stdout};

/// The campaign's size and its random points (xorshift64*: a test needs
/// replayable points, not a cryptographic generator).
struct Campaign {
    faults: usize,
    seed: u64,
    state: u64,
}

impl Campaign {
    fn new(path: &str) -> Campaign {
        let kills: usize = std::env::var("INTERLOCK_FAULT_KILLS")
            .ok()
            .and_then(|k| k.parse().ok())
            .unwrap_or(12);
        let faults = (kills / 10).max(4);
        let seed = std::env::var("INTERLOCK_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("fault campaign {path}: {faults} faults, INTERLOCK_FAULT_SEED={seed}");
        Campaign {
            faults,
            seed,
            state: seed,
        }
    }

    /// A point in `[0, max)`.
    fn point(&mut self, max: Duration) -> Duration {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let r = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let nanos = max.as_nanos().max(1) as u64;
        Duration::from_nanos(r % nanos)
    }

    /// A point in `[min, min + spread)`.
    fn between(&mut self, min: Duration, spread: Duration) -> Duration {
        min + self.point(spread)
    }
}

/// A throwaway Postgres cluster the test owns: `initdb` and `pg_ctl` of
/// Debian's newest installed Postgres, run as `postgres` when the test runs
/// as root (they refuse root), listening on a Unix socket in its directory
/// only, trust authentication, `fsync` on. Stopped at once when dropped.
struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    settings: String,
}

impl PgCluster {
    fn start() -> PgCluster {
        PgCluster::start_with("")
    }

    /// [`PgCluster::start`] with more server settings (`-c name=value …`).
    fn start_with(settings: &str) -> PgCluster {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").exists())
            .max_by_key(|b| {
                b.parent()
                    .and_then(|v| v.file_name())
                    .and_then(|v| v.to_str())
                    .and_then(|v| v.parse::<u32>().ok())
                    .unwrap_or(0)
            })
            .expect("Postgres is installed (apt-get install postgresql; scripts/setup.sh does)");
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let out = Command::new("chown")
                .args(["postgres:", dir.path().to_str().unwrap()])
                .output()
                .unwrap();
            assert!(out.status.success(), "chown: {}", stderr(&out));
        }
        let cluster = PgCluster {
            dir,
            bin,
            settings: settings.to_owned(),
        };
        let data = cluster.data();
        let out = cluster.as_owner(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
            ],
        );
        assert!(
            out.status.success(),
            "initdb: {}{}",
            stdout(&out),
            stderr(&out)
        );
        cluster.run();
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The database the gateways share, through the cluster's socket.
    fn url(&self) -> String {
        format!(
            "postgres://postgres@localhost/postgres?host={}",
            self.dir.path().display()
        )
    }

    /// The cluster's socket (what a proxy forwards to).
    fn socket(&self) -> PathBuf {
        self.dir.path().join(".s.PGSQL.5432")
    }

    fn as_owner(&self, tool: &str, args: &[&str]) -> std::process::Output {
        let exe = self.bin.join(tool);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        // The test's working directory may be closed to `postgres`.
        cmd.args(args).current_dir("/").output().unwrap()
    }

    /// Starts the server (again, after a crash: it recovers from its WAL).
    fn run(&self) {
        let options = format!(
            "-c listen_addresses='' -c unix_socket_directories='{}' -c port=5432 -c max_connections=200 {}",
            self.dir.path().display(),
            self.settings
        );
        let log = self.dir.path().join("server.log");
        let out = self.as_owner(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}\n{}",
            stdout(&out),
            stderr(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Crashes the server: `pg_ctl stop -m immediate` ends every server
    /// process at once, without a checkpoint (recovery replays the WAL).
    fn crash(&self) {
        let out = self.as_owner(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
        assert!(out.status.success(), "pg_ctl stop: {}", stderr(&out));
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self.as_owner(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// What the proxy does to the bytes it carries.
#[derive(Default)]
struct ProxyState {
    /// Partitioned: no byte moves either way and new connections wait, as
    /// when packets are lost; the connections live on (TCP retransmits), so
    /// when the partition heals their bytes move again.
    partitioned: AtomicBool,
    /// Added before every chunk forwarded.
    delay_ms: AtomicU64,
    /// The open connections' two ends, to cut.
    open: Mutex<Vec<(TcpStream, UnixStream)>>,
    connections: AtomicUsize,
    /// Set: the next `COMMIT` the gateway sends reaches the server, and its
    /// connection is cut before the answer comes back (the commit happened;
    /// the gateway cannot know).
    cut_after_commit: AtomicBool,
    /// Commits whose answer was cut so.
    commits_cut: AtomicUsize,
    /// Deaf: what the server sends on a connection that asked to `LISTEN`
    /// is held (notifications of other gateways' decisions do not arrive),
    /// while every other connection works: the gateway reaches Postgres but
    /// no longer hears the other gateways.
    deaf: AtomicBool,
}

/// A TCP proxy between a gateway and the cluster's socket that can cut every
/// connection (both ends closed, as a reset would), partition (hold every
/// byte and every new connection until healed) and delay.
struct Proxy {
    port: u16,
    state: Arc<ProxyState>,
}

impl Proxy {
    fn start(socket: &Path) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(ProxyState::default());
        let (st, socket) = (Arc::clone(&state), socket.to_owned());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (st, socket) = (Arc::clone(&st), socket.clone());
                std::thread::spawn(move || {
                    while st.partitioned.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    let Ok(server) = UnixStream::connect(&socket) else {
                        let _ = client.shutdown(Shutdown::Both);
                        return;
                    };
                    st.connections.fetch_add(1, Ordering::Relaxed);
                    st.open
                        .lock()
                        .unwrap()
                        .push((client.try_clone().unwrap(), server.try_clone().unwrap()));
                    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let st2 = Arc::clone(&st);
                    // Set when this connection is cut after a commit: the
                    // server's answer must not pass.
                    let dead = Arc::new(AtomicBool::new(false));
                    // Set once the gateway sent `LISTEN` on it.
                    let listener = Arc::new(AtomicBool::new(false));
                    let (dead2, listener2) = (Arc::clone(&dead), Arc::clone(&listener));
                    std::thread::spawn(move || pump(c2, s2, &st2, &dead2, &listener2, true));
                    pump(server, client, &st, &dead, &listener, false);
                });
            }
        });
        Proxy { port, state }
    }

    /// The cluster's database through this proxy.
    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Closes every connection open now (new ones go through).
    fn cut(&self) {
        for (c, s) in self.state.open.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn partition(&self, on: bool) {
        self.state.partitioned.store(on, Ordering::Relaxed);
    }

    fn deafen(&self, on: bool) {
        self.state.deaf.store(on, Ordering::Relaxed);
    }

    fn cut_after_next_commit(&self) {
        self.state.cut_after_commit.store(true, Ordering::Relaxed);
    }

    fn delay(&self, by: Duration) {
        self.state
            .delay_ms
            .store(by.as_millis() as u64, Ordering::Relaxed);
    }
}

/// Copies `from` to `to` chunk by chunk, holding each while partitioned and
/// for the delay; ends both when either side ends. Toward the server
/// (`to_server`), a `COMMIT` under [`ProxyState::cut_after_commit`] is
/// passed on and then both ends are closed, its answer left unread.
fn pump<R: Read + ShutdownBoth, W: Write + ShutdownBoth>(
    mut from: R,
    mut to: W,
    st: &ProxyState,
    dead: &AtomicBool,
    listener: &AtomicBool,
    to_server: bool,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to_server && buf[..n].windows(7).any(|w| w == b"LISTEN ") {
            listener.store(true, Ordering::Relaxed);
        }
        while st.partitioned.load(Ordering::Relaxed)
            || (!to_server && listener.load(Ordering::Relaxed) && st.deaf.load(Ordering::Relaxed))
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let delay = st.delay_ms.load(Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        let cut = to_server
            && buf[..n].windows(7).any(|w| w == b"COMMIT\0")
            && st.cut_after_commit.swap(false, Ordering::Relaxed);
        if cut {
            dead.store(true, Ordering::SeqCst);
        }
        if dead.load(Ordering::SeqCst) && !cut {
            break;
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        if cut {
            // Long enough for the server to commit, not to answer usefully.
            std::thread::sleep(Duration::from_millis(50));
            st.commits_cut.fetch_add(1, Ordering::Relaxed);
            from.shutdown_both();
            break;
        }
    }
    to.shutdown_both();
}

trait ShutdownBoth {
    fn shutdown_both(&self);
}

impl ShutdownBoth for TcpStream {
    fn shutdown_both(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

impl ShutdownBoth for UnixStream {
    fn shutdown_both(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

/// The drifting test server behind `sh -c 'tee -a CALLS | node …'`: every
/// message the gateway sends it is appended to `calls` as it arrives, so the
/// test knows which calls were forwarded. Unconfined (`tee` writes outside
/// any sandbox grant), which the approval pins like any launch.
fn recorded_upstream_config(dir: &Path, calls: &Path) -> String {
    let script = peers_dir().join("drifting-server.mjs");
    let shell = format!(
        "tee -a '{}' | exec node '{}'",
        calls.display(),
        script.display()
    );
    format!(
        "[servers.drifty]\ncommand = \"sh\"\nargs = [\"-c\", {shell:?}]\nsandbox = \"off\"\nenv = {{ DRIFT_FILE = {:?} }}\n",
        dir.join("greet-description.txt").to_str().unwrap()
    )
}

/// The arguments of every `tools/call` the upstream received (`calls`, as
/// `tee` recorded it).
fn forwarded_calls(calls: &Path) -> Vec<Value> {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["arguments"].clone())
        .collect()
}

/// The arguments hash a `tool.call` leaf records for these arguments.
fn arguments_hash(arguments: &Value) -> String {
    let canonical =
        interlock_core::canon::parse_json(serde_json::to_string(arguments).unwrap().as_bytes())
            .unwrap();
    interlock_trust::held_id::arguments_digest(&canonical).to_string()
}

/// The arguments hashes of the call leaves on the log, read through `gw`'s
/// reviewer API: the outcomes (`tool.call`) and the intents
/// (`tool.call.intent`, durable before a call is forwarded).
fn call_leaf_hashes(gw: &Gateway) -> (HashSet<String>, HashSet<String>) {
    let reviewer = gw.reviewer_key();
    let (mut outcomes, mut intents) = (HashSet::new(), HashSet::new());
    let mut from = 0u64;
    loop {
        let page = gw.api_get(&reviewer, &format!("/api/v1/log?from={from}&limit=1000"));
        let entries = page["entries"].as_array().unwrap();
        for e in entries {
            let Some(h) = e["entry"]["arguments_hash"].as_str() else {
                continue;
            };
            if e["entry"]["type"] == "tool.call" {
                outcomes.insert(h.to_owned());
            } else if e["entry"]["type"] == "tool.call.intent" {
                intents.insert(h.to_owned());
            }
        }
        from += entries.len() as u64;
        if entries.is_empty() || from >= page["size"].as_u64().unwrap() {
            return (outcomes, intents);
        }
    }
}

/// One `tools/call` of the test server's `add` through `gw`, as an agent
/// sends it: the HTTP status and the JSON body, or why there was none (the
/// connection refused or cut, or 60 s without an answer).
fn call(gw: &Gateway, arguments: &Value) -> Result<(u16, Value), String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "drifty__add", "arguments": arguments}});
    let (status, _, bytes) = crate::gateway_util::try_http(
        &gw.addr,
        "POST",
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {}", gw.agent_key)),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        &serde_json::to_vec(&body).unwrap(),
    )?;
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"error": {"message": String::from_utf8_lossy(&bytes)}}));
    Ok((status, v))
}

/// What the agents got during one burst.
#[derive(Default)]
struct Tally {
    /// Arguments of the calls answered with the right sum.
    acked: Vec<Value>,
    /// JSON-RPC errors (or tool errors) and their messages.
    errors: Vec<String>,
    /// Calls that got no answer (the connection cut, or 60 s of silence).
    unanswered: Vec<String>,
}

/// Drives a burst of `add` calls, three agents per gateway, while `fault`
/// runs; once it returns, keeps the burst going until every gateway has
/// answered a call begun after it (the gateway serves again), then stops.
/// A gateway that does not within 90 s fails the test.
fn burst_through(gateways: &[&Gateway], next: &AtomicU64, fault: impl FnOnce()) -> Tally {
    let stop = AtomicBool::new(false);
    let healed = AtomicBool::new(false);
    let served_after: Vec<AtomicUsize> = gateways.iter().map(|_| AtomicUsize::new(0)).collect();
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..gateways.len() * 3)
            .map(|w| {
                let g = w % gateways.len();
                let gw = gateways[g];
                let (stop, healed, next, served_after) = (&stop, &healed, next, &served_after);
                s.spawn(move || {
                    let mut tally = Tally::default();
                    while !stop.load(Ordering::Relaxed) {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let args = json!({"a": n, "b": w});
                        let sum = (n + w as u64).to_string();
                        let after = healed.load(Ordering::Relaxed);
                        match call(gw, &args) {
                            Ok((200, r))
                                if r["result"]["content"][0]["text"].as_str()
                                    == Some(sum.as_str()) =>
                            {
                                tally.acked.push(args);
                                if after {
                                    served_after[g].fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            Ok((status, r)) => {
                                let message = r["error"]["message"]
                                    .as_str()
                                    .or(r["result"]["content"][0]["text"].as_str())
                                    .unwrap_or_default()
                                    .to_owned();
                                assert!(
                                    !message.is_empty(),
                                    "an answer ({status}) neither a success nor an error that says why: {r}"
                                );
                                tally.errors.push(format!("{status}: {message}"));
                                // A gateway that fails fast must not spin.
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Err(e) => tally.unanswered.push(format!(
                                "gateway {g}, call {args}, {}: {e}",
                                if after { "after" } else { "during" }
                            )),
                        }
                    }
                    tally
                })
            })
            .collect();
        fault();
        healed.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(90);
        while served_after.iter().any(|n| n.load(Ordering::Relaxed) == 0) {
            if Instant::now() > deadline {
                stop.store(true, Ordering::Relaxed);
                let logs: Vec<String> = gateways.iter().map(|g| g.log()).collect();
                panic!(
                    "a gateway did not serve again within 90 s of the fault's end ({:?} calls answered after it, per gateway)\nlogs:\n{}",
                    served_after
                        .iter()
                        .map(|n| n.load(Ordering::Relaxed))
                        .collect::<Vec<_>>(),
                    logs.join("\n----\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // A little more of the burst once everyone serves.
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut all = Tally::default();
    for t in tallies {
        all.acked.extend(t.acked);
        all.errors.extend(t.errors);
        all.unanswered.extend(t.unanswered);
    }
    all
}

/// Checks what must hold after a campaign over `gateways` (which share one
/// log): every call acknowledged has its intent and outcome leaves, every
/// call the upstream received its intent leaf; the log verifies from every
/// gateway; the receipts index matches the log. Returns (calls forwarded,
/// outcome leaves, intent leaves).
fn assert_nothing_lost(
    gateways: &[&Gateway],
    acked: &[Value],
    calls: &Path,
    seed: u64,
) -> (usize, usize, usize) {
    let (outcomes, intents) = call_leaf_hashes(gateways[0]);
    let missing: Vec<&Value> = acked
        .iter()
        .filter(|args| {
            let h = arguments_hash(args);
            !outcomes.contains(&h) || !intents.contains(&h)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "seed {seed}: {} acknowledged calls lack their leaves: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    let forwarded = forwarded_calls(calls);
    let unlogged: Vec<&Value> = forwarded
        .iter()
        .filter(|args| !intents.contains(&arguments_hash(args)))
        .collect();
    assert!(
        unlogged.is_empty(),
        "seed {seed}: {} calls reached the upstream without an intent leaf: {:?}",
        unlogged.len(),
        &unlogged[..unlogged.len().min(5)]
    );
    for gw in gateways {
        gw.assert_audit_clean();
    }
    // The team's one receipts index, written by every gateway's tally.
    let reviewer = gateways[0].reviewer_key();
    let leaves = crate::faults::log_leaves(gateways[0], &reviewer);
    crate::faults::assert_receipts_index_matches_log(gateways[0], &reviewer, &leaves, seed);
    (forwarded.len(), outcomes.len(), intents.len())
}

/// Fails unless every call got an answer (none cut, none left hanging),
/// with the end of each gateway's log.
fn assert_all_answered(gateways: &[&Gateway], unanswered: &[String], seed: u64) {
    if unanswered.is_empty() {
        return;
    }
    let tails: Vec<String> = gateways
        .iter()
        .map(|g| {
            let log = g.log();
            let lines: Vec<&str> = log.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        })
        .collect();
    panic!(
        "seed {seed}: {} calls got no answer: {:?}\nthe gateways' logs end:\n{}",
        unanswered.len(),
        &unanswered[..unanswered.len().min(5)],
        tails.join("\n----\n")
    );
}

/// A sample of the distinct error messages agents got, for the figures.
fn sample(errors: &[String]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let short: String = e.chars().take(160).collect();
        if !seen.contains(&short) && seen.len() < 4 {
            seen.push(short);
        }
    }
    seen
}

/// Two gateways on the test's cluster, the first at `url_a`, the second at
/// `url_b`, serving the recorded upstream (approved); with the record of the
/// calls forwarded (one file both upstreams append to: the launch both
/// gateways pin must be the same).
struct Team {
    _dir: tempfile::TempDir,
    a: Gateway,
    b: Gateway,
    calls: PathBuf,
}

fn team(url_a: &str, url_b: &str) -> Team {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    let config = recorded_upstream_config(dir.path(), &calls);
    let a = Gateway::start_on_database(&config, url_a);
    a.wait_for_server("drifty", "PENDING");
    a.approve_server("drifty");
    let b = Gateway::start_beside_on(&a, &config, url_b);
    for gw in [&a, &b] {
        gw.wait_for_tool("drifty__add", true);
    }
    Team {
        _dir: dir,
        a,
        b,
        calls,
    }
}

/// Issue 44: the Postgres server two gateways share crashes mid-burst
/// (`pg_ctl stop -m immediate`) and restarts after a random outage, fault
/// after fault. Calls that could not be recorded meanwhile get an error
/// that says why; no acknowledged call and no forwarded one lacks its leaf;
/// both gateways serve again without a restart; the log verifies.
#[test]
fn fault_campaign_postgres_crashed_and_restarted_mid_burst() {
    let cluster = PgCluster::start();
    let url = cluster.url();
    let t = team(&url, &url);
    let mut campaign = Campaign::new("postgres crash/restart");
    let next = AtomicU64::new(1);
    let (mut acked, mut errors, mut unanswered) = (Vec::new(), Vec::new(), Vec::new());
    let mut outages = Vec::new();
    for _ in 0..campaign.faults {
        let at = campaign.between(Duration::from_millis(100), Duration::from_millis(400));
        let down = campaign.point(Duration::from_millis(1500));
        let tally = burst_through(&[&t.a, &t.b], &next, || {
            std::thread::sleep(at);
            cluster.crash();
            std::thread::sleep(down);
            cluster.run();
        });
        outages.push(down.as_millis());
        acked.extend(tally.acked);
        errors.extend(tally.errors);
        unanswered.extend(tally.unanswered);
    }
    assert_all_answered(&[&t.a, &t.b], &unanswered, campaign.seed);
    let (forwarded, outcomes, intents) =
        assert_nothing_lost(&[&t.a, &t.b], &acked, &t.calls, campaign.seed);
    eprintln!(
        "fault campaign postgres crash/restart: {} crashes (outages {outages:?} ms); {} calls acknowledged, {forwarded} forwarded, {} refused with an error, 0 unanswered; {intents} intent and {outcomes} outcome leaves; lost 0, forwarded without a leaf 0; errors seen: {:?}",
        campaign.faults,
        acked.len(),
        errors.len(),
        sample(&errors)
    );
}

/// Plan `id`'s status, or `None` while the CLI cannot read it (Postgres down).
fn status_while_faulty(gw: &Gateway, id: &str) -> Option<String> {
    let out = gw.cli(&["plans", "list", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).ok()?;
    list.as_array()?
        .iter()
        .find(|p| p["plan_id"] == id)
        .and_then(|p| p["status"].as_str().map(str::to_owned))
}

/// Issue 44: `interlock serve` started while its Postgres server is down
/// exits with an error that names the database — it does not hang, and does
/// not serve on nothing — and starts once the server is back.
#[test]
fn a_gateway_started_while_postgres_is_down_exits_naming_the_database() {
    let cluster = PgCluster::start();
    let mut gw = Gateway::start_on_database("", &cluster.url());
    gw.kill();
    cluster.crash();
    let config = gw.data().parent().unwrap().join("gateway.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
    cmd.args(["serve", "--config", config.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in gw.env_for_thread() {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve kept running with its database down");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(
        stdout(&out).is_empty(),
        "it said it was listening: {}",
        stdout(&out)
    );
    let said = stderr(&out);
    assert!(
        said.contains("database")
            && said.contains(cluster.socket().parent().unwrap().to_str().unwrap()),
        "the error names the database: {said}"
    );
    cluster.run();
    gw.start_serving();
    gw.wait_for_tool("propose_plan", true);
}

/// Issue 44: the Postgres server crashed and restarted while a reviewer
/// approves a plan through gateway A and, once it is approved, six agents
/// execute it at once over A and B — so a crash lands before, during and
/// after the decision's commit and the execution's claim, run and finish.
/// A refused approval is tried again once the server is back, as a reviewer
/// would; an agent that got no success tries again until the plan is done.
/// After each round, once no execution holds a lease: the plan was approved
/// once (one `plan.decision` leaf, its row APPROVED or beyond); it ran at
/// most once (one transition to EXECUTING; its file written once), and it
/// is SUCCEEDED, or HALTED with the run cut short — never left EXECUTING,
/// never approved and forgotten; `audit verify` clean from both gateways.
#[test]
fn fault_campaign_postgres_crashed_mid_decision_and_execution() {
    let cluster = PgCluster::start();
    let url = cluster.url();
    let t = team(&url, &url);
    let mut campaign = Campaign::new("postgres crash mid-decision/execution");
    let mut by_status = std::collections::BTreeMap::<String, usize>::new();
    let (mut approve_retries, mut execute_refusals) = (0, 0);
    let lease = Duration::from_secs(interlock_engine::LEASE_TIMEOUT_SECS as u64 + 20);
    for i in 0..campaign.faults {
        let plan_id = format!("crash-{i}");
        let file = format!("crash-{i}.txt");
        let plan = crate::gateway_util::write_file_plan(&t.a, &plan_id, "Write once", &file);
        let (_, _, r) = t.a.rpc(
            "tools/call",
            json!({"name": "propose_plan", "arguments": plan}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        // Half the crashes drawn over the decision (a CLI approval beside the
        // gateway takes about 100 ms here), half over the executions too.
        let within = if i % 2 == 0 { 250 } else { 900 };
        let at = campaign.point(Duration::from_millis(within));
        let down = campaign.point(Duration::from_millis(1500));
        // What the reviewer looked at, before the server goes down.
        let env = t.a.env_for_thread();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let hash = crate::util::shown_hash("plans", &plan_id, &env);
        let approve = [
            "plans", "approve", &plan_id, "--reason", "one file", "--hash", &hash,
        ];
        let barrier = std::sync::Barrier::new(6);
        let (retries, refusals) = std::thread::scope(|s| {
            let crash = s.spawn(|| {
                std::thread::sleep(at);
                cluster.crash();
                std::thread::sleep(down);
                cluster.run();
            });
            // The reviewer, until the decision lands (or is found landed).
            let mut retries = 0;
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let out = t.a.cli(&approve);
                if out.status.success() {
                    break;
                }
                if status_while_faulty(&t.a, &plan_id).is_some_and(|s| s != "PROPOSED") {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "approve {plan_id}: {}",
                    stderr(&out)
                );
                retries += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            // Six agents at once over both gateways, each until the plan is done.
            let runs: Vec<_> = (0..6)
                .map(|w| {
                    let gw = if w % 2 == 0 { &t.a } else { &t.b };
                    let (barrier, plan_id) = (&barrier, &plan_id);
                    s.spawn(move || {
                        barrier.wait();
                        let mut refused = 0;
                        let deadline = Instant::now() + Duration::from_secs(90);
                        loop {
                            let r = gw.try_call("execute_plan", json!({"plan_id": plan_id}));
                            if r.is_some_and(|r| r["result"]["isError"] == false) {
                                return refused;
                            }
                            refused += 1;
                            let settled =
                                status_while_faulty(gw, plan_id).is_some_and(|s| s != "APPROVED");
                            if settled || Instant::now() > deadline {
                                return refused;
                            }
                            std::thread::sleep(Duration::from_millis(250));
                        }
                    })
                })
                .collect();
            let refusals: usize = runs.into_iter().map(|h| h.join().unwrap()).sum();
            crash.join().unwrap();
            (retries, refusals)
        });
        approve_retries += retries;
        execute_refusals += refusals;
        let status = crate::faults::plan_statuses_settled(&t.a, Instant::now() + lease)
            .remove(&plan_id)
            .unwrap();
        let seed = campaign.seed;
        let leaves = crate::faults::log_leaves(&t.a, &t.a.reviewer_key());
        let count = |kind: &str, field: &str, value: &str| {
            leaves
                .iter()
                .filter(|l| {
                    l["type"] == kind && l["plan_id"] == plan_id.as_str() && l[field] == value
                })
                .count()
        };
        let approvals = count("plan.decision", "decision", "approve");
        assert_eq!(
            approvals, 1,
            "{plan_id} (seed {seed}): approved {approvals} times"
        );
        let runs = count("plan.transition", "to", "EXECUTING");
        assert!(runs <= 1, "{plan_id} (seed {seed}): run {runs} times");
        assert!(
            status == "SUCCEEDED" || status == "HALTED",
            "{plan_id} (seed {seed}): {status} after the crash"
        );
        let written = t.a.data().join("workspace").join(&file);
        if status == "SUCCEEDED" {
            assert_eq!(
                runs, 1,
                "{plan_id} (seed {seed}): SUCCEEDED without its run"
            );
            assert_eq!(std::fs::read_to_string(&written).unwrap(), "x", "{plan_id}");
        }
        *by_status.entry(status).or_default() += 1;
    }
    for gw in [&t.a, &t.b] {
        gw.assert_audit_clean();
    }
    eprintln!(
        "fault campaign postgres crash mid-decision/execution: {} crashes; plans {by_status:?}; \
         approvals tried again {approve_retries} times, executions refused {execute_refusals} \
         times; approved twice 0, run twice 0, stuck 0, approved and forgotten 0",
        campaign.faults,
    );
}

/// Issue 44: one gateway of two reaches Postgres through a proxy that, fault
/// after fault, cuts every connection, partitions (holds every byte and new
/// connection for up to 3 s, then lets them through), delays every chunk,
/// or cuts a connection right after a `COMMIT` reached the server (the
/// gateway cannot know whether it committed).
/// The same invariants as a crash: nothing acknowledged or forwarded without
/// its leaf, errors that say why, both gateways serve again, the log verifies.
#[test]
fn fault_campaign_postgres_connection_cut_partitioned_and_delayed() {
    let cluster = PgCluster::start();
    let proxy = Proxy::start(&cluster.socket());
    let t = team(&proxy.url(), &cluster.url());
    let mut campaign = Campaign::new("postgres connection cut/partition/delay");
    let next = AtomicU64::new(1);
    let (mut acked, mut errors, mut unanswered) = (Vec::new(), Vec::new(), Vec::new());
    let mut kinds = [0usize; 4];
    for i in 0..campaign.faults {
        let at = campaign.between(Duration::from_millis(100), Duration::from_millis(400));
        let length = campaign.between(Duration::from_millis(200), Duration::from_millis(2800));
        let kind = i % 4;
        kinds[kind] += 1;
        let tally = burst_through(&[&t.a, &t.b], &next, || {
            std::thread::sleep(at);
            match kind {
                0 => {
                    proxy.cut();
                    std::thread::sleep(length / 4);
                    proxy.cut();
                }
                1 => {
                    proxy.partition(true);
                    std::thread::sleep(length);
                    proxy.partition(false);
                }
                2 => {
                    proxy.delay(Duration::from_millis(20));
                    std::thread::sleep(length);
                    proxy.delay(Duration::ZERO);
                }
                _ => {
                    let cut = proxy.state.commits_cut.load(Ordering::Relaxed);
                    proxy.cut_after_next_commit();
                    let deadline = Instant::now() + Duration::from_secs(30);
                    while proxy.state.commits_cut.load(Ordering::Relaxed) == cut {
                        assert!(Instant::now() < deadline, "no commit passed the proxy");
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
        });
        acked.extend(tally.acked);
        errors.extend(tally.errors);
        unanswered.extend(tally.unanswered);
    }
    assert_all_answered(&[&t.a, &t.b], &unanswered, campaign.seed);
    let (forwarded, outcomes, intents) =
        assert_nothing_lost(&[&t.a, &t.b], &acked, &t.calls, campaign.seed);
    eprintln!(
        "fault campaign postgres connection faults: {} cuts, {} partitions, {} delays, {} commits cut ({} proxied connections); {} calls acknowledged, {forwarded} forwarded, {} refused with an error, 0 unanswered; {intents} intent and {outcomes} outcome leaves; lost 0, forwarded without a leaf 0; errors seen: {:?}",
        kinds[0],
        kinds[1],
        kinds[2],
        kinds[3],
        proxy.state.connections.load(Ordering::Relaxed),
        acked.len(),
        errors.len(),
        sample(&errors)
    );
}

/// One gateway on the test's cluster at `url`, serving the recorded
/// upstream (approved) with `more` config, and the record of the calls
/// forwarded.
fn lone(url: &str, more: &str) -> (tempfile::TempDir, Gateway, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    let config = recorded_upstream_config(dir.path(), &calls) + more;
    let gw = Gateway::start_on_database(&config, url);
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__add", true);
    (dir, gw, calls)
}

/// Calls `add` through `gw` one at a time until a call is answered with its
/// sum, or 60 s pass (the gateway does not serve again: the test fails).
/// Returns the arguments of the calls acknowledged and the errors.
fn call_until_served(gw: &Gateway, next: &AtomicU64) -> (Vec<Value>, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut errors = Vec::new();
    loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        let args = json!({"a": n, "b": 1});
        match call(gw, &args) {
            Ok((200, r))
                if r["result"]["content"][0]["text"].as_str() == Some(&(n + 1).to_string()) =>
            {
                return (vec![args], errors);
            }
            Ok((status, r)) => errors.push(format!("{status}: {r}")),
            Err(e) => errors.push(e),
        }
        assert!(
            Instant::now() < deadline,
            "the gateway never served again: {:?}\n{}",
            &errors[errors.len().saturating_sub(3)..],
            gw.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 44, a hole the Postgres crash campaign found: a call's outcome leaf
/// was committed asynchronously on Postgres (`synchronous_commit = off`, the
/// flush left to the next durable commit), which a crashed server loses
/// though the agent had its answer; the gateway's log, whose tree held the
/// lost leaf, then refused every append until restarted. The flush window
/// and the server's WAL writer are slowed here so that an unflushed commit
/// stays unflushed until the crash (the campaign hit the default 10 ms
/// window): the last call's outcome must survive it, and the gateway serve
/// again.
#[test]
fn regression_issue_44_an_acknowledged_outcome_survives_a_postgres_crash() {
    let cluster = PgCluster::start_with("-c wal_writer_delay=10000");
    let (_dir, gw, calls) = lone(
        &cluster.url(),
        "[log]\nflush_window_ms = 10000\ncheckpoint_interval_ms = 10000\n",
    );
    let next = AtomicU64::new(1);
    let mut acked = Vec::new();
    for _ in 0..5 {
        acked.extend(call_until_served(&gw, &next).0);
    }
    // Right after the last answer: its outcome leaf is the newest commit.
    cluster.crash();
    cluster.run();
    let (after, errors) = call_until_served(&gw, &next);
    acked.extend(after);
    let (forwarded, outcomes, intents) = assert_nothing_lost(&[&gw], &acked, &calls, 0);
    eprintln!(
        "{} calls acknowledged, {forwarded} forwarded, {intents} intent and {outcomes} outcome leaves; {} calls refused while Postgres came back",
        acked.len(),
        errors.len()
    );
}

/// Issue 44: a log commit whose answer never reaches the gateway — the
/// connection cut after its `COMMIT` reached the server, which committed it —
/// does not stop the gateway's log: it finds the batch on the log or not,
/// and calls are served again; nothing acknowledged or forwarded is without
/// its leaves; the log verifies.
#[test]
fn regression_issue_44_a_commit_whose_answer_was_cut_does_not_stop_the_log() {
    let cluster = PgCluster::start();
    let proxy = Proxy::start(&cluster.socket());
    let (_dir, gw, calls) = lone(&proxy.url(), "");
    let next = AtomicU64::new(1);
    let mut acked = call_until_served(&gw, &next).0;
    let mut errors = Vec::new();
    for _ in 0..3 {
        proxy.cut_after_next_commit();
        let deadline = Instant::now() + Duration::from_secs(60);
        let cut = proxy.state.commits_cut.load(Ordering::Relaxed);
        while proxy.state.commits_cut.load(Ordering::Relaxed) == cut {
            let (a, e) = call_until_served(&gw, &next);
            acked.extend(a);
            errors.extend(e);
            assert!(Instant::now() < deadline, "no commit was cut");
        }
        let (a, e) = call_until_served(&gw, &next);
        acked.extend(a);
        errors.extend(e);
    }
    let (forwarded, outcomes, intents) = assert_nothing_lost(&[&gw], &acked, &calls, 0);
    eprintln!(
        "3 commits cut: {} calls acknowledged, {forwarded} forwarded, {} refused, {intents} intent and {outcomes} outcome leaves: {:?}",
        acked.len(),
        errors.len(),
        sample(&errors)
    );
}

/// A second test server beside `drifty` (same program, its own tag), to be
/// approved mid-campaign.
fn second_server_config(dir: &Path) -> String {
    let script = peers_dir().join("drifting-server.mjs");
    format!(
        "[servers.second]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?}, SERVER_TAG = \"second\" }}\n",
        script.to_str().unwrap(),
        dir.join("second-description.txt").to_str().unwrap()
    )
}

/// Issue 44: two gateways that talk only through Postgres (its rows, its
/// `LISTEN`/`NOTIFY`), B cut off from A while both still reach Postgres, or
/// B's connections faulted, fault after fault: B deaf to notifications, all
/// its connections cut, partitioned, or delayed. In each fault a plan is
/// proposed and approved through A and executed by six agents at once, three
/// on each gateway: it runs exactly once, its file written once; A, which
/// still reaches Postgres, answers a tool call meanwhile. A server approved
/// through A during the first fault (B deaf) is served by B without a
/// restart. Both gateways serve again; nothing A acknowledged or forwarded
/// lacks its leaves; the one log verifies from both.
#[test]
fn fault_campaign_two_gateways_cut_off_from_each_other_keep_decisions_one_shot() {
    let cluster = PgCluster::start();
    let proxy = Proxy::start(&cluster.socket());
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    let config = recorded_upstream_config(dir.path(), &calls) + &second_server_config(dir.path());
    let a = Gateway::start_on_database(&config, &cluster.url());
    a.wait_for_server("drifty", "PENDING");
    a.wait_for_server("second", "PENDING");
    a.approve_server("drifty");
    let b = Gateway::start_beside_on(&a, &config, &proxy.url());
    for gw in [&a, &b] {
        gw.wait_for_tool("drifty__add", true);
        assert!(
            !crate::gateway_util::tool_names(&gw.list_tools()).contains(&"second__add".to_owned()),
            "served before approval"
        );
    }
    let mut campaign = Campaign::new("two gateways cut off from each other");
    let mut kinds = [0usize; 4];
    let mut executions = 0;
    let mut refused = 0;
    let mut second_served_after = None;
    let a_acked = Mutex::new(Vec::new());
    for i in 0..campaign.faults {
        let kind = i % 4;
        kinds[kind] += 1;
        // Up to 6 s: longer than a writer waits for another's checkpoint.
        let length = campaign.between(Duration::from_millis(500), Duration::from_millis(5500));
        let plan_id = format!("once-{i}");
        let file = format!("once-{i}.txt");
        let plan = crate::gateway_util::write_file_plan(&a, &plan_id, "Write once", &file);
        let (_, _, r) = a.rpc(
            "tools/call",
            json!({"name": "propose_plan", "arguments": plan}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        let barrier = std::sync::Barrier::new(6);
        let results: Vec<Value> = std::thread::scope(|s| {
            let fault = s.spawn(|| match kind {
                0 => {
                    proxy.deafen(true);
                    std::thread::sleep(length);
                    proxy.deafen(false);
                }
                1 => {
                    proxy.cut();
                    std::thread::sleep(length / 4);
                    proxy.cut();
                }
                2 => {
                    proxy.partition(true);
                    std::thread::sleep(length);
                    proxy.partition(false);
                }
                _ => {
                    proxy.delay(Duration::from_millis(20));
                    std::thread::sleep(length);
                    proxy.delay(Duration::ZERO);
                }
            });
            // The decision, through A, while B is cut off.
            std::thread::sleep(Duration::from_millis(100));
            let out = a.approve("plans", &plan_id, "one file");
            assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
            if i == 0 {
                a.approve_server("second");
                let approved = Instant::now();
                b.wait_for_tool("second__add", true);
                second_served_after = Some(approved.elapsed());
            }
            let runs: Vec<_> = (0..6)
                .map(|w| {
                    let gw = if w % 2 == 0 { &a } else { &b };
                    let (barrier, plan_id) = (&barrier, &plan_id);
                    s.spawn(move || {
                        barrier.wait();
                        gw.rpc(
                            "tools/call",
                            json!({"name": "execute_plan", "arguments": {"plan_id": plan_id}}),
                        )
                        .2
                    })
                })
                .collect();
            // A, which still reaches Postgres, serves while B is cut off.
            let a_next = AtomicU64::new(1_000_000 * (i as u64 + 1));
            let (served, _) = call_until_served(&a, &a_next);
            a_acked.lock().unwrap().extend(served);
            let results = runs.into_iter().map(|h| h.join().unwrap()).collect();
            fault.join().unwrap();
            results
        });
        let ran = results
            .iter()
            .filter(|r| r["result"]["isError"] == false)
            .count();
        assert_eq!(
            ran, 1,
            "seed {}: fault {i} (kind {kind}): exactly one execution: {results:#?}",
            campaign.seed
        );
        for r in &results {
            assert!(
                r["result"]["isError"].is_boolean() || r["error"]["message"].is_string(),
                "every execution is answered: {r}"
            );
        }
        executions += ran;
        refused += results.len() - ran;
        assert_eq!(
            std::fs::read_to_string(a.data().join("workspace").join(&file)).unwrap(),
            "x"
        );
    }
    // Both serve after the last fault.
    let next = AtomicU64::new(1);
    for gw in [&a, &b] {
        call_until_served(gw, &next);
        gw.wait_for_tool("second__add", true);
    }
    let a_acked = a_acked.into_inner().unwrap();
    let (forwarded, _, _) = assert_nothing_lost(&[&a, &b], &a_acked, &calls, campaign.seed);
    eprintln!(
        "fault campaign two gateways cut off from each other: {} deaf, {} cuts, {} partitions, {} delays; {} plans, each executed by 6 agents over both gateways: {executions} ran, {refused} refused, doubled 0; A served {} calls while B was cut off ({forwarded} forwarded, none without its leaf); a server approved on A while B was deaf served by B after {:?}",
        kinds[0],
        kinds[1],
        kinds[2],
        kinds[3],
        campaign.faults,
        a_acked.len(),
        second_served_after.unwrap_or_default()
    );
}

/// Issue 44, a hole found by cutting one gateway of two off from Postgres:
/// a gateway cut off right after committing entries it had not signed yet
/// (checkpoints are signed at most every 100 ms) stopped every other gateway
/// of the team: each append found those entries unsigned, waited for a
/// checkpoint their writer could no longer write, and failed — for as long
/// as it stayed away (a dead machine: until a survivor was restarted). Now,
/// once the wait is over, they are adopted as a dead writer's tail is at
/// start (a `log.tail_adopted` entry, signed over with the next batch): A
/// serves on while B is cut off, B serves again once it is back, and the
/// log verifies from both.
#[test]
fn regression_issue_44_a_gateway_cut_off_with_unsigned_entries_does_not_stop_the_others() {
    let cluster = PgCluster::start();
    let proxy = Proxy::start(&cluster.socket());
    let t = team(&cluster.url(), &proxy.url());
    let next = AtomicU64::new(1);
    call_until_served(&t.b, &next);
    // Past the window in which the first commit signs, and past any seal
    // request: B's next commit signs, the one after it does not.
    std::thread::sleep(Duration::from_secs(3));
    let mut acked = call_until_served(&t.b, &next).0;
    acked.extend(call_until_served(&t.b, &next).0);
    proxy.partition(true);
    let cut = Instant::now();
    let (a_acked, a_errors) = call_until_served(&t.a, &next);
    let a_served_after = cut.elapsed();
    acked.extend(a_acked);
    proxy.partition(false);
    let (b_acked, _) = call_until_served(&t.b, &next);
    acked.extend(b_acked);
    let reviewer = t.a.reviewer_key();
    let log = t.a.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let adopted = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["type"] == "log.tail_adopted")
        .count();
    let (forwarded, outcomes, intents) = assert_nothing_lost(&[&t.a, &t.b], &acked, &t.calls, 0);
    eprintln!(
        "B cut off: A served after {a_served_after:?} ({} calls refused meanwhile), {adopted} log.tail_adopted entries; {} calls acknowledged, {forwarded} forwarded, {intents} intent and {outcomes} outcome leaves",
        a_errors.len(),
        acked.len()
    );
}
