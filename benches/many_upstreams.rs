//! Many stdio upstreams started at once (issue 45 item 6): how long until a
//! gateway with N servers on the official Python SDK has listed every one
//! (each PENDING, its link up), against how long the same N servers take to
//! start and answer `tools/list` in the same crowd without a gateway.
//!
//! ```text
//! source scripts/env.sh && eval "$(scripts/peers.sh)" && \
//!   scripts/with-keyring cargo bench --bench many_upstreams
//! ```
//!
//! - **Direct crowd**: N servers spawned at once, each driven by its own
//!   thread through `initialize` and `tools/list`; the slowest one's time
//!   from the crowd's start is the floor (what the servers themselves need
//!   on this machine when they all start together).
//! - **Gateway**: `interlock serve` with the same N servers in its config
//!   (sandboxed, as every stdio server it starts), from its spawn until the
//!   reviewer API shows all N PENDING with their link up; the first one's
//!   time too, and how many times a server was reported down (restarts).
//! - Rounds alternate direct and gateway; the ratio gateway / direct is
//!   printed per round. The goal: ≤ 1.5×, no restart.
//!
//! `MANY_UPSTREAMS_N` (default 40) and `MANY_UPSTREAMS_ROUNDS` (default 3).

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

/// The MCP protocol version `support` speaks (unused here: the reviewer API
/// and stdio are spoken directly).
const PROTOCOL: &str = "2025-11-25";

fn python() -> PathBuf {
    std::env::var_os("INTERLOCK_PEERS_PYTHON")
        .map(PathBuf::from)
        .expect("INTERLOCK_PEERS_PYTHON: run scripts/peers.sh first (see the header)")
}

fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/partial-listings.py")
}

/// One server spawned, handshaken and listed over stdio: its time.
fn start_one_direct() -> Duration {
    let started = Instant::now();
    let mut child = Command::new(python())
        .arg(server_script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "initialize: {line}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("ping"), "tools/list: {line}");
    let took = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    took
}

/// N servers started at once without a gateway: the slowest one's time.
fn direct_crowd(n: usize) -> Duration {
    std::thread::scope(|s| {
        let all: Vec<_> = (0..n).map(|_| s.spawn(start_one_direct)).collect();
        all.into_iter().map(|t| t.join().unwrap()).max().unwrap()
    })
}

struct GatewayRun {
    first: Duration,
    all: Duration,
    downs: usize,
}

/// A gateway with N servers: from its spawn until all are listed.
fn gateway_crowd(n: usize, round: usize) -> GatewayRun {
    let tmp = tempfile::Builder::new()
        .prefix("interlock-bench-many-")
        .tempdir()
        .unwrap();
    let env = [
        ("INTERLOCK_DATA_DIR", tmp.path().display().to_string()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            format!("interlock-bench-many-{}-{round}", std::process::id()),
        ),
        ("RUST_LOG", "info".to_owned()),
    ];
    cli(&env, &["keys", "init", "--identity", "human:bench"]);
    let key = cli(&env, &["reviewers", "add", "bench"]).trim().to_owned();
    let mut config = format!("listen = \"127.0.0.1:{}\"\n", free_port());
    for i in 0..n {
        config.push_str(&format!(
            "\n[servers.s{i:02}]\ncommand = {:?}\nargs = [{:?}]\n",
            python().display().to_string(),
            server_script().display().to_string(),
        ));
    }
    let config_path = tmp.path().join("gateway.toml");
    std::fs::write(&config_path, config).unwrap();
    let log = tmp.path().join("gateway.log");
    let started = Instant::now();
    let served = start_gateway(&env, &config_path, &log);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();
    let url = format!("http://{}/api/v1/servers", served.addr);
    let mut first = None;
    let all = loop {
        let listed = rt.block_on(async {
            http.get(&url)
                .bearer_auth(&key)
                .send()
                .await
                .expect("the reviewer API answers")
                .bytes()
                .await
                .expect("a body")
        });
        let listed: serde_json::Value = serde_json::from_slice(&listed).expect("JSON");
        let ready = listed["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["status"] == "PENDING" && s["link"]["state"] == "up")
            .count();
        if ready > 0 && first.is_none() {
            first = Some(started.elapsed());
        }
        if ready == n {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "after 600 s only {ready} of {n} servers were listed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    stop_gateway(served);
    let downs = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .matches("upstream down")
        .count();
    GatewayRun {
        first: first.unwrap_or(all),
        all,
        downs,
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("many_upstreams: run with `cargo bench --bench many_upstreams`; skipped");
        return;
    }
    let n: usize = std::env::var("MANY_UPSTREAMS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let rounds: usize = std::env::var("MANY_UPSTREAMS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let alone: Vec<Duration> = (0..5).map(|_| start_one_direct()).collect();
    let alone_max = alone.iter().max().unwrap();
    println!(
        "one server alone (5 starts): slowest {:.0} ms, fastest {:.0} ms",
        alone_max.as_secs_f64() * 1e3,
        alone.iter().min().unwrap().as_secs_f64() * 1e3
    );
    println!(
        "| round | direct crowd, slowest | gateway, first listed | gateway, all listed | ratio all / direct | servers reported down |"
    );
    println!("|---|---|---|---|---|---|");
    for round in 0..rounds {
        let direct = direct_crowd(n);
        let gw = gateway_crowd(n, round);
        println!(
            "| {round} | {:.2} s | {:.2} s | {:.2} s | {:.2}× | {} |",
            direct.as_secs_f64(),
            gw.first.as_secs_f64(),
            gw.all.as_secs_f64(),
            gw.all.as_secs_f64() / direct.as_secs_f64(),
            gw.downs
        );
    }
    println!("(N = {n} servers on the official Python SDK, tests/peers/partial-listings.py)");
}
