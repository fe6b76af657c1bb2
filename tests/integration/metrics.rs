//! Issue 21 item 4: `/metrics` scraped by Debian's real `prometheus` server
//! (2.x, from apt) with a metrics-only bearer key, its query API showing the
//! gateway's series; and who may scrape.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, free_port, http, peers_dir, wait_for_port};
use crate::util::{stderr, stdout};

fn gateway() -> Gateway {
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[roles.default]\ntools = [\"*\"]\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    gw
}

fn metrics_key(gw: &Gateway) -> String {
    let out = gw.cli(&["reviewers", "add", "scraper", "--scope", "metrics"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn get(gw: &Gateway, path: &str, key: Option<&str>) -> (u16, String) {
    let auth = key.map(|k| format!("Bearer {k}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    let (status, _, body) = http(&gw.addr, "GET", path, &headers, b"");
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// The server and its directory (config, key file, storage), removed on drop.
struct Prometheus(Child, #[allow(dead_code)] tempfile::TempDir);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The real Prometheus server, scraping `target` every second with `key`.
fn prometheus(target: &str, key: &str) -> (Prometheus, String) {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, key).unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: interlock\n    \
             metrics_path: /metrics\n    authorization:\n      type: Bearer\n      credentials_file: {}\n    \
             static_configs:\n      - targets: [\"{target}\"]\n",
            key_file.display()
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("prometheus.log")).unwrap(),
        ))
        .spawn()
        .expect("prometheus is installed (apt install prometheus; scripts/setup.sh does)");
    wait_for_port(port);
    (Prometheus(child, dir), format!("127.0.0.1:{port}"))
}

/// Queries Prometheus until `query` has a sample `done` accepts.
fn query_until(prom: &str, query: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let path = format!("/api/v1/query?query={}", urlencode(query));
    loop {
        let (status, _, body) = http(prom, "GET", &path, &[], b"");
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status == 200
            && v["data"]["result"]
                .as_array()
                .is_some_and(|r| r.iter().any(&done))
        {
            return v;
        }
        assert!(Instant::now() < deadline, "prometheus: {query}: {v}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn value(sample: &Value) -> f64 {
    sample["value"][1].as_str().unwrap().parse().unwrap()
}

/// Prometheus scrapes `/metrics` with a metrics-only key: the calls by
/// verdict, blocks and holds, both latencies' histograms and the log's size
/// are series its API returns.
#[test]
fn prometheus_scrapes_the_gateways_metrics_with_a_metrics_only_key() {
    let gw = gateway();
    let key = metrics_key(&gw);
    for name in ["Ada", "Grace"] {
        let r = gw.client(
            "py",
            &[
                "call",
                "drifty__greet",
                &json!({ "name": name }).to_string(),
            ],
        );
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("Hello, {name}!"),
            "{r}"
        );
    }
    let held = gw.client(
        "py",
        &[
            "call",
            "drifty__greet",
            r#"{"name":"x'; DROP TABLE users; --"}"#,
        ],
    );
    assert_eq!(held["result"]["structuredContent"]["held"], true, "{held}");
    let (_prom, prom) = prometheus(&gw.addr, &key);
    query_until(&prom, "up{job=\"interlock\"}", |s| value(s) == 1.0);
    query_until(
        &prom,
        "interlock_tool_calls_total{verdict=\"allowed\"}",
        |s| value(s) == 2.0,
    );
    query_until(&prom, "interlock_holds_total", |s| value(s) >= 1.0);
    query_until(&prom, "interlock_decision_latency_seconds_count", |s| {
        value(s) >= 2.0
    });
    query_until(&prom, "interlock_log_append_latency_seconds_count", |s| {
        value(s) >= 4.0
    });
    query_until(&prom, "interlock_log_leaves", |s| value(s) > 0.0);
    query_until(&prom, "interlock_blocks_total", |s| value(s) == 0.0);
}

/// Only a full reviewer key or a metrics-only key reads `/metrics`, and a
/// metrics-only key reads nothing else (a scraper's key leaked from a
/// monitoring system must not open the inbox or approve anything).
#[test]
fn a_metrics_only_key_reaches_metrics_and_nothing_else() {
    let gw = gateway();
    let key = metrics_key(&gw);
    let (status, text) = get(&gw, "/metrics", Some(&key));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("# TYPE interlock_holds counter"), "{text}");
    assert!(
        text.ends_with("# EOF\n"),
        "OpenMetrics ends with # EOF: {text}"
    );
    let reviewer = gw.reviewer_key();
    assert_eq!(get(&gw, "/metrics", Some(&reviewer)).0, 200);
    assert_eq!(get(&gw, "/metrics", None).0, 401);
    assert_eq!(
        get(&gw, "/metrics", Some(&gw.agent_key)).0,
        401,
        "an agent key"
    );
    let out = gw.cli(&["reviewers", "add", "ci", "--scope", "review"]);
    let review_only = stdout(&out).trim().to_owned();
    assert_eq!(get(&gw, "/metrics", Some(&review_only)).0, 403);
    for path in [
        "/api/v1/inbox",
        "/api/v1/alerts",
        "/api/v1/log",
        "/api/v1/events",
    ] {
        let (status, body) = get(&gw, path, Some(&key));
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains("metrics-only"), "{body}");
    }
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/servers/drifty/review",
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Content-Type", "application/json"),
        ],
        b"{}",
    );
    assert_eq!(status, 403);
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(status, 401, "a reviewer key is no agent key");
}

/// Issue 17: the tally counts and indexes every call once, off the call path,
/// from the log's memory — no receipts request needed for the index to keep
/// up, and no call counted twice when the buffer and the store both hold it.
#[test]
fn the_tally_counts_every_call_once_and_keeps_the_receipts_index_current() {
    let gw = gateway();
    let key = metrics_key(&gw);
    const CALLS: usize = 25;
    for i in 0..CALLS {
        let r = gw
            .try_call("drifty__greet", json!({ "name": format!("n{i}") }))
            .expect("a call answered");
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("Hello, n{i}!"),
            "{r}"
        );
    }
    let want = format!("interlock_tool_calls_total{{verdict=\"allowed\"}} {CALLS}\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let (status, text) = get(&gw, "/metrics", Some(&key));
        assert_eq!(status, 200, "{text}");
        if text.contains(&want) || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(text.contains(&want), "want {want:?} in:\n{text}");
    // The receipts index reaches the log's end by itself (written every
    // 2.5 s), read straight from the store, not through the receipts API
    // (which would catch it up on its own).
    let location = match gw.database_url() {
        Some(url) => interlock_store::StoreLocation::parse(url).unwrap(),
        None => interlock_store::StoreLocation::File(gw.data().join("interlock.sqlite")),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (indexed, size) = rt.block_on(async {
        let store = interlock_store::Store::connect(&location).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let indexed = store.receipt_facts_next().await.unwrap();
            let size = store.log_size().await.unwrap();
            if indexed == size || Instant::now() > deadline {
                store.close().await;
                break (indexed, size);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    assert_eq!(indexed, size, "the receipts index ends where the log does");
    // Every call's leaves are listed (the page reads the index).
    let page = gw.api_get(
        &gw.reviewer_key(),
        "/api/v1/receipts?event=tool.call&limit=100",
    );
    let listed = page["receipts"].as_array().map_or(0, Vec::len);
    assert!(
        listed >= CALLS,
        "{listed} tool.call receipts listed: {page}"
    );
}
