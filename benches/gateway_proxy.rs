//! What the gateway adds to a tool call: the same client calls the same tiny
//! upstream MCP server directly and through `interlock serve`, in one run.
//!
//! Run with a keychain (the CLI keeps its keys there):
//!
//! ```text
//! source scripts/env.sh && scripts/with-keyring cargo bench --bench gateway_proxy
//! ```
//!
//! - The upstream is a minimal Streamable HTTP MCP server (axum, JSON
//!   responses, one `echo` tool) on its own tokio runtime in this process.
//! - The gateway is the real binary (`interlock serve`), set up through the
//!   CLI with a throwaway data dir: approver key, agent key, config, approval
//!   of the upstream's surface.
//! - Measured: sequential latency (p50, p99, mean over `SEQ_CALLS` calls after
//!   a warm-up), 16-way throughput over `CONC_SECS`, and the gateway process's
//!   CPU time (utime+stime from /proc) per proxied call.
//! - In the same run, against a real upstream (`server-everything` over
//!   Streamable HTTP): direct, through `interlock serve` and through the peer
//!   gateway ContextForge, printed as ratios to direct (see `peers`).
//!   `GATEWAY_PROXY_PEERS=none` leaves the peers out.
//! - Memory: the gateway's resident set (/proc) idle, after the calls, and
//!   with 1,000 more agent sessions open.
//! - `GATEWAY_PROXY_ENVELOPE=off|monitor|hold` sets `[envelope] mode` (the
//!   behavioural envelope's cost per call is the difference).
//! - `GATEWAY_PROXY_COUNTS=1` prints the gateway's CPU time, context switches
//!   and syscalls per proxied call (`perf stat` during the proxied runs).
//! - `GATEWAY_PROXY_WITNESSES=N` starts N `interlock witness serve` processes
//!   and puts them in `[log] witnesses` (issue 43): the call path's cost of
//!   witnessing is the difference from a run without; it also prints how long
//!   after a checkpoint was picked up each cosignature was kept (p50, p99).
//!
//! See docs/BENCHMARKS.md for figures and how to read them.

// A bench target's root sits in benches/, so its module is found by path (a
// benches/peers.rs would be taken for a bench of its own).
#[path = "gateway_proxy/peers.rs"]
mod peers;

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

const PROTOCOL: &str = "2025-11-25";
const WARMUP_CALLS: usize = 300;
const SEQ_CALLS: usize = 2000;
const CONCURRENCY: usize = 16;
const CONC_SECS: f64 = 3.0;

// ---------------------------------------------------------------------------
// The client: the same code for both targets.

/// For the peers: a stuck peer gateway fails its path instead of hanging the run.
fn peer_http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(64)
        .timeout(Duration::from_secs(120))
        .no_proxy()
        .build()
        .unwrap()
}

/// `{"name":tool,"arguments":{"message":…}}` with ~200 bytes of arguments.
fn call_params(tool: &str, message: &str) -> String {
    json!({"name": tool, "arguments": {"message": message}}).to_string()
}

fn message() -> String {
    // 186 chars of message + `{"message":""}` = 200 bytes of arguments.
    let base = "The quick brown fox jumps over the lazy dog; ";
    base.repeat(5)[..186].to_owned()
}

// ---------------------------------------------------------------------------
// Measurement.

struct Seq {
    p50: f64,
    p99: f64,
    mean: f64,
}

