//! `interlock standing …`: standing approvals by class of tool call.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use interlock_core::canon;
use interlock_trust::EventBus;

use super::EXIT_REJECTED;
use super::context::{Context, parse_duration};

#[derive(Debug, Subcommand)]
pub enum StandingCommand {
    /// Let a role call a tool with arguments of a shape, without review, until
    /// a time (signed with the approver key in the OS keychain). Calls whose
    /// arguments look like an attack are still held.
    Add {
        #[arg(long)]
        role: String,
        /// The exposed tool name (`server__tool`).
        #[arg(long)]
        tool: String,
        /// JSON object: argument → literal value, or "*" for any value.
        #[arg(long)]
        shape: String,
        /// How long it stands: 30m, 8h, 7d (at most the policy's
        /// `standing_max_lifetime_secs`, 7 days by default).
        #[arg(long, default_value = "8h")]
        r#for: String,
        #[arg(long)]
        reason: String,
        /// The gateway config that names the tool's server (default
        /// `<data dir>/gateway.toml`): the grant binds to the tool's approved
        /// definition hash, so a changed tool is not covered.
        #[arg(long)]
        config: Option<std::path::PathBuf>,
    },
    /// Active and past standing approvals.
    List,
    /// Revoke one now (logged, with the reason).
    Revoke {
        id: String,
        /// Why (recorded in the log).
        #[arg(long)]
        reason: Option<String>,
    },
}

pub async fn run(ctx: &Context, cmd: StandingCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        StandingCommand::Add {
            role,
            tool,
            shape,
            r#for,
            reason,
            config,
        } => {
            let config = super::serve::load_config(ctx, config.as_ref())?;
            let shape =
                canon::parse_json(shape.as_bytes()).map_err(|e| anyhow::anyhow!("--shape: {e}"))?;
            if shape.as_object().is_none() {
                bail!("--shape must be a JSON object");
            }
            let Some(key) = ctx.host().approver_key()? else {
                bail!("no approver key in the keychain; run `interlock keys init`");
            };
            let engine = ctx.engine().await?;
            let until = engine.now() + parse_duration(&r#for)?;
            let granted = interlock_host::grant_standing(
                &engine,
                &EventBus::new(),
                &config.tool_prefixes(),
                &interlock_host::StandingTerms {
                    role: &role,
                    tool: &tool,
                    shape: &shape,
                    expires_at: until,
                },
                &interlock_host::Countersign::approve(&key, &reason, until - engine.now()),
            )
            .await;
            engine.log().close().await;
            match granted {
                Ok(s) => {
                    println!(
                        "{}  role {} may call {} until {}",
                        s.id, s.role, s.tool, s.expires_at
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("interlock: {e}");
                    Ok(ExitCode::from(EXIT_REJECTED))
                }
            }
        }
        StandingCommand::List => {
            let store = ctx.store().await?;
            for s in store.standing(None).await? {
                let doc = canon::parse_json(&s.document)
                    .map(|d| canon::canonical_string(&d))
                    .unwrap_or_default();
                println!(
                    "{}  {:<8} {}  {}",
                    s.id,
                    if s.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    },
                    s.expires_at,
                    doc
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        StandingCommand::Revoke { id, reason } => {
            let engine = ctx.engine().await?;
            let by = std::env::var("USER").unwrap_or_else(|_| "reviewer".into());
            let done = interlock_trust::standing::revoke(
                &engine,
                &interlock_trust::EventBus::new(),
                &id,
                &format!("human:{by}"),
                reason.as_deref().unwrap_or("revoked with the CLI"),
            )
            .await?;
            engine.log().close().await;
            if done {
                println!("revoked {id}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("interlock: no active standing approval {id}");
                Ok(ExitCode::from(EXIT_REJECTED))
            }
        }
    }
}
