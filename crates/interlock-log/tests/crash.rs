//! SIGKILL during a burst of appends: every acknowledged entry survives, the
//! log reopens, and the audit is clean. Three rounds on the same database (the
//! SQLite file, or on a Postgres run the test's database on the server).

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use interlock_log::{Log, audit};
use interlock_store::Store;

const ORIGIN: &str = "crash.interlock.test/log";
const KEY_SEED: [u8; 32] = [42; 32];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_appends_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::from_bytes(&KEY_SEED);
    let mut total_acked = 0usize;
    let db = common::location(dir.path()).await;
    for round in 0..3 {
        let mut writer = Command::new(env!("CARGO_BIN_EXE_log-crash-writer"));
        if let interlock_store::StoreLocation::Postgres(url) = &db {
            writer.env("INTERLOCK_DATABASE_URL", url);
        }
        let mut child = writer
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start log-crash-writer");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel::<u64>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // A line cut by the kill is not an acknowledgement we saw whole.
                if let Ok(i) = line.trim().parse()
                    && tx.send(i).is_err()
                {
                    break;
                }
            }
        });
        let mut acked = BTreeSet::new();
        let start = Instant::now();
        // Read for ~1 s after the first acknowledgement (opening takes a moment).
        let mut first: Option<Instant> = None;
        while first.is_none_or(|f| f.elapsed() < Duration::from_secs(1))
            && start.elapsed() < Duration::from_secs(60)
        {
            if let Ok(i) = rx.recv_timeout(Duration::from_millis(20)) {
                first.get_or_insert_with(Instant::now);
                acked.insert(i);
            }
        }
        child.kill().expect("SIGKILL"); // SIGKILL on Unix
        child.wait().unwrap();
        // Lines already in the pipe were acknowledged before the kill too.
        reader.join().unwrap();
        acked.extend(rx.try_iter());
        assert!(
            !acked.is_empty(),
            "round {round}: the writer acknowledged nothing"
        );

        let store = Store::connect(&db).await.unwrap();
        let log = Log::open(store.clone(), std::sync::Arc::new(key.clone()), ORIGIN)
            .await
            .unwrap_or_else(|e| panic!("round {round}: log does not reopen after SIGKILL: {e}"));
        let size = log.size();
        // The audit below proves indices 0..size are all present (no gap), so
        // every acknowledged index below `size` is in the log.
        let max = *acked.iter().next_back().unwrap();
        assert!(
            max < size,
            "round {round}: acknowledged index {max} missing (size {size})"
        );
        let report = audit(&store, Some(key.verifying_key())).await.unwrap();
        assert!(report.is_ok(), "round {round}: {report}");
        assert_eq!(report.entries, size);
        println!(
            "round {round}: {} acknowledged, log size {size} after SIGKILL, audit clean",
            acked.len()
        );
        total_acked += acked.len();
        log.close().await;
        store.close().await;
    }
    assert!(total_acked > 0);
}
