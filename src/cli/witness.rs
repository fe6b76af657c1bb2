//! `interlock witness`: run a witness that cosigns logs' checkpoints
//! (C2SP tlog-witness), and print its key.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use interlock_host::witness::WitnessSettings;

use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum WitnessCommand {
    /// Serve a witness: C2SP tlog-witness `POST /add-checkpoint`. It cosigns
    /// a log's checkpoint only if it is consistent with every checkpoint of
    /// that log it cosigned before, keeps the latest per log in
    /// `<data dir>/witness.db` (or --store), and refuses a fork or a rollback.
    /// Prints `interlock witness listening on http://ADDR` and its key on stdout.
    Serve {
        /// The witness's name (by convention a schema-less URL, e.g. `witness.example/w1`).
        #[arg(long)]
        name: String,
        /// Where to listen (loopback unless you say otherwise).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8720")]
        listen: std::net::SocketAddr,
        /// A log to cosign for, by its checkpoint key (`interlock receipts
        /// export` and `audit verify` print it); repeat for more logs.
        #[arg(long = "log", value_name = "VKEY", required = true)]
        logs: Vec<String>,
        /// The witness's database (`postgres://…` or a SQLite path), instead of
        /// `<data dir>/witness.db`.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Print the witness's cosignature key (`name+id+base64(0x04 ‖ key)`),
    /// creating it in the OS keychain on first use: put it in a gateway's
    /// `[log] witnesses` and give it to auditors (`receipts verify --witness`).
    Key {
        #[arg(long)]
        name: String,
    },
}

pub async fn run(ctx: &Context, cmd: WitnessCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        WitnessCommand::Key { name } => {
            println!("{}", ctx.host().witness_vkey(&name)?);
            Ok(ExitCode::SUCCESS)
        }
        WitnessCommand::Serve {
            name,
            listen,
            logs,
            store,
        } => {
            super::serve::log_to_stderr();
            let database = store
                .as_deref()
                .map(interlock_store::StoreLocation::parse)
                .transpose()
                .context("--store")?;
            let running = ctx
                .host()
                .start_witness(WitnessSettings {
                    name,
                    listen,
                    logs,
                    database,
                })
                .await?;
            {
                use std::io::Write as _;
                let mut out = std::io::stdout();
                let _ = writeln!(
                    out,
                    "interlock witness listening on http://{}",
                    running.address()
                );
                let _ = writeln!(out, "witness key: {}", running.vkey());
                let _ = out.flush();
            }
            let stop = async {
                let ctrl_c = tokio::signal::ctrl_c();
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                        .expect("SIGTERM handler");
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            };
            stop.await;
            running.stop().await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
