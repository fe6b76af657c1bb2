//! `interlock hooks install <client>`: a coding agent's hook settings, so
//! each use of its own tools asks the gateway first (`interlock_host::
//! hook_install` does the work; this parses, shows the diff and prints).

use std::path::PathBuf;
use std::process::ExitCode;

use interlock_hooks::Client;
use interlock_host::hook_install::{HookInstallError, HookRequest, HookScope};

use super::context::Context;

#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Write the client's hook settings (a command hook, `interlock hook
    /// <client>`, before and after each tool use), showing the change first.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The client: claude-code, cursor, codex, gemini-cli.
    client: Client,
    /// A project's settings (`<DIR>/.claude/settings.json`, …) instead of
    /// the user's.
    #[arg(long, value_name = "DIR", conflicts_with = "managed")]
    project: Option<PathBuf>,
    /// The machine's managed settings (`/etc/claude-code/managed-settings.json`,
    /// …), which its users cannot override: for administrators.
    #[arg(long)]
    managed: bool,
    /// Write it (without it, only shows what would change).
    #[arg(long, short = 'y')]
    yes: bool,
    /// Give the file back as it was before the install (byte for byte, or
    /// removed if there was none) and revoke the client's agent key.
    #[arg(long, conflicts_with = "yes")]
    undo: bool,
    /// The gateway as the hook reaches it (default: the running gateway's
    /// address, else http://127.0.0.1:8717).
    #[arg(long, value_name = "URL")]
    gateway: Option<String>,
    /// When the gateway cannot answer: `deny` (the default: fail closed) or
    /// `ask` (the client asks its user), written into the hook's command.
    #[arg(long, value_name = "deny|ask", default_value = "deny", value_parser = ["deny", "ask"])]
    on_unreachable: String,
}

pub async fn run(ctx: &Context, command: HooksCommand) -> anyhow::Result<ExitCode> {
    let HooksCommand::Install(args) = command;
    let host = ctx.host();
    let gateway = match args.gateway {
        Some(g) => g,
        None => host
            .running_gateway_url()
            .await
            .map(|u| u.trim_end_matches("/mcp").to_owned())
            .unwrap_or_else(|| "http://127.0.0.1:8717".to_owned()),
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
    let scope = match (args.project, args.managed) {
        (Some(dir), _) => HookScope::Project(std::path::absolute(dir)?),
        (None, true) => HookScope::Managed,
        (None, false) => HookScope::User,
    };
    let req = HookRequest {
        client: args.client,
        scope,
        gateway,
        program: std::env::current_exe()?,
        home,
        ask_when_unreachable: args.on_unreachable == "ask",
    };
    if args.undo {
        return match host.hooks_undo(&req).await {
            Ok(u) => {
                if u.removed {
                    println!(
                        "removed {} (it did not exist before the install)",
                        u.file.display()
                    );
                } else {
                    println!("restored {} as it was before the install", u.file.display());
                }
                if let Some(a) = u.agent_revoked {
                    println!(
                        "revoked agent key `{a}` (a running gateway stops accepting it within 5 s)"
                    );
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => refused(e),
        };
    }
    let plan = match host.hooks_preview(&req) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    if !plan.changes_anything() {
        println!("{} already has Interlock's hooks", plan.file.display());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", plan.diff());
    if !args.yes {
        println!(
            "\nnothing written; run again with --yes to write it ({} then asks the gateway before each tool use)",
            args.client.display_name()
        );
        return Ok(ExitCode::SUCCESS);
    }
    match host.hooks_install(&req, &plan).await {
        Ok(done) => {
            println!(
                "\nwrote {} with agent key `{}` (only its hash is stored); undo with `interlock hooks install {} --undo`",
                done.file.display(),
                done.agent,
                args.client.slug()
            );
            if let Some(todo) = interlock_host::hook_install::still_to_do(req.client, &req.scope) {
                println!("still to do: {todo}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => refused(e),
    }
}

fn refused(e: HookInstallError) -> anyhow::Result<ExitCode> {
    eprintln!("interlock: {e}");
    Ok(ExitCode::from(match e {
        HookInstallError::File { .. } | HookInstallError::Write(_) => super::EXIT_ERROR,
        _ => super::EXIT_REJECTED,
    }))
}
