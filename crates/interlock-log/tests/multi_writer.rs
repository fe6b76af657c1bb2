//! Several writers on one database: two `Log`s on two `Store`s in one
//! process, two processes, and another writer whose append does not verify.

mod common;

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use common::*;
use ed25519_dalek::SigningKey;
use interlock_canon::Value;
use interlock_log::{Log, LogError, audit};
use interlock_merkle::{
    Checkpoint, NoteVerifier, leaf_hash, open_checkpoint, sign_checkpoint, verify_inclusion,
};
use interlock_store::{CheckpointRow, LeafRow, Store};

/// A `Log` on its own `Store` (its own connection pool), as another process
/// would have.
async fn handle(dir: &std::path::Path) -> (Store, Log) {
    let store = open_store(dir).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    (store, log)
}

fn n_of(e: &Value) -> &str {
    e.get("n").and_then(Value::as_str).unwrap()
}

fn seq_of(e: &Value) -> i64 {
    e.get("seq")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        .unwrap()
}

/// Strict alternation: every append after the first finds its index taken by
/// the other handle (whose entry this handle has not seen), catches up and
/// re-seals. Each acknowledgement's checkpoint proves its entry, the stored
/// entries carry their new `seq`, and a handle reads the other's entries
/// without an explicit refresh.
#[tokio::test]
async fn alternating_handles_catch_up_and_reseal() {
    let dir = tempfile::tempdir().unwrap();
    let (store_a, a) = handle(dir.path()).await;
    let (store_b, b) = handle(dir.path()).await;
    let verifier = NoteVerifier::new(ORIGIN, key().verifying_key()).unwrap();
    for n in 0..40u64 {
        let log = if n % 2 == 0 { &a } else { &b };
        // Stale by the other handle's last append: the batch is sealed for
        // index n - 1 and must be re-sealed for n.
        assert_eq!(log.size(), n.saturating_sub(1), "entry {n}");
        let ack = log.append(event(n)).await.unwrap();
        assert_eq!((ack.index, ack.tree_size), (n, n + 1));
        assert_eq!(log.size(), n + 1);
        // Every append here lost the race and was re-encoded under the
        // lock, which always signs.
        let note = ack
            .checkpoint
            .as_deref()
            .expect("a checkpoint per locked commit");
        let cp: Checkpoint = open_checkpoint(note, std::slice::from_ref(&verifier)).unwrap();
        assert_eq!((cp.size, cp.root), (n + 1, log.root()));
        let proof = log.inclusion_proof(n, n + 1).await.unwrap();
        verify_inclusion(n, n + 1, &ack.leaf_hash, &proof, &cp.root).unwrap();
    }
    // `a` has not seen entry 39 (appended by `b`), but reads it on demand,
    // catching up (verified) as it does.
    assert_eq!(a.size(), 39);
    assert_eq!(n_of(&a.entry(39).await.unwrap()), "event-39");
    assert_eq!((a.size(), a.root()), (40, b.root()));
    for n in 0..40u64 {
        let e = a.entry(n).await.unwrap();
        assert_eq!((seq_of(&e), n_of(&e)), (n as i64, &*format!("event-{n}")));
    }
    assert!(matches!(
        a.entry(40).await,
        Err(LogError::OutOfRange {
            requested: 41,
            size: 40
        })
    ));
    let report = audit(&store_a, Some(key().verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.entries, report.checkpoints), (40, 40));
    for (log, store) in [(a, store_a), (b, store_b)] {
        log.close().await;
        store.close().await;
    }
}

