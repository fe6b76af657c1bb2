//! `interlock demo`: the whole governance loop once, with nothing but the binary.
//!
//! Keys are throwaway, in-memory, and labelled so: the demo never touches the OS
//! keychain, so it runs on any machine. Everything else is the real engine, store,
//! log and filesystem adapter.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail, ensure};
use ed25519_dalek::SigningKey;
use interlock_adapters::{AdapterConfig, Adapters};
use interlock_core::canon::{self, Value};
use interlock_core::decision::{Expectation, Terms, TrustedKeys, sign_decision, verify_decision};
use interlock_core::merkle;
use interlock_core::{Decision, Policy};
use interlock_engine::{Engine, EngineConfig, EngineError, PlanStatus};

use super::context::nonce;

/// With `--data-dir DIR`, the demo keeps its database (and workspace) in DIR, so
/// that `interlock audit verify --data-dir DIR` can be run on it afterwards.
/// Without it, everything lives in a temporary directory removed at the end.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

fn throwaway_key() -> anyhow::Result<SigningKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no OS randomness: {e}"))?;
    Ok(SigningKey::from_bytes(&seed))
}

fn step(n: u32, text: &str) {
    println!("\n── {n}. {text}");
}

pub async fn run(keep_in: Option<PathBuf>, _: DemoArgs) -> anyhow::Result<ExitCode> {
    let temp;
    let data_dir = match &keep_in {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::tempdir().context("creating a temporary directory")?;
            temp.path().to_path_buf()
        }
    };
    if data_dir.join(interlock_engine::DATABASE_FILE).exists() {
        bail!(
            "{} already holds an Interlock database; give the demo an empty directory",
            data_dir.display()
        );
    }
    let workspace = data_dir.join("workspace");
    std::fs::create_dir_all(&workspace)?;
    let workspace = workspace.canonicalize()?;

    println!("Interlock demo — data in {}", data_dir.display());
    println!(
        "Keys: THROWAWAY in-memory keys made for this run only (real approvers keep theirs in the OS keychain)."
    );

    let log_key = throwaway_key()?;
    let mut config = EngineConfig::new(&data_dir);
    config.policy = Policy::default();
    config.origin = Some("interlock.local/demo".into());
    // A short-lived process: every commit signs its checkpoint, so nothing is
    // left unsigned when it exits.
    config.log.checkpoint_interval = std::time::Duration::ZERO;
    config.adapters = Adapters::builtin(&AdapterConfig {
        fs_roots: vec![workspace.clone()],
        ..AdapterConfig::default()
    })?;
    let engine = Engine::open(config, Arc::new(log_key.clone())).await?;
    let reviewer = throwaway_key()?;
    engine
        .register_approver(
            &reviewer.verifying_key(),
            "human:demo-reviewer",
            "THROWAWAY demo key",
        )
        .await?;

    step(1, "An agent proposes a plan: write a config file");
    let target = workspace.join("app").join("config.toml");
    let doc = plan_doc(
        "demo-write-config",
        &workspace,
        &target,
        "level = \"info\"\n",
    )?;
    let proposal = engine.propose(&doc).await?;
    println!(
        "   held: plan `{}` revision {}",
        proposal.plan_id, proposal.revision
    );
    println!("   hash: {}", proposal.plan_hash);
    println!(
        "   risk: {} ({} approval needed)",
        proposal.risk, proposal.approvals_required
    );
    let held = engine.plan(&proposal.plan_id).await?;
    ensure!(held.status == PlanStatus::Proposed, "the plan must be held");
    println!("   state: {} — nothing has run", held.status.as_str());

    step(2, "A reviewer approves exactly that hash (THROWAWAY key)");
    let now = engine.now();
    let (statement, envelope) = sign_decision(
        &reviewer,
        &Terms {
            audience: engine.log().origin(),
            subject: &proposal.plan_id,
            subject_hash: proposal.plan_hash,
            decision: Decision::Approve,
            reason: "demo: config change reviewed",
            issued_at: now,
            not_before: now,
            expires_at: now + 3600,
            nonce: nonce()?,
            policy_digest: engine.policy().digest(),
        },
    )?;
    let outcome = engine.decide(&envelope).await?;
    println!(
        "   signed statement by {} (fingerprint {})",
        statement.approver_key_id,
        statement.approver_key_id.fingerprint()
    );
    println!("   state: {}", outcome.status.as_str());

    step(3, "The agent executes the plan");
    let report = engine.execute(&proposal.plan_id).await?;
    for s in &report.stages {
        println!(
            "   {:<14} {:?} {}",
            s.stage_id,
            s.result,
            s.summary.as_deref().unwrap_or("")
        );
    }
    println!("   state: {}", report.status.as_str());
    ensure!(
        report.status == PlanStatus::Succeeded,
        "the plan should have succeeded"
    );

    step(4, "Verify the result on disk");
    let written = std::fs::read_to_string(&target)
        .with_context(|| format!("reading {}", target.display()))?;
    println!("   {} contains: {}", target.display(), written.trim_end());
    ensure!(
        written == "level = \"info\"\n",
        "the file does not hold what was approved"
    );

    step(5, "Prove it is in the log");
    let log = engine.log();
    let size = log.size();
    let last = size - 1;
    let entry = log.entry(last).await?;
    let proof = log.inclusion_proof(last, size).await?;
    // The leaf is the signed receipt itself (a DSSE envelope of an in-toto statement).
    let leaf = merkle::leaf_hash(&log.leaf(last).await?);
    let root = log.root();
    merkle::verify_inclusion(last, size, &leaf, &proof, &root)?;
    println!("   entry {last}: {}", canon::canonical_string(&entry));
    println!(
        "   inclusion proof ({} hashes) verifies against the signed checkpoint:",
        proof.len()
    );
    let checkpoint = log
        .latest_checkpoint()
        .context("the log has a signed checkpoint")?;
    for line in checkpoint.lines() {
        println!("     {line}");
    }

    step(6, "Editing a body after approval voids the approval");
    let doc2 = plan_doc(
        "demo-edit-after-approval",
        &workspace,
        &workspace.join("b.toml"),
        "a = 1\n",
    )?;
    let p2 = engine.propose(&doc2).await?;
    let (_, env2) = sign_decision(
        &reviewer,
        &Terms {
            audience: engine.log().origin(),
            subject: &p2.plan_id,
            subject_hash: p2.plan_hash,
            decision: Decision::Approve,
            reason: "demo: approve the first body",
            issued_at: now,
            not_before: now,
            expires_at: now + 3600,
            nonce: nonce()?,
            policy_digest: engine.policy().digest(),
        },
    )?;
    engine.decide(&env2).await?;
    println!("   plan `{}` approved at {}", p2.plan_id, p2.plan_hash);
    let edited = plan_doc(
        "demo-edit-after-approval",
        &workspace,
        &workspace.join("b.toml"),
        "a = 2\n",
    )?;
    let p2b = engine.propose(&edited).await?;
    println!(
        "   the agent edits the body → revision {} hashes to {}",
        p2b.revision, p2b.plan_hash
    );
    match engine.execute(&p2.plan_id).await {
        Err(e @ EngineError::NotApproved(_)) => println!("   execute refused: {e}"),
        other => bail!("execute of an edited plan must be refused, got {other:?}"),
    }
    let mut trusted = TrustedKeys::new();
    trusted.add(reviewer.verifying_key());
    let replay = verify_decision(
        &env2,
        &trusted,
        &Expectation {
            audience: engine.log().origin(),
            plan_id: &p2.plan_id,
            plan_hash: p2b.plan_hash,
            policy_digest: engine.policy().digest(),
            now: engine.now(),
        },
    );
    println!(
        "   the old statement against the new body: {}",
        replay.err().map(|e| e.to_string()).unwrap_or_default()
    );

    step(7, "A second execute of the first plan is refused");
    match engine.execute(&proposal.plan_id).await {
        Err(e @ EngineError::AlreadyStarted(_)) => println!("   {e}"),
        other => bail!("a second execute must be refused, got {other:?}"),
    }

    step(8, "Audit the whole log from storage");
    let audit = interlock_log::audit(engine.store(), Some(log_key.verifying_key())).await?;
    print!("{}", indent(&audit.to_string()));
    ensure!(audit.is_ok(), "the audit must pass");
    if let Some(d) = &keep_in {
        println!(
            "\nThe database is kept in {}; check it with:\n   interlock audit verify --data-dir {}",
            d.display(),
            d.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("   {l}\n")).collect()
}

