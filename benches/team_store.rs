//! A team's gateways on one Postgres database beside one gateway on its SQLite
//! file (issue 20), in one run, through the same in-process MCP upstream as
//! `gateway_proxy` (so what differs is the store):
//!
//! - one gateway on SQLite, 16 clients;
//! - one gateway on Postgres, 16 clients;
//! - three gateways on one Postgres database, 16 clients each, at once.
//!
//! For each: calls per second (all gateways together), gateway CPU per call
//! (every gateway process, from /proc) and the Postgres server's CPU per call
//! (every `postgres` process of the cluster).
//!
//! ```text
//! source scripts/env.sh && scripts/with-keyring cargo bench --bench team_store
//! ```
//!
//! It starts a throwaway cluster with `scripts/pg-cluster` (Debian's
//! `postgresql`), or uses the server `$INTERLOCK_TEST_POSTGRES` names.
//! Figures in docs/BENCHMARKS.md.

#[path = "support/mod.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

const PROTOCOL: &str = "2025-11-25";
const CLIENTS: usize = 16;
const SECS: f64 = 6.0;

/// CPU ticks of every process whose command name is `postgres`.
fn postgres_ticks() -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else {
            continue;
        };
        if comm.trim() == "postgres" {
            total += cpu_ticks(&pid);
        }
    }
    total
}

