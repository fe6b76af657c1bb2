//! Each guarantee of the governance loop, on a real SQLite file, the real log and the
//! real filesystem adapter: a test here fails if its guarantee breaks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use interlock_adapters::{AdapterConfig, Adapters};
use interlock_core::canon::{self, Digest, Value};
use interlock_core::decision::{Terms, sign_decision};
use interlock_core::{Decision, DecisionError, Policy};
use interlock_engine::{
    Engine, EngineConfig, EngineError, EventKind, ManualClock, PlanStatus, StageResult,
};

const T0: i64 = 1_795_000_000;

struct World {
    engine: Engine,
    location: interlock_store::StoreLocation,
    clock: Arc<ManualClock>,
    reviewer: SigningKey,
    second_reviewer: SigningKey,
    work: PathBuf,
    _dir: tempfile::TempDir,
}

async fn world_with(policy: Policy) -> World {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut config = EngineConfig::new(dir.path().join("data"));
    let location =
        interlock_store::testing::fresh_location(config.store_location().file().unwrap()).await;
    config.database = Some(location.clone());
    config.policy = policy;
    config.clock = clock.clone();
    config.adapters = Adapters::builtin(&AdapterConfig {
        fs_roots: vec![work.clone()],
        ..AdapterConfig::default()
    })
    .unwrap();
    let engine = Engine::open(config, Arc::new(SigningKey::from_bytes(&[9; 32])))
        .await
        .unwrap();
    let reviewer = SigningKey::from_bytes(&[1; 32]);
    let second_reviewer = SigningKey::from_bytes(&[2; 32]);
    engine
        .register_approver(&reviewer.verifying_key(), "human:alice", "test")
        .await
        .unwrap();
    engine
        .register_approver(&second_reviewer.verifying_key(), "human:bob", "test")
        .await
        .unwrap();
    World {
        engine,
        location,
        clock,
        reviewer,
        second_reviewer,
        work,
        _dir: dir,
    }
}

async fn world() -> World {
    world_with(Policy::default()).await
}

/// A plan that writes `content` to `<work>/<file>` after checking it is absent.
fn write_plan(id: &str, work: &Path, file: &str, content: &str) -> Value {
    let target = work.join(file);
    canon::from_serde_json(&serde_json::json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": id,
        "title": format!("write {file}"),
        "proposer": "agent:test",
        "created_at": "2026-11-29T12:00:00Z",
        "body": { "stages": [{
            "id": "write",
            "action": "fs.write_file",
            "target": target.to_string_lossy(),
            "params": { "content": content },
            "preconditions": [{ "probe": "fs.path_absent" }],
            "verify": [{ "probe": "fs.file_sha256",
                         "params": { "sha256": Digest::of_bytes(content.as_bytes()).to_string() } }],
            "rollback": "delete the file"
        }]}
    }))
    .unwrap()
}

fn approve(
    w: &World,
    key: &SigningKey,
    plan_id: &str,
    hash: Digest,
    valid_for: i64,
    nonce: u8,
) -> interlock_core::DsseEnvelope {
    let now = w.engine.now();
    sign_decision(
        key,
        &Terms {
            audience: w.engine.log().origin(),
            subject: plan_id,
            subject_hash: hash,
            decision: Decision::Approve,
            reason: "reviewed",
            issued_at: now,
            not_before: now,
            expires_at: now + valid_for,
            nonce: [nonce; 16],
            policy_digest: w.engine.policy().digest(),
        },
    )
    .unwrap()
    .1
}

#[tokio::test]
async fn the_whole_loop_runs_and_is_logged() {
    let w = world().await;
    let mut events = w.engine.subscribe();
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "hello\n"))
        .await
        .unwrap();
    assert_eq!(events.recv().await.unwrap().kind, EventKind::Proposed);
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Proposed
    );
    let out = w
        .engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    assert_eq!(out.status, PlanStatus::Approved);
    let report = w.engine.execute("p1").await.unwrap();
    assert_eq!(report.status, PlanStatus::Succeeded);
    assert_eq!(report.committed(), vec!["write"]);
    assert_eq!(
        std::fs::read_to_string(w.work.join("a.txt")).unwrap(),
        "hello\n"
    );
    let audit = interlock_log::audit(w.engine.store(), None).await.unwrap();
    assert!(audit.is_ok(), "{audit}");
    // proposed, decision, approved, executing, 2 probes, dispatch, succeeded (+2 key registrations)
    assert!(audit.entries >= 9, "{audit}");
}