/// The demo's plan: make the directory, then write the file, each with
/// preconditions, verification and a described rollback.
fn plan_doc(id: &str, workspace: &Path, target: &Path, content: &str) -> anyhow::Result<Value> {
    let dir = target.parent().unwrap_or(workspace);
    let json = serde_json::json!({
        "schema_version": "interlock.plan/v1",
        "plan_id": id,
        "title": format!("Write {}", target.file_name().and_then(|f| f.to_str()).unwrap_or("a file")),
        "proposer": "agent:demo",
        "created_at": "2026-11-29T12:00:00Z",
        "body": { "stages": [
            {
                "id": "make-dir",
                "action": "fs.make_dir",
                "target": dir.to_string_lossy(),
                "preconditions": [ { "probe": "fs.path_exists", "target": workspace.to_string_lossy() } ],
                "verify": [ { "probe": "fs.is_dir" } ],
                "rollback": "Remove the directory if it is empty."
            },
            {
                "id": "write-config",
                "action": "fs.write_file",
                "target": target.to_string_lossy(),
                "params": { "content": content },
                "preconditions": [ { "probe": "fs.path_absent" } ],
                "verify": [ { "probe": "fs.file_sha256",
                              "params": { "sha256": canon::Digest::of_bytes(content.as_bytes()).to_string() } } ],
                "rollback": format!("Delete {}.", target.display())
            }
        ]}
    });
    Ok(canon::from_serde_json(&json)?)
}
