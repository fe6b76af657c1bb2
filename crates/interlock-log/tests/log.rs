//! Log behaviour on real SQLite files: appends, proofs, reopening, refusal.

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::*;
use ed25519_dalek::SigningKey;
use interlock_canon::Value;
use interlock_log::{Log, LogError, audit};
use interlock_merkle::{
    Checkpoint, NoteVerifier, open_checkpoint, verify_consistency, verify_inclusion,
};

#[tokio::test]
async fn append_assigns_seq_and_proves_inclusion() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    assert_eq!(log.size(), 0);
    assert!(log.latest_checkpoint().is_none());
    let a = log.append(event(0)).await.unwrap();
    assert_eq!((a.index, a.tree_size), (0, 1));
    let many = log.append_many((1..5).map(event).collect()).await.unwrap();
    assert_eq!(
        many.iter().map(|a| a.index).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert_eq!(log.size(), 5);

    // The entry is stored with its seq.
    let e = log.entry(3).await.unwrap();
    assert_eq!(
        e.get("seq")
            .and_then(Value::as_number)
            .and_then(|n| n.as_i64()),
        Some(3)
    );
    assert_eq!(e.get("n").and_then(Value::as_str), Some("event-3"));

    // The first commit signed a checkpoint; the next ones, within the
    // checkpoint interval, did not: `seal` signs one over everything now.
    let verifier = NoteVerifier::new(ORIGIN, key().verifying_key()).unwrap();
    let first: Checkpoint = open_checkpoint(
        a.checkpoint.as_deref().unwrap(),
        std::slice::from_ref(&verifier),
    )
    .unwrap();
    assert_eq!(first.size, 1);
    assert!(many[2].checkpoint.is_none());
    assert_eq!(log.sealed_size(), 1);
    let note = log.seal().await.unwrap().unwrap();
    assert_eq!(log.sealed_size(), 5);
    let cp: Checkpoint = open_checkpoint(&note, &[verifier]).unwrap();
    assert_eq!(cp.size, 5);
    assert_eq!(cp.root, log.root());
    let proof = log.inclusion_proof(3, 5).await.unwrap();
    verify_inclusion(3, 5, &many[2].leaf_hash, &proof, &cp.root).unwrap();
    let old_root = interlock_merkle::root(&[a.leaf_hash]);
    let proof = log.consistency_proof(1, 5).await.unwrap();
    verify_consistency(1, 5, &proof, &old_root, &cp.root).unwrap();
    assert!(matches!(
        log.inclusion_proof(0, 6).await,
        Err(LogError::OutOfRange { .. })
    ));
    assert!(matches!(
        log.entry(5).await,
        Err(LogError::OutOfRange { .. })
    ));

    // Reopen: same tree, appends continue.
    log.close().await;
    assert!(matches!(log.append(event(9)).await, Err(LogError::Closed)));
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    assert_eq!(log.size(), 5);
    assert_eq!(log.root(), cp.root);
    assert_eq!(log.append(event(5)).await.unwrap().index, 5);
    let report = audit(&store, Some(key().verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.entries, report.checkpoints), (6, 3));
}

#[tokio::test]
async fn entries_must_be_objects_without_seq() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store, signer(), ORIGIN).await.unwrap();
    assert!(matches!(
        log.append(Value::from("text")).await,
        Err(LogError::NotAnObject("string"))
    ));
    let mut e = event(1);
    if let Value::Object(m) = &mut e {
        m.insert("seq".into(), Value::from("7"));
    }
    assert!(matches!(log.append(e).await, Err(LogError::SeqPresent)));
    let mut big = event(2);
    if let Value::Object(m) = &mut big {
        m.insert(
            "blob".into(),
            Value::from("x".repeat(interlock_log::MAX_ENTRY_BYTES)),
        );
    }
    assert!(matches!(
        log.append(big).await,
        Err(LogError::EntryTooLarge { .. })
    ));
    // Nothing above took an index.
    assert_eq!(log.append(event(3)).await.unwrap().index, 0);
}

