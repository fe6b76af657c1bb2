//! What a process hosting Interlock needs — the `interlock` CLI and the desktop
//! app alike: where the data lives, the keys in the OS keychain, the policy in
//! force, opening the engine on the embedded SQLite file, and signing a
//! reviewer's decision with the keychain key.
//!
//! Why a crate of its own: the CLI and the desktop shell must open the engine
//! and sign decisions the same way (the same keychain entries, the same policy
//! file, the same confinement of filesystem actions), and the desktop shell
//! holds no business logic of its own.
#![forbid(unsafe_code)]

pub mod connect;
mod data_dir;
mod decide;
pub mod hook_install;
mod log_key;
mod owner_decisions;
mod runtime;
mod server_removals;
mod signin_file;
mod standing;
pub mod team_audience;
pub mod witness;

pub use decide::{
    Countersign, FromLock, approve_from_lock, decide_envelope_widening, decide_plan, decide_remote,
    decide_server_surface, decide_tool_definition,
};
pub use interlock_gateway::client_changes::{ClientChange, ClientChangeError, OwnerConfirmed};
pub use interlock_gateway::connector::{ConnectorError, OnUnreachable};
pub use interlock_trust::scopes::Scope;
pub use log_key::AcceptedLogKey;
pub use runtime::{GatewayOptions, RunningGateway};
pub use signin_file::{SIGNIN_LINK_FILE, write_signin_link};
pub use standing::{StandingTerms, approve_held_call, grant_standing, held_call_grantable};

// What a face needs of the lower crates, so it depends on this one alone
// (and the gateway's client and events, for team mode).
pub use interlock_core::Decision;
pub use interlock_keychain::{Keychain, KeychainKey};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use interlock_adapters::{AdapterConfig, Adapters};
use interlock_core::canon::{self, Digest};
use interlock_core::decision::{Terms, sign_decision};
use interlock_core::{DsseEnvelope, Policy};
use interlock_engine::{Engine, EngineConfig, EngineError};
use interlock_gateway::GatewayConfig;
use interlock_store::StoreLocation;
use interlock_trust::pins::PinError;

/// The keychain entry of this machine's approver key.
pub const APPROVER_KEY: &str = "approver";
/// The keychain entry of the log key (it signs checkpoints and receipts).
pub const LOG_KEY: &str = "log";
/// The gateway config read when none is named: `<data dir>/gateway.toml`.
pub const GATEWAY_CONFIG_FILE: &str = "gateway.toml";
/// The policy in force: `<data dir>/policy.yaml`.
pub const POLICY_FILE: &str = "policy.yaml";

