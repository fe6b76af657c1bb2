//! Many agent sessions open at once (issue 45 item 5): the gateway's
//! resident memory per open session, and what opening and ending them costs.
//!
//! ```text
//! source scripts/env.sh && scripts/with-keyring cargo bench --bench agent_sessions
//! ```
//!
//! `interlock serve` (this build, release) with one agent key and room for
//! `AGENT_SESSIONS_N` sessions (default 10,000): 200 sessions are opened
//! first (what a first session touches once is not any session's cost), the
//! resident set (`VmRSS`) read, then N more opened — each an `initialize`
//! and its `notifications/initialized` over kept-alive connections, 8 at a
//! time — and the resident set read again; then every one ended (`DELETE
//! /mcp`) and the resident set read a third time. Prints KiB per session
//! (goal ≤ 50 KB), sessions opened per second, and the gateway's CPU per
//! session from /proc.

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use support::*;

/// The MCP protocol version whose `initialize` opens a session.
const PROTOCOL: &str = "2025-11-25";

/// A process's resident set (`VmRSS` in /proc), in KiB.
fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Opens `n` sessions, `parallel` at a time; the clients holding them.
async fn open(
    http: &reqwest::Client,
    url: &str,
    auth: &str,
    n: usize,
    parallel: usize,
) -> Vec<McpClient> {
    let mut out = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let batch = left.min(parallel);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..batch {
            let mut c = McpClient::new(http.clone(), url.to_owned(), Some(auth.to_owned()));
            set.spawn(async move {
                c.initialize().await.expect("open a session");
                c
            });
        }
        while let Some(c) = set.join_next().await {
            out.push(c.unwrap());
        }
        left -= batch;
    }
    out
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("agent_sessions: run with `cargo bench --bench agent_sessions`; skipped");
        return;
    }
    let n: usize = std::env::var("AGENT_SESSIONS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let tmp = tempfile::Builder::new()
        .prefix("interlock-bench-sessions-")
        .tempdir()
        .unwrap();
    let env = [
        ("INTERLOCK_DATA_DIR", tmp.path().display().to_string()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            format!("interlock-bench-sessions-{}", std::process::id()),
        ),
        ("RUST_LOG", "warn".to_owned()),
    ];
    cli(&env, &["keys", "init", "--identity", "human:bench"]);
    let agent_key = cli(&env, &["agents", "add", "bench"]).trim().to_owned();
    let config = format!(
        "listen = \"127.0.0.1:{}\"\n[limits]\nmax_sessions = {}\nsessions_per_key = {}\n",
        free_port(),
        n + 1000,
        n + 1000
    );
    let config_path = tmp.path().join("gateway.toml");
    std::fs::write(&config_path, config).unwrap();
    let served = start_gateway(&env, &config_path, &tmp.path().join("gateway.log"));
    let pid = served.child.id().to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();
    let url = format!("http://{}/mcp", served.addr);
    let auth = format!("Bearer {agent_key}");
    let clk = clk_tck();

    let warm = rt.block_on(open(&http, &url, &auth, 200, 8));
    let rss_before = rss_kib(&pid);
    let cpu = Cpu::start(&pid);
    let started = Instant::now();
    let sessions = rt.block_on(open(&http, &url, &auth, n, 8));
    let took = started.elapsed();
    let cpu_per_open = cpu.ms_per_call(n as u64, clk);
    let rss_open = rss_kib(&pid);
    // Every session ended.
    let cpu = Cpu::start(&pid);
    rt.block_on(async {
        for c in sessions.iter().chain(warm.iter()) {
            let mut req = http.delete(&url).header("authorization", &auth);
            if let Some(s) = &c.session {
                req = req
                    .header("mcp-session-id", s)
                    .header("mcp-protocol-version", PROTOCOL);
            }
            let status = req.send().await.expect("DELETE /mcp").status();
            assert!(status.is_success(), "DELETE /mcp: {status}");
        }
    });
    let cpu_per_end = cpu.ms_per_call((n + warm.len()) as u64, clk);
    let rss_ended = rss_kib(&pid);
    stop_gateway(served);

    let per_session = rss_open.saturating_sub(rss_before) as f64 / n as f64;
    println!("agent sessions: {n} opened after 200 warm-up ones (release build)");
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| gateway RSS, 200 sessions open | {:.1} MiB |",
        rss_before as f64 / 1024.0
    );
    println!(
        "| gateway RSS, {} sessions open | {:.1} MiB |",
        n + 200,
        rss_open as f64 / 1024.0
    );
    println!("| **RSS per open session** | **{per_session:.2} KiB** (goal ≤ 50 KB) |");
    println!(
        "| gateway RSS, every session ended | {:.1} MiB |",
        rss_ended as f64 / 1024.0
    );
    println!(
        "| sessions opened per second (8 at a time; initialize + initialized) | {:.0} |",
        n as f64 / took.as_secs_f64()
    );
    println!("| gateway CPU per session opened | {cpu_per_open:.3} ms |");
    println!("| gateway CPU per session ended | {cpu_per_end:.3} ms |");
}
