//! What the engine-backed commands share: a [`Host`] (data directory, keychain,
//! policy, engine) and small parsing helpers.

use std::future::Future;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use interlock_core::Policy;
use interlock_engine::Engine;
use interlock_host::Host;
use interlock_keychain::Keychain;

pub use interlock_host::{APPROVER_KEY, load_policy as load_policy_file};

pub struct Context {
    host: Host,
}

impl Context {
    pub fn new(data_dir: Option<PathBuf>, database: Option<&str>) -> anyhow::Result<Context> {
        let from_file = match database {
            Some(_) => None,
            None => database_url_file()?,
        };
        let database = database
            .or(from_file.as_deref())
            .map(interlock_store::StoreLocation::parse)
            .transpose()
            .context("--database")?;
        Ok(Context {
            host: Host::new(data_dir).with_database(database),
        })
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    pub fn keychain(&self) -> anyhow::Result<Keychain> {
        Ok(self.host.keychain()?)
    }

    /// The policy in force: `<data dir>/policy.yaml` if present, else the built-in one.
    pub fn policy(&self) -> anyhow::Result<Policy> {
        Ok(self.host.policy()?)
    }

    /// Opens the database in the data directory, for commands that only read.
    pub async fn store(&self) -> anyhow::Result<interlock_store::Store> {
        Ok(self.host.store().await?)
    }

    /// Opens the engine (see [`Host::engine`]).
    pub async fn engine(&self) -> anyhow::Result<Engine> {
        Ok(self.host.engine().await?)
    }
}

pub fn load_policy(path: &std::path::Path) -> anyhow::Result<Policy> {
    Ok(load_policy_file(path)?)
}

/// Runs an async command on a fresh runtime.
pub fn block_on<T>(fut: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(fut)
}

/// [`block_on`] on the calling thread alone: for a command a client starts
/// for every event (`interlock hook`), where starting worker threads is
/// most of what the command costs beyond its one request.
pub fn block_on_current_thread<T>(
    fut: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(fut)
}

/// A fresh 16-byte nonce from the OS.
pub fn nonce() -> anyhow::Result<[u8; 16]> {
    Ok(interlock_host::nonce())
}

/// The hash an approval signs: exactly the one the person saw. With `--hash H`,
/// `H` (the host refuses to sign if the subject's current hash is another). Without
/// it, on a terminal, the current hash is printed and must be confirmed by typing
/// `yes`; without a terminal, nothing is signed — a script must say which bytes
/// it approves, never "whatever is current now".
pub fn hash_to_approve(what: &str, current: &str, given: Option<&str>) -> anyhow::Result<String> {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    if let Some(h) = given {
        return Ok(h.to_owned());
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "refusing to approve {what} without --hash: pass the hash you reviewed (now {current}), so that only those bytes are signed"
        );
    }
    print!(
        "Approve {what} at
  {current}
Type yes to sign exactly this hash: "
    );
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        anyhow::bail!("not approved (nothing was signed)");
    }
    Ok(current.to_owned())
}

/// Parses `90s`, `30m`, `2h`, `7d` into seconds.
pub fn parse_duration(s: &str) -> anyhow::Result<i64> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num
        .parse()
        .with_context(|| format!("`{s}` is not a duration like 30m, 2h or 7d"))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => bail!("`{s}` is not a duration like 30m, 2h or 7d"),
    };
    Ok(n * mult)
}

/// The database URL in the file `$INTERLOCK_DATABASE_URL_FILE` names (a
/// container's secret), when that file exists: so the password is in no
/// command line or environment. A named file that exists but cannot be read
/// is an error, not a silent fall-back to the SQLite file.
fn database_url_file() -> anyhow::Result<Option<String>> {
    let Some(path) = std::env::var_os("INTERLOCK_DATABASE_URL_FILE").filter(|p| !p.is_empty())
    else {
        return Ok(None);
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Ok(None);
    }
    let url = std::fs::read_to_string(&path)
        .with_context(|| format!("$INTERLOCK_DATABASE_URL_FILE {}", path.display()))?;
    Ok(Some(url.trim().to_owned()))
}
