//! Store tests on a real database: a SQLite file in a temporary directory,
//! or — when `$INTERLOCK_TEST_POSTGRES` names a server — a fresh Postgres
//! database of its own (`interlock_store::testing`). Tests of what only
//! SQLite has (its file, its pragmas, its WAL) open a file whatever the run.

use std::sync::Arc;

use sqlx::Connection as _;

use interlock_store::{
    ApprovalDecision, CheckpointRow, LeafRow, NewApproval, NewApproverKey, NewPlan, PlanStatus,
    Store, StoreError,
};

async fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    // A nested path: open must create the parent directories.
    let store =
        interlock_store::testing::open_fresh(&dir.path().join("data/db/interlock.sqlite")).await;
    (dir, store)
}

/// A store on a SQLite file whatever the run, for what only SQLite has.
async fn open_sqlite() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("interlock.sqlite"))
        .await
        .unwrap();
    (dir, store)
}

/// A plain connection to `s`'s database, as another program would open it.
async fn raw(s: &Store) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    let url = match s.location() {
        interlock_store::StoreLocation::File(p) => format!("sqlite://{}", p.display()),
        interlock_store::StoreLocation::Postgres(url) => url.clone(),
    };
    sqlx::AnyConnection::connect(&url).await.unwrap()
}

/// A second handle on `s`'s database (another process, in effect).
async fn reopen(s: &Store) -> Store {
    Store::connect(s.location()).await.unwrap()
}

fn plan(id: &str, hash: &str) -> NewPlan {
    NewPlan {
        plan_id: id.into(),
        plan_hash: hash.into(),
        document: br#"{"body":{}}"#.to_vec(),
        title: "Write config".into(),
        proposer: "agent:builder".into(),
        risk: "low".into(),
    }
}

fn approval(id: &str, rev: i64, key: &str, nonce: &str) -> NewApproval {
    NewApproval {
        plan_id: id.into(),
        revision: rev,
        plan_hash: "sha256:aa".into(),
        decision: ApprovalDecision::Approve,
        reason: "looks right".into(),
        approver_key_id: key.into(),
        nonce: nonce.into(),
        not_before: 100,
        expires_at: 200,
        envelope: br#"{"payload":"..."}"#.to_vec(),
    }
}

fn key_id(n: u8) -> String {
    format!("ed25519:{}", format!("{n:02x}").repeat(32))
}

#[tokio::test]
async fn open_sets_durability_pragmas_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.sqlite");
    let store = Store::open(&path).await.unwrap();
    store.set_meta("k", "v").await.unwrap();
    store.close().await;
    // Migrations are idempotent; data survives.
    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.get_meta("k").await.unwrap().as_deref(), Some("v"));
    store.close().await;
    // Check the pragmas on a fresh connection with the store's options: WAL is
    // persistent in the file itself.
    use sqlx::Connection as _;
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn open_reports_unopenable_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"not a dir").unwrap();
    let err = Store::open(&file.join("db.sqlite")).await.unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
}

/// A file that is not a database fails its settings; the pool retried that
/// for its whole acquire timeout (30 s) and then said only "pool timed out",
/// so `interlock serve` on a damaged file hung and never named the cause.
#[tokio::test]
async fn regression_issue_45_a_file_that_is_not_a_database_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, vec![0x42u8; 8192]).unwrap();
    let err = Store::open(&junk).await.unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains("not a database"),
        "the cause is named: {err}"
    );
    // Nothing was written over it.
    assert_eq!(std::fs::read(&junk).unwrap(), vec![0x42u8; 8192]);
}