#[tokio::test]
async fn an_approval_is_bound_to_the_hash_it_signed() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "one\n"))
        .await
        .unwrap();
    let env = approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1);
    // The agent edits the body before the reviewer's statement arrives.
    let edited = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "two\n"))
        .await
        .unwrap();
    assert_ne!(edited.plan_hash, p.plan_hash);
    assert!(matches!(
        w.engine.decide(&env).await,
        Err(EngineError::Decision(
            DecisionError::PlanHashMismatch { .. }
        ))
    ));
    // And editing after approval voids it: execute refuses the new body.
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", edited.plan_hash, 3600, 2))
        .await
        .unwrap();
    w.engine
        .propose(&write_plan("p1", &w.work, "a.txt", "three\n"))
        .await
        .unwrap();
    assert!(matches!(
        w.engine.execute("p1").await,
        Err(EngineError::NotApproved(_))
    ));
    assert!(!w.work.join("a.txt").exists(), "nothing may run");
}

#[tokio::test]
async fn fifty_concurrent_executes_run_the_plan_exactly_once() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "once.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let engine = w.engine.clone();
        tasks.push(tokio::spawn(async move { engine.execute("p1").await }));
    }
    let mut ran = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(report) => {
                assert_eq!(report.status, PlanStatus::Succeeded);
                ran += 1;
            }
            Err(EngineError::AlreadyStarted(_)) => {}
            Err(e) => panic!("unexpected: {e}"),
        }
    }
    assert_eq!(ran, 1);
    let audit = interlock_log::audit(w.engine.store(), None).await.unwrap();
    assert!(audit.is_ok(), "{audit}");
    let mut dispatched = 0;
    for i in 0..w.engine.log().size() {
        let e = w.engine.log().entry(i).await.unwrap();
        if e.get("type").and_then(Value::as_str) == Some("stage.dispatch") {
            dispatched += 1;
        }
    }
    assert_eq!(dispatched, 1, "the stage was dispatched exactly once");
}

#[tokio::test]
async fn an_expired_approval_cannot_execute() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "late.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 60, 1))
        .await
        .unwrap();
    w.clock.advance(61);
    let err = w.engine.execute("p1").await.unwrap_err();
    assert!(
        matches!(err, EngineError::NotApproved(ref m) if m.contains("expired")),
        "{err}"
    );
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Expired
    );
    assert!(!w.work.join("late.txt").exists());
    // A statement presented after its window is refused at decision time too.
    let p2 = w
        .engine
        .propose(&write_plan("p2", &w.work, "late2.txt", "x\n"))
        .await
        .unwrap();
    let env = approve(&w, &w.reviewer, "p2", p2.plan_hash, 60, 2);
    w.clock.advance(120);
    assert!(matches!(
        w.engine.decide(&env).await,
        Err(EngineError::Decision(DecisionError::Expired { .. }))
    ));
}

#[tokio::test]
async fn an_unmet_precondition_halts_with_nothing_dispatched() {
    let w = world().await;
    std::fs::write(w.work.join("exists.txt"), "already here\n").unwrap();
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "exists.txt", "new\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    let report = w.engine.execute("p1").await.unwrap();
    assert_eq!(report.status, PlanStatus::Halted);
    assert!(matches!(
        report.stages[0].result,
        StageResult::PreconditionFailed(_)
    ));
    assert_eq!(
        std::fs::read_to_string(w.work.join("exists.txt")).unwrap(),
        "already here\n"
    );
}

#[tokio::test]
async fn an_unprobeable_precondition_halts_too() {
    let w = world().await;
    // A target outside the adapters' roots cannot be probed: fail closed.
    let doc = write_plan("p1", Path::new("/nonexistent-root"), "x.txt", "x\n");
    let p = w.engine.propose(&doc).await.unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    let report = w.engine.execute("p1").await.unwrap();
    assert_eq!(report.status, PlanStatus::Halted);
    assert!(
        matches!(&report.stages[0].result, StageResult::PreconditionFailed(m) if m.contains("could not be probed")),
        "{:?}",
        report.stages
    );
}

