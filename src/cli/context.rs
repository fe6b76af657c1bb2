//! What the engine-backed commands share: the data directory, the keychain, the
//! policy in force, and opening the engine with the log key from the keychain.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use interlock_adapters::{AdapterConfig, Adapters};
use interlock_core::Policy;
use interlock_core::canon;
use interlock_engine::{Engine, EngineConfig};
use interlock_keychain::Keychain;

/// The keychain service under which Interlock keeps its keys
/// (`$INTERLOCK_KEYCHAIN_SERVICE` overrides it, for side-by-side installs and tests).
pub fn keychain_service() -> String {
    std::env::var("INTERLOCK_KEYCHAIN_SERVICE").unwrap_or_else(|_| "interlock".to_owned())
}

/// The keychain entry of this machine's approver key.
pub const APPROVER_KEY: &str = "approver";
/// The keychain entry of the gateway's log key (it signs checkpoints).
pub const LOG_KEY: &str = "log";

pub struct Context {
    data_dir: Option<PathBuf>,
}

impl Context {
    pub fn new(data_dir: Option<PathBuf>) -> anyhow::Result<Context> {
        Ok(Context { data_dir })
    }

    /// The data directory: `--data-dir`, `$INTERLOCK_DATA_DIR`, or the platform's.
    pub fn data_dir(&self) -> anyhow::Result<PathBuf> {
        if let Some(d) = &self.data_dir {
            return Ok(d.clone());
        }
        let dirs = directories::ProjectDirs::from("dev", "interlock", "interlock").context(
            "cannot find a home directory for the default data directory; pass --data-dir",
        )?;
        Ok(dirs.data_dir().to_path_buf())
    }

    pub fn keychain(&self) -> anyhow::Result<Keychain> {
        Ok(Keychain::open(&keychain_service())?)
    }

    /// The policy in force: `<data dir>/policy.yaml` if present, else the built-in one.
    pub fn policy(&self) -> anyhow::Result<Policy> {
        let path = self.data_dir()?.join("policy.yaml");
        if !path.exists() {
            return Ok(Policy::default());
        }
        load_policy(&path)
    }

    /// Opens the database in the data directory, for commands that only read.
    pub async fn store(&self) -> anyhow::Result<interlock_store::Store> {
        let db = self.data_dir()?.join(interlock_engine::DATABASE_FILE);
        if !db.exists() {
            bail!("no database at {}", db.display());
        }
        Ok(interlock_store::Store::open(&db).await?)
    }

    /// Opens the engine on the data directory, signing checkpoints with the log key
    /// from the keychain (created on first use). Filesystem actions are confined to
    /// `<data dir>/workspace` unless the policy's adapters say otherwise.
    pub async fn engine(&self) -> anyhow::Result<Engine> {
        let data_dir = self.data_dir()?;
        let (log_key, _) = self.keychain()?.load_or_create(LOG_KEY)?;
        // The log key signs every receipt: held in memory for this process (see
        // `load_service_key`), unlike approver keys.
        let log_key = log_key.load_service_key()?;
        let mut config = EngineConfig::new(&data_dir);
        config.policy = self.policy()?;
        let workspace = data_dir.join("workspace");
        std::fs::create_dir_all(&workspace)
            .with_context(|| format!("creating {}", workspace.display()))?;
        config.adapters = Adapters::builtin(&AdapterConfig {
            fs_roots: vec![workspace],
            ..AdapterConfig::default()
        })?;
        Ok(Engine::open(config, Arc::new(log_key)).await?)
    }
}

pub fn load_policy(path: &Path) -> anyhow::Result<Policy> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => canon::Format::Json,
        _ => canon::Format::Yaml,
    };
    let doc = canon::parse(&bytes, format).with_context(|| format!("policy {}", path.display()))?;
    Policy::from_value(&doc).map_err(|errors| {
        let lines: Vec<String> = errors
            .iter()
            .map(|e| format!("at {}: {}", e.path, e.message))
            .collect();
        anyhow::anyhow!("policy {} is invalid: {}", path.display(), lines.join("; "))
    })
}

/// Runs an async command on a fresh runtime.
pub fn block_on<T>(fut: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(fut)
}

/// A fresh 16-byte nonce from the OS.
pub fn nonce() -> anyhow::Result<[u8; 16]> {
    let mut n = [0u8; 16];
    getrandom::fill(&mut n).map_err(|e| anyhow::anyhow!("no OS randomness: {e}"))?;
    Ok(n)
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