/// Two handles on one file, each with many concurrent appenders: every
/// append is acknowledged, indices are unique and contiguous, every entry is
/// stored where its acknowledgement says, the audit is clean, and both
/// handles converge on one size, root and checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_append_concurrently_to_one_file() {
    const TASKS: u64 = 8;
    const PER_TASK: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let (store_a, a) = handle(dir.path()).await;
    let (store_b, b) = handle(dir.path()).await;
    // The handles interleave by construction, not by timing (SQLite's lock is
    // not fair: one handle's appends could all commit before the other's
    // first, which failed this test under CI's load even at 300 per task):
    // each handle's first task, once its first append is acknowledged, waits
    // for the other handle's first before it appends the rest.
    let first_done: Arc<[AtomicBool; 2]> =
        Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let mut tasks = Vec::new();
    for (h, log) in [(0u64, &a), (1, &b)] {
        for t in 0..TASKS {
            let log = log.clone();
            let first_done = Arc::clone(&first_done);
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::with_capacity(PER_TASK as usize);
                for i in 0..PER_TASK {
                    let n = (h * TASKS + t) * 10_000 + i;
                    let ack = log.append(event(n)).await.unwrap_or_else(|e| {
                        panic!("handle {h} task {t} append {i}: {e}");
                    });
                    got.push((ack.index, n));
                    if t == 0 && i == 0 {
                        first_done[h as usize].store(true, Ordering::SeqCst);
                        while !first_done[1 - h as usize].load(Ordering::SeqCst) {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    }
                }
                (h, got)
            }));
        }
    }
    let mut all = HashSet::new();
    let mut by_handle: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut expect = Vec::new();
    for t in tasks {
        let (h, got) = t.await.unwrap();
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
        for (index, n) in got {
            assert!(all.insert(index), "index {index} handed out twice");
            by_handle[h as usize].push(index);
            expect.push((index, n));
        }
    }
    let total = 2 * TASKS * PER_TASK;
    assert_eq!(all, (0..total).collect::<HashSet<_>>());
    // The handles really interleaved: each wrote after the other had.
    let (min_a, max_a) = minmax(&by_handle[0]);
    let (min_b, max_b) = minmax(&by_handle[1]);
    assert!(
        min_a < max_b && min_b < max_a,
        "no interleaving: a {min_a}..{max_a}, b {min_b}..{max_b}"
    );
    // Each entry is where its acknowledgement said, with that seq.
    for (index, n) in expect {
        let e = a.entry(index).await.unwrap();
        assert_eq!(seq_of(&e), index as i64);
        assert_eq!(n_of(&e), format!("event-{n}"));
    }
    // Whichever handle wrote last may hold entries no checkpoint signs yet
    // (it would sign within its interval): sign now, so the other handle
    // adopts them.
    a.seal().await.unwrap();
    b.seal().await.unwrap();
    let report = audit(&store_a, Some(key().verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.entries, total);
    assert_eq!(report.pending, None);
    assert_eq!(a.refresh().await.unwrap(), total);
    assert_eq!(b.refresh().await.unwrap(), total);
    assert_eq!(a.root(), b.root());
    assert_eq!(a.latest_checkpoint(), b.latest_checkpoint());
    let consistency = a.consistency_proof(1, total).await.unwrap();
    assert_eq!(consistency, b.consistency_proof(1, total).await.unwrap());
    // A fresh open agrees.
    let (store_c, c) = handle(dir.path()).await;
    assert_eq!((c.size(), c.root()), (total, a.root()));
    println!(
        "two handles: {total} entries in {} commits",
        report.checkpoints
    );
    for (log, store) in [(a, store_a), (b, store_b), (c, store_c)] {
        log.close().await;
        store.close().await;
    }
}

fn minmax(v: &[u64]) -> (u64, u64) {
    (*v.iter().min().unwrap(), *v.iter().max().unwrap())
}

const CRASH_ORIGIN: &str = "crash.interlock.test/log";
const CRASH_KEY_SEED: [u8; 32] = [42; 32];

/// A `log-crash-writer` process appending to `dir` and the indices it
/// acknowledged (read by a thread as they are printed).
struct Writer {
    child: Child,
    acks: mpsc::Receiver<u64>,
    reader: std::thread::JoinHandle<()>,
}

impl Writer {
    fn start(dir: &std::path::Path, db: &interlock_store::StoreLocation) -> Writer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_log-crash-writer"));
        if let interlock_store::StoreLocation::Postgres(url) = db {
            cmd.env("INTERLOCK_DATABASE_URL", url);
        }
        let mut child = cmd
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start log-crash-writer");
        let stdout = child.stdout.take().unwrap();
        let (tx, acks) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(i) = line.trim().parse::<u64>()
                    && tx.send(i).is_err()
                {
                    break;
                }
            }
        });
        Writer {
            child,
            acks,
            reader,
        }
    }

    /// Stops the process (it must still be running: a writer that failed an
    /// append exits on its own) and returns what it acknowledged.
    fn stop(mut self, name: &str) -> BTreeSet<u64> {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "writer {name} exited early (an append failed; see its stderr)"
        );
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.reader.join().unwrap();
        self.acks.try_iter().collect()
    }
}