#[tokio::test]
async fn a_failing_stage_halts_forward_only_and_records_what_committed() {
    let w = world().await;
    let first = w.work.join("first.txt");
    let blocked = w.work.join("second.txt");
    let doc = canon::from_serde_json(&serde_json::json!({
        "schema_version": "interlock.plan/v1", "plan_id": "p1", "title": "two writes",
        "proposer": "agent:test", "created_at": "2026-11-29T12:00:00Z",
        "body": { "stages": [
            { "id": "one", "action": "fs.write_file", "target": first.to_string_lossy(),
              "params": { "content": "1\n" }, "preconditions": [{ "probe": "fs.path_absent" }],
              "rollback": "delete it" },
            { "id": "two", "action": "fs.write_file", "target": blocked.to_string_lossy(),
              "params": { "content": "2\n" }, "preconditions": [{ "probe": "fs.path_absent" }],
              "rollback": "delete it" },
            { "id": "three", "action": "fs.make_dir", "target": w.work.join("d").to_string_lossy(),
              "preconditions": [{ "probe": "fs.path_absent" }], "rollback": "remove it" }
        ]}
    }))
    .unwrap();
    let p = w.engine.propose(&doc).await.unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    // Live state changes between approval and execution: stage two's precondition breaks.
    std::fs::write(&blocked, "someone else's\n").unwrap();
    let report = w.engine.execute("p1").await.unwrap();
    assert_eq!(report.status, PlanStatus::Halted);
    assert_eq!(report.committed(), vec!["one"]);
    assert_eq!(report.stages[2].result, StageResult::NotRun);
    assert!(first.exists(), "forward-only: stage one is not rolled back");
    assert!(!w.work.join("d").exists());
    // And a halted plan cannot be run again.
    assert!(matches!(
        w.engine.execute("p1").await,
        Err(EngineError::AlreadyStarted(_))
    ));
}

#[tokio::test]
async fn a_proposer_cannot_approve_their_own_plan() {
    let w = world().await;
    let agent_key = SigningKey::from_bytes(&[5; 32]);
    w.engine
        .register_approver(
            &agent_key.verifying_key(),
            "agent:test",
            "an agent that holds a key",
        )
        .await
        .unwrap();
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    assert!(matches!(
        w.engine
            .decide(&approve(&w, &agent_key, "p1", p.plan_hash, 3600, 1))
            .await,
        Err(EngineError::SelfApproval(_))
    ));
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Proposed
    );
}

#[tokio::test]
async fn untrusted_keys_and_replayed_statements_are_refused() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    let stranger = SigningKey::from_bytes(&[7; 32]);
    assert!(matches!(
        w.engine
            .decide(&approve(&w, &stranger, "p1", p.plan_hash, 3600, 1))
            .await,
        Err(EngineError::Decision(DecisionError::UnknownKey(_)))
    ));
    // With a quorum of two, the same statement twice is a replay, not two approvals.
    let w = world_with(quorum_two()).await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    let env = approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1);
    assert_eq!(
        w.engine.decide(&env).await.unwrap().status,
        PlanStatus::Proposed
    );
    assert!(matches!(
        w.engine.decide(&env).await,
        Err(EngineError::Replay)
    ));
    assert!(matches!(
        w.engine.execute("p1").await,
        Err(EngineError::NotApproved(_))
    ));
    let out = w
        .engine
        .decide(&approve(&w, &w.second_reviewer, "p1", p.plan_hash, 3600, 2))
        .await
        .unwrap();
    assert_eq!(
        (out.status, out.approvals, out.approvals_required),
        (PlanStatus::Approved, 2, 2)
    );
    assert_eq!(
        w.engine.execute("p1").await.unwrap().status,
        PlanStatus::Succeeded
    );
}

fn quorum_two() -> Policy {
    let doc = canon::parse_yaml(
        b"policy_version: interlock.policy/v1\nquorum: { low: 2, medium: 2, high: 2, critical: 2 }\n",
    )
    .unwrap();
    Policy::from_value(&doc).unwrap()
}

#[tokio::test]
async fn a_rejection_stops_the_plan() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    let now = w.engine.now();
    let (_, env) = sign_decision(
        &w.reviewer,
        &Terms {
            audience: w.engine.log().origin(),
            subject: "p1",
            subject_hash: p.plan_hash,
            decision: Decision::Reject,
            reason: "not today",
            issued_at: now,
            not_before: now,
            expires_at: now + 60,
            nonce: [3; 16],
            policy_digest: w.engine.policy().digest(),
        },
    )
    .unwrap();
    assert_eq!(
        w.engine.decide(&env).await.unwrap().status,
        PlanStatus::Rejected
    );
    assert!(matches!(
        w.engine.execute("p1").await,
        Err(EngineError::NotApproved(_))
    ));
}