#[tokio::test]
async fn plan_revisions_and_supersede() {
    let (_d, s) = open().await;
    let r1 = s
        .insert_plan_revision(&plan("p1", "sha256:01"))
        .await
        .unwrap();
    assert_eq!((r1.revision, r1.status), (1, PlanStatus::Proposed));
    assert!(
        s.transition("p1", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
    let r2 = s
        .insert_plan_revision(&plan("p1", "sha256:02"))
        .await
        .unwrap();
    assert_eq!(r2.revision, 2);
    let revs = s.plan_revisions("p1").await.unwrap();
    assert_eq!(revs.len(), 2);
    assert_eq!(revs[0].status, PlanStatus::Superseded);
    assert_eq!(revs[1].status, PlanStatus::Proposed);
    assert_eq!(
        s.current_plan("p1").await.unwrap().unwrap().plan_hash,
        "sha256:02"
    );
    assert_eq!(
        s.plan_revision("p1", 1).await.unwrap().unwrap().plan_hash,
        "sha256:01"
    );
    assert!(s.plan_revision("p1", 3).await.unwrap().is_none());
    assert!(s.current_plan("nope").await.unwrap().is_none());

    s.insert_plan_revision(&plan("p2", "sha256:03"))
        .await
        .unwrap();
    let all = s.list_plans(None).await.unwrap();
    assert_eq!(all.len(), 2, "current revisions only");
    assert!(all.iter().all(|p| p.status == PlanStatus::Proposed));
    assert!(
        s.list_plans(Some(PlanStatus::Superseded))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.transition("p2", 1, PlanStatus::Proposed, PlanStatus::Rejected)
            .await
            .unwrap()
    );
    let rejected = s.list_plans(Some(PlanStatus::Rejected)).await.unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].plan_id, "p2");
}

