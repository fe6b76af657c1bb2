//! The disk fills up under a burst of appends: the writer gets a clear storage
//! error, nothing it acknowledged is lost, and once there is room again the log
//! reopens clean and takes appends.
//!
//! The full disk is the kernel's: the writer runs with a file-size limit
//! (`prlimit --fsize`, `RLIMIT_FSIZE`) and `SIGXFSZ` ignored, so a write past
//! the limit fails with `EFBIG` the way a write to a full disk fails with
//! `ENOSPC` — the same short write, in the middle of SQLite's WAL append.

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Value};
use interlock_log::{Log, audit};
use interlock_store::Store;

const ORIGIN: &str = "crash.interlock.test/log";
const KEY_SEED: [u8; 32] = [42; 32];
/// Room for the database and a WAL of some hundred commits, well below the
/// WAL's automatic checkpoint (1,000 pages), so the WAL append is what fails.
const FILE_SIZE_LIMIT: u64 = 1_500_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_appends_clearly_and_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"trap "" XFSZ; exec prlimit --fsize="$1" -- "$2" "$3""#)
        .arg("sh")
        .arg(FILE_SIZE_LIMIT.to_string())
        .arg(env!("CARGO_BIN_EXE_log-crash-writer"))
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start log-crash-writer under a file-size limit");
    let mut acked = BTreeSet::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(line) = line else { break };
        if let Ok(i) = line.trim().parse::<u64>() {
            acked.insert(i);
        }
    }
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the writer did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    println!(
        "{} appends acknowledged before the disk filled; the writer said: {}",
        acked.len(),
        stderr.trim()
    );
    assert_eq!(
        status.code(),
        Some(1),
        "the writer must stop on the error, not crash: {status:?} {stderr}"
    );
    assert!(
        stderr.contains("append:") && stderr.to_lowercase().contains("disk"),
        "a clear error that names the storage: {stderr}"
    );
    assert!(!acked.is_empty(), "the limit left room for some appends");

    // Room again (no limit here): everything acknowledged is in the log, the
    // audit is clean, and the log takes appends.
    let key = SigningKey::from_bytes(&KEY_SEED);
    let store = Store::open(&dir.path().join("log.sqlite")).await.unwrap();
    let log = Log::open(store.clone(), std::sync::Arc::new(key.clone()), ORIGIN)
        .await
        .unwrap_or_else(|e| panic!("the log does not reopen after the disk filled: {e}"));
    let size = log.size();
    let max = *acked.iter().next_back().unwrap();
    assert!(max < size, "acknowledged index {max} missing (size {size})");
    let report = audit(&store, Some(key.verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.entries, size);
    let mut m = Map::new();
    m.insert("type".into(), "after_full_disk".into());
    let next = log.append(Value::Object(m)).await.unwrap();
    assert_eq!(next.index, size);
    log.close().await;
    store.close().await;
}
