//! `interlock servers …`: review upstream MCP servers' surfaces. Reads the
//! store directly (a running gateway picks decisions up within a second);
//! approving signs the observed surface hash with this machine's approver key.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use interlock_core::Decision;
use interlock_core::canon;
use interlock_gateway::admin;
use interlock_gateway::admin::decisions::{DecisionSubject, OwnerDecision};
use interlock_gateway::server_file::NewServer;
use interlock_store::ServerRecord;
use interlock_trust::EventBus;

use super::EXIT_REJECTED;
use super::context::{Context, hash_to_approve, parse_duration};
use super::owner;

#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// Every upstream server the gateway has seen, with its status.
    List,
    /// One server: status, hashes, tools (served or blocked) and drift.
    Show { name: String },
    /// The drift between a server's approved baseline and what it lists now.
    Diff { name: String },
    /// Approve what the server lists now as its baseline (signed with the
    /// approver key in the OS keychain); with --tool, only that tool's
    /// definition, leaving the rest of the server as it is.
    ///
    /// With --from-lock FILE (and no NAME), bootstrap from a reviewed
    /// lockfile: every statement in it is verified against the approver keys
    /// this gateway trusts, then each server whose observed surface still is
    /// the locked one is approved; the others are left as they are (exit 1).
    Approve {
        #[arg(required_unless_present = "from_lock", conflicts_with = "from_lock")]
        name: Option<String>,
        /// Decide only this tool (its upstream name): its observed definition
        /// becomes its baseline, and its hold, quarantine or block is lifted.
        #[arg(long)]
        tool: Option<String>,
        #[arg(long, required_unless_present = "from_lock")]
        reason: Option<String>,
        /// A reviewed `interlock.lock` to approve from (`interlock lock`).
        #[arg(long, value_name = "FILE", conflicts_with = "tool")]
        from_lock: Option<std::path::PathBuf>,
        /// How long the signed statement stays valid for the gateway to apply.
        #[arg(long, default_value = "1h")]
        expires: String,
        /// The observed surface hash you reviewed (`interlock servers show` and
        /// `diff` print it; with --tool, the tool's definition hash `show`
        /// prints). Only that surface is approved; if the server now lists
        /// another, nothing is signed. Without it, a terminal asks you to
        /// confirm the current hash.
        #[arg(long)]
        hash: Option<String>,
    },
    /// A tool's behavioural envelope (what it was seen to do); with
    /// `--leaf`, what widening it by that log entry's findings gives and the
    /// hash to sign.
    Envelope {
        name: String,
        tool: String,
        #[arg(long)]
        leaf: Option<u64>,
    },
    /// Widen a tool's envelope by the findings of log entry `--leaf` (a held
    /// call or a withheld result), signed with the approver key.
    Widen {
        name: String,
        tool: String,
        #[arg(long)]
        leaf: u64,
        #[arg(long)]
        reason: String,
        #[arg(long, default_value = "1h")]
        expires: String,
        /// The widened envelope's hash you reviewed (`servers envelope --leaf`
        /// prints it). Without it, a terminal asks you to confirm.
        #[arg(long)]
        hash: Option<String>,
    },
    /// Reject the server: none of its tools are served. With --tool, block only
    /// that tool (also while the server is pending review): it is not served
    /// until a reviewer approves it, across listings and server approvals.
    Reject {
        name: String,
        /// Block only this tool (its upstream name).
        #[arg(long)]
        tool: Option<String>,
        #[arg(long)]
        reason: String,
    },
    /// Add a server to the running gateway without a restart: pending until
    /// a reviewer approves its surface, and written into its gateway.toml.
    /// `--command PROG [ARGS…]` (stdio) or `--url URL` (Streamable HTTP).
    Add {
        name: String,
        #[arg(long, conflicts_with = "url", required_unless_present = "url")]
        command: Option<String>,
        /// The program's arguments (after `--`).
        #[arg(last = true)]
        args: Vec<String>,
        #[arg(long)]
        url: Option<String>,
    },
    /// The programs reviewers asked to run (a stdio server requested over
    /// the reviewer API), waiting for you, the machine's owner.
    Requests,
    /// Run a requested program as a server (pending review like any new
    /// one): the running gateway adds it, logged with who asked.
    Confirm { name: String },
    /// Decline a requested program: nothing runs.
    Decline { name: String },
    /// Remove a server from the running gateway: a decision signed with the
    /// approver key in the OS keychain, logged; its tools stop being served
    /// and it leaves gateway.toml.
    Remove {
        name: String,
        #[arg(long)]
        reason: String,
        #[arg(long, default_value = "1h")]
        expires: String,
    },
}

