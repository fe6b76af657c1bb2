//! `interlock connect CLIENT`: put an AI client's MCP servers behind the
//! gateway (`interlock_host::connect` does the work; this parses and prints).

use std::path::PathBuf;
use std::process::ExitCode;

use interlock_host::connect::{
    Action, Client, ConnectError, ConnectRequest, KEY_HEADER, Paths, Plan, Reach, UndoMode, detect,
};

use super::context::Context;

#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    /// The client: claude-desktop, claude-code, cursor, vscode, windsurf,
    /// codex, gemini. Without it, lists the clients and their files.
    client: Option<String>,
    /// Apply the changes (without it, only shows what would change).
    #[arg(long, short = 'y', conflicts_with = "dry_run")]
    yes: bool,
    /// Show what would change and change nothing (the default).
    #[arg(long)]
    dry_run: bool,
    /// Restore the client's file as it was before the last connect (byte
    /// for byte), remove the upstreams it added, delete their keychain
    /// tokens and revoke the client's agent key.
    #[arg(long)]
    undo: bool,
    /// With --undo: restore the backup even though the file changed since
    /// (those changes are lost).
    #[arg(long, requires = "undo", conflicts_with = "merge")]
    force: bool,
    /// With --undo, when the file changed since: keep it as it is and undo
    /// only connect's edit (the gateway's entry removed, the imported
    /// entries put back).
    #[arg(long, requires = "undo")]
    merge: bool,
    /// A project directory: connect its project file (.mcp.json,
    /// .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json,
    /// .codex/config.toml) instead of the user's.
    #[arg(long, value_name = "DIR", conflicts_with = "file")]
    project: Option<PathBuf>,
    /// The client's config file, instead of its documented location.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// The gateway config to add the upstreams to (default
    /// `<data dir>/gateway.toml`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The gateway's MCP endpoint as the client reaches it (default: from
    /// the config's `listen`, e.g. http://127.0.0.1:8717/mcp).
    #[arg(long, value_name = "URL")]
    gateway_url: Option<String>,
}

