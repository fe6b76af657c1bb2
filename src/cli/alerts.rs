//! `interlock alerts status|test|redeliver|run` (issue 21): printing only; the
//! state is the store's cursors (`interlock_gateway::alerts::status_of`), the
//! test event is sent by `interlock_gateway::alerts::send_test` and dead
//! letters by `interlock_gateway::alerts::redeliver::redeliver`, with the
//! sink's config; `run` hosts `interlock_gateway::alerts::run` in this
//! process.

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
    /// Deliver every sink from the log in this process, beside `interlock
    /// serve` (which leaves delivery to it when `[alerts] process =
    /// "separate"`), until interrupted.
    Run {
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Send SINK's dead letters again, oldest first (one try each); each one
    /// accepted is settled. Recorded in the log; exit 1 if the receiver
    /// refused one (it and the later ones stay).
    Redeliver {
        sink: String,
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long)]
        json: bool,
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
        AlertsCommand::Run { config } => {
            let mut config = ctx.host().gateway_config_with_secrets(config.as_deref())?;
            config.alerts.resolve_env()?;
            config.alerts.check()?;
            anyhow::ensure!(
                !config.alerts.sinks.is_empty(),
                "no alert sinks are configured ([[alerts.sinks]] in gateway.toml)"
            );
            let store = ctx.store().await?;
            let origin = store
                .get_meta(interlock_log::META_ORIGIN)
                .await?
                .context("this log records no origin (start `interlock serve` once first)")?;
            let (stop, shutdown) = tokio::sync::watch::channel(false);
            let tasks = interlock_gateway::alerts::run(
                interlock_gateway::alerts::feed::Host {
                    store,
                    origin,
                    poll: std::time::Duration::from_millis(config.alerts.poll_ms),
                    shutdown,
                    sealed: None,
                },
                &config.alerts.sinks,
            );
            eprintln!(
                "interlock: delivering {} alert sink(s) from the log; Ctrl-C stops",
                tasks.len()
            );
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            let _ = stop.send(true);
            for t in tasks {
                let _ = t.await;
            }
            Ok(ExitCode::SUCCESS)
        }
        AlertsCommand::Redeliver { sink, config, json } => {
            let mut config = ctx.host().gateway_config_with_secrets(config.as_deref())?;
            config.alerts.resolve_env()?;
            let sink = config
                .alerts
                .sinks
                .iter()
                .find(|s| s.name == sink)
                .with_context(|| format!("no alert sink is named `{sink}`"))?;
            let engine = ctx.engine().await?;
            let by = serde_json::json!({ "cli": std::env::var("USER").unwrap_or_default() });
            let outcome =
                interlock_gateway::alerts::redeliver::redeliver(sink, &engine, by).await?;
            engine.log().close().await;
            if json {
                println!("{}", serde_json::json!(outcome));
            } else if outcome.redelivered.is_empty() && outcome.refused.is_none() {
                println!("{}: no dead letters to redeliver", outcome.sink);
            } else {
                for r in &outcome.redelivered {
                    println!("redelivered leaves {}..={}", r.first_index, r.last_index);
                }
                println!(
                    "{}: {} events accepted, {} dead letters left",
                    outcome.sink, outcome.events, outcome.remaining
                );
                if let (Some(r), Some(e)) = (&outcome.refused, &outcome.error) {
                    println!("refused: leaves {}..={}: {e}", r.first_index, r.last_index);
                }
            }
            Ok(if outcome.refused.is_some() {
                ExitCode::from(EXIT_REJECTED)
            } else {
                ExitCode::SUCCESS
            })
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
