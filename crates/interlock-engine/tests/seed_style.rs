//! Issue 23, end to end on the engine: the seed-style plan (object targets, a
//! compensating rollback, an irreversible stage, typed expectations) validates, is
//! approved, runs through a deployment's own in-process executor and prober, halts,
//! and its rollback plan is proposed, reviewed and run like any other plan.

#[path = "../examples/shop/mod.rs"]
mod shop;

use std::sync::Arc;

use async_trait::async_trait;
use ed25519_dalek::SigningKey;
use interlock_adapters::{ProbeOutcome, Prober};
use interlock_core::canon::{self, Digest, Value};
use interlock_core::decision::{Terms, sign_decision};
use interlock_core::{Check, Decision, Policy, ProbeValue};
use interlock_engine::{Engine, EngineConfig, EngineError, ManualClock, PlanStatus, StageResult};
use shop::Shop;

const T0: i64 = 1_795_000_000;

fn repo_file(rel: &str) -> Vec<u8> {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    std::fs::read(dir.join("../..").join(rel)).unwrap()
}

fn seed_plan() -> Value {
    canon::parse_yaml(&repo_file("examples/plans/seed-style.yaml")).unwrap()
}

struct World {
    engine: Engine,
    shop: Arc<Shop>,
    reviewer: SigningKey,
    _dir: tempfile::TempDir,
}

/// An engine under the seed-style policy with the shop's adapters registered in
/// process; `healthy` replaces the replica prober when given.
async fn world(healthy: Option<Arc<dyn Prober>>) -> World {
    let dir = tempfile::tempdir().unwrap();
    let shop = Arc::new(Shop::seeded());
    let mut config = EngineConfig::new(dir.path().join("data"));
    config.database = Some(
        interlock_store::testing::fresh_location(config.store_location().file().unwrap()).await,
    );
    config.policy = Policy::from_value(
        &canon::parse_yaml(&repo_file("examples/policies/seed-style.yaml")).unwrap(),
    )
    .unwrap();
    config.clock = Arc::new(ManualClock::new(T0));
    let [scale, migrate] = Shop::actions();
    let [replicas, version] = Shop::probes();
    let config = config
        .with_action(scale, shop.clone())
        .with_action(migrate, shop.clone())
        .with_probe(replicas, healthy.unwrap_or_else(|| shop.clone()))
        .with_probe(version, shop.clone());
    let engine = Engine::open(config, Arc::new(SigningKey::from_bytes(&[9; 32])))
        .await
        .unwrap();
    let reviewer = SigningKey::from_bytes(&[1; 32]);
    engine
        .register_approver(&reviewer.verifying_key(), "human:alice", "test")
        .await
        .unwrap();
    World {
        engine,
        shop,
        reviewer,
        _dir: dir,
    }
}

async fn approve(w: &World, plan_id: &str, hash: Digest, nonce: u8) {
    let now = w.engine.now();
    let env = sign_decision(
        &w.reviewer,
        &Terms {
            audience: w.engine.log().origin(),
            subject: plan_id,
            subject_hash: hash,
            decision: Decision::Approve,
            reason: "reviewed",
            issued_at: now,
            not_before: now,
            expires_at: now + 3600,
            nonce: [nonce; 16],
            policy_digest: w.engine.policy().digest(),
        },
    )
    .unwrap()
    .1;
    assert_eq!(
        w.engine.decide(&env).await.unwrap().status,
        PlanStatus::Approved
    );
}

