//! `interlock keys init|show|register`: the approver key, held in the OS keychain
//! (`keys log-key …`: the log key on a team's machines, in `log_key.rs`).

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use interlock_core::KeyId;

use super::context::{APPROVER_KEY, Context};

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create this machine's approver key in the OS keychain and trust it.
    ///
    /// The private key is generated and stored in the keychain (Secret Service on
    /// Linux) and never written to disk; its public key is registered as a trusted
    /// approver in the data directory's database.
    Init {
        /// Who approves with this key; a plan's proposer can never approve it.
        #[arg(long, value_name = "IDENTITY")]
        identity: Option<String>,
    },
    /// Print the approver public key and its fingerprint.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Trust another approver's public key (a colleague's machine, a browser
    /// key). The private key stays wherever it was made; only the public key
    /// is registered, and the registration is logged.
    Register {
        /// The raw 32-byte Ed25519 public key, as 64 hex digits.
        #[arg(long, value_name = "HEX")]
        public_key: String,
        /// Who approves with it, e.g. `human:bob`.
        #[arg(long, value_name = "IDENTITY")]
        identity: String,
        #[arg(long, default_value = "registered public key")]
        label: String,
    },
    /// The log key on a team's machines: every gateway on one shared database
    /// signs its log with the same key, handed over sealed.
    #[command(subcommand)]
    LogKey(super::log_key::LogKeyCommand),
}

pub async fn run(ctx: &Context, cmd: KeysCommand) -> anyhow::Result<ExitCode> {
    if let KeysCommand::Register {
        public_key,
        identity,
        label,
    } = &cmd
    {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(public_key, &mut bytes)
            .map_err(|_| anyhow::anyhow!("--public-key must be 64 hex digits"))?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map_err(|_| anyhow::anyhow!("--public-key is not a valid Ed25519 point"))?;
        if !identity.starts_with("human:") {
            bail!("an approver identity is `human:NAME`");
        }
        let engine = ctx.engine().await?;
        let id = engine.register_approver(&key, identity, label).await?;
        engine.log().close().await;
        println!("trusted {id} for {identity}");
        return Ok(ExitCode::SUCCESS);
    }
    if let KeysCommand::LogKey(cmd) = cmd {
        return super::log_key::run(ctx, cmd).await;
    }
    let keychain = ctx.keychain()?;
    match cmd {
        KeysCommand::Init { identity } => {
            if keychain.load_key(APPROVER_KEY)?.is_some() {
                bail!(
                    "an approver key already exists in the keychain (service `{}`); `interlock keys show` prints it",
                    keychain.service()
                );
            }
            let key = keychain.create_key(APPROVER_KEY)?;
            let identity = identity.unwrap_or_else(default_identity);
            let engine = ctx.engine().await?;
            engine
                .register_approver(&key.public_key(), &identity, "keychain approver key")
                .await?;
            println!("created approver key in the OS keychain for {identity}");
            println!("key id       {}", key.key_id());
            println!("fingerprint  {}", key.fingerprint());
        }
        KeysCommand::Show { json } => {
            let Some(key) = keychain.load_key(APPROVER_KEY)? else {
                bail!("no approver key in the keychain; run `interlock keys init`");
            };
            let public = key.public_key();
            let hex: String = public
                .as_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "key_id": KeyId::of(&public).to_string(),
                        "fingerprint": key.fingerprint(),
                        "public_key": hex,
                    })
                );
            } else {
                println!("public key   {hex}");
                println!("key id       {}", key.key_id());
                println!("fingerprint  {}", key.fingerprint());
            }
        }
        KeysCommand::Register { .. } | KeysCommand::LogKey(_) => unreachable!("handled above"),
    }
    Ok(ExitCode::SUCCESS)
}

fn default_identity() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "reviewer".to_owned());
    format!("human:{user}")
}
