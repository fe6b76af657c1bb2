//! Bringing your own executor without forking, in process (issue 23 item 5): a
//! deployment's executor and prober registered with `EngineConfig::with_action` /
//! `with_probe`, then the seed-style plan (examples/plans/seed-style.yaml) proposed,
//! approved with a throwaway key, run until it halts, and its rollback plan built.
//! Run: `cargo run -p interlock-engine --example embedded_executor`.

#[path = "shop/mod.rs"]
mod shop;

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use interlock_core::canon;
use interlock_core::decision::{Terms, sign_decision};
use interlock_core::{Decision, Policy};
use interlock_engine::{Engine, EngineConfig};
use shop::Shop;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let policy = Policy::from_value(&canon::parse_yaml(&std::fs::read(
        root.join("examples/policies/seed-style.yaml"),
    )?)?)
    .map_err(|e| format!("{e:?}"))?;
    let plan = canon::parse_yaml(&std::fs::read(root.join("examples/plans/seed-style.yaml"))?)?;

    let data = tempfile::tempdir()?;
    let shop = Arc::new(Shop::seeded());
    let mut config = EngineConfig::new(data.path());
    config.policy = policy;
    let [scale, migrate] = Shop::actions();
    let [healthy, version] = Shop::probes();
    let config = config
        .with_action(scale, shop.clone())
        .with_action(migrate, shop.clone())
        .with_probe(healthy, shop.clone())
        .with_probe(version, shop.clone());
    // Throwaway in-memory keys: a real deployment keeps them in the OS keychain.
    let engine = Engine::open(config, Arc::new(SigningKey::from_bytes(&[7; 32]))).await?;
    let reviewer = SigningKey::from_bytes(&[1; 32]);
    engine
        .register_approver(&reviewer.verifying_key(), "human:example", "example")
        .await?;

    let approve = |id: &str, hash| {
        let now = engine.now();
        sign_decision(
            &reviewer,
            &Terms {
                audience: engine.log().origin(),
                subject: id,
                subject_hash: hash,
                decision: Decision::Approve,
                reason: "reviewed (example)",
                issued_at: now,
                not_before: now,
                expires_at: now + 3600,
                nonce: rand_nonce(&hash),
                policy_digest: engine.policy().digest(),
            },
        )
        .map(|(_, envelope)| envelope)
    };

    let proposal = engine.propose(&plan).await?;
    println!(
        "proposed {} at {} ({} risk)",
        proposal.plan_id, proposal.plan_hash, proposal.risk
    );
    engine
        .decide(&approve(&proposal.plan_id, proposal.plan_hash)?)
        .await?;
    let report = engine.execute(&proposal.plan_id).await?;
    for s in &report.stages {
        println!("  {:<10} {:?}", s.stage_id, s.result);
    }
    println!("status {}", report.status.as_str());

    let rollback = engine.propose_rollback(&proposal.plan_id).await?;
    let doc = engine.plan(&rollback.plan_id).await?;
    println!(
        "rollback plan {} held for review at {}:\n{}",
        rollback.plan_id,
        rollback.plan_hash,
        String::from_utf8_lossy(&doc.document)
    );
    Ok(())
}

/// A nonce per subject hash, enough for an example (real reviewers draw it at random).
fn rand_nonce(hash: &interlock_core::Digest) -> [u8; 16] {
    let mut n = [0u8; 16];
    n.copy_from_slice(&hash.to_string().as_bytes()[7..23]);
    n
}
