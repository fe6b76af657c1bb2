//! Log append throughput with durability on, beside a bare SQLite insert loop
//! with the same durability in the same run.
//!
//! `cargo bench -p interlock-log --bench append` (a plain binary, no
//! criterion: the figure of interest is sustained entries/s under concurrent
//! appenders, which a per-iteration harness does not model). Environment:
//! `BENCH_SECS` (default 5) per measurement, `BENCH_APPENDERS` (default 64).
//!
//! (a) 64 tasks append ~200-byte entries in a loop; each append returns only
//!     once its entry is durable (WAL, synchronous=FULL, one fsync per group
//!     commit; a checkpoint is signed per `checkpoint_interval`, issue 17). The
//!     group commits are counted by the distinct tree sizes the appends were
//!     acknowledged at.
//! (b) a plain sqlx loop inserts equivalent rows into an equivalent table in a
//!     separate file with the same pragmas, one INSERT per row, committing
//!     every N rows where N is the batch size the log achieved in (a): the
//!     cost of the same durable writes without hashing, signing or queueing.
//! (c) the same bare loop committing every row, for context.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Value};
use interlock_log::{CheckpointSigner, Log};
use interlock_store::Store;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection as _, SqliteConnection};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A ~200-byte event (canonical, with the `seq` the log adds).
fn entry(task: u64, i: u64) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "tool_call".into());
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

struct LogRun {
    entries: u64,
    commits: u64,
    secs: f64,
    /// This process's CPU time (every thread: the runtime's workers and any
    /// thread the store uses) across the measured window.
    cpu_secs: f64,
}

/// This process's user + system CPU time so far (`/proc/self/stat`, in
/// clock ticks of 10 ms: measure over seconds, not single calls). The fields
/// after the command name's closing parenthesis start at `state` (field 3),
/// so `utime` and `stime` (fields 14 and 15) are the 12th and 13th after it.
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    let after = &stat[stat.rfind(')').expect("stat has a command name") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    ticks as f64 / 100.0
}

async fn run_log(dir: &Path, appenders: u64, secs: u64) -> LogRun {
    let store = Store::open(&dir.join("log.sqlite"))
        .await
        .expect("open store");
    let key = SigningKey::from_bytes(&[7u8; 32]);
    let signer: CheckpointSigner = Arc::new(key);
    let log = Log::open(store.clone(), signer, "bench.interlock.example/log")
        .await
        .expect("open log");
    let bytes = interlock_canon::canonical_bytes(&entry(0, 0)).len() + r#","seq":1234567"#.len();
    println!("entry size: ~{bytes} bytes (canonical JSON with seq)");

    // Warm up (page cache, statement cache, WAL file growth).
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(500) {
        let futs: Vec<_> = (0..appenders).map(|t| log.append(entry(t, 0))).collect();
        for f in futs {
            f.await.expect("append");
        }
    }

    let size_before = log.size();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let cpu_start = process_cpu_secs();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..appenders {
        let log = log.clone();
        let stop = Arc::clone(&stop);
        let acked = Arc::clone(&acked);
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            // The tree size after each append's batch: one per group commit.
            let mut batches = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let a = log.append(entry(t, i)).await.expect("append");
                batches.push(a.tree_size);
                acked.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            batches
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    // Group commits, counted by the distinct tree sizes the appends were
    // acknowledged at. (Checkpoints are signed per interval, not per commit,
    // so counting them would overstate the batch size.)
    let mut sizes = std::collections::HashSet::new();
    for t in tasks {
        sizes.extend(t.await.expect("task"));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu_secs = process_cpu_secs() - cpu_start;
    let entries = log.size() - size_before;
    assert_eq!(entries, acked.load(Ordering::Relaxed));
    let commits = sizes.len() as u64;
    log.close().await;
    store.close().await;
    LogRun {
        entries,
        commits,
        secs: elapsed,
        cpu_secs,
    }
}

/// A connection with the store's durability settings, on its own file.
async fn bare_connection(path: &Path) -> SqliteConnection {
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(opts)
        .await
        .expect("bare open");
    let mut conn = pool.acquire().await.expect("acquire").detach();
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bare_leaves (idx BIGINT NOT NULL PRIMARY KEY CHECK (idx >= 0), \
         leaf_hash BLOB NOT NULL, data BLOB NOT NULL, appended_at BIGINT NOT NULL)",
    )
    .execute(&mut conn)
    .await
    .expect("create");
    conn
}

/// Inserts rows one INSERT each, committing every `per_commit` rows, for `secs`.
async fn run_bare(path: &Path, per_commit: u64, secs: f64) -> (u64, f64) {
    let mut conn = bare_connection(path).await;
    let data = interlock_canon::canonical_bytes(&entry(1, 1));
    let hash = [0xabu8; 32];
    let mut idx: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(idx) + 1, 0) FROM bare_leaves")
        .fetch_one(&mut conn)
        .await
        .expect("max");
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        let mut tx = conn.begin().await.expect("begin");
        for _ in 0..per_commit {
            sqlx::query(
                "INSERT INTO bare_leaves (idx, leaf_hash, data, appended_at) VALUES (?, ?, ?, ?)",
            )
            .bind(idx)
            .bind(hash.as_slice())
            .bind(data.as_slice())
            .bind(1_700_000_000i64)
            .execute(&mut *tx)
            .await
            .expect("insert");
            idx += 1;
        }
        tx.commit().await.expect("commit");
        n += per_commit;
    }
    let elapsed = start.elapsed().as_secs_f64();
    conn.close().await.ok();
    (n, elapsed)
}

fn main() {
    let secs = env_u64("BENCH_SECS", 5);
    let appenders = env_u64("BENCH_APPENDERS", 64);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        println!(
            "log append bench: {appenders} concurrent appenders, {secs}s per run, SQLite WAL + synchronous=FULL, in {}",
            dir.path().display()
        );
        let log = run_log(dir.path(), appenders, secs).await;
        let log_rate = log.entries as f64 / log.secs;
        let batch = (log.entries as f64 / log.commits.max(1) as f64).round().max(1.0) as u64;
        println!(
            "log append: {} entries in {:.2}s = {:.0} durable entries/s ({} commits, {:.1} commits/s, mean batch {batch})",
            log.entries,
            log.secs,
            log_rate,
            log.commits,
            log.commits as f64 / log.secs
        );
        println!(
            "log append CPU (this process, all threads): {:.1} µs per entry, {:.1} µs per commit",
            log.cpu_secs * 1e6 / log.entries.max(1) as f64,
            log.cpu_secs * 1e6 / log.commits.max(1) as f64
        );

        let (n, s) = run_bare(&dir.path().join("bare.sqlite"), batch, secs as f64).await;
        let bare_rate = n as f64 / s;
        println!(
            "bare insert loop: {n} rows in {s:.2}s = {bare_rate:.0} entries/s (one INSERT per row, {batch} rows per commit)"
        );
        println!("log append vs bare insert ratio: {:.2}", log_rate / bare_rate);

        let (n1, s1) = run_bare(&dir.path().join("bare1.sqlite"), 1, (secs as f64 / 2.0).max(1.0)).await;
        println!(
            "bare single insert per commit: {n1} rows in {s1:.2}s = {:.0} entries/s",
            n1 as f64 / s1
        );
    });
}