#[tokio::test]
async fn another_key_or_origin_cannot_continue_the_log() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let store = open_store(dir.path()).await.unwrap();
    let other: interlock_log::CheckpointSigner = Arc::new(SigningKey::from_bytes(&[2u8; 32]));
    let err = Log::open(store.clone(), other, ORIGIN).await.unwrap_err();
    assert!(matches!(err, LogError::KeyMismatch { .. }), "{err}");
    let err = Log::open(store.clone(), signer(), "other.example/log")
        .await
        .unwrap_err();
    assert!(matches!(err, LogError::OriginMismatch { .. }), "{err}");
    let err = Log::open(store.clone(), signer(), "bad origin")
        .await
        .unwrap_err();
    assert!(matches!(err, LogError::InvalidOrigin { .. }), "{err}");
    // An auditor trusting another key is told so, and every checkpoint fails.
    let report = audit(
        &store,
        Some(SigningKey::from_bytes(&[2u8; 32]).verifying_key()),
    )
    .await
    .unwrap();
    assert!(!report.is_ok());
    assert!(
        report.to_string().contains("is not the trusted key"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_get_unique_contiguous_indices() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    let tasks: Vec<_> = (0..32u64)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move {
                let mut got = Vec::with_capacity(200);
                for i in 0..200 {
                    got.push(log.append(event(t * 1000 + i)).await.unwrap().index);
                }
                got
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in tasks {
        let got = t.await.unwrap();
        // Each appender's own entries are in the order it appended them.
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        for i in got {
            assert!(all.insert(i), "index {i} handed out twice");
        }
    }
    assert_eq!(all.len(), 6400);
    assert_eq!(all, (0..6400).collect::<HashSet<_>>());
    assert_eq!(log.size(), 6400);
    let checkpoints = store.checkpoints().await.unwrap().len();
    assert!(
        checkpoints < 6400,
        "appends were group-committed ({checkpoints} commits)"
    );
    let report = audit(&store, Some(key().verifying_key())).await.unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.entries, 6400);
}

/// A signer that reports one public key and signs with another.
struct Lying {
    claims: SigningKey,
    signs: SigningKey,
}

impl interlock_log::LogSigner for Lying {
    fn public_key(&self) -> ed25519_dalek::VerifyingKey {
        self.claims.verifying_key()
    }
    fn try_sign(&self, msg: &[u8]) -> Result<ed25519_dalek::Signature, signature::Error> {
        signature::Signer::try_sign(&self.signs, msg)
    }
}

#[tokio::test]
async fn a_signer_with_a_mismatched_key_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let lying: interlock_log::CheckpointSigner = Arc::new(Lying {
        claims: key(),
        signs: SigningKey::from_bytes(&[2u8; 32]),
    });
    let err = Log::open(store.clone(), lying, ORIGIN).await.unwrap_err();
    assert!(
        matches!(
            err,
            LogError::Signer(interlock_merkle::NoteError::SignerKeyMismatch { .. })
        ),
        "{err}"
    );
    // Nothing was recorded: not even the key it claimed.
    assert_eq!(
        store.get_meta(interlock_log::META_VKEY).await.unwrap(),
        None
    );
    // The honest signer of that key opens the same database and appends.
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    let a = log.append(event(0)).await.unwrap();
    assert_eq!((a.index, a.tree_size), (0, 1));
    log.close().await;
}

/// Issue 17: an append made while nothing else commits is committed on the
/// appender's own task, without the writer task. Its leaf must still be
/// signed within the checkpoint interval with no further append to carry it
/// (the writer learns of the deadline from the inline commit), and a
/// committed-only leaf (`append_committed`) must be durable after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_an_inline_commit_is_signed_within_the_interval_without_another_append() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let options = interlock_log::LogOptions {
        checkpoint_interval: std::time::Duration::from_millis(50),
        flush_window: std::time::Duration::from_millis(10),
    };
    let log = Log::open_with(store.clone(), signer(), ORIGIN, options)
        .await
        .unwrap();
    // The first commit signs (none was signed yet); the next ones, within
    // the interval, are committed inline and left unsigned for now.
    let first = log.append(event(0)).await.unwrap();
    assert!(first.checkpoint.is_some());
    let second = log.append(event(1)).await.unwrap();
    let third = log.append_committed(event(2)).await.unwrap();
    assert!(second.checkpoint.is_none() && third.checkpoint.is_none());
    assert_eq!((log.size(), log.sealed_size()), (3, 1));
    // Nothing else is appended: the writer's timer signs the tail.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while log.sealed_size() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the inline commits were never signed: sealed {} of {}",
            log.sealed_size(),
            log.size()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    log.close().await;
    drop(log);
    drop(store);
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    assert_eq!((log.size(), log.sealed_size()), (3, 3));
    assert_eq!(
        log.entry(2).await.unwrap().get("n").and_then(Value::as_str),
        Some("event-2")
    );
    let r = audit(&store, Some(key().verifying_key())).await.unwrap();
    assert!(r.is_ok(), "{r}");
}

/// Issue 17: an inline commit never waits, so without counting against
/// tokio's cooperative budget a task appending in a loop held its worker
/// until it stopped (the audit regression test starved on a one-thread
/// runtime). Another task on the same one-thread runtime gets to run while
/// a loop of appends is under way.
#[tokio::test]
async fn regression_a_loop_of_inline_appends_lets_other_tasks_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store, signer(), ORIGIN).await.unwrap();
    let appender = {
        let log = log.clone();
        tokio::spawn(async move {
            for n in 0..600u64 {
                log.append_committed(event(n)).await.unwrap();
            }
        })
    };
    let mut ran_during = 0;
    while !appender.is_finished() {
        ran_during += 1;
        tokio::task::yield_now().await;
    }
    appender.await.unwrap();
    assert_eq!(log.size(), 600);
    assert!(
        ran_during > 2,
        "the appending task held the runtime: the other task ran {ran_during} times"
    );
    log.close().await;
}
