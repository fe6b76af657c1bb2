//! `interlock receipts show|export|verify|claims`: receipts for auditors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use interlock_core::canon;
use interlock_core::merkle::{self, NoteVerifier, Tree};
use interlock_core::time::{parse_time, rfc3339};
use interlock_log::{ExportFilter, META_VKEY};
use interlock_receipts::{VerifyOptions, open_leaf, open_leaf_unverified, verify_bundle};

use super::EXIT_REJECTED;
use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum ReceiptsCommand {
    /// Show one receipt (by log index): its statement, signature and inclusion proof.
    Show {
        index: u64,
        #[arg(long)]
        json: bool,
    },
    /// Export receipts into OUT/: bundle.json (statements, tied to the latest
    /// signed checkpoint — a contiguous range by a range proof, filtered
    /// receipts by inclusion proofs sharing one node table —, a consistency
    /// proof from the previous export, the trust policy), report.html
    /// (printable) and summary.csv. With --tlog-proof, one receipt as a C2SP
    /// tlog-proof file instead.
    Export {
        /// A directory for a bundle; for --tlog-proof, a directory or a
        /// file name ending in `.tlog-proof`.
        out: PathBuf,
        /// Only this contiguous range of log indices: from INDEX (inclusive).
        #[arg(long, value_name = "INDEX")]
        from: Option<u64>,
        /// Only this contiguous range of log indices: to INDEX (inclusive).
        #[arg(long, value_name = "INDEX")]
        to: Option<u64>,
        /// Export the receipt at INDEX alone, as a C2SP tlog-proof
        /// (c2sp.org/tlog-proof): index, inclusion proof and signed
        /// checkpoint, with the leaf in its `extra` line.
        #[arg(long, value_name = "INDEX", conflicts_with_all = ["from", "to", "since", "until", "plan", "server", "agent", "tool", "event", "with_surfaces"])]
        tlog_proof: Option<u64>,
        /// Only receipts at or after T (RFC 3339 UTC like 2026-11-29T12:00:00Z, a date, or Unix seconds).
        #[arg(long, value_name = "T")]
        since: Option<String>,
        /// Only receipts before T.
        #[arg(long, value_name = "T")]
        until: Option<String>,
        /// Only receipts about this plan.
        #[arg(long, value_name = "ID")]
        plan: Option<String>,
        /// Only receipts about this upstream server.
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
        /// Only receipts of this agent (its API key's name).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Only receipts about this tool.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Only receipts of this event type (`tool.call`, `plan.approved`, ...).
        #[arg(long, value_name = "TYPE")]
        event: Option<String>,
        /// Also carry the approved surfaces the receipts name (the exact tool
        /// definitions a reviewer approved), each checked against its hash by
        /// `receipts verify`.
        #[arg(long)]
        with_surfaces: bool,
    },
    /// Verify a bundle offline, with nothing but the bundle: every signature, every
    /// inclusion and range proof, every checkpoint and consistency proof. One line
    /// per receipt; exit 1 on any failure. Also verifies a `.tlog-proof` file
    /// (one receipt; --log-key required, as the file carries no key).
    Verify {
        /// The bundle (bundle.json, or the directory `export` wrote), or a tlog-proof file.
        bundle: PathBuf,
        /// The log key you trust (C2SP vkey, as `receipts export` prints it). Without
        /// it, the bundle's own key is used, which proves consistency, not origin.
        #[arg(long, value_name = "VKEY")]
        log_key: Option<String>,
        /// For a tlog-proof: the leaf (the statement's JCS bytes) from elsewhere,
        /// instead of the file's `extra` line.
        #[arg(long, value_name = "FILE")]
        leaf: Option<PathBuf>,
        /// A witness you trust (its cosignature key, as `interlock witness key`
        /// prints it); repeat for each. Every cosignature line the bundle's
        /// checkpoint carries must then be by one of them and verify.
        #[arg(long = "witness", value_name = "VKEY")]
        witnesses: Vec<String>,
        /// Accept the bundle only if at least K of the witnesses given
        /// cosigned its checkpoint (issue 43).
        #[arg(long, value_name = "K", default_value_t = 0, requires = "witnesses")]
        min_witnesses: usize,
        #[arg(long)]
        json: bool,
    },
    /// Answer, from the log alone, the auditor's question: was any tool executed
    /// after its drift was detected and before a reviewer decided? Verifies the
    /// log (or the bundle) first; exit 0 for "no", 1 for "yes" (each case
    /// listed) or a log that does not verify.
    Claims {
        /// Read an exported bundle instead of this machine's log (it answers
        /// only for the receipts it holds).
        #[arg(long, value_name = "BUNDLE")]
        bundle: Option<PathBuf>,
        /// The log key you trust (as for `audit verify` and `receipts verify`).
        #[arg(long, value_name = "VKEY")]
        log_key: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Check an alert event a SIEM received (issue 21) against a receipts
    /// bundle or this machine's log: the leaf at its index hashes to its leaf
    /// hash and is included in the signed checkpoint of its size. FILE holds
    /// one event, a JSON array or one per line, bare or as its sink wrapped it
    /// (Splunk's `event`, Datadog's `interlock`, PagerDuty's `custom_details`).
    /// Exit 1 if any does not verify.
    VerifyEvent {
        file: PathBuf,
        /// Check against this exported bundle instead of this machine's log.
        #[arg(long, value_name = "BUNDLE")]
        bundle: Option<PathBuf>,
        /// The log key you trust (as for `receipts verify`).
        #[arg(long, value_name = "VKEY")]
        log_key: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(ctx: &Context, cmd: ReceiptsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ReceiptsCommand::Show { index, json } => show(ctx, index, json).await,
        ReceiptsCommand::Export {
            out,
            since,
            until,
            plan,
            server,
            agent,
            tool,
            event,
            with_surfaces,
            from,
            to,
            tlog_proof,
        } => {
            if let Some(index) = tlog_proof {
                return export_tlog_proof(ctx, &out, index).await;
            }
            let filter = ExportFilter {
                from_index: from,
                to_index: to,
                since: since.as_deref().map(parse_time).transpose()?,
                until: until.as_deref().map(parse_time).transpose()?,
                plan_id: plan,
                server,
                agent,
                tool,
                kind: event,
                with_surfaces,
            };
            export(ctx, &out, &filter).await
        }
        ReceiptsCommand::Verify {
            bundle,
            log_key,
            leaf,
            witnesses,
            min_witnesses,
            json,
        } => verify(
            &bundle,
            log_key,
            leaf.as_deref(),
            WitnessPolicy {
                witnesses,
                min_witnesses,
            },
            json,
        ),
        ReceiptsCommand::Claims {
            bundle,
            log_key,
            json,
        } => claims(ctx, bundle.as_deref(), log_key, json).await,
        ReceiptsCommand::VerifyEvent {
            file,
            bundle,
            log_key,
            json,
        } => verify_event(ctx, &file, bundle.as_deref(), log_key, json).await,
    }
}

/// `receipts verify-event`: printing only; the checks are
/// `interlock_receipts::event`, the live evidence `interlock_log::event_evidence`.
async fn verify_event(
    ctx: &Context,
    file: &Path,
    bundle: Option<&Path>,
    log_key: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use interlock_receipts::event::{
        parse_event_records, verify_event_in_bundle, verify_event_with_proof,
    };
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let records = match parse_event_records(&bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("interlock: {}: {e}", file.display());
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let mut results = Vec::new();
    let source;
    match bundle {
        Some(path) => {
            let path = if path.is_dir() {
                path.join("bundle.json")
            } else {
                path.to_path_buf()
            };
            let b = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let opts = VerifyOptions {
                pinned_log_key: log_key,
                ..VerifyOptions::default()
            };
            for r in &records {
                results.push(
                    verify_event_in_bundle(r, &b, &opts)
                        .map(|size| format!("included in the bundle's signed tree of {size}")),
                );
            }
            source = format!("the bundle {}", path.display());
        }
        None => {
            let (key, from) = super::audit::pinned_key(ctx, log_key.as_deref())?;
            let store = ctx.store().await?;
            let origin = store
                .get_meta(interlock_log::META_ORIGIN)
                .await?
                .context("this log records no origin")?;
            let recorded = store.get_meta(META_VKEY).await?;
            let verifier = match key {
                Some(k) => NoteVerifier::new(&origin, k)?,
                None => NoteVerifier::from_vkey(
                    recorded.as_deref().context("this log records no log key")?,
                )?,
            };
            for r in &records {
                results.push(
                    match interlock_log::event_evidence(&store, r.index, r.checkpoint_size).await {
                        Ok(ev) => verify_event_with_proof(
                            r,
                            &ev.leaf,
                            &ev.proof,
                            &ev.checkpoint,
                            &verifier,
                        )
                        .map(|()| format!("included in the signed tree of {}", r.checkpoint_size)),
                        Err(e) => Err(interlock_receipts::event::EventError::Checkpoint(
                            r.checkpoint_size,
                            e.to_string(),
                        )),
                    },
                );
            }
            source = format!("this log, with the log key from {from}");
        }
    }
    let ok = results.iter().all(Result::is_ok);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ok": ok,
                "source": source,
                "events": records.iter().zip(&results).map(|(r, res)| serde_json::json!({
                    "origin": r.origin, "index": r.index, "leaf_hash": hex::encode(r.leaf_hash),
                    "checkpoint_size": r.checkpoint_size,
                    "ok": res.is_ok(),
                    "error": res.as_ref().err().map(ToString::to_string),
                })).collect::<Vec<_>>(),
            })
        );
    } else {
        for (r, res) in records.iter().zip(&results) {
            match res {
                Ok(how) => println!("ok    leaf {}: {how}", r.index),
                Err(e) => println!("FAIL  leaf {}: {e}", r.index),
            }
        }
        println!(
            "{} of {} events verified against {source}",
            results.iter().filter(|r| r.is_ok()).count(),
            results.len()
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

async fn claims(
    ctx: &Context,
    bundle: Option<&Path>,
    log_key: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (claim, source) = match bundle {
        Some(path) => {
            let file = if path.is_dir() {
                path.join("bundle.json")
            } else {
                path.to_path_buf()
            };
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let report = verify_bundle(
                &bytes,
                &VerifyOptions {
                    pinned_log_key: log_key,
                    ..VerifyOptions::default()
                },
            );
            if !report.is_ok() {
                eprint!("{report}");
                eprintln!("interlock: the bundle does not verify, so it answers nothing");
                return Ok(ExitCode::from(EXIT_REJECTED));
            }
            let parsed = interlock_receipts::Bundle::parse(&bytes)?;
            let opened: Vec<_> = parsed
                .receipts
                .iter()
                .filter_map(|r| Some((r.index, open_leaf_unverified(&r.leaf).ok()?)))
                .collect();
            let claim = interlock_receipts::claims::drift_window_claim(
                opened
                    .iter()
                    .map(|(i, l)| (*i, l.kind.as_str(), &l.predicate)),
            );
            (
                claim,
                format!("the {} receipts of {}", opened.len(), file.display()),
            )
        }
        None => {
            let (key, from) = super::audit::pinned_key(ctx, log_key.as_deref())?;
            let store = ctx.store().await?;
            let report = interlock_log::audit(&store, key).await?;
            if !report.is_ok() {
                eprint!("{report}");
                eprintln!("interlock: the log does not verify, so it answers nothing");
                return Ok(ExitCode::from(EXIT_REJECTED));
            }
            let claim = interlock_log::drift_window_claim_of(&store).await?;
            (
                claim,
                format!("this log, verified with the log key from {from}"),
            )
        }
    };
    if json {
        let mut v = canon::to_serde_json(&claim.to_value());
        v["source"] = serde_json::Value::String(source);
        println!("{v}");
    } else {
        println!(
            "Was any tool executed after its drift was detected and before a reviewer decided?"
        );
        if claim.holds() {
            println!(
                "No. {} executions checked against {} drift windows in {} leaves ({source}).",
                claim.executions_checked,
                claim.windows.len(),
                claim.leaves_read
            );
        } else {
            println!("YES, {} times ({source}):", claim.violations.len());
            for v in &claim.violations {
                println!(
                    "  leaf {}: {} `{}` ({}) ran at {}, inside the window opened at {} ({})",
                    v.leaf_index,
                    v.server,
                    v.tool.as_deref().unwrap_or("a plan stage"),
                    v.verdict,
                    v.executed_at,
                    v.window.opened_at,
                    v.window
                        .closed_at
                        .map_or("still open".to_owned(), |c| format!("closed at {c}")),
                );
            }
        }
    }
    Ok(if claim.holds() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

async fn show(ctx: &Context, index: u64, json: bool) -> anyhow::Result<ExitCode> {
    let store = ctx.store().await?;
    let Some(row) = store.leaf(index).await? else {
        bail!("no receipt at index {index}");
    };
    let vkey = store
        .get_meta(META_VKEY)
        .await?
        .context("the log has no key recorded")?;
    let verifier = NoteVerifier::from_vkey(&vkey)?;
    let signature = match open_leaf(&row.data, &verifier.key) {
        Ok(_) => "valid (log key)".to_owned(),
        Err(e) => format!("INVALID: {e}"),
    };
    let opened = open_leaf_unverified(&row.data)?;
    let latest = store
        .latest_checkpoint()
        .await?
        .context("no signed checkpoint")?;
    let tree = Tree::from_leaves(&store.leaf_hashes().await?);
    let proof = tree.inclusion_proof(index, latest.size)?;
    let included = merkle::verify_inclusion(
        index,
        latest.size,
        &merkle::leaf_hash(&row.data),
        &proof,
        &latest.root,
    )
    .map_or_else(
        |e| format!("FAILED: {e}"),
        |()| format!("included in the checkpoint of size {}", latest.size),
    );
    if json {
        println!(
            "{}",
            serde_json::json!({
                "index": index,
                "statement": canon::to_serde_json(&opened.statement),
                "signature": signature,
                "inclusion": included,
                "inclusion_proof": proof.iter().map(b64).collect::<Vec<_>>(),
                "checkpoint": latest.note,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "receipt {index}: {} at {}",
        opened.kind,
        rfc3339(opened.time)
    );
    let subjects: Vec<String> = opened
        .statement
        .get("subject")
        .and_then(canon::Value::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| {
            Some(format!(
                "{} sha256:{}",
                s.get("name")?.as_str()?,
                s.get("digest")?.get("sha256")?.as_str()?
            ))
        })
        .collect();
    println!("subjects   {}", subjects.join("\n           "));
    println!("signature  {signature}");
    println!("inclusion  {included}");
    println!("\nstatement");
    println!(
        "{}",
        serde_json::to_string_pretty(&canon::to_serde_json(&opened.statement))
            .expect("JSON serializes")
    );
    Ok(ExitCode::SUCCESS)
}

async fn export(ctx: &Context, out: &Path, filter: &ExportFilter) -> anyhow::Result<ExitCode> {
    let store = ctx.store().await?;
    // The one export path, shared with `POST /api/v1/receipts/export`.
    let files = interlock_log::export_files(&store, filter).await?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_file(&out.join("bundle.json"), &files.bundle_json)?;
    write_file(&out.join("report.html"), files.report_html.as_bytes())?;
    write_file(&out.join("summary.csv"), files.summary_csv.as_bytes())?;
    let (bundle, bytes, report) = (&files.bundle, &files.bundle_json, &files.report);
    println!(
        "exported {} receipts ({} bytes, {} bytes per receipt) to {}",
        bundle.receipts.len(),
        bytes.len(),
        bytes.len() / bundle.receipts.len().max(1),
        out.display()
    );
    if !bundle.surfaces.is_empty() {
        println!(
            "with {} approved surfaces the receipts name",
            bundle.surfaces.len()
        );
    }
    println!("log key (pin it when verifying): {}", bundle.trust.log_key);
    if !report.is_ok() {
        eprint!("{report}");
        eprintln!(
            "interlock: the exported bundle does not verify: the database may have been tampered with"
        );
        return Ok(ExitCode::from(EXIT_REJECTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes through a temporary file and a rename, so a crash never leaves half a bundle.
fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The witnesses an auditor requires (`--witness`, `--min-witnesses`).
struct WitnessPolicy {
    witnesses: Vec<String>,
    min_witnesses: usize,
}

fn verify(
    path: &Path,
    log_key: Option<String>,
    leaf: Option<&Path>,
    witnesses: WitnessPolicy,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let file = if path.is_dir() {
        path.join("bundle.json")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    if bytes.starts_with(format!("{}\n", merkle::TLOG_PROOF_HEADER).as_bytes()) {
        if !witnesses.witnesses.is_empty() {
            bail!("--witness is checked on bundles; export a bundle to require witnesses");
        }
        return verify_tlog_proof(&bytes, log_key, leaf, json);
    }
    if leaf.is_some() {
        bail!(
            "--leaf is for a tlog-proof file; {} is not one",
            file.display()
        );
    }
    let report = verify_bundle(
        &bytes,
        &VerifyOptions {
            pinned_log_key: log_key,
            witnesses: witnesses.witnesses,
            min_witnesses: witnesses.min_witnesses,
            ..VerifyOptions::default()
        },
    );
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ok": report.is_ok(),
                "origin": report.origin,
                "tree_size": report.tree_size,
                "surfaces": report.surfaces,
                "witnesses": report.witnesses.iter().map(|w| serde_json::json!({
                    "name": w.name,
                    "cosigned_at": match w.verdict {
                        interlock_merkle::WitnessVerdict::Cosigned { timestamp } => Some(timestamp),
                        _ => None,
                    },
                    "problem": match &w.verdict {
                        interlock_merkle::WitnessVerdict::Invalid { reason } => Some(*reason),
                        interlock_merkle::WitnessVerdict::Absent => Some("no cosignature"),
                        interlock_merkle::WitnessVerdict::Cosigned { .. } => None,
                    },
                })).collect::<Vec<_>>(),
                "other_cosigners": report.other_cosigners,
                "problems": report.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "receipts": report.receipts.iter().map(|r| serde_json::json!({
                    "index": r.index, "kind": r.kind, "subjects": r.subjects,
                    "ok": r.result.is_ok(),
                    "error": r.result.as_ref().err().map(ToString::to_string),
                })).collect::<Vec<_>>(),
            })
        );
    } else {
        print!("{report}");
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

/// One receipt as a C2SP tlog-proof file.
async fn export_tlog_proof(ctx: &Context, out: &Path, index: u64) -> anyhow::Result<ExitCode> {
    let store = ctx.store().await?;
    let proof = interlock_log::export_tlog_proof(&store, index).await?;
    let vkey = store
        .get_meta(META_VKEY)
        .await?
        .context("the log has no key recorded")?;
    let text = proof.to_string();
    // Checked as the auditor will check it, before it is written.
    let report = interlock_receipts::verify_tlog_proof(&text, &vkey, None);
    let file = if out
        .extension()
        .is_some_and(|e| e == merkle::TLOG_PROOF_EXTENSION)
    {
        out.to_path_buf()
    } else {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        out.join(format!("receipt-{index}.{}", merkle::TLOG_PROOF_EXTENSION))
    };
    write_file(&file, text.as_bytes())?;
    println!(
        "exported receipt {index} as a tlog-proof ({} bytes) to {}",
        text.len(),
        file.display()
    );
    println!("log key (pin it when verifying): {vkey}");
    if !report.is_ok() {
        eprint!("{report}");
        eprintln!("interlock: the exported receipt does not verify");
        return Ok(ExitCode::from(EXIT_REJECTED));
    }
    Ok(ExitCode::SUCCESS)
}

fn verify_tlog_proof(
    bytes: &[u8],
    log_key: Option<String>,
    leaf: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let Some(log_key) = log_key else {
        bail!(
            "a tlog-proof carries no log key: pass the one you trust with --log-key (as `receipts export` prints it)"
        );
    };
    let text = std::str::from_utf8(bytes).context("the tlog-proof is not UTF-8")?;
    let leaf = leaf
        .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
        .transpose()?;
    let report = interlock_receipts::verify_tlog_proof(text, &log_key, leaf.as_deref());
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ok": report.is_ok(),
                "origin": report.origin,
                "tree_size": report.tree_size,
                "index": report.line.index,
                "kind": report.line.kind,
                "subjects": report.line.subjects,
                "error": report.line.result.as_ref().err().map(ToString::to_string),
                "approval_signature_not_checked": report.approval_unchecked,
            })
        );
    } else {
        print!("{report}");
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

fn b64(h: &merkle::Hash) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(parse_time("2026-11-29T12:00:00Z").unwrap(), 1_795_953_600);
        assert_eq!(parse_time("2026-11-29").unwrap(), 1_795_910_400);
        assert_eq!(rfc3339(1_795_953_600), "2026-11-29T12:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert!(parse_time("2026-13-01").is_err());
        assert!(parse_time("yesterday").is_err());
    }
}
