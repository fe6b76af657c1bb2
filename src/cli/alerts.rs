//! `interlock alerts status|test` (issue 21): printing only; the state is the
//! store's cursors (`interlock_gateway::alerts::status_of`), the test event is
//! sent by `interlock_gateway::alerts::send_test` with the sink's config.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;

use super::EXIT_REJECTED;
use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum AlertsCommand {
    /// Each sink's state: lag, delivered, last error, dead letters.
    Status {
        /// The gateway config (default: <data dir>/gateway.toml).
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Send one test event through SINK now (the cursor is untouched); exit 1
    /// if the receiver does not accept it.
    Test {
        sink: String,
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

pub async fn run(ctx: &Context, cmd: AlertsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AlertsCommand::Status { config, json } => {
            let config = super::serve::load_config(ctx, config.as_ref())?;
            let store = ctx.store().await?;
            let sinks = interlock_gateway::alerts::status_of(&config.alerts.sinks, &store).await?;
            if json {
                println!("{}", serde_json::json!({ "sinks": sinks }));
                return Ok(ExitCode::SUCCESS);
            }
            if sinks.is_empty() {
                println!("no alert sinks are configured ([[alerts.sinks]] in gateway.toml)");
            }
            for s in &sinks {
                println!(
                    "{:<16} {:<10} {:<11} lag {:<6} delivered {:<8} dead letters {}",
                    s.name, s.kind, s.state, s.lag, s.delivered, s.dead_letters
                );
                if let Some(e) = &s.last_error {
                    println!("{:<16} last error: {e}", "");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AlertsCommand::Test { sink, config } => {
            let mut config = ctx.host().gateway_config_with_secrets(config.as_deref())?;
            config.alerts.resolve_env()?;
            let sink = config
                .alerts
                .sinks
                .iter()
                .find(|s| s.name == sink)
                .with_context(|| format!("no alert sink is named `{sink}`"))?;
            let store = ctx.store().await?;
            let origin = store
                .get_meta(interlock_log::META_ORIGIN)
                .await?
                .context("this log records no origin")?;
            let outcome = interlock_gateway::alerts::send_test(sink, &store, &origin).await?;
            if outcome.ok {
                println!(
                    "sent: {} accepted the test event (record of leaf {})",
                    outcome.sink, outcome.index
                );
                Ok(ExitCode::SUCCESS)
            } else {
                println!(
                    "not accepted by {}: {}",
                    outcome.sink,
                    outcome.error.unwrap_or_default()
                );
                Ok(ExitCode::from(EXIT_REJECTED))
            }
        }
    }
}