/// Two processes append to one file at the same time (the second starts
/// while the first is writing, as a CLI command beside a running gateway):
/// both keep getting acknowledgements, no index is acknowledged twice, every
/// acknowledged index is in the log, and the audit is clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_append_to_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = location(dir.path()).await;
    let first = Writer::start(dir.path(), &db);
    // Let the first create the database before the second opens it.
    let mut early = BTreeSet::new();
    early.insert(
        first
            .acks
            .recv_timeout(Duration::from_secs(60))
            .expect("first writer acknowledged nothing"),
    );
    let second = Writer::start(dir.path(), &db);
    // Run both until each has appended for a while after the second's first
    // acknowledgement.
    let second_first = second
        .acks
        .recv_timeout(Duration::from_secs(60))
        .expect("second writer acknowledged nothing");
    let until = Instant::now() + Duration::from_millis(1500);
    let (mut a, mut b) = (early, BTreeSet::from([second_first]));
    while Instant::now() < until {
        a.extend(first.acks.try_iter());
        b.extend(second.acks.try_iter());
        std::thread::sleep(Duration::from_millis(20));
    }
    a.extend(first.stop("1"));
    b.extend(second.stop("2"));
    assert!(
        a.is_disjoint(&b),
        "an index was acknowledged to both writers"
    );
    // Each kept writing after the other had: the first caught up past the
    // second's entries, and the second's came after the first's start.
    let (max_a, min_b) = (*a.last().unwrap(), *b.first().unwrap());
    assert!(
        max_a > min_b,
        "the first writer stopped appending once the second started"
    );

    let key = SigningKey::from_bytes(&CRASH_KEY_SEED);
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store.clone(), Arc::new(key.clone()), CRASH_ORIGIN)
        .await
        .unwrap();
    let size = log.size();
    let max = *a.last().unwrap().max(b.last().unwrap());
    assert!(max < size, "acknowledged index {max} missing (size {size})");
    let report = audit(&store, Some(key.verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.entries, size);
    println!(
        "two processes: {} + {} acknowledged, log size {size}, {} commits, audit clean",
        a.len(),
        b.len(),
        report.checkpoints
    );
    log.close().await;
    store.close().await;
}

