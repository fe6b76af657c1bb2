//! Tampering with the SQLite file itself is found and named by `audit`.

mod common;

use common::*;
use interlock_log::{AuditProblem, Log, LogError, audit};
use interlock_merkle::{Checkpoint, leaf_hash, sign_checkpoint};

async fn audit_dir(dir: &std::path::Path) -> interlock_log::AuditReport {
    let store = open_store(dir).await.unwrap();
    let report = audit(&store, Some(key().verifying_key())).await.unwrap();
    store.close().await;
    println!("{report}");
    report
}

async fn reopen(dir: &std::path::Path) -> Result<Log, LogError> {
    let store = open_store(dir).await.unwrap();
    Log::open(store, signer(), ORIGIN).await
}

#[tokio::test]
async fn untouched_log_audits_clean() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let r = audit_dir(dir.path()).await;
    assert!(r.is_ok());
    assert_eq!((r.entries, r.checkpoints), (40, 4));
    assert!(
        r.to_string()
            .starts_with("log OK: 40 entries, 4 checkpoints")
    );
    // Without a trusted key, the database's own key is used.
    let store = open_store(dir.path()).await.unwrap();
    assert!(audit(&store, None).await.unwrap().is_ok());
}

#[tokio::test]
async fn edited_entry_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    exec(
        dir.path(),
        r#"UPDATE log_leaves SET data = CAST('{"n":"event-EVIL","seq":15,"type":"decision"}' AS BLOB) WHERE idx = 15"#,
    )
    .await;
    let r = audit_dir(dir.path()).await;
    assert!(
        r.problems
            .contains(&AuditProblem::EditedEntry { index: 15 }),
        "{r}"
    );
    assert!(r.problems.contains(&AuditProblem::EntriesDoNotMatch {
        from: 10,
        size: 20,
        also: 2
    }));
    assert!(r.to_string().contains("entry 15 was edited"));
    assert!(
        r.to_string()
            .contains("entries 10..19 do not match the checkpoint signed at size 20")
    );
}

#[tokio::test]
async fn edit_with_recomputed_leaf_hash_is_caught_by_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    // A well-formed receipt with the right seq, sealed with the attacker's own key.
    let attacker = ed25519_dalek::SigningKey::from_bytes(&[66; 32]);
    let mut p = interlock_canon::Map::new();
    p.insert("type".into(), "decision".into());
    p.insert("n".into(), "event-EVIL".into());
    p.insert(
        "seq".into(),
        interlock_canon::Value::try_from(15i64).unwrap(),
    );
    p.insert(
        "time".into(),
        interlock_canon::Value::try_from(0i64).unwrap(),
    );
    let data = interlock_receipts::seal(
        p,
        &interlock_core::KeyId::of(&attacker.verifying_key()),
        |m| Ok(ed25519_dalek::Signer::sign(&attacker, m)),
    )
    .unwrap();
    let data = data.as_slice();
    let mut c = raw(dir.path()).await;
    sqlx::query("UPDATE log_leaves SET data = $1, leaf_hash = $2 WHERE idx = 15")
        .bind(data)
        .bind(leaf_hash(data).as_slice())
        .execute(&mut c)
        .await
        .unwrap();
    drop(c);
    let r = audit_dir(dir.path()).await;
    assert!(
        !r.problems
            .iter()
            .any(|p| matches!(p, AuditProblem::EditedEntry { .. }))
    );
    // The forged receipt's signature is not the log key's, and the signed
    // checkpoints no longer match the recomputed tree.
    assert!(
        matches!(&r.problems[0], AuditProblem::MalformedEntry { index: 15, reason } if reason.contains("signature")),
        "{r}"
    );
    assert_eq!(
        r.problems[1..],
        [AuditProblem::EntriesDoNotMatch {
            from: 10,
            size: 20,
            also: 2
        }]
    );
    // The writer refuses to continue a log that no longer matches what it signed.
    let err = reopen(dir.path()).await.unwrap_err();
    assert!(matches!(err, LogError::CheckpointMismatch(_)), "{err}");
}

