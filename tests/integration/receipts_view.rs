//! The receipts view's API (issue 18 item 1): a real `interlock serve` over a
//! log of 100,000 entries (written by a second writer on the same file, as
//! the CLI does), filtered and keyset-paged by the store; the export from the
//! window, verified by `interlock receipts verify`; one receipt as a
//! tlog-proof. Prints the first page's time (the measure: ≤ 200 ms).

use std::sync::Arc;
use std::time::Instant;

use interlock_core::canon::{Map, Number, Value as CValue};
use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http};
use crate::util::{interlock_with, stdout};

const AGENTS: [&str; 3] = ["builder", "ci", "reporter"];
const SERVERS: [&str; 3] = ["files", "github", "shell"];
const TOOLS: [&str; 4] = ["read_file", "write_file", "create_issue", "run"];
const VERDICTS: [&str; 5] = [
    "allowed",
    "allowed",
    "held",
    "blocked",
    "shadow_would_block",
];

fn n(i: i64) -> CValue {
    CValue::Number(Number::from_i64(i).unwrap())
}

/// Entry `i` of the seeded log: a tool call, `age` seconds old.
fn entry(i: u64, now: i64, count: u64) -> CValue {
    let i_ = i as usize;
    let mut m = Map::new();
    m.insert("type".into(), "tool.call".into());
    // Spread over 30 days, oldest first.
    let age = (30 * 86_400) * (count - i) as i64 / count as i64;
    m.insert("time".into(), n(now - age));
    m.insert("agent".into(), AGENTS[i_ % 3].into());
    m.insert("role".into(), "default".into());
    m.insert("server".into(), SERVERS[(i_ / 3) % 3].into());
    m.insert("tool".into(), TOOLS[i_ % 4].into());
    m.insert("call_id".into(), format!("call_{i:032x}").into());
    m.insert(
        "arguments_hash".into(),
        format!("sha256:{}", hex_of(i)).into(),
    );
    m.insert(
        "definition_hash".into(),
        format!("sha256:{}", hex_of(i % 7)).into(),
    );
    m.insert("outcome".into(), "ok".into());
    let mut v = Map::new();
    let verdict = VERDICTS[i_ % 5];
    v.insert("verdict".into(), verdict.into());
    v.insert("shadow".into(), CValue::Bool(verdict.starts_with("shadow")));
    v.insert("risk".into(), "low".into());
    v.insert("findings".into(), CValue::Array(vec![]));
    if verdict == "held" {
        v.insert("plan_id".into(), format!("call-{}", i % 11).into());
        v.insert("hold_reasons".into(), "a mutating tool".into());
    }
    m.insert("verdict".into(), CValue::Object(v));
    CValue::Object(m)
}

fn hex_of(i: u64) -> String {
    format!("{i:064x}")
}

