//! `interlock plan check`.

use std::process::ExitCode;

use std::path::PathBuf;

use interlock_core::canon;
use interlock_core::{Policy, Violations, validate};
use interlock_engine::{EngineError, StageResult};

use super::context::{Context, load_policy};
use super::{EXIT_REJECTED, PlanCheckArgs, input};

pub fn check(args: PlanCheckArgs) -> anyhow::Result<ExitCode> {
    let policy = match &args.policy {
        None => Policy::default(),
        Some(path) => load_policy(path)?,
    };
    let (bytes, format) = input::read_document(Some(&args.file), None)?;
    let doc = match canon::parse(&bytes, format) {
        Ok(doc) => doc,
        Err(e) => {
            report_rejection(&args, &format!("rejected: {e}"), None);
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    match validate(&doc, &policy) {
        Ok(valid) => {
            if args.json {
                let out = serde_json::json!({
                    "ok": true,
                    "plan_id": valid.plan.plan_id,
                    "plan_hash": valid.hash.to_string(),
                    "risk": valid.risk.level.name(),
                    "risk_reasons": valid.risk.reasons,
                    "stages": valid.plan.body.stages.len(),
                    "policy_digest": policy.digest().to_string(),
                });
                println!("{out}");
            } else {
                println!("{}", valid.hash);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(violations) => {
            report_rejection(&args, "", Some(&violations));
            Ok(ExitCode::from(EXIT_REJECTED))
        }
    }
}

fn report_rejection(args: &PlanCheckArgs, intake_error: &str, violations: Option<&Violations>) {
    if args.json {
        let list: Vec<serde_json::Value> = violations
            .map(|v| {
                v.0.iter()
                    .map(|v| {
                        serde_json::json!({
                            "invariant": v.invariant.name(),
                            "stage": v.stage,
                            "path": v.path,
                            "message": v.message,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut out = serde_json::json!({ "ok": false, "violations": list });
        if !intake_error.is_empty() {
            out["error"] = intake_error.into();
        }
        println!("{out}");
    } else if let Some(v) = violations {
        eprintln!("{v}");
        eprintln!("interlock: plan rejected: {} violation(s)", v.0.len());
    } else {
        eprintln!("interlock: {intake_error}");
    }
}

#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The plan (YAML or JSON, by extension; `-` reads JSON from stdin).
    #[arg(value_name = "FILE|-")]
    file: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct ExecuteArgs {
    /// The plan id.
    id: String,
}

pub async fn propose(ctx: &Context, args: ProposeArgs) -> anyhow::Result<ExitCode> {
    let (bytes, format) = input::read_document(Some(&args.file), None)?;
    let doc = match canon::parse(&bytes, format) {
        Ok(doc) => doc,
        Err(e) => {
            eprintln!("interlock: rejected: {e}");
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let engine = ctx.engine().await?;
    match engine.propose(&doc).await {
        Ok(p) => {
            println!(
                "held plan `{}` revision {} for review: {} (risk {}, {} approval(s) needed)",
                p.plan_id, p.revision, p.plan_hash, p.risk, p.approvals_required
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(EngineError::Invalid(v)) => {
            eprintln!("{v}");
            eprintln!("interlock: plan rejected: {} violation(s)", v.0.len());
            Ok(ExitCode::from(EXIT_REJECTED))
        }
        Err(e) => refused(e),
    }
}

pub async fn execute(ctx: &Context, args: ExecuteArgs) -> anyhow::Result<ExitCode> {
    let engine = ctx.engine().await?;
    let report = match engine.execute(&args.id).await {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    for s in &report.stages {
        let line = match &s.result {
            StageResult::Committed => format!("committed   {}", s.summary.as_deref().unwrap_or("")),
            StageResult::PreconditionFailed(w) => format!("halted      {w} (nothing dispatched)"),
            StageResult::DispatchFailed(w) => format!("failed      {w}"),
            StageResult::VerifyFailed(w) => format!("unverified  {w}"),
            StageResult::NotRun => "not run".to_owned(),
        };
        println!("  {:<16} {line}", s.stage_id);
    }
    println!("plan `{}` {}", report.plan_id, report.status.as_str());
    Ok(
        if report.status == interlock_engine::PlanStatus::Succeeded {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_REJECTED)
        },
    )
}

/// An engine refusal is a rejection (exit 1); storage and log failures are errors.
fn refused(e: EngineError) -> anyhow::Result<ExitCode> {
    match e {
        EngineError::Store(_) | EngineError::Log(_) => Err(e.into()),
        other => {
            eprintln!("interlock: {other}");
            Ok(ExitCode::from(EXIT_REJECTED))
        }
    }
}