pub async fn run(ctx: &Context, cmd: ServersCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ServersCommand::Add {
            name,
            command,
            args,
            url,
        } => {
            let req = admin::Request::AddServer(NewServer {
                name: name.clone(),
                command,
                args,
                url,
                ..NewServer::default()
            });
            match running_gateway(ctx, &req).await? {
                admin::Answer::Logged(index) => {
                    println!(
                        "added `{name}` (log entry {index}): pending until a reviewer approves its surface\n  interlock servers show {name}"
                    );
                    Ok(ExitCode::SUCCESS)
                }
                admin::Answer::Error(e) => Ok(refused(&e)),
                other => bail!("the gateway added nothing: {other:?}"),
            }
        }
        ServersCommand::Requests => {
            match running_gateway(ctx, &admin::Request::ServerRequests).await? {
                admin::Answer::ServerRequests(requests) if requests.is_empty() => {
                    println!("no program waits for your confirmation");
                    Ok(ExitCode::SUCCESS)
                }
                admin::Answer::ServerRequests(requests) => {
                    for r in requests {
                        let s = &r.server;
                        let line = std::iter::once(s.command.clone().unwrap_or_default())
                            .chain(s.args.iter().cloned())
                            .collect::<Vec<_>>()
                            .join(" ");
                        println!(
                            "{}  {line}
  asked by {} (log entry {}); sandbox: {}
  interlock servers confirm {}   |   interlock servers decline {}",
                            s.name,
                            r.requested_by,
                            r.leaf,
                            s.sandbox.pinned(),
                            s.name,
                            s.name
                        );
                    }
                    Ok(ExitCode::SUCCESS)
                }
                admin::Answer::Error(e) => Ok(refused(&e)),
                other => bail!("unexpected answer: {other:?}"),
            }
        }
        ServersCommand::Confirm { name } => {
            let req = admin::Request::ConfirmServer { name: name.clone() };
            match running_gateway(ctx, &req).await? {
                admin::Answer::Logged(index) => {
                    println!(
                        "running `{name}` (log entry {index}), sandboxed: pending until a reviewer approves its surface\n  interlock servers show {name}"
                    );
                    Ok(ExitCode::SUCCESS)
                }
                admin::Answer::Error(e) => Ok(refused(&e)),
                other => bail!("the gateway added nothing: {other:?}"),
            }
        }
        ServersCommand::Decline { name } => {
            let req = admin::Request::DeclineServer { name: name.clone() };
            match running_gateway(ctx, &req).await? {
                admin::Answer::Deleted(true) => {
                    println!("declined `{name}`: nothing runs");
                    Ok(ExitCode::SUCCESS)
                }
                admin::Answer::Deleted(false) => Ok(refused(&format!(
                    "no request to run a server named {name:?} waits"
                ))),
                admin::Answer::Error(e) => Ok(refused(&e)),
                other => bail!("unexpected answer: {other:?}"),
            }
        }
        ServersCommand::Remove {
            name,
            reason,
            expires,
        } => {
            match ctx
                .host()
                .remove_running_server(&name, &reason, parse_duration(&expires)?)
                .await
            {
                Ok(index) => {
                    println!("removed `{name}` (log entry {index})");
                    Ok(ExitCode::SUCCESS)
                }
                Err(interlock_host::HostError::Admin(admin::AdminError::Refused(e))) => {
                    Ok(refused(&e))
                }
                Err(e) => Err(e.into()),
            }
        }
        ServersCommand::List => {
            let store = ctx.store().await?;
            let servers = store.servers().await?;
            if servers.is_empty() {
                println!("no servers seen yet (start `interlock serve` with upstreams configured)");
            }
            for s in servers {
                let blocked = blocked(&s);
                println!(
                    "{:<20} {:<12} {:>3} tools  {}{}",
                    s.name,
                    s.status.as_str(),
                    tools(&s).len(),
                    s.observed_hash.as_deref().map_or("-", |h| &h[..19]),
                    if blocked.is_empty() {
                        String::new()
                    } else {
                        format!("  blocked: {}", blocked.join(", "))
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ServersCommand::Show { name } => {
            let s = server(ctx, &name).await?;
            println!("server   {}", s.name);
            println!("status   {}", s.status.as_str());
            println!(
                "baseline {}",
                s.baseline_hash.as_deref().unwrap_or("(none approved)")
            );
            println!(
                "observed {}",
                s.observed_hash.as_deref().unwrap_or("(nothing listed)")
            );
            let blocked: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&s.blocked_tools).unwrap_or_default();
            println!("tools:");
            for t in tools(&s) {
                let mark =
                    blocked
                        .get(&t)
                        .and_then(|a| a.as_str())
                        .unwrap_or(match s.status.as_str() {
                            "TRUSTED" => "served",
                            other => other,
                        });
                // The hash `approve --tool` / `reject --tool` sign.
                let hash = interlock_trust::tool_decision::observed_tool_hash(&s, &t)
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                println!("  {:<32} {:<12} {hash}", t, mark.to_ascii_lowercase());
            }
            print_pinned_content(&s);
            print_first_contact(&s);
            print_probes(&ctx.store().await?, &s.name).await?;
            print_drift(&s);
            Ok(ExitCode::SUCCESS)
        }
        ServersCommand::Diff { name } => {
            let s = server(ctx, &name).await?;
            print_drift(&s);
            let pretty = |b: &Option<Vec<u8>>| {
                b.as_deref()
                    .and_then(|b| canon::parse_json(b).ok())
                    .map(|v| serde_json::to_string_pretty(&canon::to_serde_json(&v)).expect("JSON"))
                    .unwrap_or_default()
            };
            let diff = similar::TextDiff::from_lines(&pretty(&s.baseline), &pretty(&s.observed))
                .unified_diff()
                .context_radius(3)
                .header("baseline", "observed")
                .to_string();
            println!(
                "baseline {}\nobserved {}",
                s.baseline_hash.as_deref().unwrap_or("(none approved)"),
                s.observed_hash.as_deref().unwrap_or("(nothing listed)")
            );
            if diff.is_empty() {
                println!("(the observed surface is the baseline)");
            } else {
                print!("{diff}");
            }
            Ok(ExitCode::SUCCESS)
        }
        ServersCommand::Approve {
            from_lock: Some(path),
            expires,
            ..
        } => approve_from_lock(ctx, &path, parse_duration(&expires)?).await,
        ServersCommand::Approve {
            name: Some(name),
            tool: Some(tool),
            reason: Some(reason),
            expires,
            hash,
            ..
        } => {
            let beside = owner::gateway_runs(ctx).await?;
            if !beside && ctx.host().approver_key()?.is_none() {
                bail!("no approver key in the keychain; run `interlock keys init`");
            }
            let record = server(ctx, &name).await?;
            let current = interlock_trust::tool_decision::observed_tool_hash(&record, &tool)?;
            let shown = hash_to_approve(
                &format!("the definition of tool `{tool}` of server `{name}`"),
                &current.to_string(),
                hash.as_deref(),
            )?;
            let valid_for = parse_duration(&expires)?;
            let d = OwnerDecision::approval(
                DecisionSubject::Tool {
                    server: name.clone(),
                    tool: tool.clone(),
                },
                &shown,
                &reason,
                valid_for,
            );
            if beside && let Some(exit) = owner::decide_beside(ctx, d).await? {
                return Ok(exit);
            }
            decide_tool(
                ctx,
                &name,
                &tool,
                Some(&shown),
                Decision::Approve,
                &reason,
                valid_for,
            )
            .await
        }
        ServersCommand::Approve {
            name: Some(name),
            tool: None,
            reason: Some(reason),
            expires,
            hash,
            ..
        } => {
            // Without a key nothing can be signed: say so before asking for a
            // hash. Beside a running gateway, its keychain's key signs.
            let beside = owner::gateway_runs(ctx).await?;
            if !beside && ctx.host().approver_key()?.is_none() {
                bail!("no approver key in the keychain; run `interlock keys init`");
            }
            let record = server(ctx, &name).await?;
            let Some(current) = record.observed_hash.as_deref() else {
                bail!("server `{name}` has listed no surface yet");
            };
            let shown = hash_to_approve(
                &format!("the surface of server `{name}`"),
                current,
                hash.as_deref(),
            )?;
            let d = OwnerDecision::approval(
                DecisionSubject::Server { name: name.clone() },
                &shown,
                &reason,
                parse_duration(&expires)?,
            );
            if beside && let Some(exit) = owner::decide_beside(ctx, d).await? {
                return Ok(exit);
            }
            decide(
                ctx,
                &name,
                Some(&shown),
                Decision::Approve,
                &reason,
                parse_duration(&expires)?,
            )
            .await
        }
        ServersCommand::Approve { .. } => {
            bail!("give a server NAME and --reason, or --from-lock FILE")
        }
        ServersCommand::Envelope { name, tool, leaf } => {
            let engine = ctx.engine().await?;
            let shown = match leaf {
                None => engine
                    .store()
                    .envelope(&name, &tool)
                    .await?
                    .map(|row| {
                        format!(
                            "{} ({})\n{}",
                            row.hash,
                            row.state.as_str(),
                            String::from_utf8_lossy(&row.envelope)
                        )
                    })
                    .ok_or_else(|| anyhow::anyhow!("no envelope for {name}/{tool} yet")),
                Some(leaf) => interlock_trust::envelopes::widening(&engine, &name, &tool, leaf)
                    .await
                    .map(|w| {
                        let found: Vec<String> =
                            w.findings.iter().map(|f| f.explanation()).collect();
                        format!(
                            "widening {name}/{tool} ({}) by entry {leaf}:\n  {}\nwidened: {}\n{}",
                            w.current_hash,
                            found.join("\n  "),
                            w.widened_hash,
                            canon::canonical_string(&w.widened.to_value())
                        )
                    })
                    .map_err(anyhow::Error::from),
            };
            engine.log().close().await;
            println!("{}", shown?);
            Ok(ExitCode::SUCCESS)
        }
        ServersCommand::Widen {
            name,
            tool,
            leaf,
            reason,
            expires,
            hash,
        } => {
            let Some(key) = ctx.host().approver_key()? else {
                bail!("no approver key in the keychain; run `interlock keys init`");
            };
            let engine = ctx.engine().await?;
            let current = interlock_trust::envelopes::widening(&engine, &name, &tool, leaf).await;
            let outcome = match current {
                Ok(w) => {
                    let shown = hash_to_approve(
                        &format!("the widened envelope of {name}/{tool}"),
                        &w.widened_hash.to_string(),
                        hash.as_deref(),
                    )?;
                    interlock_host::decide_envelope_widening(
                        &engine,
                        &name,
                        &tool,
                        leaf,
                        Some(&shown),
                        &interlock_host::Countersign::approve(
                            &key,
                            &reason,
                            parse_duration(&expires)?,
                        ),
                    )
                    .await
                    .map_err(anyhow::Error::from)
                }
                Err(e) => Err(e.into()),
            };
            engine.log().close().await;
            match outcome {
                Ok(w) => {
                    println!(
                        "widened {name}/{tool}: {} → {}",
                        w.current_hash, w.widened_hash
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("interlock: {e}");
                    Ok(ExitCode::from(EXIT_REJECTED))
                }
            }
        }
        ServersCommand::Reject { name, tool, reason } => {
            let subject = match &tool {
                Some(tool) => DecisionSubject::Tool {
                    server: name.clone(),
                    tool: tool.clone(),
                },
                None => DecisionSubject::Server { name: name.clone() },
            };
            let d = OwnerDecision::rejection(subject, &reason);
            if let Some(exit) = owner::decide_beside(ctx, d).await? {
                return Ok(exit);
            }
            match tool {
                Some(tool) => {
                    decide_tool(ctx, &name, &tool, None, Decision::Reject, &reason, 3600).await
                }
                None => decide(ctx, &name, None, Decision::Reject, &reason, 3600).await,
            }
        }
    }
}

/// Sends `req` to the gateway running on this data directory; servers are
/// added and removed at run time only there.
async fn running_gateway(ctx: &Context, req: &admin::Request) -> anyhow::Result<admin::Answer> {
    let data_dir = ctx.host().data_dir()?;
    match admin::request(&data_dir, req).await {
        Ok(Some(a)) => Ok(a),
        Ok(None) => bail!(
            "no gateway is running on {}; start one (`interlock serve`), or edit its gateway.toml",
            data_dir.display()
        ),
        // Refused (bad input, a bad signature): printed, exit 1.
        Err(admin::AdminError::Refused(e)) => Ok(admin::Answer::Error(e)),
        Err(e) => Err(e.into()),
    }
}

fn refused(e: &str) -> ExitCode {
    eprintln!("refused: {e}");
    ExitCode::from(EXIT_REJECTED)
}

/// `servers approve --from-lock FILE` (issue 22 item 1).
async fn approve_from_lock(
    ctx: &Context,
    path: &std::path::Path,
    valid_for: i64,
) -> anyhow::Result<ExitCode> {
    use interlock_host::FromLock;
    let Some(key) = ctx.host().approver_key()? else {
        bail!("no approver key in the keychain; run `interlock keys init`");
    };
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let lock = match interlock_trust::review::lockfile::Lockfile::parse(&bytes) {
        Ok(lock) => lock,
        Err(e) => {
            eprintln!("interlock: {}: refused: {e}", path.display());
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let engine = ctx.engine().await?;
    let outcome =
        interlock_host::approve_from_lock(&engine, &EventBus::new(), &key, &lock, valid_for).await;
    engine.log().close().await;
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("interlock: {}: refused: {e}", path.display());
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let mut all = true;
    for (name, o) in outcome {
        let locked = &lock.servers[&name].surface_hash;
        match o {
            FromLock::Trusted => println!("trusted  {name:<20} {locked}"),
            FromLock::AlreadyTrusted => println!("trusted  {name:<20} {locked} (already)"),
            FromLock::Differs { observed } => {
                all = false;
                println!("differs  {name:<20} locked {locked}, observed {observed}: not trusted")
            }
            FromLock::NotSeen => {
                all = false;
                println!("unseen   {name:<20} this gateway has not listed it: not trusted")
            }
        }
    }
    Ok(if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

/// Signs and applies a decision about one tool (approve, or reject = block).
async fn decide_tool(
    ctx: &Context,
    name: &str,
    tool: &str,
    shown_hash: Option<&str>,
    decision: Decision,
    reason: &str,
    valid_for: i64,
) -> anyhow::Result<ExitCode> {
    let Some(key) = ctx.host().approver_key()? else {
        bail!("no approver key in the keychain; run `interlock keys init`");
    };
    let config = ctx.host().gateway_config(None)?;
    let engine = ctx.engine().await?;
    let said = interlock_host::Countersign {
        key: &key,
        decision,
        reason,
        valid_for_secs: valid_for,
    };
    let outcome = interlock_host::decide_tool_definition(
        &engine,
        &EventBus::new(),
        &config,
        name,
        tool,
        shown_hash,
        &said,
    )
    .await;
    engine.log().close().await;
    report(outcome, |r| {
        let verb = if decision == Decision::Approve {
            "approved"
        } else {
            "blocked"
        };
        format!(
            "{verb} tool `{tool}` of server `{}` — server now {}",
            r.name,
            r.status.as_str()
        )
    })
}

/// Prints what a decision made of the server (`done`), or why it was refused.
fn report(
    outcome: Result<ServerRecord, interlock_host::HostError>,
    done: impl FnOnce(&ServerRecord) -> String,
) -> anyhow::Result<ExitCode> {
    match outcome {
        Ok(r) => {
            println!("{}", done(&r));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("interlock: {e}");
            Ok(ExitCode::from(EXIT_REJECTED))
        }
    }
}

async fn server(ctx: &Context, name: &str) -> anyhow::Result<ServerRecord> {
    let store = ctx.store().await?;
    match store.server(name).await? {
        Some(s) => Ok(s),
        None => bail!("no server named `{name}` (see `interlock servers list`)"),
    }
}

fn tools(s: &ServerRecord) -> Vec<String> {
    s.observed
        .as_deref()
        .and_then(|b| canon::parse_json(b).ok())
        .and_then(|v| {
            v.as_object()?.get("tools")?.as_array().map(|a| {
                a.iter()
                    .filter_map(|t| t.as_object()?.get("name")?.as_str().map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default()
}

fn blocked(s: &ServerRecord) -> Vec<String> {
    let m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&s.blocked_tools).unwrap_or_default();
    m.iter()
        .map(|(t, a)| format!("{t} ({})", a.as_str().unwrap_or("?")))
        .collect()
}

/// Its effective-permission probes (issue 16 item 1): each one's last
/// outcome against the baseline, and the findings.
async fn print_probes(store: &interlock_store::Store, name: &str) -> anyhow::Result<()> {
    let Some(p) = interlock_gateway::probes::probes_view(store, name).await? else {
        return Ok(());
    };
    let runs = p["observed"].as_array().cloned().unwrap_or_default();
    let baseline = p["baseline"].as_array().cloned().unwrap_or_default();
    println!("probes:");
    for r in &runs {
        let then = baseline
            .iter()
            .find(|b| b["tool"] == r["tool"] && b["arguments_hash"] == r["arguments_hash"])
            .and_then(|b| b["outcome"].as_str())
            .unwrap_or("-");
        println!(
            "  {:<28} {:<12} {:<12} at approval: {}",
            r["tool"].as_str().unwrap_or("?"),
            r["outcome"].as_str().unwrap_or("?"),
            r["verdict"].as_str().unwrap_or("?"),
            then
        );
    }
    for f in p["findings"].as_array().cloned().unwrap_or_default() {
        println!(
            "  [{}] {}",
            f["action"].as_str().unwrap_or("?"),
            f["summary"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

/// A pending server's whole surface, scanned before anyone approves it.
fn print_first_contact(s: &ServerRecord) {
    let Some(fc) = interlock_trust::pins::first_contact_of(s) else {
        return;
    };
    let findings = fc["findings"].as_array().cloned().unwrap_or_default();
    println!(
        "first contact: risk {} ({} finding(s))",
        fc["risk"].as_str().unwrap_or("?"),
        findings.len()
    );
    for f in findings {
        println!(
            "  [{}] {} {}: {:?}",
            f["kind"].as_str().unwrap_or("?"),
            f["tool"]
                .as_str()
                .map_or_else(|| "server".to_owned(), |t| format!("tool {t:?}")),
            f["field"].as_str().unwrap_or("?"),
            f["excerpt"].as_str().unwrap_or("")
        );
    }
}

/// The prompts, resources and templates pinned with the tools (issue 16
/// item 6), each served or held.
fn print_pinned_content(s: &ServerRecord) {
    let Ok(Some(surface)) = interlock_trust::pins::decode_surface(&s.name, s.observed.as_deref())
    else {
        return;
    };
    if surface.contents().is_empty() {
        return;
    }
    let drift: Vec<serde_json::Value> = serde_json::from_slice(&s.drift).unwrap_or_default();
    let held = interlock_trust::pins::blocked_content(&drift);
    println!("pinned prompts and resources:");
    for r in surface.contents().keys() {
        let mark = if held.contains_key(r) {
            "held"
        } else {
            "pinned"
        };
        println!("  {:<17} {:<32} {mark}", r.kind.name(), r.key);
    }
}

fn print_drift(s: &ServerRecord) {
    let drift: Vec<serde_json::Value> = serde_json::from_slice(&s.drift).unwrap_or_default();
    if drift.is_empty() {
        println!("drift: none");
        return;
    }
    println!("drift:");
    for d in drift {
        println!(
            "  [{}→{}] {}",
            d["severity"].as_str().unwrap_or("?"),
            d["action"].as_str().unwrap_or("?"),
            d["summary"].as_str().unwrap_or("?")
        );
    }
}

async fn decide(
    ctx: &Context,
    name: &str,
    shown_hash: Option<&str>,
    decision: Decision,
    reason: &str,
    valid_for: i64,
) -> anyhow::Result<ExitCode> {
    let Some(key) = ctx.host().approver_key()? else {
        bail!("no approver key in the keychain; run `interlock keys init`");
    };
    let engine = ctx.engine().await?;
    let said = interlock_host::Countersign {
        key: &key,
        decision,
        reason,
        valid_for_secs: valid_for,
    };
    let outcome =
        interlock_host::decide_server_surface(&engine, &EventBus::new(), name, shown_hash, &said)
            .await;
    engine.log().close().await;
    report(outcome, |r| {
        let verb = if decision == Decision::Approve {
            "approved"
        } else {
            "rejected"
        };
        format!(
            "{verb} server `{}` at {} — now {}",
            r.name,
            r.observed_hash.as_deref().unwrap_or("?"),
            r.status.as_str()
        )
    })
}