#[tokio::test]
async fn deleted_entry_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx = 25").await;
    let r = audit_dir(dir.path()).await;
    assert!(
        r.problems
            .contains(&AuditProblem::MissingEntries { from: 25, to: 26 }),
        "{r}"
    );
    assert!(r.to_string().contains("entry 25 is missing (dropped)"));
    assert!(r.problems.contains(&AuditProblem::EntriesDoNotMatch {
        from: 20,
        size: 30,
        also: 1
    }));
    assert!(reopen(dir.path()).await.is_err());
}

#[tokio::test]
async fn dropped_tail_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx >= 38").await;
    let r = audit_dir(dir.path()).await;
    assert!(
        r.problems.contains(&AuditProblem::CheckpointBeyondLog {
            size: 40,
            entries: 38
        }),
        "{r}"
    );
    assert!(reopen(dir.path()).await.is_err());
}

#[tokio::test]
async fn swapped_entries_are_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    // Swap rows 12 and 13 whole (data and leaf hash): each row is internally
    // consistent, but sits at the wrong position.
    let mut c = raw(dir.path()).await;
    for sql in [
        "UPDATE log_leaves SET idx = -1 WHERE idx = 12",
        "UPDATE log_leaves SET idx = 12 WHERE idx = 13",
        "UPDATE log_leaves SET idx = 13 WHERE idx = -1",
    ] {
        // The CHECK (idx >= 0) constraint is in the way of a plain swap;
        // a tamperer would drop it. Go through a free index instead.
        let sql = sql.replace("-1", "1000000");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
    }
    drop(c);
    let r = audit_dir(dir.path()).await;
    assert!(
        r.problems.contains(&AuditProblem::ReorderedEntry {
            index: 12,
            seq: Some("13".into())
        }),
        "{r}"
    );
    assert!(r.problems.contains(&AuditProblem::ReorderedEntry {
        index: 13,
        seq: Some("12".into())
    }));
    assert!(r.problems.contains(&AuditProblem::EntriesDoNotMatch {
        from: 10,
        size: 20,
        also: 2
    }));
    assert!(
        r.to_string()
            .contains("entry 12 carries seq 13: it was reordered")
    );
}

#[tokio::test]
async fn swapped_data_only_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let mut c = raw(dir.path()).await;
    let d12: Vec<u8> = sqlx::query_scalar("SELECT data FROM log_leaves WHERE idx = 12")
        .fetch_one(&mut c)
        .await
        .unwrap();
    let d13: Vec<u8> = sqlx::query_scalar("SELECT data FROM log_leaves WHERE idx = 13")
        .fetch_one(&mut c)
        .await
        .unwrap();
    for (idx, d) in [(12, &d13), (13, &d12)] {
        sqlx::query("UPDATE log_leaves SET data = $1 WHERE idx = $2")
            .bind(d.as_slice())
            .bind(idx)
            .execute(&mut c)
            .await
            .unwrap();
    }
    drop(c);
    let r = audit_dir(dir.path()).await;
    for i in [12, 13] {
        assert!(
            r.problems.contains(&AuditProblem::EditedEntry { index: i }),
            "{r}"
        );
    }
    assert!(r.problems.contains(&AuditProblem::ReorderedEntry {
        index: 12,
        seq: Some("13".into())
    }));
}

#[tokio::test]
async fn edited_checkpoint_root_and_note_are_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    exec(
        dir.path(),
        "UPDATE log_checkpoints SET root = zeroblob(32) WHERE size = 20",
    )
    .await;
    exec(
        dir.path(),
        "UPDATE log_checkpoints SET note = replace(note, char(10) || '30' || char(10), char(10) || '31' || char(10)) WHERE size = 30",
    )
    .await;
    let r = audit_dir(dir.path()).await;
    assert!(
        r.problems
            .iter()
            .any(|p| matches!(p, AuditProblem::CheckpointRowMismatch { size: 20, .. })),
        "{r}"
    );
    assert!(
        r.problems
            .iter()
            .any(|p| matches!(p, AuditProblem::BadCheckpointSignature { size: 30, .. })),
        "{r}"
    );
    assert!(
        r.to_string()
            .contains("the checkpoint at size 30 does not verify")
    );
}