/// A leaf and checkpoint as another writer would append them, at `idx`.
fn foreign_leaf(idx: u64) -> LeafRow {
    let data = format!(r#"{{"n":"smuggled","seq":{idx},"type":"decision"}}"#).into_bytes();
    LeafRow {
        idx,
        leaf_hash: leaf_hash(&data),
        data,
        appended_at: 0,
    }
}

/// The checkpoint over `hashes`, signed by `key`.
fn checkpoint(hashes: &[[u8; 32]], key: &SigningKey) -> CheckpointRow {
    let cp = Checkpoint {
        origin: ORIGIN.into(),
        size: hashes.len() as u64,
        root: interlock_merkle::root(hashes),
        extensions: vec![],
    };
    let note = sign_checkpoint(&cp, ORIGIN, key, &key.verifying_key())
        .unwrap()
        .to_string();
    CheckpointRow {
        size: cp.size,
        root: cp.root,
        note,
        created_at: 0,
    }
}

/// Asserts that `r` is the refusal of a foreign append at size 40 and that
/// its message names `cause`.
fn assert_foreign<T: std::fmt::Debug>(r: Result<T, LogError>, cause: &str) {
    let err = r.unwrap_err();
    assert!(
        matches!(err, LogError::ForeignAppend { size: 40, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("not a valid signed extension"), "{msg}");
    assert!(msg.contains(cause), "{msg}");
}

/// Another writer appends something that is not a signed extension of the
/// log: the writer refuses to adopt it or to append after it, with an error
/// saying why, and writes nothing; once the bad rows are gone it goes on.
#[tokio::test]
async fn invalid_foreign_append_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let (store, log) = handle(dir.path()).await;
    // A second store handle plays the other writer.
    let other = open_store(dir.path()).await.unwrap();
    let mut hashes = other.leaf_hashes().await.unwrap();
    let leaf = foreign_leaf(40);
    hashes.push(leaf.leaf_hash);
    let stranger = SigningKey::from_bytes(&[9u8; 32]);

    let cases: [(&str, Option<CheckpointRow>, &str); 3] = [
        // Signed by another key.
        (
            "another key",
            Some(checkpoint(&hashes, &stranger)),
            "does not verify",
        ),
        // Signed by the log key, over another history.
        (
            "another history",
            Some({
                let mut forged = hashes.clone();
                forged[3] = leaf_hash(b"rewritten");
                checkpoint(&forged, &key())
            }),
            "do not reproduce the root",
        ),
        // No checkpoint at all: a writer that never signs. Readers do not
        // adopt it (it is not an extension until signed); a writer waits for
        // the signature for a while, then would adopt it as a stalled
        // writer's entry (issue 44) — but this one is no leaf a writer of
        // the log wrote, so it refuses.
        ("unsigned", None, "cannot be adopted"),
    ];
    for (name, cp, cause) in cases {
        other
            .append_batch(std::slice::from_ref(&leaf), cp.as_ref())
            .await
            .unwrap();
        assert_foreign(log.append(event(100)).await, cause);
        if cp.is_some() {
            assert_foreign(log.refresh().await, cause);
            assert_foreign(log.entry(40).await, cause);
        } else {
            assert_eq!(log.refresh().await.unwrap(), 40, "{name}");
            assert!(
                matches!(log.entry(40).await, Err(LogError::OutOfRange { .. })),
                "{name}"
            );
        }
        // Nothing adopted, nothing written.
        assert_eq!(log.size(), 40, "{name}");
        assert_eq!(store.log_size().await.unwrap(), 41, "{name}");
        assert_eq!(
            store.checkpoints().await.unwrap().len(),
            4 + usize::from(cp.is_some()),
            "{name}"
        );
        let mut c = raw(dir.path()).await;
        sqlx::query("DELETE FROM log_leaves WHERE idx = 40")
            .execute(&mut c)
            .await
            .unwrap();
        sqlx::query("DELETE FROM log_checkpoints WHERE size = 41")
            .execute(&mut c)
            .await
            .unwrap();
        drop(c);
    }
    // A hole after the verified entries is no extension either.
    other
        .append_batch(&[foreign_leaf(40), foreign_leaf(41)], None)
        .await
        .unwrap();
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx = 40").await;
    assert_foreign(log.append(event(100)).await, "a leaf is missing");
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx = 41").await;
    // Rows the log verified disappearing is refused as well.
    let kept = store.leaf(39).await.unwrap().unwrap();
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx = 39").await;
    assert_foreign(log.append(event(100)).await, "removed outside the log");
    let mut c = raw(dir.path()).await;
    sqlx::query(
        "INSERT INTO log_leaves (idx, leaf_hash, data, appended_at) VALUES (39, $1, $2, $3)",
    )
    .bind(kept.leaf_hash.as_slice())
    .bind(kept.data.as_slice())
    .bind(kept.appended_at)
    .execute(&mut c)
    .await
    .unwrap();
    drop(c);

    // With the bad rows gone, appending resumes where the verified log
    // ended, and the audit is clean: nothing was corrupted.
    assert_eq!(log.append(event(100)).await.unwrap().index, 40);
    let report = audit(&store, Some(key().verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.entries, report.checkpoints), (41, 5));
    log.close().await;
    other.close().await;
    store.close().await;
}

/// A valid extension by another writer, made through the store directly
/// (not through a `Log`), is adopted by `refresh` and appended after.
#[tokio::test]
async fn valid_foreign_append_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let (store, log) = handle(dir.path()).await;
    let mut hashes = store.leaf_hashes().await.unwrap();
    let leaf = foreign_leaf(40);
    hashes.push(leaf.leaf_hash);
    let cp = checkpoint(&hashes, &key());
    store.append_batch(&[leaf], Some(&cp)).await.unwrap();
    assert_eq!(log.size(), 40);
    assert_eq!(log.refresh().await.unwrap(), 41);
    assert_eq!(log.root(), cp.root);
    assert_eq!(log.latest_checkpoint().as_deref(), Some(cp.note.as_str()));
    assert_eq!(log.refresh().await.unwrap(), 41);
    assert_eq!(log.append(event(41)).await.unwrap().index, 41);
    log.close().await;
    store.close().await;
}
