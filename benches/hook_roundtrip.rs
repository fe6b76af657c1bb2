//! What a coding agent's hook costs (issue 40): an allowed tool use, judged
//! and logged by `interlock serve`, against an empty hook, in one run.
//!
//! ```text
//! source scripts/env.sh && scripts/with-keyring cargo bench --bench hook_roundtrip
//! ```
//!
//! - **HTTP** (what Claude Code's `http` hook type, or any client posting
//!   itself, sees): `POST /hooks/v1/claude-code` with the documented
//!   `PreToolUse` of `git status` — parsed, role-checked, inspected, its
//!   `hook.call` leaf appended (group-committed, `fsync`ed) — against
//!   `GET /healthz` on the same connection (an empty answer from the same
//!   server): p50 and p99, and the difference.
//! - **Command hook** (what the installed hook costs the client per use):
//!   `interlock hook claude-code` started once per event, reading it on
//!   stdin, against an empty command hook (`sh -c 'cat >/dev/null; echo {}'`),
//!   alternated, p50 and p99.
//! - The gateway's CPU per judged event, from /proc.
//!
//! The goal (issue 40): at most 5 ms added over an empty hook.

#[path = "support/mod.rs"]
mod support;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Instant;

use support::*;

/// The MCP protocol version `support` speaks (unused here: no MCP call is made).
const PROTOCOL: &str = "2025-11-25";
const WARMUP: usize = 200;
const HTTP_EVENTS: usize = 2000;
const SPAWNS: usize = 200;

fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (percentile(&ms, 50.0), percentile(&ms, 99.0))
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("hook_roundtrip: run with `cargo bench --bench hook_roundtrip`; skipped");
        return;
    }
    let clk_tck = clk_tck();
    let tmp = tempfile::Builder::new()
        .prefix("interlock-bench-")
        .tempdir()
        .unwrap();
    let env = [
        ("INTERLOCK_DATA_DIR", tmp.path().display().to_string()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            format!("interlock-bench-{}", std::process::id()),
        ),
        ("RUST_LOG", "warn".to_owned()),
    ];
    cli(&env, &["keys", "init", "--identity", "human:bench"]);
    let key = cli(&env, &["agents", "add", "bench"]).trim().to_owned();
    let config = tmp.path().join("gateway.toml");
    std::fs::write(&config, format!("listen = \"127.0.0.1:{}\"\n", free_port())).unwrap();
    let served = start_gateway(&env, &config, &tmp.path().join("serve.log"));
    let pid = served.child.id().to_string();
    let event = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hooks/claude-code/pre_tool_use.bash_git_status.json"
    ))
    .unwrap();
    let base = format!("http://{}", served.addr);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();
    let hook_url = format!("{base}/hooks/v1/claude-code?wait=0");
    let health_url = format!("{base}/healthz");
    let (hooks, health, cpu_ms) = rt.block_on(async {
        let post = || async {
            let t = Instant::now();
            let r = http
                .post(&hook_url)
                .bearer_auth(&key)
                .header("content-type", "application/json")
                .body(event.clone())
                .send()
                .await
                .unwrap();
            let body = r.bytes().await.unwrap();
            assert!(
                contains(&body, b"\"allow\""),
                "{}",
                String::from_utf8_lossy(&body)
            );
            t.elapsed().as_secs_f64() * 1e3
        };
        let get = || async {
            let t = Instant::now();
            let r = http.get(&health_url).send().await.unwrap();
            let _ = r.bytes().await.unwrap();
            t.elapsed().as_secs_f64() * 1e3
        };
        for _ in 0..WARMUP {
            post().await;
            get().await;
        }
        let (mut hooks, mut health) = (Vec::new(), Vec::new());
        let cpu = Cpu::start(&pid);
        for _ in 0..HTTP_EVENTS {
            hooks.push(post().await);
            health.push(get().await);
        }
        // Both requests' CPU is in the figure; the health check's is a few µs.
        (hooks, health, cpu.ms_per_call(HTTP_EVENTS as u64, clk_tck))
    });
    let spawn = |program: &str, args: &[&str], extra: &[(&str, &str)]| {
        let t = Instant::now();
        let mut child = Command::new(program)
            .args(args)
            .envs(extra.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&event).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        t.elapsed().as_secs_f64() * 1e3
    };
    let bin = bin();
    let (mut ours, mut empty) = (Vec::new(), Vec::new());
    for i in 0..SPAWNS + 20 {
        let a = spawn(
            &bin,
            &["hook", "claude-code", "--wait", "0"],
            &[("INTERLOCK_API_KEY", &key), ("INTERLOCK_GATEWAY", &base)],
        );
        let b = spawn("sh", &["-c", "cat >/dev/null; echo {}"], &[]);
        if i >= 20 {
            ours.push(a);
            empty.push(b);
        }
    }
    stop_gateway(served);
    let (h50, h99) = stats(hooks);
    let (e50, e99) = stats(health);
    let (o50, o99) = stats(ours);
    let (c50, c99) = stats(empty);
    println!("hook_roundtrip ({HTTP_EVENTS} HTTP events, {SPAWNS} command hooks, alternated)");
    println!("  HTTP   allowed PreToolUse   p50 {h50:.3} ms  p99 {h99:.3} ms");
    println!("         empty (/healthz)     p50 {e50:.3} ms  p99 {e99:.3} ms");
    println!(
        "         added                p50 {:.3} ms  p99 {:.3} ms",
        h50 - e50,
        h99 - e99
    );
    println!("  command interlock hook       p50 {o50:.3} ms  p99 {o99:.3} ms");
    println!("         empty command hook   p50 {c50:.3} ms  p99 {c99:.3} ms");
    println!(
        "         added                p50 {:.3} ms  p99 {:.3} ms",
        o50 - c50,
        o99 - c99
    );
    println!("  gateway CPU per judged event {cpu_ms:.3} ms");
}