#[tokio::test]
async fn latest_checkpoint_tampering_stops_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    exec(
        dir.path(),
        "UPDATE log_checkpoints SET note = replace(note, 'test.interlock', 'tesT.interlock') WHERE size = 40",
    )
    .await;
    let err = reopen(dir.path()).await.unwrap_err();
    assert!(
        matches!(err, LogError::CheckpointSignature { size: 40, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn forked_checkpoint_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    // The log key signs a different history at size 15 (what a compromised
    // or equivocating log would show one party).
    let other: Vec<_> = (0..15u8).map(|i| leaf_hash(&[i])).collect();
    let cp = Checkpoint {
        origin: ORIGIN.into(),
        size: 15,
        root: interlock_merkle::root(&other),
        extensions: vec![],
    };
    let k = key();
    let note = sign_checkpoint(&cp, ORIGIN, &k, &k.verifying_key())
        .unwrap()
        .to_string();
    let mut c = raw(dir.path()).await;
    sqlx::query(
        "INSERT INTO log_checkpoints (size, root, note, created_at) VALUES (15, $1, $2, 0)",
    )
    .bind(cp.root.as_slice())
    .bind(note)
    .execute(&mut c)
    .await
    .unwrap();
    drop(c);
    let r = audit_dir(dir.path()).await;
    assert_eq!(
        r.problems,
        vec![AuditProblem::Fork {
            size: 15,
            later: 20
        }],
        "{r}"
    );
    assert!(
        r.to_string()
            .contains("fork: the checkpoint signed at size 15")
    );
}

#[tokio::test]
async fn inserted_entry_without_checkpoint_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let data = br#"{"n":"smuggled","seq":40,"type":"decision"}"#;
    let mut c = raw(dir.path()).await;
    sqlx::query(
        "INSERT INTO log_leaves (idx, leaf_hash, data, appended_at) VALUES (40, $1, $2, 0)",
    )
    .bind(leaf_hash(data).as_slice())
    .bind(data.as_slice())
    .execute(&mut c)
    .await
    .unwrap();
    drop(c);
    let r = audit_dir(dir.path()).await;
    // Not a signed receipt, and not covered by any signed checkpoint.
    assert!(
        matches!(
            &r.problems[0],
            AuditProblem::MalformedEntry { index: 40, .. }
        ),
        "{r}"
    );
    assert_eq!(
        r.problems[1..],
        [AuditProblem::UnsignedEntries { from: 40, to: 41 }],
        "{r}"
    );
    assert!(reopen(dir.path()).await.is_err());
}

/// Issue 15, item 15: the audit read the log size, then the entries, then the
/// checkpoints, each at its own moment: an append by a running writer between
/// two reads was reported as dropped or unsigned entries. It now reads one
/// snapshot, so a log appended to during every audit still audits clean.
///
/// On two worker threads, so the audits run beside the appends: an append
/// made while nothing else commits runs on its own task without yielding
/// (issue 17), so on one thread the appending task would get through most of
/// its loop before the first audit finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_audit_during_concurrent_appends_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let store = open_store(dir.path()).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    let writer = {
        let log = log.clone();
        tokio::spawn(async move {
            for n in 0..400u64 {
                log.append(event(1000 + n)).await.unwrap();
            }
        })
    };
    let auditor = open_store(dir.path()).await.unwrap();
    let mut audits = 0;
    while !writer.is_finished() {
        let r = audit(&auditor, Some(key().verifying_key())).await.unwrap();
        assert!(r.is_ok(), "audit {audits} during appends: {r}");
        audits += 1;
    }
    writer.await.unwrap();
    assert!(audits > 0);
    log.close().await;
}

/// Issue 15, item 8: a key added to the approver registry outside the log (no
/// `approver.registered` entry) is named by the audit.
#[tokio::test]
async fn regression_approver_key_without_its_log_entry_is_named() {
    let dir = tempfile::tempdir().unwrap();
    forty(dir.path()).await;
    let store = open_store(dir.path()).await.unwrap();
    store
        .add_approver_key(&interlock_store::NewApproverKey {
            key_id: format!("ed25519:{}", "ab".repeat(32)),
            public_key: [7u8; 32],
            identity: "human:mallory".into(),
            label: "inserted".into(),
        })
        .await
        .unwrap();
    let r = audit(&store, Some(key().verifying_key())).await.unwrap();
    assert!(
        r.problems.iter().any(|p| matches!(p,
            AuditProblem::UnregisteredApprover { identity, .. } if identity == "human:mallory")),
        "{r}"
    );
}