#[tokio::test]
async fn invalid_plans_are_not_held() {
    let w = world().await;
    let mut doc = canon::to_serde_json(&write_plan("p1", &w.work, "a.txt", "x\n"));
    doc["body"]["stages"][0]
        .as_object_mut()
        .unwrap()
        .remove("rollback");
    let err = w
        .engine
        .propose(&canon::from_serde_json(&doc).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(err, EngineError::Invalid(ref v) if v.to_string().contains("mutating-has-rollback")),
        "{err}"
    );
    assert!(matches!(
        w.engine.plan("p1").await,
        Err(EngineError::NoSuchPlan(_))
    ));
}

/// Issue 15, item 4: quorum counts distinct identities, not keys — one person with a
/// desktop key and a browser key is one approver.
#[tokio::test]
async fn regression_one_person_with_two_keys_is_one_approver() {
    let w = world_with(quorum_two()).await;
    let alice_browser = SigningKey::from_bytes(&[3; 32]);
    w.engine
        .register_approver(&alice_browser.verifying_key(), "human:alice", "browser")
        .await
        .unwrap();
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    let out = w
        .engine
        .decide(&approve(&w, &alice_browser, "p1", p.plan_hash, 3600, 2))
        .await
        .unwrap();
    assert_eq!(
        (out.status, out.approvals),
        (PlanStatus::Proposed, 1),
        "two keys of human:alice must count once"
    );
    let out = w
        .engine
        .decide(&approve(&w, &w.second_reviewer, "p1", p.plan_hash, 3600, 3))
        .await
        .unwrap();
    assert_eq!((out.status, out.approvals), (PlanStatus::Approved, 2));
}

/// Issue 15, item 10: a plan id belongs to the identity that first proposed it.
#[tokio::test]
async fn regression_another_proposer_cannot_supersede_a_plan() {
    let w = world().await;
    let first = w
        .engine
        .propose(&write_plan("owned", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    let mut doc = canon::to_serde_json(&write_plan("owned", &w.work, "b.txt", "evil\n"));
    doc["proposer"] = serde_json::json!("agent:intruder");
    let refused = w
        .engine
        .propose(&canon::from_serde_json(&doc).unwrap())
        .await;
    assert!(
        matches!(
            &refused,
            Err(EngineError::Store(interlock_store::StoreError::NotPlanOwner { owner, .. }))
                if owner == "agent:test"
        ),
        "{refused:?}"
    );
    let current = w.engine.plan("owned").await.unwrap();
    assert_eq!(
        (current.revision, current.plan_hash),
        (1, first.plan_hash.to_string())
    );
}

/// Issue 15, item 1: a statement older than the subject's latest decision is
/// refused (it would undo a newer one), and so is one already used; both leave a
/// `decision.refused` leaf.
#[tokio::test]
async fn regression_a_withheld_older_decision_cannot_undo_a_newer_one() {
    let w = world_with(quorum_two()).await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    // Signed first, posted later.
    let withheld = approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1);
    w.clock.advance(10);
    w.engine
        .decide(&approve(&w, &w.second_reviewer, "p1", p.plan_hash, 3600, 2))
        .await
        .unwrap();
    let refused = w.engine.decide(&withheld).await;
    assert!(
        matches!(refused, Err(EngineError::Stale { latest_issued_at, issued_at, .. }) if latest_issued_at == issued_at + 10),
        "{refused:?}"
    );
    let size = w.engine.log().size();
    let last = w.engine.log().entry(size - 1).await.unwrap();
    assert_eq!(
        last.get("type").and_then(Value::as_str),
        Some("decision.refused")
    );
    assert_eq!(last.get("why").and_then(Value::as_str), Some("stale"));
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Proposed
    );
}

/// Issue 15, item 10: a caller that knows which bytes it proposed runs only those.
#[tokio::test]
async fn regression_execute_exactly_refuses_another_revision() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    let other = Digest::of_bytes(b"another body").to_string();
    assert!(matches!(
        w.engine.execute_exactly("p1", "agent:test", &other).await,
        Err(EngineError::NotApproved(_))
    ));
    assert!(matches!(
        w.engine
            .execute_exactly("p1", "agent:intruder", &p.plan_hash.to_string())
            .await,
        Err(EngineError::NotApproved(_))
    ));
    assert!(!w.work.join("a.txt").exists());
    let ran = w
        .engine
        .execute_exactly("p1", "agent:test", &p.plan_hash.to_string())
        .await
        .unwrap();
    assert_eq!(ran.status, PlanStatus::Succeeded);
}

