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
    ///
    /// Checkpoints are checked against the log key pinned outside the database:
    /// `--log-key`, else this machine's log key in the OS keychain; only when
    /// neither is available, against the copy stored next to the data it
    /// protects (which proves self-consistency, not authenticity — said so).
    Verify {
        #[arg(long)]
        json: bool,
        /// The log's public key: its C2SP verifier key (`name+id+base64`, as
        /// `receipts export` prints it) or 64 hex digits (the raw Ed25519 key).
        #[arg(long, value_name = "KEY")]
        log_key: Option<String>,
    },
}

/// Which key the checkpoints were checked with.
pub(super) fn pinned_key(
    ctx: &Context,
    given: Option<&str>,
) -> anyhow::Result<(Option<ed25519_dalek::VerifyingKey>, &'static str)> {
    if let Some(given) = given {
        let given = given.trim();
        let key = if given.contains('+') {
            interlock_merkle::NoteVerifier::from_vkey(given)
                .map_err(|e| anyhow::anyhow!("--log-key is not a C2SP verifier key: {e}"))?
                .key
        } else {
            let mut raw = [0u8; 32];
            hex::decode_to_slice(given, &mut raw).map_err(|_| {
                anyhow::anyhow!(
                    "--log-key must be the log's verifier key (name+id+base64) or 64 hex digits"
                )
            })?;
            ed25519_dalek::VerifyingKey::from_bytes(&raw)
                .map_err(|_| anyhow::anyhow!("--log-key is not an Ed25519 public key"))?
        };
        return Ok((Some(key), "--log-key"));
    }
    match ctx.host().log_public_key() {
        Ok(Some(key)) => Ok((Some(key), "the OS keychain")),
        Ok(None) | Err(_) => Ok((None, "the database (no --log-key and no keychain log key)")),
    }
}

pub async fn run(ctx: &Context, cmd: AuditCommand) -> anyhow::Result<ExitCode> {
    let AuditCommand::Verify { json, log_key } = cmd;
    let (key, source) = pinned_key(ctx, log_key.as_deref())?;
    let store = ctx.store().await?;
    let report = interlock_log::audit(&store, key).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ok": report.is_ok(),
                "log_key_from": source,
                "entries": report.entries,
                "checkpoints": report.checkpoints,
                "problems": report.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        );
    } else {
        print!("{report}");
        println!("checkpoints checked with the log key from {source}");
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}
