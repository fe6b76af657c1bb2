//! `interlock plans …`: the reviewer's channel. Separate from anything an agent can
//! call: approving needs the approver key in this machine's OS keychain.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use interlock_core::canon::{self, Value};
use interlock_core::{Decision, Policy, validate};
use interlock_engine::{Engine, PlanRecord, PlanStatus};
use interlock_gateway::admin::decisions::{DecisionSubject, OwnerDecision};
use interlock_store::Store;

use super::EXIT_REJECTED;
use super::context::{Context, hash_to_approve, parse_duration};
use super::owner;

#[derive(Debug, Subcommand)]
pub enum PlansCommand {
    /// List plans (their current revisions), newest first.
    List {
        /// Only plans in this state (PROPOSED, APPROVED, REJECTED, EXPIRED,
        /// EXECUTING, SUCCEEDED, HALTED, SUPERSEDED).
        #[arg(long, value_name = "S")]
        status: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show a plan: stages, risk, canonical JSON, hash, and the diff against its
    /// previous revision.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Approve a plan's current body with the approver key from the OS keychain.
    Approve {
        id: String,
        /// Why (recorded in the signed statement and the log).
        #[arg(long)]
        reason: String,
        /// The plan hash you reviewed (`interlock plans show` prints it). Only
        /// these bytes are signed; if the plan changed since, nothing is. Without
        /// it, a terminal asks you to confirm the current hash.
        #[arg(long)]
        hash: Option<String>,
        /// How long the approval stays valid (e.g. 30m, 2h, 7d; at most 30d).
        #[arg(long, default_value = "2h")]
        expires: String,
    },
    /// Reject a plan with a reason, signed with the approver key.
    Reject {
        id: String,
        #[arg(long)]
        reason: String,
    },
    /// Propose the rollback plan of a HALTED plan: its committed stages'
    /// compensating stages, newest first, as a new plan (`<id>.rollback`, by the
    /// halted plan's proposer) held for review like any other. Nothing runs.
    Rollback {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(ctx: &Context, cmd: PlansCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        // Reading needs no key: only the store and the policy in force.
        PlansCommand::List { status, json } => list(&ctx.store().await?, status, json).await,
        PlansCommand::Show { id, json } => {
            show(&ctx.store().await?, &ctx.policy()?, &id, json).await
        }
        PlansCommand::Approve {
            id,
            reason,
            expires,
            hash,
        } => {
            let secs = parse_duration(&expires)?;
            // Without a key nothing can be signed: say so before asking for a
            // hash. Beside a running gateway, its keychain's key signs.
            let beside = owner::gateway_runs(ctx).await?;
            if !beside && ctx.host().approver_key()?.is_none() {
                bail!("no approver key in the keychain; run `interlock keys init`");
            }
            // Read from the store: opening the engine needs the log key, which
            // a second terminal may not reach.
            let Some(plan) = ctx.store().await?.current_plan(&id).await? else {
                bail!("no plan `{id}` (see `interlock plans list`)");
            };
            let shown = hash_to_approve(
                &format!("plan `{id}` revision {} ({})", plan.revision, plan.title),
                &plan.plan_hash,
                hash.as_deref(),
            )?;
            let d = OwnerDecision::approval(
                DecisionSubject::Plan { id: id.clone() },
                &shown,
                &reason,
                secs,
            );
            if beside && let Some(exit) = owner::decide_beside(ctx, d).await? {
                return Ok(exit);
            }
            let engine = ctx.engine().await?;
            decide(
                ctx,
                &engine,
                &id,
                Some(&shown),
                Decision::Approve,
                &reason,
                secs,
            )
            .await
        }
        PlansCommand::Rollback { id, json } => {
            let engine = ctx.engine().await?;
            let p = engine.propose_rollback(&id).await?;
            let record = engine.plan(&p.plan_id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&plan_json(&record))?);
            } else {
                println!(
                    "proposed {} revision {} at {} ({} risk, {} approval(s) needed)\nreview it with `interlock plans show {}`",
                    p.plan_id, p.revision, p.plan_hash, p.risk, p.approvals_required, p.plan_id
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        PlansCommand::Reject { id, reason } => {
            let d = OwnerDecision::rejection(DecisionSubject::Plan { id: id.clone() }, &reason);
            if let Some(exit) = owner::decide_beside(ctx, d).await? {
                return Ok(exit);
            }
            decide(
                ctx,
                &ctx.engine().await?,
                &id,
                None,
                Decision::Reject,
                &reason,
                3600,
            )
            .await
        }
    }
}

async fn list(store: &Store, status: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let status = match status {
        None => None,
        Some(s) => Some(s.parse::<PlanStatus>()?),
    };
    let plans = store.list_plans(status).await?;
    if json {
        let list: Vec<_> = plans.iter().map(plan_json).collect();
        println!("{}", serde_json::Value::Array(list));
    } else if plans.is_empty() {
        println!("no plans");
    } else {
        println!(
            "{:<10} {:<8} {:<28} {:<4} TITLE",
            "STATUS", "RISK", "PLAN", "REV"
        );
        for p in &plans {
            println!(
                "{:<10} {:<8} {:<28} {:<4} {}",
                p.status.as_str(),
                p.risk,
                p.plan_id,
                p.revision,
                p.title
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn plan_json(p: &PlanRecord) -> serde_json::Value {
    serde_json::json!({
        "plan_id": p.plan_id, "revision": p.revision, "status": p.status.as_str(),
        "plan_hash": p.plan_hash, "title": p.title, "proposer": p.proposer, "risk": p.risk,
        "created_at": p.created_at,
    })
}

async fn show(store: &Store, policy: &Policy, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let revisions = store.plan_revisions(id).await?;
    let Some(current) = revisions.last() else {
        bail!("no plan `{id}`");
    };
    let doc = canon::parse_json(&current.document)?;
    let previous = revisions.len().checked_sub(2).map(|i| &revisions[i]);
    let diff = match previous {
        None => None,
        Some(prev) => Some(body_diff(
            &canon::parse_json(&prev.document)?,
            &doc,
            prev.revision,
            current.revision,
        )),
    };
    if json {
        let mut v = plan_json(current);
        v["document"] = canon::to_serde_json(&doc);
        v["canonical_body"] =
            canon::canonical_string(doc.get("body").unwrap_or(&Value::Null)).into();
        v["diff_from_previous"] = diff.into();
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}  (revision {}, {})",
        current.title,
        current.revision,
        current.status.as_str()
    );
    println!("plan      {}", current.plan_id);
    println!("hash      {}", current.plan_hash);
    println!("proposer  {}", current.proposer);
    match validate(&doc, policy) {
        Err(violations) => {
            println!("\nunder the policy in force this plan would be rejected:\n{violations}");
        }
        Ok(valid) => {
            println!("risk      {}", valid.risk.level);
            for r in &valid.risk.reasons {
                println!("          {r}");
            }
            println!(
                "approvals needed  {}",
                policy.approvals_required(valid.risk.level)
            );
            println!("\nstages");
            for (i, s) in valid.plan.body.stages.iter().enumerate() {
                println!("  {}. {}  {} → {}", i + 1, s.id, s.action, s.target);
                let expect = |c: &interlock_core::Check| {
                    c.expect
                        .as_ref()
                        .map(|e| format!("  expect {e}"))
                        .unwrap_or_default()
                };
                for c in &s.preconditions {
                    println!(
                        "       precondition  {} {}{}",
                        c.probe,
                        c.target_or(s),
                        expect(c)
                    );
                }
                for c in &s.verify {
                    println!(
                        "       verify        {} {}{}",
                        c.probe,
                        c.target_or(s),
                        expect(c)
                    );
                }
                if let Some(r) = &s.rollback {
                    println!("       rollback      {r}");
                }
            }
        }
    }
    println!("\ncanonical body (the hashed bytes)");
    println!(
        "{}",
        canon::canonical_string(doc.get("body").unwrap_or(&Value::Null))
    );
    match diff {
        None => println!("\n(first revision: nothing to diff against)"),
        Some(d) => println!("\n{d}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A unified diff of the two bodies, pretty-printed with sorted keys.
fn body_diff(old: &Value, new: &Value, old_rev: i64, new_rev: i64) -> String {
    let pretty = |v: &Value| {
        serde_json::to_string_pretty(&canon::to_serde_json(v.get("body").unwrap_or(&Value::Null)))
            .expect("JSON serializes")
            + "\n"
    };
    let (a, b) = (pretty(old), pretty(new));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("body (revision {old_rev})"),
            &format!("body (revision {new_rev})"),
        )
        .to_string()
}

async fn decide(
    ctx: &Context,
    engine: &Engine,
    id: &str,
    shown_hash: Option<&str>,
    decision: Decision,
    reason: &str,
    valid_for: i64,
) -> anyhow::Result<ExitCode> {
    let Some(key) = ctx.host().approver_key()? else {
        bail!("no approver key in the keychain; run `interlock keys init`");
    };
    let plan = engine.plan(id).await?;
    let said = interlock_host::Countersign {
        key: &key,
        decision,
        reason,
        valid_for_secs: valid_for,
    };
    let decided = interlock_host::decide_plan(
        engine,
        &plan.plan_id,
        Some(shown_hash.unwrap_or(&plan.plan_hash)),
        &said,
    )
    .await;
    match decided {
        Ok(outcome) => {
            println!(
                "{} plan `{}` revision {} ({}) — now {} ({}/{} approvals)",
                if decision == Decision::Approve {
                    "approved"
                } else {
                    "rejected"
                },
                outcome.plan_id,
                outcome.revision,
                plan.plan_hash,
                outcome.status.as_str(),
                outcome.approvals,
                outcome.approvals_required
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("interlock: {e}");
            Ok(ExitCode::from(EXIT_REJECTED))
        }
    }
}