/// One scenario: `gateways` (their addresses and pids) each driven by
/// [`CLIENTS`] clients for [`SECS`] seconds.
fn drive(
    rt: &tokio::runtime::Runtime,
    label: &str,
    gateways: &[Served],
    agent_key: &str,
    clk_tck: f64,
) {
    let http = http_client();
    let mut clients = Vec::new();
    for gw in gateways {
        for _ in 0..CLIENTS {
            clients.push(McpClient::new(
                http.clone(),
                format!("http://{}/mcp", gw.addr),
                Some(format!("Bearer {agent_key}")),
            ));
        }
    }
    // Every gateway serves the tool (each picked the approval up from the
    // database) and is warm.
    rt.block_on(async {
        for c in &mut clients {
            c.initialize().await.expect("initialize");
        }
        for c in clients.iter_mut().step_by(CLIENTS) {
            let until = Instant::now() + Duration::from_secs(30);
            while !c
                .request("tools/list", "{}")
                .await
                .is_ok_and(|b| contains(&b, b"fast__echo"))
            {
                assert!(Instant::now() < until, "fast__echo is not served");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            for i in 0..100 {
                c.call(&call(&format!("warm {i}"))).await.expect("warm-up");
            }
        }
    });
    let pids: Vec<String> = gateways.iter().map(|g| g.child.id().to_string()).collect();
    let gw_before: u64 = pids.iter().map(|p| cpu_ticks(p)).sum();
    let pg_before = postgres_ticks();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(SECS);
    let calls: u64 = rt.block_on(async {
        let tasks: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(w, mut c)| {
                tokio::spawn(async move {
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        c.call(&call(&format!("{w} {n}"))).await.expect("call");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        total
    });
    let secs = started.elapsed().as_secs_f64();
    let gw_ms = (pids.iter().map(|p| cpu_ticks(p)).sum::<u64>() - gw_before) as f64 * 1e3
        / clk_tck
        / calls as f64;
    let pg_ms = (postgres_ticks() - pg_before) as f64 * 1e3 / clk_tck / calls as f64;
    println!(
        "{label}: {calls} calls in {secs:.1} s = {:.0} calls/s; gateway CPU {gw_ms:.3} ms/call, \
         Postgres CPU {pg_ms:.3} ms/call",
        calls as f64 / secs
    );
}

fn call(message: &str) -> String {
    json!({"name": "fast__echo", "arguments": {"message": message}}).to_string()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("team_store: run with `cargo bench --bench team_store`; skipped");
        return;
    }
    let clk_tck = clk_tck();
    if std::env::var_os("INTERLOCK_TEST_POSTGRES").is_none() {
        return with_own_cluster();
    }
    let tmp = tempfile::Builder::new()
        .prefix("interlock-team-bench-")
        .tempdir()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let upstream = start_upstream();
    let config_text = |port: u16| {
        format!(
            "listen = \"127.0.0.1:{port}\"\n\n[servers.fast]\nurl = \"http://{upstream}/mcp\"\n"
        )
    };

    // 1. One gateway on its SQLite file.
    {
        let data = tmp.path().join("sqlite");
        let env = [
            ("INTERLOCK_DATA_DIR", data.display().to_string()),
            (
                "INTERLOCK_KEYCHAIN_SERVICE",
                format!("interlock-team-bench-sqlite-{}", std::process::id()),
            ),
            ("RUST_LOG", "warn".to_owned()),
        ];
        cli(&env, &["keys", "init", "--identity", "human:bench"]);
        let agent = cli(&env, &["agents", "add", "bench"]).trim().to_owned();
        let config = tmp.path().join("sqlite.toml");
        std::fs::write(&config, config_text(free_port())).unwrap();
        let gw = start_gateway(&env, &config, &tmp.path().join("sqlite.log"));
        approve(&env, "fast");
        drive(
            &rt,
            "one gateway, SQLite",
            std::slice::from_ref(&gw),
            &agent,
            clk_tck,
        );
        stop_gateway(gw);
    }

    // 2 and 3. On Postgres: one gateway, then three on one database.
    for gateways in [1usize, 3] {
        let db = rt.block_on(interlock_store::testing::fresh_location(
            &tmp.path().join("unused.sqlite"),
        ));
        let interlock_store::StoreLocation::Postgres(url) = db else {
            unreachable!("a Postgres database")
        };
        let service = format!("interlock-team-bench-pg{gateways}-{}", std::process::id());
        let envs: Vec<Vec<(&str, String)>> = (0..gateways)
            .map(|g| {
                vec![
                    (
                        "INTERLOCK_DATA_DIR",
                        tmp.path()
                            .join(format!("pg{gateways}-{g}"))
                            .display()
                            .to_string(),
                    ),
                    ("INTERLOCK_KEYCHAIN_SERVICE", service.clone()),
                    ("INTERLOCK_DATABASE_URL", url.clone()),
                    ("RUST_LOG", "warn".to_owned()),
                ]
            })
            .collect();
        cli(&envs[0], &["keys", "init", "--identity", "human:bench"]);
        let agent = cli(&envs[0], &["agents", "add", "bench"]).trim().to_owned();
        let served: Vec<Served> = envs
            .iter()
            .enumerate()
            .map(|(g, env)| {
                let config = tmp.path().join(format!("pg{gateways}-{g}.toml"));
                std::fs::write(&config, config_text(free_port())).unwrap();
                start_gateway(
                    env,
                    &config,
                    &tmp.path().join(format!("pg{gateways}-{g}.log")),
                )
            })
            .collect();
        approve(&envs[0], "fast");
        let label = if gateways == 1 {
            "one gateway, Postgres".to_owned()
        } else {
            format!("{gateways} gateways, one Postgres database")
        };
        drive(&rt, &label, &served, &agent, clk_tck);
        for gw in served {
            stop_gateway(gw);
        }
        let audit = cli(&envs[0], &["audit", "verify"]);
        println!(
            "{label}: audit verify: {}",
            audit.lines().next().unwrap_or("")
        );
    }
}

/// Starts a throwaway cluster (`scripts/pg-cluster`), runs this bench again
/// with `$INTERLOCK_TEST_POSTGRES` naming it (a child process rather than
/// `std::env::set_var`, which is `unsafe` in edition 2024 and the workspace
/// forbids `unsafe`), stops the cluster and exits as the run did.
fn with_own_cluster() {
    let dir = tempfile::Builder::new()
        .prefix("interlock-team-bench-pg-")
        .tempdir()
        .unwrap();
    let cluster = dir.path().join("cluster");
    let out = Command::new("scripts/pg-cluster")
        .arg("start")
        .arg(&cluster)
        .output()
        .expect("scripts/pg-cluster");
    assert!(
        out.status.success(),
        "pg-cluster: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let status = Command::new(std::env::current_exe().unwrap())
        .args(std::env::args().skip(1))
        .env("INTERLOCK_TEST_POSTGRES", &url)
        .status()
        .expect("run the bench on the cluster");
    let _ = Command::new("scripts/pg-cluster")
        .arg("stop")
        .arg(&cluster)
        .status();
    std::process::exit(status.code().unwrap_or(1));
}
