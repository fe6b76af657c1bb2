//! Benchmark: propose → approve → execute of a 3-stage filesystem plan, on a real
//! SQLite file with durability on, the real log (a signed checkpoint per group
//! commit) and the real filesystem adapter. Prints plans/s, sequential and with
//! concurrent agents. Run: `cargo bench -p interlock-engine --bench governance_loop`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use ed25519_dalek::SigningKey;
use interlock_adapters::{AdapterConfig, Adapters};
use interlock_core::Decision;
use interlock_core::canon::{self, Digest, Value};
use interlock_core::decision::{Terms, sign_decision};
use interlock_engine::{Engine, EngineConfig, PlanStatus};

fn plan(id: &str, dir: &Path) -> Value {
    let sub = dir.join(id);
    let file = sub.join("config.toml");
    let content = format!("name = \"{id}\"\n");
    canon::from_serde_json(&serde_json::json!({
        "schema_version": "interlock.plan/v1", "plan_id": id, "title": "bench",
        "proposer": "agent:bench", "created_at": "2026-11-29T12:00:00Z",
        "body": { "stages": [
            { "id": "dir", "action": "fs.make_dir", "target": sub.to_string_lossy(),
              "preconditions": [{ "probe": "fs.path_absent" }], "verify": [{ "probe": "fs.is_dir" }],
              "rollback": "remove it" },
            { "id": "write", "action": "fs.write_file", "target": file.to_string_lossy(),
              "params": { "content": content }, "preconditions": [{ "probe": "fs.path_absent" }],
              "verify": [{ "probe": "fs.file_sha256",
                           "params": { "sha256": Digest::of_bytes(content.as_bytes()).to_string() } }],
              "rollback": "delete it" },
            { "id": "read", "action": "fs.read_file", "target": file.to_string_lossy() }
        ]}
    }))
    .unwrap()
}

async fn one(engine: &Engine, reviewer: &SigningKey, id: &str, dir: &Path, nonce: u64) {
    let p = engine.propose(&plan(id, dir)).await.unwrap();
    let now = engine.now();
    let mut n = [0u8; 16];
    n[..8].copy_from_slice(&nonce.to_le_bytes());
    let (_, env) = sign_decision(
        reviewer,
        &Terms {
            audience: engine.log().origin(),
            subject: id,
            subject_hash: p.plan_hash,
            decision: Decision::Approve,
            reason: "bench",
            issued_at: now,
            not_before: now,
            expires_at: now + 600,
            nonce: n,
            policy_digest: engine.policy().digest(),
        },
    )
    .unwrap();
    engine.decide(&env).await.unwrap();
    let report = engine.execute(id).await.unwrap();
    assert_eq!(report.status, PlanStatus::Succeeded);
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let mut config = EngineConfig::new(tmp.path().join("data"));
    config.adapters = Adapters::builtin(&AdapterConfig {
        fs_roots: vec![work.clone()],
        ..AdapterConfig::default()
    })
    .unwrap();
    let engine = Engine::open(config, Arc::new(SigningKey::from_bytes(&[9; 32])))
        .await
        .unwrap();
    let reviewer = SigningKey::from_bytes(&[1; 32]);
    engine
        .register_approver(&reviewer.verifying_key(), "human:bench", "bench")
        .await
        .unwrap();

    let n = 200;
    let t = Instant::now();
    for i in 0..n {
        one(&engine, &reviewer, &format!("seq-{i}"), &work, i).await;
    }
    let seq = n as f64 / t.elapsed().as_secs_f64();
    println!(
        "propose→approve→execute, 3-stage fs plan, sequential: {n} plans in {:.2} s = {seq:.0} plans/s",
        t.elapsed().as_secs_f64()
    );

    let agents = 16;
    let per = 25;
    let t = Instant::now();
    let mut tasks = Vec::new();
    for a in 0..agents {
        let (engine, reviewer, work) = (engine.clone(), reviewer.clone(), work.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                one(
                    &engine,
                    &reviewer,
                    &format!("c{a}-{i}"),
                    &work,
                    1_000_000 + (a * per + i) as u64,
                )
                .await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let total = agents * per;
    let conc = total as f64 / t.elapsed().as_secs_f64();
    println!(
        "propose→approve→execute, 3-stage fs plan, {agents} concurrent agents: {total} plans in {:.2} s = {conc:.0} plans/s",
        t.elapsed().as_secs_f64()
    );
    println!("log entries: {}", engine.log().size());
}
