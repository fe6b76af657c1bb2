//! The receipts view's reads over a large log (issue 18): catching the
//! store's receipt index up from nothing, then the first page (unfiltered and
//! filtered), the next page, and the overview's counts.
//!
//! `cargo bench -p interlock-log --bench receipts` (a plain binary).
//! `BENCH_ENTRIES` (default 100,000) tool-call entries over 30 days, 3 agents,
//! 3 servers, 4 tools, 5 verdicts (the shape of
//! tests/integration/receipts_view.rs, which measures the same through the
//! HTTP API in a debug build).

use std::sync::Arc;
use std::time::Instant;

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Number, Value};
use interlock_log::{CheckpointSigner, Log, facts_of, index_receipts, receipts_page};
use interlock_store::{ReceiptFilter, Store};

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

fn n(i: i64) -> Value {
    Value::Number(Number::from_i64(i).expect("small"))
}

fn entry(i: u64, now: i64, count: u64) -> Value {
    let k = i as usize;
    let mut m = Map::new();
    m.insert("type".into(), "tool.call".into());
    m.insert(
        "time".into(),
        n(now - 30 * 86_400 * (count - i) as i64 / count as i64),
    );
    m.insert("agent".into(), AGENTS[k % 3].into());
    m.insert("server".into(), SERVERS[(k / 3) % 3].into());
    m.insert("tool".into(), TOOLS[k % 4].into());
    m.insert("arguments_hash".into(), format!("sha256:{i:064x}").into());
    m.insert(
        "definition_hash".into(),
        format!("sha256:{:064x}", i % 7).into(),
    );
    m.insert("outcome".into(), "ok".into());
    let mut v = Map::new();
    v.insert("verdict".into(), VERDICTS[k % 5].into());
    v.insert("shadow".into(), Value::Bool(k % 5 == 4));
    v.insert("findings".into(), Value::Array(vec![]));
    m.insert("verdict".into(), Value::Object(v));
    Value::Object(m)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let count: u64 = std::env::var("BENCH_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("log.sqlite"))
            .await
            .expect("open store");
        let signer: CheckpointSigner = Arc::new(SigningKey::from_bytes(&[7u8; 32]));
        let log = Log::open(store.clone(), signer, "bench.interlock.example/log")
            .await
            .expect("open log");
        let now = 1_800_000_000;
        let t = Instant::now();
        let mut i = 0;
        while i < count {
            let batch: Vec<Value> = (i..(i + 4096).min(count))
                .map(|j| entry(j, now, count))
                .collect();
            i += batch.len() as u64;
            log.append_many(batch).await.expect("append");
        }
        log.close().await;
        println!(
            "{count} entries appended in {:.1} s",
            t.elapsed().as_secs_f64()
        );

        // What the catch-up costs apart from SQLite: reading each leaf's facts.
        let rows = store.leaves(0..count).await.expect("leaves");
        let t = Instant::now();
        let facts: Vec<_> = rows.iter().map(facts_of).collect();
        println!("facts of {} leaves read in {:.0} ms", facts.len(), ms(t));
        drop((rows, facts));
        let t = Instant::now();
        let indexed = index_receipts(&store).await.expect("index");
        println!(
            "receipt index caught up from nothing: {indexed} leaves in {:.0} ms",
            ms(t)
        );

        let all = ReceiptFilter::default();
        let t = Instant::now();
        let page = receipts_page(&store, &all, None, 100).await.expect("page");
        println!("first page (100, newest first): {:.1} ms", ms(t));
        let cursor = page.last().map(|e| e.index);
        let t = Instant::now();
        receipts_page(&store, &all, cursor, 100)
            .await
            .expect("page");
        println!("next page: {:.1} ms", ms(t));
        let week = ReceiptFilter {
            since: Some(now - 7 * 86_400),
            server: Some("files".into()),
            agent: Some("ci".into()),
            ..ReceiptFilter::default()
        };
        let t = Instant::now();
        let got = receipts_page(&store, &week, None, 100).await.expect("page");
        println!(
            "a week of one server and agent: {:.1} ms ({} receipts)",
            ms(t),
            got.len()
        );
        let held = ReceiptFilter {
            kind: Some("tool.call".into()),
            tool: Some("write_file".into()),
            ..ReceiptFilter::default()
        };
        let t = Instant::now();
        receipts_page(&store, &held, None, 100).await.expect("page");
        println!("one event type and tool: {:.1} ms", ms(t));
        let t = Instant::now();
        let counts = store
            .receipt_counts(now - 30 * 86_400, 86_400)
            .await
            .expect("counts");
        println!(
            "overview counts, daily buckets over 30 days: {:.1} ms ({} rows)",
            ms(t),
            counts.len()
        );
    });
}
