//! What alert sinks cost and how fast they deliver (issue 21), in one run:
//!
//! - the gateway's CPU per proxied call with no sink, then with three sinks
//!   (webhook, Splunk HEC, Datadog) delivering to a local receiver: delivery
//!   reads the log, off the call path, so the two should be within noise;
//! - delivery lag under a 16-way burst: for each call, from the client's
//!   answer to the webhook receiver's arrival of its event (matched by the
//!   arguments' hash), p50 and p99;
//! - the events per second one sink sustains draining a backlog (a new sink
//!   starts at the beginning of the log).
//!
//! ```text
//! source scripts/env.sh && scripts/with-keyring cargo bench --bench alerts_delivery
//! ```
//!
//! The upstream MCP server, the client and the gateway setup are
//! `gateway_proxy`'s (copied: two bench roots cannot share a module without a
//! path module of its own). The receiver is an axum server in this process.
//! Figures in docs/BENCHMARKS.md.

#[path = "support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::json;
use support::*;

const PROTOCOL: &str = "2025-11-25";
const CPU_CALLS: usize = 1500;
const CONCURRENCY: usize = 16;
const BURST_SECS: f64 = 3.0;

// ---------------------------------------------------------------------------
// The receiver: every sink posts here; it notes when each event arrived.

#[derive(Default)]
struct Arrivals {
    /// Webhook events by arguments hash: when they arrived.
    by_args: HashMap<String, Instant>,
    /// Events received per path, and the arrival of each on the drain sink.
    per_path: HashMap<String, u64>,
    drain: Vec<Instant>,
}

fn start_receiver(arrivals: Arc<Mutex<Arrivals>>) -> std::net::SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("receiver".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: Bytes| {
                    let arrivals = Arc::clone(&arrivals);
                    async move {
                        let now = Instant::now();
                        let path = uri.path().to_owned();
                        let mut a = arrivals.lock().unwrap();
                        if path == "/drain" {
                            a.drain.push(now);
                        }
                        if path == "/hook"
                            && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
                            && let Some(h) = v["arguments_hash"].as_str()
                        {
                            a.by_args.insert(h.to_owned(), now);
                        }
                        *a.per_path.entry(path).or_default() += 1;
                        (StatusCode::OK, "{\"text\":\"Success\",\"code\":0}")
                    }
                });
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        })
        .unwrap();
    rx.recv().unwrap()
}

/// The hash the gateway logs for `{"message": m}` (JCS, SHA-256).
fn arguments_hash(m: &str) -> String {
    let v = interlock_core::canon::parse_json(json!({ "message": m }).to_string().as_bytes())
        .expect("JSON");
    interlock_core::canon::digest(&v).to_string()
}

fn call_params(tool: &str, message: &str) -> String {
    json!({"name": tool, "arguments": {"message": message}}).to_string()
}

fn sink(name: &str, kind: &str, url: String, env: &str, extra: &str) -> String {
    format!(
        "\n[[alerts.sinks]]\nname = \"{name}\"\nkind = \"{kind}\"\nurl = \"{url}\"\nsecret_env = \"{env}\"\n{extra}"
    )
}

