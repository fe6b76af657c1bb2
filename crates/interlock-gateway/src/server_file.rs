//! A server to add at run time ([`NewServer`]), why a change of servers was
//! refused ([`ServerChangeError`]), and the host's `gateway.toml` that keeps
//! them ([`ServerFile`]). A room of its own so the runtime that holds the file
//! and the admin socket that takes a new server need not import the reviewer
//! API's routes ([`crate::server_changes`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::UpstreamConfig;
use interlock_trust::pins::PinError;

/// The host's `gateway.toml` (the gateway crate does not write config files
/// or open keychains). Blocking: called on a blocking thread.
pub trait ServerFile: Send + Sync + 'static {
    /// Adds `[servers.NAME]` for `server`, keeping the rest of the file.
    fn add(&self, name: &str, server: &NewServer) -> Result<(), String>;
    /// Removes `[servers.NAME]` if it is there.
    fn remove(&self, name: &str) -> Result<(), String>;
    /// Notes, durably, that server `name` is about to be removed, before
    /// the removal commits: a gateway stopped between that commit and
    /// [`ServerFile::remove`] finishes the removal at its next start, rather
    /// than start the removed server again as a new one (issue 44).
    fn begin_removal(&self, name: &str) -> Result<(), String>;
    /// Drops the note: the removal was applied to the file, or refused.
    fn end_removal(&self, name: &str) -> Result<(), String>;
    /// The servers the file configures now, keychain references resolved.
    fn load(&self) -> Result<BTreeMap<String, UpstreamConfig>, String>;
}

/// A server to add: a program to run (stdio) or a Streamable HTTP URL.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewServer {
    pub name: String,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// A `command` server's sandbox (issue 38): absent, the profile derived
    /// from its launch.
    #[serde(default)]
    pub sandbox: interlock_sandbox::Setting,
}

impl NewServer {
    /// Its config entry (checked as `gateway.toml`'s would be).
    pub fn config(&self) -> Result<UpstreamConfig, ServerChangeError> {
        let config = UpstreamConfig {
            command: self.command.clone(),
            args: self.args.clone(),
            url: self.url.clone(),
            sandbox: self.sandbox.clone(),
            ..UpstreamConfig::default()
        };
        config
            .transport(&self.name)
            .map_err(|e| ServerChangeError::Invalid(e.to_string()))?;
        Ok(config)
    }
}

/// Why a server could not be added or removed.
#[derive(Debug, thiserror::Error)]
pub enum ServerChangeError {
    #[error("{0}")]
    Invalid(String),
    #[error("a server named {0:?} is configured already")]
    Exists(String),
    #[error(
        "server {0:?} has a stored state from before (it was configured once); remove it first with a signed removal, so it starts pending"
    )]
    StaleRow(String),
    #[error("no server named {0:?}")]
    NoSuchServer(String),
    #[error("the signed statement is about {0:?}, not a server's removal")]
    NotARemoval(String),
    #[error("a removal is signed as an approval (decision \"approve\")")]
    NotApproved,
    #[error("server {name:?} is no longer the one signed for (signed {signed}, now {current})")]
    Changed {
        name: String,
        signed: String,
        current: String,
    },
    #[error(
        "stdio servers (a program run on the gateway's machine) are added from this machine only"
    )]
    NotFromThisMachine,
    #[error(
        "running a program unconfined (sandbox = \"off\") is the machine owner's choice: write it in gateway.toml"
    )]
    UnconfinedIsTheOwners,
    #[error(
        "a request to run server {0:?} waits already for the machine's owner (`interlock servers requests`)"
    )]
    RequestExists(String),
    #[error(
        "{} requests to run a program wait already; the machine's owner confirms or declines them first",
        crate::server_requests::MAX_REQUESTS
    )]
    TooManyRequests,
    #[error("no request to run a server named {0:?} waits (`interlock servers requests`)")]
    NoSuchRequest(String),
    #[error("the gateway config file: {0}")]
    File(String),
    #[error(transparent)]
    Pin(#[from] PinError),
    #[error(transparent)]
    Engine(#[from] interlock_engine::EngineError),
    #[error(transparent)]
    Store(#[from] interlock_store::StoreError),
}
