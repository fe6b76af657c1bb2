//! `interlock keys log-key show|request|send|accept`: the log key on a team's
//! machines. Every gateway on one shared database signs its log with one key,
//! so a joining machine receives the team's key sealed to a one-time recipient
//! of its own keychain (`interlock_keychain::transfer`); the secret is never
//! written anywhere in the clear.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use interlock_core::KeyId;
use interlock_core::canon::{Map, Value};
use interlock_keychain::transfer::MAX_SEALED_LEN;

use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum LogKeyCommand {
    /// Print this machine's log key (public half) and the key the database's
    /// log records.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// On the machine that joins: prepare to receive the team's log key. Prints
    /// a one-time recipient (`age1…`, public) to give to a machine that holds
    /// the key; a later request replaces an earlier one.
    Request,
    /// On a machine that holds the log key: seal it for a joining machine's
    /// recipient. Logged (`admin.action`, `log_key.sealed`) before it is sealed.
    Send {
        /// The recipient the joining machine's `request` printed.
        #[arg(long, value_name = "RECIPIENT")]
        to: String,
        /// Write the sealed key to this new file (mode 0600) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// On the machine that joins: open the sealed key with the pending request
    /// and keep it, if it is the key the database's log records.
    Accept {
        /// The sealed key (`-` for stdin).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Replace a different log key already in this keychain (what it
        /// signed stays verifiable with its public key, printed first).
        #[arg(long)]
        replace: bool,
    },
}

pub async fn run(ctx: &Context, cmd: LogKeyCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LogKeyCommand::Show { json } => show(ctx, json).await,
        LogKeyCommand::Request => {
            let recipient = ctx.keychain()?.request_transfer(interlock_host::LOG_KEY)?;
            println!("{recipient}");
            eprintln!(
                "give this recipient to a machine that holds the log key: \
                 `interlock keys log-key send --to {recipient} --out log-key.age` there, \
                 then `interlock keys log-key accept log-key.age` here"
            );
            Ok(ExitCode::SUCCESS)
        }
        LogKeyCommand::Send { to, out } => send(ctx, &to, out).await,
        LogKeyCommand::Accept { file, replace } => accept(ctx, &file, replace).await,
    }
}

async fn show(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let ours = ctx.host().log_public_key()?;
    let recorded = ctx.host().recorded_log_vkey().await?;
    let ours_hex = ours.map(|k| hex::encode(k.as_bytes()));
    let ours_id = ours.map(|k| KeyId::of(&k).to_string());
    if json {
        println!(
            "{}",
            serde_json::json!({
                "public_key": ours_hex,
                "key_id": ours_id,
                "database_vkey": recorded,
            })
        );
    } else {
        match (&ours_hex, &ours_id) {
            (Some(hex), Some(id)) => {
                println!("public key     {hex}");
                println!("key id         {id}");
            }
            _ => println!("this machine's keychain holds no log key"),
        }
        match &recorded {
            Some(vkey) => println!("database log   {vkey}"),
            None => println!("database log   not started"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn send(ctx: &Context, to: &str, out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let keychain = ctx.keychain()?;
    if keychain.load_key(interlock_host::LOG_KEY)?.is_none() {
        bail!("this machine's keychain holds no log key to send");
    }
    // Sealed first (a bad recipient is refused before anything is logged)
    // and the output name checked free (one that exists is refused), so the
    // leaf below records a hand-over that then happens. The sealed text is
    // ciphertext: holding it in memory meanwhile exposes nothing.
    let sealed = keychain.seal_key_for(interlock_host::LOG_KEY, to)?;
    if let Some(path) = &out
        && std::fs::symlink_metadata(path).is_ok()
    {
        bail!("{} exists already; name a new file", path.display());
    }
    let mut fields = Map::new();
    fields.insert("action".into(), "log_key.sealed".into());
    fields.insert("recipient".into(), to.trim().into());
    fields.insert("by".into(), by_cli());
    let engine = ctx.engine().await?;
    engine.record("admin.action", fields).await?;
    engine.log().close().await;
    match &out {
        Some(path) => {
            write_new_private(path, sealed.as_bytes())?;
            eprintln!(
                "sealed the log key for {} into {}",
                to.trim(),
                path.display()
            );
        }
        None => print!("{sealed}"),
    }
    Ok(ExitCode::SUCCESS)
}

async fn accept(ctx: &Context, file: &std::path::Path, replace: bool) -> anyhow::Result<ExitCode> {
    let sealed = read_sealed(file)?;
    if replace && let Some(old) = ctx.host().log_public_key()? {
        eprintln!(
            "replacing log key {} (public key {}): keep it to verify what it signed",
            KeyId::of(&old),
            hex::encode(old.as_bytes())
        );
    }
    let accepted = ctx.host().accept_log_key(&sealed, replace).await?;
    println!(
        "log key {} is in this machine's keychain",
        accepted.key.key_id()
    );
    match &accepted.database_vkey {
        Some(vkey) => println!("it is the key of this database's log: {vkey}"),
        None => println!("this database has no log yet; it will be signed with this key"),
    }
    // Logged with the accepted key: also proves it can extend the shared log.
    let mut fields = Map::new();
    fields.insert("action".into(), "log_key.accepted".into());
    fields.insert("key_id".into(), accepted.key.key_id().to_string().into());
    fields.insert("by".into(), by_cli());
    let engine = ctx.engine().await?;
    engine.record("admin.action", fields).await?;
    engine.log().close().await;
    // Spent only now: an accept stopped before its leaf is run again with the
    // same file (issue 44).
    ctx.host().finish_log_key_transfer()?;
    Ok(ExitCode::SUCCESS)
}

fn read_sealed(file: &std::path::Path) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    let limit = (MAX_SEALED_LEN + 1) as u64;
    if file.as_os_str() == "-" {
        if std::io::stdin().is_terminal() {
            bail!("paste the sealed key into stdin, or name its file");
        }
        std::io::stdin().take(limit).read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(file)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .with_context(|| format!("reading {}", file.display()))?;
    }
    String::from_utf8(bytes).context("the sealed key is not text (ASCII armor)")
}

/// Writes `bytes` to `path`, which must not exist, whole or not at all: into
/// a private temporary file beside it, synced, then linked under its name
/// (which fails if the name was taken meanwhile) and the directory synced. A
/// `send` stopped midway left a truncated sealed key under the name, which
/// the receiver could only fail to open (issue 44).
fn write_new_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path.file_name().context("the output names no file")?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    written.with_context(|| format!("writing {} (it must not exist yet)", path.display()))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing {}", dir.display()))
}

/// Who acted, for the leaf: the CLI user (no admin token is involved).
fn by_cli() -> Value {
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".to_owned());
    Value::Object(Map::from([("cli_user".to_owned(), Value::String(user))]))
}
