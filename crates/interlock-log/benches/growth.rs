//! The log as it grows (issue 45 item 5): appends at 10,000,000 entries
//! against a fresh log, the cost of opening it, an inclusion proof, and a
//! full audit — on a log generated through the real append path (64 tasks
//! appending ~200-byte entries, each durable before it returns: WAL,
//! synchronous=FULL, group commits, checkpoints signed per interval).
//!
//! ```text
//! cargo bench -p interlock-log --bench growth
//! ```
//!
//! `GROWTH_N` (default 10,000,000) entries; the log is kept outside the
//! repository, in `GROWTH_DIR` (default `~/.cache/interlock/growth`), and
//! reused when it already holds `GROWTH_N` (delete the directory for a
//! fresh one). Prints entries/s over the first and the last 200,000 appends,
//! the database's size, how long opening the log takes (its tiles' roots and
//! last leaves are read) and the memory it holds, inclusion proofs' p50/p99,
//! and how long `audit` (what `interlock audit verify` runs) takes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Value};
use interlock_log::{CheckpointSigner, Log};
use interlock_store::Store;

/// The allocator of the `interlock` binary, whose appends and `audit verify`
/// this models.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const APPENDERS: u64 = 64;
const WINDOW: u64 = 200_000;
const ORIGIN: &str = "bench.interlock.example/growth";

fn entry(task: u64, i: u64) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "tool.call".into());
    m.insert("agent".into(), format!("agent-{task:03}").into());
    m.insert("tool".into(), "filesystem.write_file".into());
    m.insert(
        "target".into(),
        format!("/srv/app/config/service-{i:08}.yaml").into(),
    );
    m.insert("decision".into(), "allowed".into());
    m.insert(
        "args_hash".into(),
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
    );
    Value::Object(m)
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap()
        / 1024.0
}

async fn open(path: &std::path::Path) -> (Store, Log) {
    let store = Store::open(path).await.expect("open store");
    let signer: CheckpointSigner = Arc::new(SigningKey::from_bytes(&[7u8; 32]));
    let log = Log::open(store.clone(), signer, ORIGIN)
        .await
        .expect("open log");
    (store, log)
}

/// Appends `n` entries with [`APPENDERS`] tasks; entries/s.
async fn append(log: &Log, n: u64) -> f64 {
    let started = Instant::now();
    let per_task = n / APPENDERS;
    let mut tasks = Vec::new();
    for t in 0..APPENDERS {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_task {
                log.append(entry(t, i)).await.expect("append");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    (per_task * APPENDERS) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("growth: run with `cargo bench -p interlock-log --bench growth`; skipped");
        return;
    }
    let n: u64 = std::env::var("GROWTH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let dir = std::env::var_os("GROWTH_DIR").map_or_else(
        || PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/interlock/growth"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("log-{n}.sqlite"));

    let (store, log) = open(&path).await;
    let mut fresh = None;
    let mut grown = None;
    if log.size() < n {
        let begun = Instant::now();
        if log.size() == 0 {
            fresh = Some(append(&log, WINDOW).await);
        }
        while log.size() + WINDOW < n {
            let step = (n - WINDOW - log.size()).min(1_000_000);
            let rate = append(&log, step.max(APPENDERS)).await;
            eprintln!(
                "growth: {} entries ({rate:.0}/s, {:.0} s so far)",
                log.size(),
                begun.elapsed().as_secs_f64()
            );
        }
        grown = Some(append(&log, n - log.size()).await);
    }
    let size = log.size();
    log.close().await;
    store.close().await;
    let db_bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("log-{n}.sqlite"))
        })
        .map(|e| e.metadata().unwrap().len())
        .sum();

    // Opening: the tree made from the stored tile roots and the leaves after them.
    let rss_before = rss_mib();
    let opened = Instant::now();
    let (store, log) = open(&path).await;
    let open_secs = opened.elapsed().as_secs_f64();
    let rss_open = rss_mib();

    // Inclusion proofs of entries spread over the whole log.
    let mut proof_us = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..10_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = x % size;
        let t = Instant::now();
        let p = log.inclusion_proof(i, size).await.expect("a proof");
        proof_us.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(p);
    }
    proof_us.sort_by(f64::total_cmp);
    // An append at this size, one at a time (no group to share the fsync).
    let t = Instant::now();
    for i in 0..200 {
        log.append(entry(999, i)).await.expect("append");
    }
    let single_ms = t.elapsed().as_secs_f64() * 1e3 / 200.0;
    log.close().await;

    // The audit `interlock audit verify` runs.
    let audited = Instant::now();
    let report = interlock_log::audit(&store, None).await.expect("audit");
    let audit_secs = audited.elapsed().as_secs_f64();

    // The receipts index caught up (once, then incrementally as the log
    // grows), then an export of one agent's receipts: only the rows it
    // carries are read, but its proofs need the tree, rebuilt from every
    // stored leaf hash.
    let indexed = Instant::now();
    let newly = interlock_log::index_receipts(&store).await.expect("index");
    let index_secs = indexed.elapsed().as_secs_f64();
    let again = Instant::now();
    interlock_log::index_receipts(&store).await.expect("index");
    let index_again_ms = again.elapsed().as_secs_f64() * 1e3;
    let filter = interlock_log::ExportFilter {
        agent: Some("agent-999".into()),
        ..interlock_log::ExportFilter::default()
    };
    let exported = Instant::now();
    let bundle = interlock_log::export(&store, &filter)
        .await
        .expect("export");
    let export_secs = exported.elapsed().as_secs_f64();
    let carried = bundle.receipts.len();
    store.close().await;

    println!("log growth: {size} entries (~200-byte entries, {APPENDERS} appenders)");
    println!("| measure | value |");
    println!("|---|---|");
    if let (Some(f), Some(g)) = (fresh, grown) {
        println!("| appends/s, the first {WINDOW} (fresh log) | {f:.0} |");
        println!(
            "| appends/s, the last {WINDOW} (to {size}) | {g:.0} ({:.2}× the fresh rate) |",
            g / f
        );
    } else {
        println!(
            "| appends | (log reused: delete {} to measure them) |",
            dir.display()
        );
    }
    println!("| one append alone at this size | {single_ms:.2} ms |");
    println!(
        "| database on disk | {:.2} GiB |",
        db_bytes as f64 / (1u64 << 30) as f64
    );
    println!(
        "| opening the log (its tile roots and last leaves read) | {open_secs:.1} s, +{:.0} MiB resident |",
        rss_open - rss_before
    );
    println!(
        "| inclusion proof, 10,000 random entries | p50 {:.1} µs, p99 {:.1} µs |",
        proof_us[proof_us.len() / 2],
        proof_us[proof_us.len() * 99 / 100]
    );
    println!(
        "| audit (every entry recomputed, every checkpoint verified) | {audit_secs:.1} s, {} entries, {} problems |",
        report.entries,
        report.problems.len()
    );
    println!(
        "| receipts index caught up | {newly} entries in {index_secs:.1} s (first time); {index_again_ms:.1} ms when caught up |"
    );
    println!("| export of one agent's receipts ({carried} of {size}) | {export_secs:.1} s |");
}