pub async fn run(ctx: &Context, args: ConnectArgs) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let Some(name) = &args.client else {
        println!("clients `interlock connect` knows (their user files):");
        for (c, f, found) in detect(&paths) {
            let state = if found { "found" } else { "absent" };
            println!("  {:<15} {:<7} {}", c.slug(), state, f.display());
        }
        return Ok(ExitCode::SUCCESS);
    };
    let Some(client) = Client::from_slug(name) else {
        eprintln!(
            "interlock: unknown client `{name}`; known: {}",
            Client::ALL.map(Client::slug).join(", ")
        );
        return Ok(ExitCode::from(super::EXIT_ERROR));
    };
    let req = ConnectRequest {
        client,
        paths,
        project: args.project,
        file: args.file,
        gateway_config: args.config,
        gateway_url: match args.gateway_url {
            Some(u) => Some(u),
            // Beside a running gateway: the address it is bound to now.
            None => ctx.host().running_gateway_url().await,
        },
        interlock_bin: std::env::current_exe()?,
    };
    let host = ctx.host();
    if args.undo {
        let mode = match (args.force, args.merge) {
            (true, _) => UndoMode::Force,
            (_, true) => UndoMode::Merge,
            _ => UndoMode::Exact,
        };
        return match host.connect_undo(&req, mode).await {
            Ok(u) => {
                if u.merged {
                    println!(
                        "put the imported entries back into {} and removed the gateway's entry \
                         (the rest of the file as it is now)",
                        u.file.display()
                    );
                } else {
                    println!(
                        "restored {} as it was before the last connect",
                        u.file.display()
                    );
                }
                if !u.servers_removed.is_empty() {
                    println!(
                        "removed from the gateway config: {}",
                        u.servers_removed.join(", ")
                    );
                    // The running gateway started them at connect: each is
                    // stopped by a removal signed with this machine's key
                    // (what the person running --undo asked for).
                    for name in &u.servers_removed {
                        match host
                            .remove_running_server(name, "interlock connect --undo", 600)
                            .await
                        {
                            Ok(index) => println!(
                                "stopped `{name}` in the running gateway (signed removal, log entry {index})"
                            ),
                            Err(interlock_host::HostError::NoGateway(_)) => break,
                            Err(e) => println!(
                                "`{name}` still runs in the gateway ({e}); `interlock servers remove {name}` stops it"
                            ),
                        }
                    }
                }
                if u.tokens_removed > 0 {
                    println!("deleted {} keychain token(s)", u.tokens_removed);
                }
                if let Some(a) = u.agent_revoked {
                    println!("revoked agent key `{a}`");
                }
                if u.layers_left {
                    println!("an earlier connect of this file remains; --undo again undoes it");
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => refused(e),
        };
    }
    if !args.yes {
        return match host.connect_preview(&req) {
            Ok(plan) => {
                print_plan(&plan);
                if plan.changes_anything() {
                    println!("\ndry run: nothing was changed; run again with --yes to apply");
                } else {
                    println!(
                        "\nnothing to do: {} already reaches the gateway",
                        plan.client
                    );
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => refused(e),
        };
    }
    match host.connect(&req).await {
        Ok(done) => {
            print_plan(&done.plan);
            if !done.changed {
                println!(
                    "\nnothing to do: {} already reaches the gateway",
                    done.plan.client
                );
                return Ok(ExitCode::SUCCESS);
            }
            let imported: Vec<&str> = done
                .plan
                .servers
                .iter()
                .filter_map(|s| match &s.action {
                    Action::Import {
                        upstream,
                        shared: false,
                        ..
                    } => Some(upstream.as_str()),
                    _ => None,
                })
                .collect();
            println!(
                "\nconnected; the backup is kept for `interlock connect --undo {}`",
                client.slug()
            );
            if !imported.is_empty() {
                let start = if !done.started.is_empty() {
                    "The running gateway started them"
                } else if done.gateway_running {
                    "The running gateway starts them when restarted"
                } else {
                    "Start the gateway (`interlock serve`)"
                };
                println!(
                    "{} added to {}, pending: none of their tools is served until a reviewer \
                     approves each surface. {start}, then\n  \
                     interlock servers list\n  interlock servers show NAME\n  \
                     interlock servers approve NAME --reason R --hash H",
                    imported.join(", "),
                    done.plan.gateway_config.display()
                );
            }
            println!("restart {} so it reads its new config", client);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => refused(e),
    }
}

/// Input refused (exit 1) or the command could not run (exit 2).
fn refused(e: ConnectError) -> anyhow::Result<ExitCode> {
    let code = match e {
        ConnectError::Malformed { .. }
        | ConnectError::Changed { .. }
        | ConnectError::NothingToUndo { .. }
        | ConnectError::ChangedWhileWriting { .. }
        | ConnectError::Config(_) => super::EXIT_REJECTED,
        ConnectError::Usage(_)
        | ConnectError::NoFile { .. }
        | ConnectError::File { .. }
        | ConnectError::Gateway(_) => super::EXIT_ERROR,
        ConnectError::Host(e) => return Err(e.into()),
    };
    eprintln!("interlock: {e}");
    Ok(ExitCode::from(code))
}

fn print_plan(plan: &Plan) {
    let via = if plan.symlink {
        format!(" (a symlink to {})", plan.target.display())
    } else {
        String::new()
    };
    println!("{}: {}{via}", plan.client, plan.file.display());
    let width = plan
        .servers
        .iter()
        .map(|s| s.name.len())
        .chain(plan.entry.iter().map(|e| e.name.len()))
        .max()
        .unwrap_or(0);
    for s in &plan.servers {
        let what = match &s.action {
            Action::Import {
                upstream,
                transport,
                secrets,
                dropped,
                shared,
                sandbox,
            } => {
                let mut w = if *shared {
                    format!("→ upstream `{upstream}` ({transport}), already configured: shared")
                } else {
                    format!(
                        "→ upstream `{upstream}` ({transport}), pending review; its entry \
                         leaves the client"
                    )
                };
                if !secrets.is_empty() && !shared {
                    w += &format!("; {} into the OS keychain", secrets.join(", "));
                }
                if !dropped.is_empty() {
                    w += &format!(
                        "; client-only settings not carried over: {}",
                        dropped.join(", ")
                    );
                }
                if let Some(sandbox) = sandbox.as_ref().filter(|_| !shared) {
                    w += &format!("\n  {:<width$}    {sandbox}", "");
                }
                w
            }
            Action::AlreadyBehindGateway => "already reaches the gateway".to_owned(),
            Action::Keep { reason } => format!("stays as it is: {reason}"),
        };
        println!("  {:<width$}  {what}", s.name);
    }
    if let Some(e) = &plan.entry {
        let how = match &e.reach {
            Reach::Http { url } => format!(
                "Streamable HTTP {url}, agent key `{}` in the {KEY_HEADER} header",
                plan.agent
            ),
            Reach::Bridge { command, url } => format!(
                "`{} mcp` (the stdio bridge) to {url}, agent key `{}` in its environment",
                command.display(),
                plan.agent
            ),
        };
        println!("  {:<width$}  new entry: {how}", e.name);
    }
}