/// Issue 15, item 14: an execution whose process died (its lease no longer
/// renewed) was left EXECUTING forever. It is now found, halted with an
/// `executor.lost` leaf naming what committed, and never re-run.
#[tokio::test]
async fn regression_an_execution_left_by_a_dead_process_is_halted_not_rerun() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    // Another process took the plan and its lease, then died (nobody renews it).
    assert!(
        w.engine
            .store()
            .start_execution_leased("p1", 1, Some(("pid-dead", T0)))
            .await
            .unwrap()
    );
    // Within the lease's lifetime, it is not touched.
    w.clock.advance(10);
    assert!(w.engine.recover_lost_executions().await.unwrap().is_empty());
    w.clock.advance(60);
    assert_eq!(
        w.engine.recover_lost_executions().await.unwrap(),
        vec!["p1".to_owned()]
    );
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Halted
    );
    let size = w.engine.log().size();
    let lost = w.engine.log().entry(size - 1).await.unwrap();
    assert_eq!(
        lost.get("type").and_then(Value::as_str),
        Some("executor.lost")
    );
    assert_eq!(
        lost.get("executor").and_then(Value::as_str),
        Some("pid-dead")
    );
    assert!(matches!(
        w.engine.execute("p1").await,
        Err(EngineError::AlreadyStarted(_))
    ));
    assert!(!w.work.join("a.txt").exists(), "never re-run");
    // Recovering again finds nothing.
    assert!(w.engine.recover_lost_executions().await.unwrap().is_empty());
}

/// Issue 15, item 14: a running execution records each committed stage in its
/// lease, and a finished one is not reported lost.
#[tokio::test]
async fn a_finished_execution_is_never_reported_lost() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 1))
        .await
        .unwrap();
    assert_eq!(
        w.engine.execute("p1").await.unwrap().status,
        PlanStatus::Succeeded
    );
    w.clock.advance(3600);
    assert!(w.engine.recover_lost_executions().await.unwrap().is_empty());
}

/// Issue 15, item 8: a key in the approver registry without its
/// `approver.registered` leaf (added in the database, outside the log) is not
/// trusted: its signature decides nothing.
#[tokio::test]
async fn regression_an_approver_key_added_outside_the_log_is_not_trusted() {
    let w = world().await;
    let mallory = SigningKey::from_bytes(&[66; 32]);
    w.engine
        .store()
        .add_approver_key(&interlock_store::NewApproverKey {
            key_id: interlock_core::KeyId::of(&mallory.verifying_key()).to_string(),
            public_key: mallory.verifying_key().to_bytes(),
            identity: "human:mallory".into(),
            label: "inserted in the database".into(),
        })
        .await
        .unwrap();
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    assert!(matches!(
        w.engine
            .decide(&approve(&w, &mallory, "p1", p.plan_hash, 3600, 1))
            .await,
        Err(EngineError::Decision(DecisionError::UnknownKey(_)))
    ));
    // Keys registered through the engine (and so the log) are trusted.
    w.engine
        .decide(&approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 2))
        .await
        .unwrap();
}

/// An executor that looks at the log at the moment it is asked to act, and
/// records the last leaf it saw there (then writes nothing).
struct LogWitness {
    engine: std::sync::OnceLock<Engine>,
    saw: std::sync::Mutex<Option<Value>>,
}

#[async_trait::async_trait]
impl interlock_adapters::Executor for LogWitness {
    fn actions(&self) -> Vec<&'static str> {
        vec!["fs.write_file"]
    }
    async fn execute(
        &self,
        _stage: &interlock_core::Stage,
    ) -> Result<interlock_adapters::ExecOutcome, interlock_adapters::ExecError> {
        let engine = self.engine.get().expect("engine set before execution");
        let last = engine.log().entry(engine.log().size() - 1).await.unwrap();
        *self.saw.lock().unwrap() = Some(last);
        Ok(interlock_adapters::ExecOutcome {
            summary: "witnessed".into(),
            detail: Value::Object(Default::default()),
            output: None,
        })
    }
}