#[tokio::test]
async fn running_plans_cannot_be_revised() {
    let (_d, s) = open().await;
    s.insert_plan_revision(&plan("p", "h1")).await.unwrap();
    assert!(
        s.transition("p", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
    assert!(s.start_execution("p", 1).await.unwrap());
    let err = s.insert_plan_revision(&plan("p", "h2")).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::PlanLocked {
                revision: 1,
                status: PlanStatus::Executing,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        s.transition("p", 1, PlanStatus::Executing, PlanStatus::Succeeded)
            .await
            .unwrap()
    );
    let err = s.insert_plan_revision(&plan("p", "h2")).await.unwrap_err();
    assert!(matches!(
        err,
        StoreError::PlanLocked {
            status: PlanStatus::Succeeded,
            ..
        }
    ));
    assert_eq!(s.plan_revisions("p").await.unwrap().len(), 1);
}

#[tokio::test]
async fn transition_is_compare_and_swap() {
    let (_d, s) = open().await;
    s.insert_plan_revision(&plan("p", "h")).await.unwrap();
    // Wrong `from`: no change.
    assert!(
        !s.transition("p", 1, PlanStatus::Approved, PlanStatus::Executing)
            .await
            .unwrap()
    );
    assert!(
        s.transition("p", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
    assert!(
        !s.transition("p", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
    // Unknown revision: no change.
    assert!(
        !s.transition("p", 9, PlanStatus::Approved, PlanStatus::Expired)
            .await
            .unwrap()
    );
    // Disallowed edges are refused before touching the database.
    let err = s
        .transition("p", 1, PlanStatus::Succeeded, PlanStatus::Proposed)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidTransition { .. }));
    let err = s
        .transition("p", 1, PlanStatus::Proposed, PlanStatus::Superseded)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidTransition { .. }));
}

#[tokio::test]
async fn bad_input_is_refused() {
    let (_d, s) = open().await;
    let mut p = plan("", "h");
    assert!(matches!(
        s.insert_plan_revision(&p).await,
        Err(StoreError::InvalidInput(_))
    ));
    p = plan("x", "h");
    p.document.clear();
    assert!(matches!(
        s.insert_plan_revision(&p).await,
        Err(StoreError::InvalidInput(_))
    ));
    assert!("bogus".parse::<PlanStatus>().is_err());
    assert_eq!(
        "approved".parse::<PlanStatus>().unwrap(),
        PlanStatus::Approved
    );
    s.insert_plan_revision(&plan("x", "h")).await.unwrap();
    let mut a = approval("x", 1, &key_id(1), "n");
    a.expires_at = a.not_before;
    assert!(matches!(
        s.insert_approval(&a).await,
        Err(StoreError::InvalidInput(_))
    ));
    let bad_key = NewApproverKey {
        key_id: "rsa:abc".into(),
        public_key: [1; 32],
        identity: "human:alice".into(),
        label: String::new(),
    };
    assert!(matches!(
        s.add_approver_key(&bad_key).await,
        Err(StoreError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn approvals_refuse_replay_and_unknown_plans() {
    let (_d, s) = open().await;
    s.insert_plan_revision(&plan("p", "h")).await.unwrap();
    s.insert_approval(&approval("p", 1, &key_id(1), "n1"))
        .await
        .unwrap();
    let err = s
        .insert_approval(&approval("p", 1, &key_id(1), "n1"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert!(err.to_string().contains("n1"));
    // Same nonce, other key: fine.
    s.insert_approval(&approval("p", 1, &key_id(2), "n1"))
        .await
        .unwrap();
    let err = s
        .insert_approval(&approval("p", 7, &key_id(3), "n1"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    let list = s.approvals_for("p", 1).await.unwrap();
    assert_eq!(list.len(), 2);
    assert!(list.iter().all(|a| a.consumed_at.is_none()));
}

#[tokio::test]
async fn start_execution_consumes_approvals_once() {
    let (_d, s) = open().await;
    s.insert_plan_revision(&plan("p", "h")).await.unwrap();
    // Not approved yet: nothing to start.
    assert!(!s.start_execution("p", 1).await.unwrap());
    s.insert_approval(&approval("p", 1, &key_id(1), "a"))
        .await
        .unwrap();
    let mut rej = approval("p", 1, &key_id(2), "b");
    rej.decision = ApprovalDecision::Reject;
    s.insert_approval(&rej).await.unwrap();
    assert!(
        s.transition("p", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
    assert!(s.start_execution("p", 1).await.unwrap());
    assert!(!s.start_execution("p", 1).await.unwrap());
    let list = s.approvals_for("p", 1).await.unwrap();
    for a in &list {
        match a.decision {
            ApprovalDecision::Approve => assert!(a.consumed_at.is_some()),
            ApprovalDecision::Reject => assert!(a.consumed_at.is_none()),
        }
    }
    assert_eq!(
        s.current_plan("p").await.unwrap().unwrap().status,
        PlanStatus::Executing
    );
}

async fn approved_plan(s: &Store) {
    s.insert_plan_revision(&plan("race", "h")).await.unwrap();
    s.insert_approval(&approval("race", 1, &key_id(1), "n"))
        .await
        .unwrap();
    assert!(
        s.transition("race", 1, PlanStatus::Proposed, PlanStatus::Approved)
            .await
            .unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_start_execution_one_wins() {
    let (_d, s) = open().await;
    approved_plan(&s).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let s = s.clone();
            let b = Arc::clone(&barrier);
            tokio::spawn(async move {
                b.wait().await;
                s.start_execution("race", 1).await
            })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        if t.await.unwrap().unwrap() {
            wins += 1;
        }
    }
    assert_eq!(wins, 1);
    let a = s.approvals_for("race", 1).await.unwrap();
    assert!(a[0].consumed_at.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_file_one_wins() {
    let (_dir, a) = open().await;
    let b = reopen(&a).await;
    approved_plan(&a).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let s = if i % 2 == 0 { a.clone() } else { b.clone() };
            let bar = Arc::clone(&barrier);
            tokio::spawn(async move {
                bar.wait().await;
                s.start_execution("race", 1).await
            })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        if t.await.unwrap().unwrap() {
            wins += 1;
        }
    }
    assert_eq!(wins, 1);
}

#[tokio::test]
async fn approver_keys_registry() {
    let (_d, s) = open().await;
    let k = NewApproverKey {
        key_id: key_id(0xab),
        public_key: [7; 32],
        identity: "human:alice".into(),
        label: "laptop".into(),
    };
    s.add_approver_key(&k).await.unwrap();
    assert!(matches!(
        s.add_approver_key(&k).await,
        Err(StoreError::Duplicate { .. })
    ));
    let got = s.approver_key(&k.key_id).await.unwrap().unwrap();
    assert_eq!(
        (got.public_key, got.identity.as_str()),
        ([7; 32], "human:alice")
    );
    assert!(got.is_active());
    assert_eq!(s.approver_keys(false).await.unwrap().len(), 1);
    assert!(s.revoke_approver_key(&k.key_id).await.unwrap());
    assert!(!s.revoke_approver_key(&k.key_id).await.unwrap());
    assert!(matches!(
        s.revoke_approver_key(&key_id(1)).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(s.approver_keys(false).await.unwrap().is_empty());
    let all = s.approver_keys(true).await.unwrap();
    assert_eq!(all.len(), 1);
    assert!(all[0].revoked_at.is_some());
    assert!(s.approver_key(&key_id(9)).await.unwrap().is_none());
}

fn leaf(i: u64) -> LeafRow {
    LeafRow {
        idx: i,
        leaf_hash: [i as u8; 32],
        data: format!("{{\"seq\":{i}}}").into_bytes(),
        appended_at: 1,
    }
}

fn cp(size: u64) -> CheckpointRow {
    CheckpointRow {
        size,
        root: [size as u8; 32],
        note: format!("log\n{size}\nroot\n\n— log sig\n"),
        created_at: 1,
    }
}

#[tokio::test]
async fn log_batches_are_contiguous_and_atomic() {
    let (_d, s) = open().await;
    assert_eq!(s.log_size().await.unwrap(), 0);
    assert!(s.latest_checkpoint().await.unwrap().is_none());
    // 300 leaves: exercises every multi-row chunk size.
    let first: Vec<_> = (0..300).map(leaf).collect();
    s.append_batch(&first, Some(&cp(300))).await.unwrap();
    assert_eq!(s.log_size().await.unwrap(), 300);
    // Gap.
    let err = s
        .append_batch(&[leaf(301)], Some(&cp(302)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::LeafIndexMismatch {
                expected: 300,
                got: 301
            }
        ),
        "{err:?}"
    );
    // Overlap.
    let err = s.append_batch(&[leaf(299)], None).await.unwrap_err();
    assert!(matches!(
        err,
        StoreError::LeafIndexMismatch {
            expected: 300,
            got: 299
        }
    ));
    // Non-contiguous inside the batch.
    let err = s
        .append_batch(&[leaf(300), leaf(302)], None)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::LeafIndexMismatch {
            expected: 301,
            got: 302
        }
    ));
    // Wrong checkpoint size.
    let err = s
        .append_batch(&[leaf(300)], Some(&cp(300)))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::CheckpointSizeMismatch {
            expected: 301,
            got: 300
        }
    ));
    // A failing checkpoint insert rolls the leaves back too.
    s.append_batch(&[leaf(300)], Some(&cp(301))).await.unwrap();
    let mut dup = cp(302);
    dup.size = 301;
    let err = s.append_batch(&[], Some(&dup)).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert_eq!(s.log_size().await.unwrap(), 301);

    let hashes = s.leaf_hashes().await.unwrap();
    assert_eq!(hashes.len(), 301);
    assert_eq!(hashes[255], [255; 32]);
    let rows = s.leaves(10..13).await.unwrap();
    assert_eq!(rows, vec![leaf(10), leaf(11), leaf(12)]);
    assert!(s.leaves(5..5).await.unwrap().is_empty());
    assert_eq!(s.leaf(300).await.unwrap(), Some(leaf(300)));
    assert_eq!(s.leaf(301).await.unwrap(), None);
    let cps = s.checkpoints().await.unwrap();
    assert_eq!(
        cps.iter().map(|c| c.size).collect::<Vec<_>>(),
        vec![300, 301]
    );
    assert_eq!(s.latest_checkpoint().await.unwrap(), Some(cp(301)));
    assert_eq!(s.leaf_count().await.unwrap(), 301);
}

#[tokio::test]
async fn meta_get_set_and_init_once() {
    let (_d, s) = open().await;
    assert_eq!(s.get_meta("origin").await.unwrap(), None);
    assert_eq!(s.get_or_init_meta("origin", "a").await.unwrap(), "a");
    assert_eq!(s.get_or_init_meta("origin", "b").await.unwrap(), "a");
    s.set_meta("origin", "c").await.unwrap();
    assert_eq!(s.get_meta("origin").await.unwrap().as_deref(), Some("c"));
}

#[tokio::test]
async fn durability_settings_are_on() {
    let (_d, s) = open().await;
    let d = s.durability().await.unwrap();
    assert_eq!(d.journal_mode, "wal");
    assert_eq!(d.synchronous, "full");
    assert!(d.foreign_keys);
    assert!(d.busy_timeout_ms >= 1000);
}

#[tokio::test]
async fn calls_on_a_closed_store_fail_typed() {
    let (_d, s) = open().await;
    s.close().await;
    let err = s.insert_plan_revision(&plan("p", "h2")).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(s.log_size().await.is_err());
}

/// A batch is one statement: a refusal at its last row (the checkpoint)
/// leaves none of its leaves behind, and the log goes on from where it was.
#[tokio::test]
async fn a_batch_failing_at_its_checkpoint_writes_no_leaf() {
    let (_d, s) = open().await;
    s.append_batch(&[leaf(0), leaf(1)], Some(&cp(2)))
        .await
        .unwrap();
    // Another program left a checkpoint at size 4 behind.
    let mut c = raw(&s).await;
    sqlx::query(
        "INSERT INTO log_checkpoints (size, root, note, created_at) VALUES (4, $1, 'x', 0)",
    )
    .bind([4u8; 32].as_slice())
    .execute(&mut c)
    .await
    .unwrap();
    let err = s
        .append_batch(&[leaf(2), leaf(3)], Some(&cp(4)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::Duplicate { what } if what == "checkpoint at size 4"),
        "{err:?}"
    );
    assert_eq!(s.log_size().await.unwrap(), 2);
    assert_eq!(s.leaf_count().await.unwrap(), 2);
    // Once it is gone, the same batch goes in whole.
    sqlx::query("DELETE FROM log_checkpoints WHERE size = 4")
        .execute(&mut c)
        .await
        .unwrap();
    s.append_batch(&[leaf(2), leaf(3)], Some(&cp(4)))
        .await
        .unwrap();
    assert_eq!(s.leaf_hashes().await.unwrap().len(), 4);
    assert_eq!(s.latest_checkpoint().await.unwrap(), Some(cp(4)));
    c.close().await.unwrap();
}

/// Two handles on one file (two processes, in effect) race for the same
/// index: one batch lands whole, the other is refused whole with the index
/// the log really continues at.
#[tokio::test]
async fn two_writers_racing_for_an_index_one_batch_lands() {
    let (_d, a) = open().await;
    let b = reopen(&a).await;
    a.append_batch(&[leaf(0)], Some(&cp(1))).await.unwrap();
    let batch: Vec<_> = (1..4).map(leaf).collect();
    let checkpoint = cp(4);
    let (ra, rb) = tokio::join!(
        a.append_batch(&batch, Some(&checkpoint)),
        b.append_batch(&batch, Some(&checkpoint))
    );
    let (ok, refused) = match (ra, rb) {
        (Ok(()), Err(e)) | (Err(e), Ok(())) => ((), e),
        other => panic!("exactly one batch must land: {other:?}"),
    };
    let () = ok;
    assert!(
        matches!(
            refused,
            StoreError::LeafIndexMismatch {
                expected: 4,
                got: 1
            }
        ),
        "{refused:?}"
    );
    assert_eq!(a.leaf_count().await.unwrap(), 4);
    assert_eq!(
        b.checkpoints()
            .await
            .unwrap()
            .iter()
            .map(|c| c.size)
            .collect::<Vec<_>>(),
        vec![1, 4]
    );
    // A checkpoint alone must be for the log's size too.
    let err = b.append_batch(&[], Some(&cp(9))).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::CheckpointSizeMismatch {
                expected: 4,
                got: 9
            }
        ),
        "{err:?}"
    );
}

/// A batch too large for one statement takes the transaction path, with
/// the same checks.
#[tokio::test]
async fn a_very_large_batch_is_appended_in_one_transaction() {
    let (_d, s) = open().await;
    let many: Vec<_> = (0..5000).map(leaf).collect();
    s.append_batch(&many, Some(&cp(5000))).await.unwrap();
    assert_eq!(s.log_size().await.unwrap(), 5000);
    let gap: Vec<_> = (5001..10_001).map(leaf).collect();
    let err = s.append_batch(&gap, None).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::LeafIndexMismatch {
                expected: 5000,
                got: 5001
            }
        ),
        "{err:?}"
    );
    assert_eq!(s.leaf_count().await.unwrap(), 5000);
}

/// The append view refuses rows it does not know, and a gap or overlap
/// written through it by another program, statement and all.
#[tokio::test]
async fn the_append_view_refuses_bad_rows() {
    // The view is SQLite's (Postgres appends in a locked transaction).
    let (_d, s) = open_sqlite().await;
    s.append_batch(&[leaf(0)], Some(&cp(1))).await.unwrap();
    let mut c = sqlx::SqliteConnection::connect(&format!(
        "sqlite://{}",
        s.location().file().unwrap().display()
    ))
    .await
    .unwrap();
    for sql in [
        "INSERT INTO log_append (kind, n, hash, body, at) VALUES ('other', 1, x'00', x'00', 0)",
        "INSERT INTO log_append (kind, n, hash, body, at) VALUES (NULL, 1, x'00', x'00', 0)",
        "INSERT INTO log_append (kind, n, hash, body, at) VALUES ('leaf', 1, x'01', x'01', 0), ('leaf', 3, x'03', x'03', 0)",
        "INSERT INTO log_append (kind, n, hash, body, at) VALUES ('leaf', 0, x'00', x'00', 0)",
        "INSERT INTO log_append (kind, n, hash, body, at) VALUES ('leaf', 1, x'01', x'01', 0), ('checkpoint', 1, x'01', 'n', 0)",
    ] {
        assert!(sqlx::query(sql).execute(&mut c).await.is_err(), "{sql}");
    }
    assert_eq!(s.leaf_count().await.unwrap(), 1);
    assert_eq!(s.checkpoints().await.unwrap().len(), 1);
    c.close().await.unwrap();
}

/// The appender connection has the durability settings of the pool.
#[tokio::test]
async fn appends_are_durable_and_stop_when_closed() {
    let (_d, s) = open().await;
    s.append_batch(&[leaf(0)], Some(&cp(1))).await.unwrap();
    // Durable: a fresh handle (another process, in effect) sees it.
    let other = reopen(&s).await;
    assert_eq!(other.latest_checkpoint().await.unwrap(), Some(cp(1)));
    s.close().await;
    let err = s.append_batch(&[leaf(1)], Some(&cp(2))).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert_eq!(other.log_size().await.unwrap(), 1);
}

/// Issue 15 (THREAT-MODEL.md): the data directory the store creates is the
/// owner's alone; other users of the machine cannot read the database.
#[cfg(unix)]
#[tokio::test]
async fn regression_the_data_directory_is_created_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").join("nested");
    let store = Store::open(&data.join("interlock.sqlite")).await.unwrap();
    store.close().await;
    for d in [dir.path().join("data"), data] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{} is {mode:o}", d.display());
    }
}

/// Issue 15, item 1: the decision ledger records a statement once, and refuses an
/// approval issued before the subject's latest decision; ties are allowed.
#[tokio::test]
async fn regression_decision_ledger_is_one_shot_and_ordered() {
    use interlock_store::{ApprovalDecision, ClaimOutcome, DecisionClaim};
    let (_dir, store) = open().await;
    let claim = |nonce: &str, issued_at: i64| DecisionClaim {
        approver_key_id: key_id(1),
        nonce: nonce.into(),
        subject: "server:fs".into(),
        decision: ApprovalDecision::Approve,
        issued_at,
    };
    assert_eq!(
        store.claim_decision(&claim("aa", 100)).await.unwrap(),
        ClaimOutcome::Recorded
    );
    assert_eq!(
        store.claim_decision(&claim("aa", 100)).await.unwrap(),
        ClaimOutcome::Replayed
    );
    assert_eq!(
        store.claim_decision(&claim("bb", 100)).await.unwrap(),
        ClaimOutcome::Recorded,
        "the same second is not older"
    );
    assert_eq!(
        store.claim_decision(&claim("cc", 99)).await.unwrap(),
        ClaimOutcome::Stale {
            latest_issued_at: 100
        }
    );
    // Issue 44: a rejection is taken whatever its date (a veto signed after
    // the clock stepped back), and it moves nothing backwards.
    let veto = DecisionClaim {
        decision: ApprovalDecision::Reject,
        ..claim("ee", 50)
    };
    assert_eq!(
        store.claim_decision(&veto).await.unwrap(),
        ClaimOutcome::Recorded,
        "an older rejection is still a veto"
    );
    assert_eq!(
        store.claim_decision(&veto).await.unwrap(),
        ClaimOutcome::Replayed
    );
    assert_eq!(
        store.claim_decision(&claim("ff", 99)).await.unwrap(),
        ClaimOutcome::Stale {
            latest_issued_at: 100
        },
        "an approval is still ordered after it"
    );
    let other = DecisionClaim {
        subject: "server:other".into(),
        ..claim("dd", 1)
    };
    assert_eq!(
        store.claim_decision(&other).await.unwrap(),
        ClaimOutcome::Recorded,
        "ordering is per subject"
    );
}

/// The receipt index (issue 18): a page is newest first below its cursor and
/// matches every filter; indexing a leaf twice inserts it once; counts are
/// grouped per bucket by SQLite.
#[tokio::test]
async fn receipt_facts_page_filter_and_count() {
    use interlock_store::{LeafRow, ReceiptFacts, ReceiptFilter};
    let (_dir, s) = open().await;
    let leaves: Vec<LeafRow> = (0..10u64)
        .map(|i| LeafRow {
            idx: i,
            leaf_hash: [i as u8; 32],
            data: format!("leaf {i}").into_bytes(),
            appended_at: 1_000 + i as i64,
        })
        .collect();
    s.append_batch(&leaves, None).await.unwrap();
    let facts: Vec<ReceiptFacts> = (0..10u64)
        .map(|i| ReceiptFacts {
            idx: i,
            at: 1_000 + 100 * i as i64,
            kind: if i % 2 == 0 {
                "tool.call"
            } else {
                "plan.approved"
            }
            .into(),
            server: Some(if i < 5 { "files" } else { "shell" }.into()),
            agent: Some("builder".into()),
            verdict: (i % 2 == 0).then(|| if i == 4 { "blocked" } else { "allowed" }.into()),
            shadow: Some(i == 8),
            ..ReceiptFacts::default()
        })
        .collect();
    s.insert_receipt_facts(&facts[..6]).await.unwrap();
    assert_eq!(s.receipt_facts_next().await.unwrap(), 6);
    // Catching up again from an overlapping start inserts nothing twice.
    s.insert_receipt_facts(&facts[4..]).await.unwrap();
    assert_eq!(s.receipt_facts_next().await.unwrap(), 10);
    let all = ReceiptFilter::default();
    let page: Vec<u64> = s
        .receipts_page(&all, None, 3)
        .await
        .unwrap()
        .iter()
        .map(|l| l.idx)
        .collect();
    assert_eq!(page, [9, 8, 7]);
    let next: Vec<u64> = s
        .receipts_page(&all, Some(7), 3)
        .await
        .unwrap()
        .iter()
        .map(|l| l.idx)
        .collect();
    assert_eq!(next, [6, 5, 4]);
    let calls_on_files = ReceiptFilter {
        kind: Some("tool.call".into()),
        server: Some("files".into()),
        since: Some(1_100),
        ..ReceiptFilter::default()
    };
    let rows = s.receipts_page(&calls_on_files, None, 100).await.unwrap();
    assert_eq!(rows.iter().map(|l| l.idx).collect::<Vec<_>>(), [4, 2]);
    assert_eq!(rows[0].data, b"leaf 4");
    assert_eq!(s.receipt_indices(&calls_on_files).await.unwrap(), [2, 4]);
    // Buckets of 500 s from 1,000: [1000, 1500) holds 0..=4, [1500, 2000) 5..=9.
    let counts = s.receipt_counts(1_000, 500).await.unwrap();
    let sum = |start: i64, kind: &str| -> u64 {
        counts
            .iter()
            .filter(|c| c.start == start && c.kind == kind)
            .map(|c| c.count)
            .sum()
    };
    assert_eq!(sum(1_000, "tool.call"), 3);
    assert_eq!(sum(1_500, "tool.call"), 2);
    assert_eq!(sum(1_500, "plan.approved"), 3);
    assert!(
        counts
            .iter()
            .any(|c| c.verdict.as_deref() == Some("blocked") && c.count == 1 && c.start == 1_000)
    );
    assert!(counts.iter().any(|c| c.shadow && c.start == 1_500));
    assert!(
        s.receipt_counts(0, 0).await.is_err(),
        "a zero-width bucket is refused"
    );
}

/// Issue 20 item 4: the monthly quota is counted atomically in the store —
/// calls beyond it are not counted (so an agent cannot run the count up by
/// retrying), months are separate, and concurrent callers never exceed it.
#[tokio::test]
async fn quota_counts_stop_at_the_quota_and_months_are_separate() {
    let (_dir, store) = open().await;
    assert_eq!(store.count_call("k", "2026-12", 2).await.unwrap(), Some(1));
    assert_eq!(store.count_call("k", "2026-12", 2).await.unwrap(), Some(2));
    assert_eq!(store.count_call("k", "2026-12", 2).await.unwrap(), None);
    assert_eq!(store.count_call("k", "2026-12", 2).await.unwrap(), None);
    assert_eq!(store.key_usage("k", "2026-12").await.unwrap(), 2);
    assert_eq!(store.count_call("k", "2027-01", 2).await.unwrap(), Some(1));
    // A raised quota lets the next call through.
    assert_eq!(store.count_call("k", "2026-12", 3).await.unwrap(), Some(3));
    // Sixteen callers racing for a quota of five: exactly five counted.
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let s = store.clone();
            tokio::spawn(async move { s.count_call("race", "2026-12", 5).await.unwrap() })
        })
        .collect();
    let mut counted = 0;
    for t in tasks {
        if t.await.unwrap().is_some() {
            counted += 1;
        }
    }
    assert_eq!(counted, 5);
    assert_eq!(store.key_usage("race", "2026-12").await.unwrap(), 5);
}

/// Issue 20 item 4: the shared rate bucket lets a burst of `per_minute`
/// through, then refuses with the wait for the next token; fifty takers at
/// once on two handles (two gateways, in effect) get exactly the burst.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_shared_rate_bucket_gives_each_token_once() {
    let (_d, a) = open().await;
    let b = reopen(&a).await;
    let now = 1_000_000_i64;
    for _ in 0..3 {
        assert_eq!(a.take_rate_token("k", 3, now).await.unwrap(), None);
    }
    let wait = a.take_rate_token("k", 3, now).await.unwrap().unwrap();
    assert_eq!(wait, 20_000, "the next token in one interval (60 s / 3)");
    assert_eq!(b.take_rate_token("k", 3, now + 20_000).await.unwrap(), None);
    assert!(a.take_rate_token("other", 3, now).await.unwrap().is_none());
    assert!(a.take_rate_token("k", 0, now).await.is_err());

    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let s = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { s.take_rate_token("burst", 10, now).await.unwrap() })
        })
        .collect();
    let mut taken = 0;
    for t in tasks {
        if t.await.unwrap().is_none() {
            taken += 1;
        }
    }
    assert_eq!(taken, 10, "exactly the burst of 10");
}