#[tokio::test]
async fn seed_style_plan_halts_and_its_rollback_plan_is_reviewed_and_runs() {
    let w = world(None).await;
    let p = w.engine.propose(&seed_plan()).await.unwrap();
    approve(&w, "seed-style", p.plan_hash, 1).await;
    let report = w.engine.execute("seed-style").await.unwrap();
    assert_eq!(report.status, PlanStatus::Halted);
    assert_eq!(report.committed(), ["scale-up", "migrate"]);
    match &report.stages[2].result {
        StageResult::PreconditionFailed(why) => {
            assert!(
                why.contains("version 1.9.0") && why.contains("at_least"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.shop.get("checkout").unwrap().replicas, 4);
    assert_eq!(
        w.shop.get("payments").unwrap().replicas,
        1,
        "cutover never ran"
    );

    // The rollback plan is a new plan, proposed and held: nothing ran by itself.
    let r = w.engine.propose_rollback("seed-style").await.unwrap();
    assert_eq!(r.plan_id, "seed-style.rollback");
    let held = w.engine.plan("seed-style.rollback").await.unwrap();
    assert_eq!(held.status, PlanStatus::Proposed);
    assert_eq!(held.proposer, "agent:ops");
    assert_eq!(w.shop.get("checkout").unwrap().replicas, 4);
    let doc = canon::parse_json(&held.document).unwrap();
    let link = doc.get("body").unwrap().get("rollback_of").unwrap();
    assert_eq!(
        link.get("plan_hash").unwrap().as_str(),
        Some(p.plan_hash.to_string().as_str())
    );
    approve(&w, "seed-style.rollback", r.plan_hash, 2).await;
    let undo = w.engine.execute("seed-style.rollback").await.unwrap();
    assert_eq!(undo.status, PlanStatus::Succeeded, "{undo:?}");
    assert_eq!(undo.committed(), ["scale-up"]);
    assert_eq!(w.shop.get("checkout").unwrap().replicas, 2);
    assert_eq!(
        w.shop.get("checkout").unwrap().version,
        "1.5.0",
        "the irreversible migration is not undone"
    );
    let audit = interlock_log::audit(w.engine.store(), None).await.unwrap();
    assert!(audit.is_ok(), "{audit}");
}

/// A prober that answers a string where the policy declares a number.
struct WrongType;

#[async_trait]
impl Prober for WrongType {
    fn probes(&self) -> Vec<&'static str> {
        vec!["svc.healthy_replicas"]
    }
    async fn probe(&self, _check: &Check, _target: &str) -> ProbeOutcome {
        ProbeOutcome::Value {
            value: ProbeValue::String("two".into()),
            observed: "a string".into(),
        }
    }
}

/// A prober that says "met" without a value where a value is expected.
struct NoValue;

#[async_trait]
impl Prober for NoValue {
    fn probes(&self) -> Vec<&'static str> {
        vec!["svc.healthy_replicas"]
    }
    async fn probe(&self, _check: &Check, _target: &str) -> ProbeOutcome {
        ProbeOutcome::Met {
            observed: "fine".into(),
        }
    }
}

#[tokio::test]
async fn regression_unevaluable_expectation_is_unmet_and_nothing_runs() {
    for prober in [Arc::new(WrongType) as Arc<dyn Prober>, Arc::new(NoValue)] {
        let w = world(Some(prober)).await;
        let p = w.engine.propose(&seed_plan()).await.unwrap();
        approve(&w, "seed-style", p.plan_hash, 1).await;
        let report = w.engine.execute("seed-style").await.unwrap();
        assert_eq!(report.status, PlanStatus::Halted);
        assert!(report.committed().is_empty());
        assert!(
            matches!(&report.stages[0].result, StageResult::PreconditionFailed(why) if why.contains("unmet")),
            "{:?}",
            report.stages[0]
        );
        assert_eq!(w.shop.get("checkout").unwrap().replicas, 2, "nothing ran");
    }
}

#[tokio::test]
async fn regression_rollback_of_must_name_a_halted_plan_of_its_proposer() {
    let w = world(None).await;
    let p = w.engine.propose(&seed_plan()).await.unwrap();
    // Not halted (not even run): no rollback plan, and a hand-written link is refused.
    assert!(matches!(
        w.engine.propose_rollback("seed-style").await,
        Err(EngineError::WrongState { .. })
    ));
    let linked = |plan_id: &str, proposer: &str, hash: &str| {
        let mut doc = canon::to_serde_json(&seed_plan());
        doc["plan_id"] = plan_id.into();
        doc["proposer"] = proposer.into();
        doc["body"]["rollback_of"] =
            serde_json::json!({ "plan_id": "seed-style", "revision": 1, "plan_hash": hash });
        canon::from_serde_json(&doc).unwrap()
    };
    let hash = p.plan_hash.to_string();
    let err = w
        .engine
        .propose(&linked("undo", "agent:ops", &hash))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::RollbackLink(m) if m.contains("PROPOSED")),
        "{err}"
    );
    approve(&w, "seed-style", p.plan_hash, 1).await;
    w.engine.execute("seed-style").await.unwrap();
    // Halted now: the link must still name its bytes and its proposer.
    let other = format!("sha256:{}", "0".repeat(64));
    let err = w
        .engine
        .propose(&linked("undo", "agent:ops", &other))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::RollbackLink(m) if m.contains("hashes to")),
        "{err}"
    );
    let err = w
        .engine
        .propose(&linked("undo", "agent:mallory", &hash))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::RollbackLink(m) if m.contains("proposer")),
        "{err}"
    );
    assert!(
        w.engine
            .propose(&linked("undo", "agent:ops", &hash))
            .await
            .is_ok()
    );
}