async fn sequential(client: &mut McpClient, params: &str, expect: &str) -> Seq {
    let first = client.call(params).await.expect("first call");
    assert!(
        contains(&first, expect.as_bytes()),
        "the echo did not come back: {}",
        String::from_utf8_lossy(&first)
    );
    for _ in 0..WARMUP_CALLS {
        client.call(params).await.expect("warm-up call");
    }
    let mut ms = Vec::with_capacity(SEQ_CALLS);
    for _ in 0..SEQ_CALLS {
        let t = Instant::now();
        client.call(params).await.expect("call");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(f64::total_cmp);
    Seq {
        p50: percentile(&ms, 50.0),
        p99: percentile(&ms, 99.0),
        mean,
    }
}

struct Conc {
    calls: u64,
    secs: f64,
    p50: f64,
    p99: f64,
}

impl Conc {
    fn per_sec(&self) -> f64 {
        self.calls as f64 / self.secs
    }
}

async fn concurrent(base: &McpClient, params: &str) -> Conc {
    // One session per worker, like 16 agents; the reqwest pool gives each
    // its own keep-alive connection.
    let mut clients = Vec::new();
    for _ in 0..CONCURRENCY {
        let mut c = base.clone();
        c.initialize().await.expect("initialize");
        for _ in 0..20 {
            c.call(params).await.expect("warm-up call");
        }
        clients.push(c);
    }
    let params: Arc<str> = Arc::from(params);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(CONC_SECS);
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut c| {
            let params = Arc::clone(&params);
            tokio::spawn(async move {
                let mut ms = Vec::with_capacity(16_384);
                while Instant::now() < deadline {
                    let t = Instant::now();
                    c.call(&params).await.expect("call");
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
                ms
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let secs = start.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    Conc {
        calls: all.len() as u64,
        secs,
        p50: percentile(&all, 50.0),
        p99: percentile(&all, 99.0),
    }
}

// ---------------------------------------------------------------------------
// Gateway setup through the CLI.

/// With `GATEWAY_PROXY_PERF=DIR`, records the gateway with `perf` during a
/// phase into `DIR/<phase>.perf.data` (for profiling; it perturbs the figures).
struct Perf(Option<Child>);

impl Perf {
    fn start(pid: &str, phase: &str) -> Perf {
        let Ok(dir) = std::env::var("GATEWAY_PROXY_PERF") else {
            return Perf(None);
        };
        let out = Path::new(&dir).join(format!("{phase}.perf.data"));
        let child = Command::new("perf")
            .args(["record", "-F", "1999", "--call-graph", "dwarf,16384", "-o"])
            .arg(&out)
            .args(["-p", pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf record");
        std::thread::sleep(Duration::from_millis(300));
        Perf(Some(child))
    }

    fn stop(self) {
        if let Some(mut c) = self.0 {
            let _ = Command::new("kill")
                .args(["-INT", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
    }
}

/// The kernel events counted per call with `GATEWAY_PROXY_COUNTS=1`: thread
/// switches and syscalls are what a sequential call's fixed cost is made of
/// (issue 17's profile), and `perf stat` counts them without slowing the gateway
/// much (tracepoint counters, no sampling).
const COUNTED: &[(&str, &str)] = &[
    ("task-clock", "CPU ms"),
    ("context-switches", "ctx switches"),
    ("cpu-migrations", "migrations"),
    ("raw_syscalls:sys_enter", "syscalls"),
    ("syscalls:sys_enter_futex", "futex"),
    ("syscalls:sys_enter_epoll_wait", "epoll_wait"),
    ("syscalls:sys_enter_fdatasync", "fdatasync"),
    ("syscalls:sys_enter_fsync", "fsync"),
    ("syscalls:sys_enter_write", "write"),
    ("syscalls:sys_enter_writev", "writev"),
    ("syscalls:sys_enter_sendto", "sendto"),
    ("syscalls:sys_enter_recvfrom", "recvfrom"),
    ("syscalls:sys_enter_read", "read"),
    ("syscalls:sys_enter_pwrite64", "pwrite64"),
    ("syscalls:sys_enter_pread64", "pread64"),
];

/// With `GATEWAY_PROXY_COUNTS=1`, `perf stat` on the gateway during a phase;
/// [`Counts::per_call`] gives each of [`COUNTED`] divided by the calls made.
struct Counts(Option<(Child, tempfile::NamedTempFile)>);

impl Counts {
    fn start(pid: &str) -> Counts {
        if std::env::var("GATEWAY_PROXY_COUNTS").map_or(true, |v| v != "1") {
            return Counts(None);
        }
        let out = tempfile::NamedTempFile::new().expect("perf stat output file");
        let events: Vec<&str> = COUNTED.iter().map(|(e, _)| *e).collect();
        let child = Command::new("perf")
            .args(["stat", "-x", ",", "-e", &events.join(",")])
            .arg("-o")
            .arg(out.path())
            .args(["-p", pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf stat");
        std::thread::sleep(Duration::from_millis(300));
        Counts(Some((child, out)))
    }

    /// `label value` pairs per call, or `None` when not counting.
    fn per_call(self, calls: u64) -> Option<String> {
        let (mut child, out) = self.0?;
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let _ = child.wait();
        let text = std::fs::read_to_string(out.path()).ok()?;
        let mut parts = Vec::new();
        for (event, label) in COUNTED {
            let value = text.lines().find_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f.len() > 2 && f[2] == *event).then(|| f[0].parse::<f64>().ok())?
            });
            if let Some(v) = value {
                let per_call = v / calls as f64;
                parts.push(if *event == "task-clock" {
                    format!("{label} {per_call:.3}")
                } else {
                    format!("{label} {per_call:.2}")
                });
            }
        }
        Some(parts.join(", "))
    }
}

/// The 1-, 5- and 15-minute load averages.
/// Agent sessions opened for the memory figure.
const OPEN_SESSIONS: usize = 1000;

/// A process's resident set (`VmRSS` in /proc), in KiB.
fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    // `cargo bench` passes --bench; a plain `cargo test --benches` does not:
    // then only check that this compiles and exit quickly.
    if !std::env::args().any(|a| a == "--bench") {
        println!("gateway_proxy: run with `cargo bench --bench gateway_proxy`; skipped");
        return;
    }
    let clk_tck = clk_tck();
    let total = Instant::now();
    let load_before = loadavg();

    let tmp = tempfile::Builder::new()
        .prefix("interlock-bench-")
        .tempdir()
        .unwrap();
    let witness_count: usize = std::env::var("GATEWAY_PROXY_WITNESSES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let env = [
        ("INTERLOCK_DATA_DIR", tmp.path().display().to_string()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            format!("interlock-bench-{}", std::process::id()),
        ),
        (
            "RUST_LOG",
            if witness_count > 0 {
                "warn,interlock_gateway::witnessing=debug".to_owned()
            } else {
                "warn".to_owned()
            },
        ),
    ];

    let upstream = start_upstream();
    let selection = peers::Selection::from_env().unwrap_or_else(|e| panic!("{e}"));
    // server-everything starts before the gateway so it can be one of its
    // upstreams; without it there is nothing for the peers to stand in front of.
    let everything: Result<peers::Everything, String> = if selection.everything {
        peers::Everything::start(&tmp.path().join("everything.log"))
    } else {
        Err("left out (GATEWAY_PROXY_PEERS)".to_owned())
    };
    let t = Instant::now();
    cli(&env, &["keys", "init", "--identity", "human:bench"]);
    let agent_key = cli(&env, &["agents", "add", "bench"]).trim().to_owned();
    assert!(!agent_key.is_empty() && !agent_key.contains('\n'));
    let config = tmp.path().join("gateway.toml");
    let mut toml = format!(
        "listen = \"127.0.0.1:{}\"\n\n[servers.fast]\nurl = \"http://{upstream}/mcp\"\n",
        free_port()
    );
    if let Ok(ev) = &everything {
        toml.push_str(&format!("\n[servers.everything]\nurl = \"{}\"\n", ev.url()));
    }
    // `GATEWAY_PROXY_ENVELOPE=off|monitor|hold` sets the behavioural envelope's
    // mode, to measure what it costs a call (unset: the gateway's default).
    if let Ok(mode) = std::env::var("GATEWAY_PROXY_ENVELOPE") {
        toml.push_str(&format!("\n[envelope]\nmode = {mode:?}\n"));
    }
    // `GATEWAY_PROXY_WITNESSES=N`: N witnesses cosign the log's checkpoints.
    let witnesses = support::start_witnesses(&env, tmp.path(), witness_count);
    if !witnesses.is_empty() {
        toml.push_str("\n[log]\nwitnesses = [\n");
        for w in &witnesses {
            toml.push_str(&format!(
                "  {{ url = \"http://{}\", key = {:?} }},\n",
                w.addr, w.vkey
            ));
        }
        toml.push_str("]\n");
    }
    std::fs::write(&config, toml).unwrap();
    let mut servers = vec!["fast"];
    if everything.is_ok() {
        servers.push("everything");
    }
    let gateway = start_gateway(&env, &config, &tmp.path().join("serve.log"));
    let pid = gateway.child.id().to_string();
    for server in &servers {
        poll(
            &format!("`{server}` in `interlock servers list`"),
            Duration::from_secs(30),
            || {
                cli(&env, &["servers", "list"])
                    .lines()
                    .any(|l| l.starts_with(&format!("{server} ")))
                    .then_some(())
            },
        );
        let shown = cli(&env, &["servers", "show", server]);
        let hash = shown
            .lines()
            .find_map(|l| l.strip_prefix("observed").map(str::trim))
            .expect("`servers show` prints the observed hash")
            .to_owned();
        // A build from before `--hash` existed (an older binary measured
        // through GATEWAY_PROXY_BIN) approves what is current.
        let approve = Command::new(bin())
            .args([
                "servers", "approve", server, "--reason", "bench", "--hash", &hash,
            ])
            .envs(env.iter().map(|(k, v)| (k, v.as_str())))
            .output()
            .expect("run interlock");
        if !approve.status.success() {
            assert!(
                String::from_utf8_lossy(&approve.stderr).contains("--hash"),
                "approve: {}",
                String::from_utf8_lossy(&approve.stderr)
            );
            cli(&env, &["servers", "approve", server, "--reason", "bench"]);
        }
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("client-rt")
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();
    let msg = message();
    let mut direct = McpClient::new(http.clone(), format!("http://{upstream}/mcp"), None);
    let mut proxied = McpClient::new(
        http.clone(),
        format!("http://{}/mcp", gateway.addr),
        Some(format!("Bearer {agent_key}")),
    );
    rt.block_on(async {
        direct.initialize().await.expect("direct initialize");
        proxied.initialize().await.expect("gateway initialize");
    });
    // The gateway applies the approval within ~0.5 s.
    poll(
        "`fast__echo` (and `everything__echo`) in the gateway's tools/list",
        Duration::from_secs(30),
        || {
            let list = rt.block_on(proxied.request("tools/list", "{}")).ok()?;
            servers
                .iter()
                .all(|s| contains(&list, format!("\"{s}__echo\"").as_bytes()))
                .then_some(())
        },
    );
    let setup_secs = t.elapsed().as_secs_f64();
    // Resident memory with the upstreams connected and one agent session, before
    // any call (issue 17's "gateway RSS idle").
    let rss_idle = rss_kib(&pid);

    let direct_params = call_params("echo", &msg);
    let proxied_params = call_params("fast__echo", &msg);
    assert_eq!(
        json!({"message": msg}).to_string().len(),
        200,
        "arguments are 200 bytes"
    );
    let me = std::process::id().to_string();

    // Sequential.
    let d_seq = rt.block_on(sequential(&mut direct, &direct_params, &msg));
    let perf = Perf::start(&pid, "sequential");
    let counts = Counts::start(&pid);
    let gw_cpu = Cpu::start(&pid);
    let p_seq = rt.block_on(sequential(&mut proxied, &proxied_params, &msg));
    let seq_calls = (WARMUP_CALLS + SEQ_CALLS + 1) as u64;
    let gw_seq_cpu = gw_cpu.ms_per_call(seq_calls, clk_tck);
    let seq_counts = counts.per_call(seq_calls);
    perf.stop();

    // 16-way concurrent.
    let me_cpu = Cpu::start(&me);
    let d_conc = rt.block_on(concurrent(&direct, &direct_params));
    let me_d_cpu = me_cpu.ms_per_call(d_conc.calls + 20 * CONCURRENCY as u64, clk_tck);
    let perf = Perf::start(&pid, "concurrent");
    let counts = Counts::start(&pid);
    let gw_cpu = Cpu::start(&pid);
    let me_cpu = Cpu::start(&me);
    let p_conc = rt.block_on(concurrent(&proxied, &proxied_params));
    let conc_calls = p_conc.calls + 20 * CONCURRENCY as u64;
    let gw_conc_cpu = gw_cpu.ms_per_call(conc_calls, clk_tck);
    let me_p_cpu = me_cpu.ms_per_call(conc_calls, clk_tck);
    let conc_counts = counts.per_call(conc_calls);
    perf.stop();

    // The peers, after the fast upstream's phases. ContextForge is started
    // only for its own phases and stopped after them, so its background work
    // touches no other figure.
    let peer_rows = everything.as_ref().ok().map(|ev| {
        let http = peer_http_client();
        let expect = format!("Echo: {msg}");
        let run = |client: McpClient, tool: &str, gateway: Option<u32>, counts| {
            rt.block_on(async {
                let mut t = peers::Target {
                    client,
                    params: call_params(tool, &msg),
                    gateway,
                    counts,
                };
                t.client.initialize().await?;
                peers::measure(&mut t, &expect, ev, clk_tck).await
            })
        };
        let d = run(
            McpClient::new(http.clone(), ev.url(), None),
            "echo",
            None,
            peers::FULL,
        );
        let il = run(
            McpClient::new(
                http.clone(),
                format!("http://{}/mcp", gateway.addr),
                Some(format!("Bearer {agent_key}")),
            ),
            "everything__echo",
            Some(gateway.child.id()),
            peers::FULL,
        );
        let contextforge: Result<peers::ContextForge, String> = if selection.contextforge {
            eprintln!("gateway_proxy: setting up ContextForge (scripts/peer-contextforge.sh)");
            peers::ContextForge::start(&ev.url(), &tmp.path().join("contextforge-setup.log"))
        } else {
            Err("left out (GATEWAY_PROXY_PEERS)".to_owned())
        };
        let cf = contextforge.and_then(|cf| {
            let tool = format!("{}echo", cf.tool_prefix);
            let r = run(
                McpClient::new(
                    http.clone(),
                    cf.url.clone(),
                    Some(format!("Bearer {}", cf.token)),
                ),
                &tool,
                Some(cf.pid()),
                peers::SLOW,
            );
            r.map(|row| (row, cf.version.clone()))
        });
        (ev.version.clone(), d, il, cf)
    });
    let everything_skip = everything.as_ref().err().cloned();
    drop(everything);

    // Resident memory after the calls, and with `OPEN_SESSIONS` more agent
    // sessions open (initialized, kept, idle).
    let rss_after_calls = rss_kib(&pid);
    let sessions: Vec<McpClient> = rt.block_on(async {
        let mut open = Vec::with_capacity(OPEN_SESSIONS);
        for _ in 0..OPEN_SESSIONS {
            let mut c = McpClient::new(
                http.clone(),
                format!("http://{}/mcp", gateway.addr),
                Some(format!("Bearer {agent_key}")),
            );
            c.initialize().await.expect("open a session");
            open.push(c);
        }
        open
    });
    let rss_sessions = rss_kib(&pid);
    drop(sessions);

    drop(direct);
    drop(proxied);
    drop(http);
    drop(rt);
    stop_gateway(gateway);
    drop(witnesses);

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!(
        "gateway_proxy: tools/call echo, {} B of arguments, {cores} CPUs, data dir on {}",
        json!({"message": msg}).to_string().len(),
        std::env::temp_dir().display()
    );
    println!(
        "  sequential: {SEQ_CALLS} calls after {WARMUP_CALLS} warm-up; concurrent: {CONCURRENCY} sessions for {CONC_SECS} s"
    );
    println!(
        "  load average before / after: {} / {}  (other work on the machine skews every figure)",
        load_before,
        loadavg()
    );
    println!();
    println!(
        "  {:<10} {:>9} {:>9} {:>9} {:>12} {:>9} {:>9}",
        "", "seq p50", "seq p99", "seq mean", "16-way /s", "16w p50", "16w p99"
    );
    for (name, s, c) in [("direct", &d_seq, &d_conc), ("proxied", &p_seq, &p_conc)] {
        println!(
            "  {:<10} {:>6.3} ms {:>6.3} ms {:>6.3} ms {:>12.0} {:>6.2} ms {:>6.2} ms",
            name,
            s.p50,
            s.p99,
            s.mean,
            c.per_sec(),
            c.p50,
            c.p99
        );
    }
    println!();
    println!(
        "  added by the gateway (sequential): p50 +{:.3} ms, p99 +{:.3} ms, mean +{:.3} ms",
        p_seq.p50 - d_seq.p50,
        p_seq.p99 - d_seq.p99,
        p_seq.mean - d_seq.mean
    );
    println!(
        "  proxied/direct: p50 {:.2}x, 16-way throughput {:.2}x",
        p_seq.p50 / d_seq.p50,
        p_conc.per_sec() / d_conc.per_sec()
    );
    println!(
        "  gateway CPU per proxied call: {:.3} ms sequential, {:.3} ms 16-way  (CLK_TCK {clk_tck})",
        gw_seq_cpu, gw_conc_cpu
    );
    println!(
        "  bench process (client + upstream) CPU per call, 16-way: {:.3} ms direct, {:.3} ms proxied",
        me_d_cpu, me_p_cpu
    );
    if let (Some(seq), Some(conc)) = (&seq_counts, &conc_counts) {
        println!("  gateway per proxied call (perf stat), sequential: {seq}");
        println!("  gateway per proxied call (perf stat), 16-way: {conc}");
    }
    match peer_rows {
        Some((version, d, il, cf)) => {
            let cf_name = match &cf {
                Ok((_, v)) => format!("ContextForge {v}"),
                Err(_) => "ContextForge".to_owned(),
            };
            let cf: peers::Outcome = cf.map(|(row, _)| row);
            peers::print(
                &version,
                &[("direct", &d), ("interlock serve", &il), (&cf_name, &cf)],
            );
        }
        None => {
            println!();
            println!(
                "  peers: NOT MEASURED: server-everything: {}",
                everything_skip.as_deref().unwrap_or("?")
            );
        }
    }
    println!();
    println!(
        "  gateway RSS: idle {:.1} MiB, after the calls {:.1} MiB, with {OPEN_SESSIONS} more open sessions {:.1} MiB ({:.1} KiB per session)",
        rss_idle as f64 / 1024.0,
        rss_after_calls as f64 / 1024.0,
        rss_sessions as f64 / 1024.0,
        rss_sessions.saturating_sub(rss_after_calls) as f64 / OPEN_SESSIONS as f64
    );
    if witness_count > 0 {
        let mut micros = support::cosign_micros(&tmp.path().join("serve.log"));
        micros.sort_unstable();
        let at = |q: f64| {
            micros
                .get(((micros.len() as f64 - 1.0) * q) as usize)
                .copied()
        };
        println!(
            "  witnesses: {witness_count}; {} cosignatures kept, checkpoint picked up to cosignature kept: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            micros.len(),
            at(0.5).unwrap_or(0) as f64 / 1e3,
            at(0.99).unwrap_or(0) as f64 / 1e3,
            micros.last().copied().unwrap_or(0) as f64 / 1e3,
        );
    }
    println!(
        "  setup {:.1} s, total {:.1} s",
        setup_secs,
        total.elapsed().as_secs_f64()
    );
}