/// Issue 15, item 13 (evidence before effect): a stage's dispatch was logged only
/// after its adapter had acted, so a process killed mid-stage left no trace that
/// the stage had started.
#[tokio::test]
async fn regression_a_stage_is_on_the_log_before_its_adapter_acts() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let witness = Arc::new(LogWitness {
        engine: std::sync::OnceLock::new(),
        saw: std::sync::Mutex::new(None),
    });
    let mut config = EngineConfig::new(work.join("data"));
    config.database = Some(
        interlock_store::testing::fresh_location(config.store_location().file().unwrap()).await,
    );
    config.clock = Arc::new(ManualClock::new(T0));
    config.adapters = Adapters::builtin(&AdapterConfig {
        fs_roots: vec![work.clone()],
        ..AdapterConfig::default()
    })
    .unwrap()
    .with_executor(witness.clone());
    let engine = Engine::open(config, Arc::new(SigningKey::from_bytes(&[9; 32])))
        .await
        .unwrap();
    let _ = witness.engine.set(engine.clone());
    let reviewer = SigningKey::from_bytes(&[1; 32]);
    engine
        .register_approver(&reviewer.verifying_key(), "human:alice", "test")
        .await
        .unwrap();
    let mut plan = write_plan("p1", &work, "a.txt", "hello\n");
    // No verify check: the witness writes nothing.
    if let Value::Object(doc) = &mut plan {
        let stages = doc.get_mut("body").and_then(|b| match b {
            Value::Object(b) => b.get_mut("stages"),
            _ => None,
        });
        if let Some(Value::Array(stages)) = stages
            && let Some(Value::Object(stage)) = stages.first_mut()
        {
            stage.insert("verify".into(), Value::Array(vec![]));
        }
    }
    let p = engine.propose(&plan).await.unwrap();
    let now = engine.now();
    let (_, envelope) = sign_decision(
        &reviewer,
        &Terms {
            audience: engine.log().origin(),
            subject: "p1",
            subject_hash: p.plan_hash,
            decision: Decision::Approve,
            reason: "reviewed",
            issued_at: now,
            not_before: now,
            expires_at: now + 3600,
            nonce: [1; 16],
            policy_digest: engine.policy().digest(),
        },
    )
    .unwrap();
    engine.decide(&envelope).await.unwrap();
    let report = engine.execute("p1").await.unwrap();
    assert_eq!(report.status, PlanStatus::Succeeded, "{report:?}");

    let saw = witness
        .saw
        .lock()
        .unwrap()
        .clone()
        .expect("the adapter ran");
    let field = |k: &str| saw.get(k).and_then(Value::as_str).map(str::to_owned);
    assert_eq!(field("type").as_deref(), Some("stage.started"), "{saw:?}");
    assert_eq!(field("plan_id").as_deref(), Some("p1"));
    assert_eq!(field("stage").as_deref(), Some("write"));
    assert_eq!(field("plan_hash"), Some(p.plan_hash.to_string()));
    let audit = interlock_log::audit(engine.store(), None).await.unwrap();
    assert!(audit.is_ok(), "{audit}");
}

/// Issue 39 item 9: an approver row was trusted by its key id and identity
/// (which its `approver.registered` leaf vouches for) but verified with the
/// row's `public_key`: whoever could write the database (a shared Postgres
/// user) swapped in their own key, and its statements verified — under an
/// empty identity. The row's key must now hash to the key id the log vouches
/// for; a swapped row is not trusted at all.
#[tokio::test]
async fn regression_issue_39_a_swapped_approver_public_key_is_not_trusted() {
    use sqlx::Connection as _;
    let w = world().await;
    let attacker = SigningKey::from_bytes(&[66; 32]);
    let mut conn = interlock_store::testing::raw_connection(&w.location).await;
    let sql = interlock_store::testing::dialect(
        &w.location,
        "UPDATE approver_keys SET public_key = $1 WHERE identity = 'human:alice'",
    );
    let swapped = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(attacker.verifying_key().to_bytes().to_vec())
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(swapped.rows_affected(), 1);
    conn.close().await.unwrap();

    let p = w
        .engine
        .propose(&write_plan("p-swap", &w.work, "swap.txt", "x\n"))
        .await
        .unwrap();
    let err = w
        .engine
        .decide(&approve(&w, &attacker, "p-swap", p.plan_hash, 600, 1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, EngineError::Decision(DecisionError::UnknownKey(_))),
        "{err}"
    );
    // Alice's own key is no longer trusted either: her row is not hers.
    let err = w
        .engine
        .decide(&approve(&w, &w.reviewer, "p-swap", p.plan_hash, 600, 2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, EngineError::Decision(DecisionError::UnknownKey(_))),
        "{err}"
    );
    let (_, records) = w.engine.trusted_approvers().await.unwrap();
    assert!(
        records.iter().all(|r| r.identity != "human:alice"),
        "{records:?}"
    );
    assert_eq!(
        w.engine.plan("p-swap").await.unwrap().status,
        PlanStatus::Proposed
    );
}