/// Appends `count` entries to the gateway's log from this process, with the
/// log key from the gateway's keychain.
fn seed(gw: &Gateway, count: u64) {
    let service = gw.env_var("INTERLOCK_KEYCHAIN_SERVICE").unwrap();
    let keychain = interlock_keychain::Keychain::open(service).unwrap();
    let key = keychain
        .load_key(interlock_host::LOG_KEY)
        .unwrap()
        .expect("the gateway created its log key")
        .load_service_key()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut config = interlock_engine::EngineConfig::new(gw.data());
        // The gateway's own database (on a Postgres run, not the data directory's).
        config.database = gw
            .database_url()
            .map(|u| interlock_store::StoreLocation::parse(u).unwrap());
        let engine = interlock_engine::Engine::open(config, Arc::new(key))
            .await
            .unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let started = Instant::now();
        let mut i = 0;
        while i < count {
            let batch: Vec<CValue> = (i..(i + 4096).min(count))
                .map(|j| entry(j, now, count))
                .collect();
            i += batch.len() as u64;
            engine.log().append_many(batch).await.unwrap();
        }
        engine.log().close().await;
        println!(
            "seeded {count} log entries in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    });
}

fn get(gw: &Gateway, key: &str, path: &str) -> (Value, f64) {
    let auth = format!("Bearer {key}");
    let t = Instant::now();
    let (status, _, body) = http(&gw.addr, "GET", path, &[("Authorization", &auth)], b"");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    assert_eq!(status, 200, "{path}: {body}");
    (body, ms)
}

fn indices(page: &Value) -> Vec<u64> {
    page["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn the_receipts_api_pages_and_filters_100000_entries_and_exports_what_the_cli_verifies() {
    let count: u64 = std::env::var("INTERLOCK_RECEIPTS_ENTRIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let gw = Gateway::start("");
    let key = gw.reviewer_key();
    seed(&gw, count);

    // The first page: the index is caught up with the log first (once).
    let (first, cold) = get(&gw, &key, "/api/v1/receipts?limit=100");
    let (again, warm) = get(&gw, &key, "/api/v1/receipts?limit=100");
    assert_eq!(first, again);
    let page = indices(&first);
    assert_eq!(page.len(), 100);
    assert!(page.windows(2).all(|w| w[0] > w[1]), "newest first");
    let top = &first["receipts"][0];
    assert_eq!(top["kind"], "tool.call", "{top}");
    assert!(
        top["hash"]["value"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(top["predicate"]["verdict"].is_object(), "{top}");

    // Keyset paging: the next page starts right below the cursor.
    let cursor = first["next_cursor"].as_u64().unwrap();
    assert_eq!(cursor, *page.last().unwrap());
    let (second, paged) = get(
        &gw,
        &key,
        &format!("/api/v1/receipts?limit=100&cursor={cursor}"),
    );
    assert!(indices(&second).iter().all(|i| *i < cursor));

    // Filters, each done by SQLite: a week, one server and agent, one tool,
    // one event type; every receipt returned matches.
    let week_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 7 * 86_400;
    let (week, week_ms) = get(
        &gw,
        &key,
        &format!("/api/v1/receipts?from={week_ago}&server=files&agent=ci&limit=100"),
    );
    for r in week["receipts"].as_array().unwrap() {
        assert_eq!(r["server"], "files", "{r}");
        assert_eq!(r["agent"], "ci", "{r}");
        assert!(r["time"].as_u64().unwrap() >= week_ago, "{r}");
    }
    assert!(!indices(&week).is_empty());
    let (held, held_ms) = get(
        &gw,
        &key,
        "/api/v1/receipts?event=tool.call&tool=write_file&plan=call-3&limit=100",
    );
    for r in held["receipts"].as_array().unwrap() {
        assert_eq!(r["tool"], "write_file", "{r}");
        assert_eq!(r["plan_id"], "call-3", "{r}");
        assert_eq!(r["verdict"], "held", "{r}");
        assert_eq!(r["reasons"], "a mutating tool", "{r}");
    }
    let (none, _) = get(&gw, &key, "/api/v1/receipts?event=plan.approved");
    assert_eq!(indices(&none), Vec::<u64>::new());
    assert!(none["next_cursor"].is_null());
    println!(
        "receipts API over {count} entries: first page {cold:.1} ms (index caught up), \
         then {warm:.1} ms; next page {paged:.1} ms; a week of one server and agent \
         {week_ms:.1} ms; tool + plan + event {held_ms:.1} ms"
    );

    // The overview's counts over the whole span, by SQL over the index.
    let month_ago = week_ago - 23 * 86_400 - 86_400;
    let (overview, overview_ms) = get(
        &gw,
        &key,
        &format!("/api/v1/overview?since={month_ago}&bucket=86400"),
    );
    assert_eq!(
        overview["all"]["calls"].as_u64(),
        Some(count),
        "{}",
        overview["all"]
    );
    assert_eq!(overview["agents"].as_array().unwrap().len(), 3);
    assert_eq!(overview["servers"].as_array().unwrap().len(), 3);
    let would: u64 = overview["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["shadow_would_block"].as_u64().unwrap())
        .sum();
    assert_eq!(would, count / 5, "every fifth call is a shadow would-block");
    let series: u64 = overview["all"]["series"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(series, count, "the buckets add up");
    println!("overview of {count} entries in daily buckets: {overview_ms:.1} ms");

    // Bad input is refused with a clear error.
    let auth = format!("Bearer {key}");
    let (status, _, body) = http(
        &gw.addr,
        "GET",
        "/api/v1/receipts?from=yesterday",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("RFC 3339"));
    let (status, _, _) = http(&gw.addr, "GET", "/api/v1/receipts", &[], b"");
    assert_eq!(status, 401, "the receipts need a reviewer key");
    let agent = format!("Bearer {}", gw.agent_key);
    for path in [
        "/api/v1/receipts",
        "/api/v1/overview",
        "/api/v1/log/0/tlog-proof",
    ] {
        let (status, _, _) = http(&gw.addr, "GET", path, &[("Authorization", &agent)], b"");
        assert_eq!(status, 401, "{path}: an agent key reads no receipts");
    }
    // A filter is a bound value, never SQL.
    let (injected, _) = get(
        &gw,
        &key,
        "/api/v1/receipts?server=files%27%20OR%20%271%27%3D%271",
    );
    assert_eq!(indices(&injected), Vec::<u64>::new());
    let (status, _, _) = http(
        &gw.addr,
        "GET",
        "/api/v1/overview?bucket=1&since=0",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 400, "a million one-second buckets are refused");

    // Export a week of one server from the window's endpoint; the CLI
    // verifies the same bundle, with the same count.
    let body = json!({"from": week_ago.to_string(), "server": "files", "agent": "ci"}).to_string();
    let t = Instant::now();
    let (status, _, exported) = http(
        &gw.addr,
        "POST",
        "/api/v1/receipts/export",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    );
    let export_ms = t.elapsed().as_secs_f64() * 1000.0;
    let exported: Value = serde_json::from_slice(&exported).unwrap();
    assert_eq!(status, 200, "{exported}");
    assert_eq!(exported["verified"], true, "{exported}");
    let files = exported["files"].as_array().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["bundle.json", "report.html", "summary.csv"]);
    let out = gw.dir.path().join("exported");
    std::fs::create_dir_all(&out).unwrap();
    for f in files {
        std::fs::write(
            out.join(f["name"].as_str().unwrap()),
            f["content"].as_str().unwrap(),
        )
        .unwrap();
    }
    let receipts = exported["receipts"].as_u64().unwrap();
    let verified = interlock_with(
        &[
            "receipts",
            "verify",
            out.join("bundle.json").to_str().unwrap(),
            "--log-key",
            exported["log_key"].as_str().unwrap(),
            "--json",
        ],
        None,
        &[],
    );
    let report: Value = serde_json::from_str(&stdout(&verified)).unwrap();
    assert!(verified.status.success(), "{report}");
    assert_eq!(
        report["receipts"].as_array().unwrap().len() as u64,
        receipts
    );
    // The approver key registrations carried beside the selection are counted.
    let registrations = report["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "approver.registered")
        .count() as u64;
    assert_eq!(
        exported["registrations"].as_u64(),
        Some(registrations),
        "{exported}"
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        csv.lines().count() as u64,
        receipts + 1,
        "a header and a line each"
    );
    println!("exported {receipts} receipts (a week of files/ci) in {export_ms:.0} ms");
    // The CLI's export, same filters, same code path: the same receipts.
    let cli_out = gw.dir.path().join("cli-export");
    let out_cli = gw.cli(&[
        "receipts",
        "export",
        cli_out.to_str().unwrap(),
        "--since",
        &week_ago.to_string(),
        "--server",
        "files",
        "--agent",
        "ci",
    ]);
    assert!(out_cli.status.success(), "{}", stdout(&out_cli));
    let cli_bundle: Value =
        serde_json::from_slice(&std::fs::read(cli_out.join("bundle.json")).unwrap()).unwrap();
    let api_bundle: Value =
        serde_json::from_slice(&std::fs::read(out.join("bundle.json")).unwrap()).unwrap();
    let listed = |b: &Value| -> Vec<u64> {
        b["receipts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["index"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(listed(&cli_bundle), listed(&api_bundle));
    // Filters the CLI gained with the view: one event type of one tool.
    let by_event = gw.cli(&[
        "receipts",
        "export",
        gw.dir.path().join("by-event").to_str().unwrap(),
        "--event",
        "tool.call",
        "--tool",
        "create_issue",
        "--until",
        &(week_ago - 20 * 86_400).to_string(),
    ]);
    assert!(by_event.status.success(), "{}", stdout(&by_event));

    // One receipt as a tlog-proof, verified by the CLI with the pinned key.
    let (status, headers, proof) = http(
        &gw.addr,
        "GET",
        "/api/v1/log/5/tlog-proof",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&proof));
    assert!(
        headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-disposition")
                && v.contains("receipt-5.tlog-proof")),
        "{headers:?}"
    );
    let file = out.join("receipt-5.tlog-proof");
    std::fs::write(&file, &proof).unwrap();
    let verified = interlock_with(
        &[
            "receipts",
            "verify",
            file.to_str().unwrap(),
            "--log-key",
            exported["log_key"].as_str().unwrap(),
        ],
        None,
        &[],
    );
    assert!(verified.status.success(), "{}", stdout(&verified));
    let (status, _, _) = http(
        &gw.addr,
        "GET",
        &format!("/api/v1/log/{}/tlog-proof", count + 100),
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 404, "no receipt past the end of the log");
}
