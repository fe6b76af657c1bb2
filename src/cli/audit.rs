//! `interlock audit verify`: recompute the log from storage and check every checkpoint.

use std::process::ExitCode;

use clap::Subcommand;

use super::EXIT_REJECTED;
use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Recompute the Merkle tree from the stored entries and check every signed
    /// checkpoint: an edited, reordered, dropped or forked entry is named, and the
    /// exit code is 1.
    Verify {
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(ctx: &Context, cmd: AuditCommand) -> anyhow::Result<ExitCode> {
    let AuditCommand::Verify { json } = cmd;
    let store = ctx.store().await?;
    let report = interlock_log::audit(&store, None).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ok": report.is_ok(),
                "entries": report.entries,
                "checkpoints": report.checkpoints,
                "problems": report.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
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