/// Issue 39 item 7: every gateway's log was `interlock.local/log`, so a
/// statement's audience told no gateway from another and one made for one
/// was accepted by all. A new log takes an origin of its own — even under
/// the same log key, as one machine's data directories share it — fixed when
/// it is created and adopted by every later opener; a log created under the
/// old shared name keeps it (its checkpoints are signed under it).
#[tokio::test]
async fn regression_issue_39_each_log_has_its_own_audience_kept_across_opens() {
    let dir = tempfile::tempdir().unwrap();
    let key = Arc::new(SigningKey::from_bytes(&[9; 32]));
    let open = async |data: &str, origin: Option<&str>| {
        let mut config = EngineConfig::new(dir.path().join(data));
        std::fs::create_dir_all(&config.data_dir).unwrap();
        config.origin = origin.map(str::to_owned);
        let engine = Engine::open(config, key.clone()).await.unwrap();
        let origin = engine.log().origin().to_owned();
        engine.log().close().await;
        origin
    };
    let first = open("a", None).await;
    let second = open("b", None).await;
    assert!(first.starts_with("interlock.local/log/"), "{first}");
    assert_ne!(first, second, "two logs under one key share an audience");
    assert_eq!(
        open("a", None).await,
        first,
        "a reopened log changed origin"
    );
    assert_eq!(
        open("old", Some("interlock.local/log")).await,
        "interlock.local/log"
    );
    assert_eq!(open("old", None).await, "interlock.local/log");
}

/// Issue 44: the deciding approval's leaf and row commit together and the
/// plan's move to APPROVED follows in its own transaction; the fault
/// campaign killed `interlock plans approve` between the two and left a
/// plan PROPOSED with a valid approval on record. Made here by storing the
/// approval as that transaction did and nothing after it: the next start
/// (`apply_reached_quorums`) finishes the move, once, and the plan runs.
#[tokio::test]
async fn regression_issue_44_an_approval_recorded_without_its_move_is_finished_at_start() {
    let w = world().await;
    let p = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    let envelope = approve(&w, &w.reviewer, "p1", p.plan_hash, 3600, 7);
    let now = w.engine.now();
    w.engine
        .store()
        .insert_approval(&interlock_store::NewApproval {
            plan_id: "p1".into(),
            revision: 1,
            plan_hash: p.plan_hash.to_string(),
            decision: interlock_store::ApprovalDecision::Approve,
            reason: "reviewed".into(),
            approver_key_id: interlock_core::KeyId::of(&w.reviewer.verifying_key()).to_string(),
            nonce: hex::encode([7u8; 16]),
            not_before: now,
            expires_at: now + 3600,
            envelope: serde_json::to_vec(&envelope.to_json()).unwrap(),
        })
        .await
        .unwrap();
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Proposed
    );
    assert_eq!(
        w.engine.apply_reached_quorums().await.unwrap(),
        vec!["p1".to_owned()]
    );
    assert_eq!(
        w.engine.plan("p1").await.unwrap().status,
        PlanStatus::Approved
    );
    assert!(
        w.engine.apply_reached_quorums().await.unwrap().is_empty(),
        "once"
    );
    assert_eq!(
        w.engine.execute("p1").await.unwrap().status,
        PlanStatus::Succeeded
    );
    // A plan with no approval, or fewer than its quorum, is left alone.
    w.engine
        .propose(&write_plan("p2", &w.work, "b.txt", "y\n"))
        .await
        .unwrap();
    assert!(w.engine.apply_reached_quorums().await.unwrap().is_empty());
}