/// Issue 39 item 19: `interlock.sqlite` was created 0644 (SQLite's default
/// under umask 022), so any local user read plans, surfaces, receipts and
/// key hashes. A new file is 0600 in a new 0700 directory; an existing wider
/// file (and its WAL) is narrowed when the store opens it.
#[cfg(unix)]
#[tokio::test]
async fn regression_issue_39_the_database_file_is_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("data/interlock.sqlite");
    let store = interlock_store::Store::open(&path).await.unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    store.close().await;

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let wal = root.path().join("data/interlock.sqlite-wal");
    if wal.exists() {
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let store = interlock_store::Store::open(&path).await.unwrap();
    assert_eq!(mode(&path), 0o600, "an existing wider file is narrowed");
    if wal.exists() {
        assert_eq!(mode(&wal), 0o600);
    }
    store.close().await;
}

/// Issue 42: the LLM proxy's learned fingerprints — a newer verdict replaces
/// an older one, the expired are forgotten, the newest come first, at most
/// the limit.
#[tokio::test]
async fn learned_fingerprints_replace_expire_and_are_bounded() {
    let (_dir, s) = open().await;
    let v = |fp: &str, is_unsafe: bool, learned_at: i64, expires_at: i64| {
        interlock_store::LearnedVerdict {
            fingerprint: fp.into(),
            is_unsafe,
            category: if is_unsafe { "injection" } else { "none" }.into(),
            reason: "r".into(),
            learned_at,
            expires_at,
        }
    };
    s.learn_fingerprint(&v("sha256:a", false, 10, 1000))
        .await
        .unwrap();
    s.learn_fingerprint(&v("sha256:a", true, 20, 1000))
        .await
        .unwrap();
    s.learn_fingerprint(&v("sha256:b", false, 30, 1000))
        .await
        .unwrap();
    s.learn_fingerprint(&v("sha256:old", true, 5, 50))
        .await
        .unwrap();
    let got = s.learned_fingerprints(100, 10).await.unwrap();
    let fps: Vec<(&str, bool)> = got
        .iter()
        .map(|l| (l.fingerprint.as_str(), l.is_unsafe))
        .collect();
    assert_eq!(fps, [("sha256:b", false), ("sha256:a", true)]);
    assert_eq!(s.learned_fingerprints(100, 1).await.unwrap().len(), 1);
    // The expired one is gone, not only hidden.
    assert!(
        s.learned_fingerprints(0, 10)
            .await
            .unwrap()
            .iter()
            .all(|l| l.fingerprint != "sha256:old")
    );
}