/// Why hosting failed, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot find a home directory for the default data directory; pass --data-dir")]
    NoHome,
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("no database at {0}")]
    NoDatabase(PathBuf),
    #[error("no approver key in the keychain; run `interlock keys init`")]
    NoApproverKey,
    #[error("{0}")]
    Changed(String),
    #[error(transparent)]
    Keychain(#[from] interlock_keychain::KeychainError),
    /// This machine has no log key, and the database's log is signed by one:
    /// a team member's gateway joining a shared database.
    #[error(
        "this database's log is signed by {vkey}, and this machine's keychain holds no log key. Receive the team's: `interlock keys log-key request` here, `interlock keys log-key send --to RECIPIENT` on a machine that has it, then `interlock keys log-key accept FILE` here"
    )]
    NoLogKeyForSharedLog { vkey: String },
    /// The database's log is signed by another key than this machine's.
    #[error(
        "this database's log is signed by {stored}, not by this machine's log key {ours}. Receive the team's key (`interlock keys log-key request`, `send`, then `accept --replace`)"
    )]
    LogKeyMismatch { stored: String, ours: String },
    /// A sealed log key that is not the one the database's log records.
    #[error("the sealed key ({offered}) is not this database's log key ({vkey}); nothing was kept")]
    NotTheTeamLogKey { offered: String, vkey: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Store(#[from] interlock_store::StoreError),
    #[error(transparent)]
    Pin(#[from] PinError),
    #[error(transparent)]
    Widening(#[from] interlock_trust::envelopes::WideningError),
    #[error(transparent)]
    Config(#[from] interlock_gateway::config::ConfigError),
    #[error(transparent)]
    Decision(#[from] interlock_core::DecisionError),
    #[error(transparent)]
    Adapters(#[from] interlock_adapters::ConfigError),
    #[error(
        "cannot listen on {address}: {message} (set `listen` in gateway.toml, or --listen / INTERLOCK_LISTEN)"
    )]
    Listen {
        address: std::net::SocketAddr,
        message: String,
    },
    #[error("the gateway's HTTP server stopped: {0}")]
    Serve(String),
    /// A held call's approval scope that cannot be offered.
    #[error(transparent)]
    Scope(#[from] interlock_trust::scopes::ScopeError),
    /// The scope asked for is not on offer for this held call.
    #[error("{0}")]
    ScopeNotOffered(String),
    /// A subject that is only ever approved (an envelope widening, a
    /// standing grant) was asked to be rejected; nothing was signed.
    #[error("`{0}` is only approved (leave it undecided to refuse it); nothing was signed")]
    ApprovalOnly(String),
    /// A team gateway reported another audience than the one this app
    /// signs for there (issue 39 item 7): a statement made for it would be
    /// valid at another gateway. Nothing was signed.
    #[error(
        "the team gateway reports audience {reported:?}, not {pinned:?}, the one this app signs for at {url}: nothing was signed. If the gateway's log was really replaced, set [team] audience in desktop.toml to the new one"
    )]
    WrongAudience {
        url: String,
        pinned: String,
        reported: String,
    },
    /// A team gateway's reviewer API failed or refused.
    #[error(transparent)]
    Remote(#[from] interlock_gateway::client::ClientError),
    /// A lockfile that cannot be trusted (issue 22).
    #[error(transparent)]
    Lock(#[from] interlock_trust::review::lockfile::LockError),
    /// No gateway serves this data directory (its admin socket is silent).
    #[error("no gateway is running on {0}; start one (`interlock serve`)")]
    NoGateway(PathBuf),
    /// The running gateway's admin socket failed or refused.
    #[error(transparent)]
    Admin(#[from] interlock_gateway::admin::AdminError),
    /// A server's removal was refused (issue 20 item 5).
    #[error(transparent)]
    ServerChange(#[from] interlock_gateway::server_file::ServerChangeError),
    /// The running gateway answered something else than asked.
    #[error("the gateway answered {0}")]
    Unexpected(String),
}

/// The keychain service under which Interlock keeps its keys
/// (`$INTERLOCK_KEYCHAIN_SERVICE` overrides it, for side-by-side installs and tests).
pub fn keychain_service() -> String {
    std::env::var("INTERLOCK_KEYCHAIN_SERVICE").unwrap_or_else(|_| "interlock".to_owned())
}

/// One data directory and what lives in it.
#[derive(Clone, Debug)]
pub struct Host {
    data_dir: Option<PathBuf>,
    /// The database named on the command line or in the environment
    /// (`--database`, `$INTERLOCK_DATABASE_URL`), over any config's.
    database: Option<StoreLocation>,
}

impl Host {
    /// `data_dir`, or (when `None`) the platform's data directory.
    pub fn new(data_dir: Option<PathBuf>) -> Host {
        Host {
            data_dir,
            database: None,
        }
    }

    /// This host with its database at `database` (when `Some`), whatever the
    /// configs say.
    pub fn with_database(mut self, database: Option<StoreLocation>) -> Host {
        if database.is_some() {
            self.database = database;
        }
        self
    }

    /// Where the database is: the one this host was given, else the data
    /// directory's `gateway.toml` `[store] url`, else the SQLite file in the
    /// data directory (the embedded default).
    pub fn store_location(&self) -> Result<StoreLocation, HostError> {
        if let Some(db) = &self.database {
            return Ok(db.clone());
        }
        let data_dir = self.data_dir()?;
        let config = data_dir.join(GATEWAY_CONFIG_FILE);
        if config.exists()
            && let Some(db) = GatewayConfig::load(&config)?.store.location()?
        {
            return Ok(db);
        }
        Ok(StoreLocation::File(
            data_dir.join(interlock_engine::DATABASE_FILE),
        ))
    }

    /// The data directory: the one given, or the platform's
    /// (e.g. `~/.local/share/interlock`).
    pub fn data_dir(&self) -> Result<PathBuf, HostError> {
        if let Some(d) = &self.data_dir {
            return Ok(d.clone());
        }
        let dirs = directories::ProjectDirs::from("dev", "interlock", "interlock")
            .ok_or(HostError::NoHome)?;
        Ok(dirs.data_dir().to_path_buf())
    }

    /// What confines the stdio servers that a gateway or a review of this
    /// data directory starts (issue 38): the data directory and
    /// `config_file` are protected, and each server's private state goes in
    /// `<data dir>/servers/<name>`.
    pub fn confiner(
        &self,
        config_file: Option<&std::path::Path>,
    ) -> Result<interlock_sandbox::Confiner, HostError> {
        let extra: Vec<PathBuf> = config_file
            .map(std::path::Path::to_path_buf)
            .into_iter()
            .collect();
        Ok(interlock_sandbox::Confiner::new(&self.data_dir()?, &extra))
    }

    pub fn keychain(&self) -> Result<Keychain, HostError> {
        Ok(Keychain::open(&keychain_service())?)
    }

    /// The approver key in the keychain, if there is one.
    /// The public half of this machine's log key, from the keychain (never
    /// created here): the key an audit trusts, pinned outside the database.
    pub fn log_public_key(&self) -> Result<Option<ed25519_dalek::VerifyingKey>, HostError> {
        Ok(self.keychain()?.load_key(LOG_KEY)?.map(|k| k.public_key()))
    }

    pub fn approver_key(&self) -> Result<Option<KeychainKey>, HostError> {
        Ok(self.keychain()?.load_key(APPROVER_KEY)?)
    }

    /// The policy in force: `<data dir>/policy.yaml` if present, else the built-in one.
    pub fn policy(&self) -> Result<Policy, HostError> {
        let path = self.data_dir()?.join(POLICY_FILE);
        if !path.exists() {
            return Ok(Policy::default());
        }
        load_policy(&path)
    }

    /// The gateway config: `path`, else `<data dir>/gateway.toml` if it exists,
    /// else the defaults (loopback, no upstreams).
    pub fn gateway_config(&self, path: Option<&Path>) -> Result<GatewayConfig, HostError> {
        let default = self.data_dir()?.join(GATEWAY_CONFIG_FILE);
        Ok(match path {
            Some(p) => GatewayConfig::load(p)?,
            None if default.exists() => GatewayConfig::load(&default)?,
            None => GatewayConfig::default(),
        })
    }

    /// [`Host::gateway_config`] with every keychain reference
    /// (`env_keychain`, `headers_keychain`) resolved from this host's
    /// keychain: what a process that starts upstreams runs on. The keychain
    /// is opened only when the config has such references.
    pub fn gateway_config_with_secrets(
        &self,
        path: Option<&Path>,
    ) -> Result<GatewayConfig, HostError> {
        let mut config = self.gateway_config(path)?;
        if config.has_keychain_references() {
            let keychain = self.keychain()?;
            config.resolve_secrets(|token| {
                keychain
                    .load_token(token)
                    .map(|t| t.map(|t| t.as_str().to_owned()))
                    .map_err(|e| e.to_string())
            })?;
        }
        Ok(config)
    }

    /// Opens the database ([`Host::store_location`]), for processes that
    /// only read: a SQLite file must exist already (no empty database is
    /// made for a reader).
    pub async fn store(&self) -> Result<interlock_store::Store, HostError> {
        let location = self.store_location()?;
        if let Some(db) = location.file()
            && !db.exists()
        {
            return Err(HostError::NoDatabase(db.to_owned()));
        }
        Ok(interlock_store::Store::connect(&location).await?)
    }

    /// Opens the engine on the data directory, signing the log with the log key
    /// from the keychain (created on first use). Filesystem actions are
    /// confined to `<data dir>/workspace`.
    ///
    /// For short-lived processes (CLI commands): every commit signs its
    /// checkpoint, so a process that exits without closing the log leaves no
    /// unsigned entries behind for the next writer to wait on and adopt.
    pub async fn engine(&self) -> Result<Engine, HostError> {
        let log = interlock_gateway::LogConfig {
            checkpoint_interval_ms: 0,
            durability: interlock_gateway::DurabilityMode::Strict,
            ..interlock_gateway::LogConfig::default()
        };
        self.engine_with(|a| a, &log).await
    }

    /// [`Host::engine`] with extra adapters (the gateway's MCP adapter:
    /// [`Host::start_gateway`]) and the gateway's `[log]` settings.
    pub async fn engine_with(
        &self,
        extra: impl FnOnce(Adapters) -> Adapters,
        log: &interlock_gateway::LogConfig,
    ) -> Result<Engine, HostError> {
        let data_dir = self.data_dir()?;
        let log_key = self.writer_log_key(&self.keychain()?).await?;
        // The log key signs every receipt: held in memory for this process
        // (see `load_service_key`), unlike approver keys, which sign per use.
        let log_key = log_key.load_service_key()?;
        let mut config = EngineConfig::new(&data_dir);
        config.database = Some(self.store_location()?);
        config.policy = self.policy()?;
        config.log = log.options();
        config.outcome_durability = log.outcome_durability();
        data_dir::prepare(&data_dir)?;
        let workspace = data_dir.join("workspace");
        std::fs::create_dir_all(&workspace).map_err(|e| HostError::File {
            path: workspace.clone(),
            message: e.to_string(),
        })?;
        config.adapters = extra(Adapters::builtin(&AdapterConfig {
            fs_roots: vec![workspace],
            ..AdapterConfig::default()
        })?);
        Engine::open(config, Arc::new(log_key))
            .await
            .map_err(log_key::explain_key_mismatch)
    }
}

/// Reads a policy file (YAML, or JSON by extension).
pub fn load_policy(path: &Path) -> Result<Policy, HostError> {
    let file_err = |message: String| HostError::File {
        path: path.to_owned(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| file_err(e.to_string()))?;
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => canon::Format::Json,
        _ => canon::Format::Yaml,
    };
    let doc = canon::parse(&bytes, format).map_err(|e| file_err(e.to_string()))?;
    Policy::from_value(&doc).map_err(|errors| {
        let lines: Vec<String> = errors
            .iter()
            .map(|e| format!("at {}: {}", e.path, e.message))
            .collect();
        file_err(format!("invalid policy: {}", lines.join("; ")))
    })
}

/// A fresh 16-byte nonce from the OS.
pub fn nonce() -> [u8; 16] {
    let mut n = [0u8; 16];
    getrandom::fill(&mut n).expect("the OS random source works");
    n
}

/// The terms a running gateway gives for removing one of its servers
/// (`interlock_gateway::admin::Answer::RemovalTerms`).
#[derive(Clone, Debug)]
pub struct RemovalTerms {
    pub subject: String,
    pub hash: Digest,
    pub audience: String,
    pub policy_digest: Digest,
    pub now: i64,
}

impl Host {
    /// The MCP endpoint of the gateway running on this data directory, as it
    /// is bound now (its `--listen` or `INTERLOCK_LISTEN` may not be the
    /// config's `listen`); `None` when none runs.
    pub async fn running_gateway_url(&self) -> Option<String> {
        use interlock_gateway::admin::{Answer, Request, request};
        match request(&self.data_dir().ok()?, &Request::Address).await {
            Ok(Some(Answer::Address { mcp_url })) => Some(mcp_url),
            _ => None,
        }
    }

    /// Removes `name` from the gateway running on this data directory, as a
    /// decision signed with the keychain's approver key on the terms that
    /// gateway gives (its removal hash, audience and policy digest); the log
    /// index of the `server.removed` leaf. Used by `interlock servers remove`
    /// and by `interlock connect --undo` for the servers its connect had
    /// started: the person at the terminal asked for exactly this.
    pub async fn remove_running_server(
        &self,
        name: &str,
        reason: &str,
        valid_for_secs: i64,
    ) -> Result<u64, HostError> {
        use interlock_gateway::admin::{Answer, Request, request};
        let key = self.approver_key()?.ok_or(HostError::NoApproverKey)?;
        let data_dir = self.data_dir()?;
        let ask = |req: Request| {
            let data_dir = data_dir.clone();
            async move {
                request(&data_dir, &req)
                    .await?
                    .ok_or_else(|| HostError::NoGateway(data_dir.clone()))
            }
        };
        let terms = match ask(Request::RemovalTerms {
            name: name.to_owned(),
        })
        .await?
        {
            Answer::RemovalTerms {
                subject,
                hash,
                audience,
                policy_digest,
                now,
            } => RemovalTerms {
                subject,
                hash: hash
                    .parse()
                    .map_err(|_| HostError::Unexpected("a malformed removal hash".into()))?,
                audience,
                policy_digest: policy_digest
                    .parse()
                    .map_err(|_| HostError::Unexpected("a malformed policy digest".into()))?,
                now,
            },
            Answer::Error(e) => {
                return Err(interlock_gateway::admin::AdminError::Refused(e).into());
            }
            other => return Err(HostError::Unexpected(format!("{other:?}"))),
        };
        let envelope = sign_removal(&key, &terms, reason, valid_for_secs)?;
        match ask(Request::RemoveServer {
            envelope: envelope.to_json(),
        })
        .await?
        {
            Answer::Logged(index) => Ok(index),
            Answer::Error(e) => Err(interlock_gateway::admin::AdminError::Refused(e).into()),
            other => Err(HostError::Unexpected(format!("{other:?}"))),
        }
    }
}

/// Signs a server's removal (issue 20 item 5) with the keychain key, on
/// the terms the running gateway gave: an approval of
/// `server-removal:<name>` at its removal hash, valid `valid_for_secs`.
pub fn sign_removal(
    key: &KeychainKey,
    terms: &RemovalTerms,
    reason: &str,
    valid_for_secs: i64,
) -> Result<DsseEnvelope, HostError> {
    if !terms
        .subject
        .starts_with(interlock_gateway::server_changes::REMOVAL_SUBJECT_PREFIX)
    {
        return Err(HostError::Changed(format!(
            "the gateway asked to sign {:?}, which is not a server removal",
            terms.subject
        )));
    }
    let (_, envelope) = sign_decision(
        key,
        &Terms {
            audience: &terms.audience,
            subject: &terms.subject,
            subject_hash: terms.hash,
            decision: Decision::Approve,
            reason,
            issued_at: terms.now,
            not_before: terms.now,
            expires_at: terms.now + valid_for_secs,
            nonce: nonce(),
            policy_digest: terms.policy_digest,
        },
    )?;
    Ok(envelope)
}