/// Issue 44: a rejection's leaf and row commit together and the plan's move
/// to REJECTED follows in its own transaction; the desktop fault campaign
/// killed the app between the two (a *Reject* clicked on a notification)
/// and the plan stayed PROPOSED after a restart, its veto on the log and
/// nothing honouring it: a later approval would have moved it to APPROVED
/// and run it. Made here by storing the rejection as that transaction did
/// and nothing after it, once for a PROPOSED plan and once for an APPROVED
/// one: the next start (`apply_recorded_rejections`) makes the moves, once;
/// before it, an approval is refused and an execution does not run, each
/// making the move itself.
#[tokio::test]
async fn regression_issue_44_a_rejection_recorded_without_its_move_is_finished_at_start() {
    let w = world().await;
    let recorded_rejection = |id: &'static str, hash: Digest, nonce: u8| {
        let w = &w;
        async move {
            let now = w.engine.now();
            let (_, envelope) = sign_decision(
                &w.reviewer,
                &Terms {
                    audience: w.engine.log().origin(),
                    subject: id,
                    subject_hash: hash,
                    decision: Decision::Reject,
                    reason: "not this",
                    issued_at: now,
                    not_before: now,
                    expires_at: now + 3600,
                    nonce: [nonce; 16],
                    policy_digest: w.engine.policy().digest(),
                },
            )
            .unwrap();
            w.engine
                .store()
                .insert_approval(&interlock_store::NewApproval {
                    plan_id: id.into(),
                    revision: 1,
                    plan_hash: hash.to_string(),
                    decision: interlock_store::ApprovalDecision::Reject,
                    reason: "not this".into(),
                    approver_key_id: interlock_core::KeyId::of(&w.reviewer.verifying_key())
                        .to_string(),
                    nonce: hex::encode([nonce; 16]),
                    not_before: now,
                    expires_at: now + 3600,
                    envelope: serde_json::to_vec(&envelope.to_json()).unwrap(),
                })
                .await
                .unwrap();
        }
    };
    let status = |id: &'static str| {
        let w = &w;
        async move { w.engine.plan(id).await.unwrap().status }
    };
    // Left PROPOSED, then left APPROVED (a veto of an approved plan).
    let p1 = w
        .engine
        .propose(&write_plan("p1", &w.work, "a.txt", "x\n"))
        .await
        .unwrap();
    recorded_rejection("p1", p1.plan_hash, 1).await;
    let p2 = w
        .engine
        .propose(&write_plan("p2", &w.work, "b.txt", "y\n"))
        .await
        .unwrap();
    let envelope = approve(&w, &w.second_reviewer, "p2", p2.plan_hash, 3600, 2);
    assert_eq!(
        w.engine.decide(&envelope).await.unwrap().status,
        PlanStatus::Approved
    );
    recorded_rejection("p2", p2.plan_hash, 3).await;
    let p3 = w
        .engine
        .propose(&write_plan("p3", &w.work, "c.txt", "z\n"))
        .await
        .unwrap();
    recorded_rejection("p3", p3.plan_hash, 4).await;
    let p4 = w
        .engine
        .propose(&write_plan("p4", &w.work, "d.txt", "w\n"))
        .await
        .unwrap();
    let envelope = approve(&w, &w.second_reviewer, "p4", p4.plan_hash, 3600, 5);
    w.engine.decide(&envelope).await.unwrap();
    recorded_rejection("p4", p4.plan_hash, 6).await;
    assert_eq!(status("p1").await, PlanStatus::Proposed);
    assert_eq!(status("p2").await, PlanStatus::Approved);

    // Before any start: an approval of a vetoed plan is refused, and a
    // vetoed approved plan does not run; each makes the move.
    let envelope = approve(&w, &w.second_reviewer, "p3", p3.plan_hash, 3600, 7);
    assert!(
        matches!(
            w.engine.decide(&envelope).await,
            Err(EngineError::WrongState { ref status, .. }) if status == "REJECTED"
        ),
        "an approval over a recorded rejection"
    );
    assert_eq!(status("p3").await, PlanStatus::Rejected);
    assert!(matches!(
        w.engine.execute("p4").await,
        Err(EngineError::NotApproved(_))
    ));
    assert_eq!(status("p4").await, PlanStatus::Rejected);
    assert!(!w.work.join("d.txt").exists(), "a vetoed plan ran");

    // A start makes the others' moves, once.
    let mut moved = w.engine.apply_recorded_rejections().await.unwrap();
    moved.sort();
    assert_eq!(moved, vec!["p1".to_owned(), "p2".to_owned()]);
    assert_eq!(status("p1").await, PlanStatus::Rejected);
    assert_eq!(status("p2").await, PlanStatus::Rejected);
    assert!(
        w.engine
            .apply_recorded_rejections()
            .await
            .unwrap()
            .is_empty(),
        "once"
    );
    assert!(matches!(
        w.engine.execute("p2").await,
        Err(EngineError::NotApproved(_))
    ));
    assert!(!w.work.join("b.txt").exists(), "a vetoed plan ran");
    // A plan with only approvals, or none, is left alone.
    w.engine
        .propose(&write_plan("p5", &w.work, "e.txt", "v\n"))
        .await
        .unwrap();
    assert!(
        w.engine
            .apply_recorded_rejections()
            .await
            .unwrap()
            .is_empty()
    );
}
