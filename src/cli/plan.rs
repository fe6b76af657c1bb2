//! `interlock plan check`.

use std::process::ExitCode;

use anyhow::Context;
use interlock_core::canon;
use interlock_core::{Policy, Violations, validate};

use super::{EXIT_REJECTED, PlanCheckArgs, input};

pub fn check(args: PlanCheckArgs) -> anyhow::Result<ExitCode> {
    let policy = match &args.policy {
        None => Policy::default(),
        Some(path) => {
            let (bytes, format) = input::read_document(Some(path), None)?;
            let doc = canon::parse(&bytes, format)
                .with_context(|| format!("policy {}", path.display()))?;
            Policy::from_value(&doc).map_err(|errors| {
                let lines: Vec<String> = errors
                    .iter()
                    .map(|e| format!("at {}: {}", e.path, e.message))
                    .collect();
                anyhow::anyhow!("policy {} is invalid: {}", path.display(), lines.join("; "))
            })?
        }
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