/// CPU milliseconds per call of `CPU_CALLS` sequential calls: the gateway's,
/// and `beside`'s (a delivery process) over the same calls.
fn cpu_per_call(
    rt: &tokio::runtime::Runtime,
    client: &mut McpClient,
    pid: &str,
    beside: Option<&str>,
    clk_tck: f64,
) -> (f64, f64) {
    rt.block_on(async {
        client.initialize().await.expect("initialize");
        // The restarted gateway serves the tool once it has listed its upstream.
        let until = Instant::now() + Duration::from_secs(30);
        while !client
            .request("tools/list", "{}")
            .await
            .is_ok_and(|b| contains(&b, b"fast__echo"))
        {
            assert!(Instant::now() < until, "fast__echo is not served");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for i in 0..200 {
            client
                .call(&call_params("fast__echo", &format!("warm {i}")))
                .await
                .expect("warm-up");
        }
        let cpu = Cpu::start(pid);
        let other = beside.map(Cpu::start);
        for i in 0..CPU_CALLS {
            client
                .call(&call_params("fast__echo", &format!("cpu {i}")))
                .await
                .expect("call");
        }
        if other.is_some() {
            // The delivery process catches up with the calls before it is read.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        (
            cpu.ms_per_call(CPU_CALLS as u64, clk_tck),
            other.map_or(0.0, |o| o.ms_per_call(CPU_CALLS as u64, clk_tck)),
        )
    })
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("alerts_delivery: run with `cargo bench --bench alerts_delivery`; skipped");
        return;
    }
    let clk_tck = clk_tck();
    let tmp = tempfile::Builder::new()
        .prefix("interlock-alerts-bench-")
        .tempdir()
        .unwrap();
    let env = [
        ("INTERLOCK_DATA_DIR", tmp.path().display().to_string()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            format!("interlock-alerts-bench-{}", std::process::id()),
        ),
        ("RUST_LOG", "warn".to_owned()),
        ("BENCH_SECRET", "bench-secret".to_owned()),
    ];
    let upstream = start_upstream();
    let arrivals = Arc::new(Mutex::new(Arrivals::default()));
    let receiver = start_receiver(Arc::clone(&arrivals));
    cli(&env, &["keys", "init", "--identity", "human:bench"]);
    let agent_key = cli(&env, &["agents", "add", "bench"]).trim().to_owned();
    let config = tmp.path().join("gateway.toml");
    let base = format!(
        "listen = \"127.0.0.1:{}\"\n\n[servers.fast]\nurl = \"http://{upstream}/mcp\"\n",
        free_port()
    );
    // ALERTS_BENCH_BATCH_ONLY=1: an OTLP logs sink instead of the webhook, so
    // all three send a batch per request (no per-event request): the CPU
    // figures only, to tell the per-event requests' share (no burst or drain).
    let batch_only = std::env::var_os("ALERTS_BENCH_BATCH_ONLY").is_some();
    // ALERTS_BENCH_SEPARATE=1: `[alerts] process = "separate"`, delivery by
    // `interlock alerts run` beside the gateway (its CPU reported apart; no
    // drain).
    let separate = std::env::var_os("ALERTS_BENCH_SEPARATE").is_some();
    let first = if batch_only {
        sink(
            "otel",
            "otlp",
            format!("http://{receiver}/v1/logs"),
            "BENCH_SECRET",
            "start = \"end\"\n",
        )
    } else {
        sink(
            "hook",
            "webhook",
            format!("http://{receiver}/hook"),
            "BENCH_SECRET",
            "start = \"end\"\n",
        )
    };
    let three = format!(
        "\n[alerts]\npoll_ms = 20\n{}{}{}{}",
        if separate {
            "process = \"separate\"\n"
        } else {
            ""
        },
        first,
        sink(
            "splunk",
            "splunk_hec",
            format!("http://{receiver}/splunk"),
            "BENCH_SECRET",
            "start = \"end\"\n"
        ),
        sink(
            "dd",
            "datadog",
            format!("http://{receiver}/dd"),
            "BENCH_SECRET",
            "start = \"end\"\n"
        ),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();

    // 1. CPU per call: no sink, then three sinks, alternating twice.
    std::fs::write(&config, &base).unwrap();
    let gw = start_gateway(&env, &config, &tmp.path().join("serve.log"));
    approve(&env, "fast");
    stop_gateway(gw);
    let mut figures: Vec<(&str, f64)> = Vec::new();
    for round in 0..2 {
        for (label, toml) in [("none", base.clone()), ("three", format!("{base}{three}"))] {
            std::fs::write(&config, &toml).unwrap();
            let gw = start_gateway(
                &env,
                &config,
                &tmp.path().join(format!("serve-{label}-{round}.log")),
            );
            let pid = gw.child.id().to_string();
            let mut delivery = (separate && label == "three").then(|| {
                Command::new(bin())
                    .args(["alerts", "run", "--config"])
                    .arg(&config)
                    .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("interlock alerts run")
            });
            let delivery_pid = delivery.as_ref().map(|c| c.id().to_string());
            let mut client = McpClient::new(
                http.clone(),
                format!("http://{}/mcp", gw.addr),
                Some(format!("Bearer {agent_key}")),
            );
            let (ms, beside) =
                cpu_per_call(&rt, &mut client, &pid, delivery_pid.as_deref(), clk_tck);
            if delivery_pid.is_some() {
                println!(
                    "cpu per call, {label} sinks (round {round}): gateway {ms:.3} ms, \
                     delivery process {beside:.3} ms"
                );
            } else {
                println!("cpu per call, {label} sinks (round {round}): {:.3} ms", ms);
            }
            figures.push((label, ms));
            if label == "three" && round == 1 && !batch_only {
                // 2. Lag under a 16-way burst, on this gateway.
                let started = Instant::now();
                let deadline = started + Duration::from_secs_f64(BURST_SECS);
                let answered: Vec<(String, Instant)> = rt.block_on(async {
                    let mut tasks = Vec::new();
                    for w in 0..CONCURRENCY {
                        let mut c = client.clone();
                        tasks.push(tokio::spawn(async move {
                            c.initialize().await.expect("initialize");
                            let mut done = Vec::new();
                            let mut n = 0;
                            while Instant::now() < deadline {
                                let m = format!("burst {w} {n}");
                                c.call(&call_params("fast__echo", &m)).await.expect("call");
                                done.push((m, Instant::now()));
                                n += 1;
                            }
                            done
                        }));
                    }
                    let mut all = Vec::new();
                    for t in tasks {
                        all.extend(t.await.unwrap());
                    }
                    all
                });
                let hashes: Vec<(String, Instant)> = answered
                    .iter()
                    .map(|(m, t)| (arguments_hash(m), *t))
                    .collect();
                let lags = poll(
                    "every burst event delivered",
                    Duration::from_secs(120),
                    || {
                        let a = arrivals.lock().unwrap();
                        let lags: Option<Vec<f64>> = hashes
                            .iter()
                            .map(|(h, t)| {
                                a.by_args
                                    .get(h)
                                    .map(|at| at.saturating_duration_since(*t).as_secs_f64() * 1e3)
                            })
                            .collect();
                        lags
                    },
                );
                let mut lags = lags;
                lags.sort_by(f64::total_cmp);
                println!(
                    "burst: {} calls by {CONCURRENCY} clients in {BURST_SECS} s; webhook delivery lag p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                    lags.len(),
                    percentile(&lags, 50.0),
                    percentile(&lags, 99.0),
                    lags[lags.len() - 1]
                );
                let a = arrivals.lock().unwrap();
                println!("receiver paths: {:?}", a.per_path);
            }
            stop_gateway(gw);
            if let Some(mut d) = delivery.take() {
                let _ = d.kill();
                let _ = d.wait();
            }
        }
    }
    let mean = |l: &str| {
        let v: Vec<f64> = figures
            .iter()
            .filter(|(k, _)| *k == l)
            .map(|(_, v)| *v)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    println!(
        "cpu per call: no sink {:.3} ms, three sinks {:.3} ms ({:+.1}%)",
        mean("none"),
        mean("three"),
        (mean("three") / mean("none") - 1.0) * 100.0
    );

    if batch_only || separate {
        let a = arrivals.lock().unwrap();
        println!("receiver paths: {:?}", a.per_path);
        return;
    }
    // 3. One sink draining the whole log from the beginning.
    std::fs::write(
        &config,
        format!(
            "{base}\n[alerts]\npoll_ms = 20\n{}",
            sink(
                "drain",
                "webhook",
                format!("http://{receiver}/drain"),
                "BENCH_SECRET",
                "batch_size = 256\n"
            )
        ),
    )
    .unwrap();
    let gw = start_gateway(&env, &config, &tmp.path().join("serve-drain.log"));
    // Drained when nothing more arrives for two seconds.
    let mut seen = 0;
    let mut still = Instant::now();
    poll("the drain", Duration::from_secs(300), || {
        let n = arrivals.lock().unwrap().drain.len();
        if n != seen {
            seen = n;
            still = Instant::now();
        }
        (n > 0 && still.elapsed() > Duration::from_secs(2)).then_some(())
    });
    let a = arrivals.lock().unwrap();
    let (first, last) = (a.drain[0], a.drain[a.drain.len() - 1]);
    let secs = last.duration_since(first).as_secs_f64();
    println!(
        "one webhook sink drained {} events in {:.2} s: {:.0} events/s",
        a.drain.len(),
        secs,
        a.drain.len() as f64 / secs
    );
    drop(a);
    stop_gateway(gw);
}
