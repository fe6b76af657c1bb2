//! `interlock connect CLIENT` (issue 19): put an AI client's MCP servers behind
//! the gateway in one step, and give the client its file back on undo.
//!
//! For one client file it:
//! - reads the client's server entries with the format's own parser
//!   ([`edit`]) and decides, per entry, whether the gateway can run it
//!   ([`entries`]);
//! - adds each such server to `gateway.toml` as an upstream — pending, like
//!   every new upstream: nothing of it is served before a reviewer approves its
//!   surface — with the entry's `env` values and headers moved into the OS
//!   keychain and referenced from the config ([`gateway_file`]);
//! - mints an agent key for the client (only its hash is stored) and replaces
//!   the imported entries with one entry that reaches the gateway: Streamable
//!   HTTP with the key in an `Authorization` header where the client's file
//!   can say so, the `interlock mcp` bridge with the key in its environment
//!   where it cannot (Claude Desktop);
//! - keeps the file's previous bytes as a backup layer ([`layers`]), which
//!   [`Host::connect_undo`] restores byte for byte.
//!
//! A [`Plan`] is computed first and changes nothing (the CLI's default
//! `--dry-run`); a second connect finds the gateway's entry and imports only
//! what was added since, so an entry is never wrapped twice.
//!
//! Why in the host: it needs the data directory, the keychain and the engine
//! (to mint the key), which is what the host owns; the faces (CLI, desktop)
//! only choose a client and show the plan.

mod api;
mod clients;
pub(crate) mod edit;
mod entries;
mod gateway_file;
pub(crate) use gateway_file::{HostServerFile, remove_servers};
mod layers;
mod sealed;

pub(crate) use api::{HostConnector, interlock_bin};
pub use clients::{Client, Paths, detect};

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use interlock_gateway::GatewayConfig;
use interlock_gateway::config::{UpstreamConfig, valid_token_name};
use interlock_store::ApiKeyKind;
use serde_json::json;

use crate::{GATEWAY_CONFIG_FILE, Host, HostError};
use edit::Doc;
use entries::{Parsed, Upstream};

/// The name of the gateway's entry in a client's file.
pub const ENTRY_NAME: &str = "interlock";
/// The header that carries the agent key.
pub const KEY_HEADER: &str = "Authorization";

/// Why connecting (or undoing) failed; nothing was changed unless it says so.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("{0}")]
    Usage(String),
    #[error("no {client} config at {path} (is {client} set up for this user?)")]
    NoFile { client: Client, path: PathBuf },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{path} is not valid {format}, so it was left alone: {message}")]
    Malformed {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error(
        "{path} changed after `interlock connect` wrote it, so restoring the backup would lose \
         those changes; --merge undoes only connect's edit in the file as it is, --force \
         restores the backup anyway"
    )]
    Changed { path: PathBuf },
    #[error("nothing to undo: `interlock connect` has not changed {path}")]
    NothingToUndo { path: PathBuf },
    #[error(
        "{path} kept changing while `interlock connect` wrote it (the client rewrites it while \
         it runs?), or a server it moves changed: nothing was written to it; run connect again"
    )]
    ChangedWhileWriting { path: PathBuf },
    #[error("the gateway config would be refused: {0}")]
    Config(String),
    /// The running gateway's admin socket failed or refused.
    #[error("{0}")]
    Gateway(String),
    #[error(transparent)]
    Host(#[from] HostError),
}

impl From<interlock_gateway::admin::AdminError> for ConnectError {
    fn from(e: interlock_gateway::admin::AdminError) -> Self {
        ConnectError::Gateway(e.to_string())
    }
}

/// Where upstreams' tokens go: this process's keychain, or — beside a live
/// gateway, whose keychain this process may not reach (a headless gateway's
/// keyring lives in its own session) — the gateway's, through its admin
/// socket.
enum Secrets {
    Local(crate::Keychain),
    Gateway(PathBuf),
}

impl Secrets {
    /// The gateway's when one serves `data_dir`, else the local keychain
    /// (opened only then).
    async fn open(host: &Host, data_dir: &Path) -> Result<Secrets, ConnectError> {
        use interlock_gateway::admin::{Request, request};
        Ok(match request(data_dir, &Request::Ping).await? {
            Some(_) => Secrets::Gateway(data_dir.to_owned()),
            None => Secrets::Local(host.keychain()?),
        })
    }

    async fn store(&self, name: &str, value: &str) -> Result<(), ConnectError> {
        use interlock_gateway::admin::{Answer, Request, request};
        match self {
            Secrets::Local(kc) => Ok(kc.store_token(name, value)?),
            Secrets::Gateway(dir) => {
                let req = Request::StoreToken {
                    name: name.to_owned(),
                    value: value.to_owned(),
                };
                match request(dir, &req).await? {
                    Some(Answer::Stored) => Ok(()),
                    other => Err(ConnectError::Gateway(format!(
                        "the gateway did not keep token {name}: {other:?}"
                    ))),
                }
            }
        }
    }

    /// A backup sealing key kept by [`Secrets::store`] (never an upstream's
    /// token: the gateway's socket reads back only those keys).
    async fn load_backup_key(&self, name: &str) -> Result<Option<String>, ConnectError> {
        use interlock_gateway::admin::{Answer, Request, request};
        match self {
            Secrets::Local(kc) => Ok(kc.load_token(name)?.map(|k| k.as_str().to_owned())),
            Secrets::Gateway(dir) => {
                let req = Request::LoadBackupKey {
                    name: name.to_owned(),
                };
                match request(dir, &req).await? {
                    Some(Answer::BackupKey(k)) => Ok(k),
                    other => Err(ConnectError::Gateway(format!(
                        "the gateway did not give the backup key {name}: {other:?}"
                    ))),
                }
            }
        }
    }

    async fn delete(&self, name: &str) -> Result<bool, ConnectError> {
        use interlock_gateway::admin::{Answer, Request, request};
        match self {
            Secrets::Local(kc) => Ok(kc.delete_token(name)?),
            Secrets::Gateway(dir) => {
                let req = Request::DeleteToken {
                    name: name.to_owned(),
                };
                match request(dir, &req).await? {
                    Some(Answer::Deleted(d)) => Ok(d),
                    other => Err(ConnectError::Gateway(format!(
                        "the gateway did not delete token {name}: {other:?}"
                    ))),
                }
            }
        }
    }
}

impl From<interlock_keychain::KeychainError> for ConnectError {
    fn from(e: interlock_keychain::KeychainError) -> Self {
        ConnectError::Host(e.into())
    }
}

/// What to connect.
#[derive(Clone, Debug)]
pub struct ConnectRequest {
    pub client: Client,
    pub paths: Paths,
    /// A project directory: its project file (`.mcp.json`, `.vscode/mcp.json`,
    /// …) instead of the user's.
    pub project: Option<PathBuf>,
    /// An explicit client file, instead of the documented location.
    pub file: Option<PathBuf>,
    /// The gateway config to add upstreams to (default
    /// `<data dir>/gateway.toml`).
    pub gateway_config: Option<PathBuf>,
    /// The gateway's MCP endpoint as the client will reach it (default: from
    /// the config's `listen`).
    pub gateway_url: Option<String>,
    /// The `interlock` binary the bridge entry runs.
    pub interlock_bin: PathBuf,
}

/// What a connect will do (or did), per server.
#[derive(Clone, Debug)]
pub struct Plan {
    pub client: Client,
    /// The client's file, as named.
    pub file: PathBuf,
    /// The file written: `file`'s canonical path (a symlink's target).
    pub target: PathBuf,
    /// Whether `file` itself is a symlink.
    pub symlink: bool,
    pub gateway_config: PathBuf,
    pub gateway_url: String,
    pub servers: Vec<PlannedServer>,
    /// The entry added to reach the gateway; `None` when the file has one.
    pub entry: Option<GatewayEntry>,
    /// The agent key's name (`connect-<client>`; once connected, the name
    /// given, `connect-<client>-2` when an earlier key had the first).
    pub agent: String,
}

impl Plan {
    /// Whether applying it changes anything.
    pub fn changes_anything(&self) -> bool {
        self.entry.is_some()
            || self
                .servers
                .iter()
                .any(|s| matches!(s.action, Action::Import { .. }))
    }
}

/// The sandbox a `command` entry gets by default, for a person: what it may
/// read and write (or why it will not start).
fn sandbox_summary(server: &entries::Upstream) -> Option<String> {
    let command = server.command.as_deref()?;
    let launch = interlock_sandbox::Launch {
        command,
        args: &server.args,
        env: &server.env,
        cwd: server.cwd.as_deref().map(std::path::Path::new),
    };
    Some(
        match interlock_sandbox::defaults::derive(&launch, std::env::var_os("PATH").as_deref()) {
            Ok(d) => d.describe(),
            Err(e) => format!("will not start: {e}"),
        },
    )
}

/// One server entry of the client's file.
#[derive(Clone, Debug)]
pub struct PlannedServer {
    /// Its name in the client's file.
    pub name: String,
    pub action: Action,
}

/// What happens to an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Moved behind the gateway as upstream `upstream` (pending review).
    Import {
        upstream: String,
        /// `stdio: …` / `http: …`.
        transport: String,
        /// `env` variables and headers whose values move into the keychain.
        secrets: Vec<String>,
        /// The client's own settings for it that do not carry over.
        dropped: Vec<String>,
        /// An identical upstream of that name was already configured: it is
        /// reused, not added again.
        shared: bool,
        /// For a `command` server, the sandbox it gets by default (issue 38):
        /// what it may read and write, derived from its entry.
        sandbox: Option<String>,
    },
    /// Already reaches this gateway.
    AlreadyBehindGateway,
    /// Left in the client as it is.
    Keep { reason: String },
}

/// The entry that reaches the gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayEntry {
    pub name: String,
    pub reach: Reach,
}

/// How the client reaches the gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Streamable HTTP at `url`, the agent key in the `Authorization` header.
    Http { url: String },
    /// It spawns `command mcp` (the stdio bridge), the key and the gateway's
    /// URL in the bridge's environment.
    Bridge { command: PathBuf, url: String },
}

/// A done connect.
#[derive(Clone, Debug)]
pub struct Connected {
    pub plan: Plan,
    /// False when there was nothing to do (already connected).
    pub changed: bool,
    /// A gateway serves this data directory now.
    pub gateway_running: bool,
    /// The upstreams that gateway started, pending review (no restart).
    pub started: Vec<String>,
}

/// What undo does when the file changed after connect wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoMode {
    /// Refuse: restoring the backup would lose those changes.
    Exact,
    /// Restore the backup's bytes anyway.
    Force,
    /// Keep the file as it is now and undo only connect's edit in it: the
    /// gateway's entry removed, the imported entries put back with their
    /// original content (their member order and comments may differ).
    Merge,
}

/// A done undo.
#[derive(Clone, Debug)]
pub struct Undone {
    /// The file changed since connect and only connect's edit was undone
    /// ([`UndoMode::Merge`]), rather than its bytes restored.
    pub merged: bool,
    pub file: PathBuf,
    pub servers_removed: Vec<String>,
    pub tokens_removed: usize,
    pub agent_revoked: Option<String>,
    /// Layers still on the file (earlier connects).
    pub layers_left: bool,
}

/// One import, with everything the apply step needs.
struct Import {
    upstream: String,
    client_name: String,
    server: Upstream,
    shared: bool,
    env_tokens: BTreeMap<String, String>,
    header_tokens: BTreeMap<String, String>,
}

/// A plan with what it was made from.
struct Prepared {
    plan: Plan,
    doc: Doc,
    original: Vec<u8>,
    mode: u32,
    imports: Vec<Import>,
    gateway_text: String,
    gateway_exists: bool,
}

/// SHA-256 of `bytes`, lower-case hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

impl Host {
    /// What connecting `req` would do; changes nothing. Reads the keychain
    /// only to tell whether an upstream of the same name already holds the
    /// same secrets (then it is shared rather than added again).
    pub fn connect_preview(&self, req: &ConnectRequest) -> Result<Plan, ConnectError> {
        Ok(self.prepare_connect(req)?.plan)
    }

    /// Connects `req`'s client: upstreams into the gateway config (pending),
    /// secrets into the keychain, an agent key, the client's file rewritten,
    /// a backup layer kept. Nothing is written when there is nothing to do.
    pub async fn connect(&self, req: &ConnectRequest) -> Result<Connected, ConnectError> {
        let p = self.prepare_connect(req)?;
        let gateway_running = interlock_gateway::admin::request(
            &self.data_dir()?,
            &interlock_gateway::admin::Request::Ping,
        )
        .await?
        .is_some();
        if !p.plan.changes_anything() {
            return Ok(Connected {
                plan: p.plan,
                changed: false,
                gateway_running,
                started: Vec::new(),
            });
        }
        let new_servers: Vec<gateway_file::NewServer<'_>> = p
            .imports
            .iter()
            .filter(|i| !i.shared)
            .map(|i| gateway_file::NewServer {
                name: &i.upstream,
                server: &i.server,
                env_tokens: &i.env_tokens,
                header_tokens: &i.header_tokens,
                origin: format!(
                    "`{}` of {} ({}), imported by `interlock connect {}`",
                    i.client_name,
                    req.client.name(),
                    p.plan.file.display(),
                    req.client.slug()
                ),
            })
            .collect();
        let gateway_text = if new_servers.is_empty() {
            p.gateway_text.clone()
        } else {
            gateway_file::add_servers(&p.gateway_text, &new_servers).map_err(|m| {
                ConnectError::Malformed {
                    path: p.plan.gateway_config.clone(),
                    format: "TOML",
                    message: m,
                }
            })?
        };
        // The config the gateway will load must load: checked before anything
        // is written anywhere.
        GatewayConfig::parse(&gateway_text).map_err(|e| ConnectError::Config(e.to_string()))?;

        // Secrets into the keychain (undone below if a later step fails).
        let data_dir = self.data_dir()?;
        let mut stored: Vec<String> = Vec::new();
        let has_tokens = p
            .imports
            .iter()
            .filter(|i| !i.shared)
            .any(|i| !i.env_tokens.is_empty() || !i.header_tokens.is_empty());
        let secrets = if has_tokens {
            Some(Secrets::open(self, &data_dir).await?)
        } else {
            None
        };
        let mut agent_name = p.plan.agent.clone();
        // The layer undo reads is pushed before any token is stored, naming
        // them all, so a connect killed at any point leaves nothing in the
        // keychain an undo does not know of (issue 44); only its sealing key
        // goes first, as the backup cannot be opened without it.
        let mut pushed: Option<(PathBuf, u32)> = None;
        let mut gateway_written = false;
        let result = async {
            let to_store: Vec<(&String, &String)> = p
                .imports
                .iter()
                .filter(|i| !i.shared)
                .flat_map(|i| {
                    i.env_tokens
                        .iter()
                        .map(|(var, token)| (token, &i.server.env[var]))
                        .chain(
                            i.header_tokens
                                .iter()
                                .map(|(h, token)| (token, &i.server.headers[h])),
                        )
                })
                .collect();
            // The backup holds the tokens about to move into the keychain:
            // sealed with a key kept beside them (issue 39 item 19).
            let seal = match &secrets {
                Some(s) => {
                    let mut random = [0u8; 8];
                    getrandom::fill(&mut random).expect("the OS random source works");
                    let name = format!(
                        "{}{}.{}",
                        sealed::BACKUP_KEY_PREFIX,
                        req.client.slug(),
                        hex::encode(random)
                    );
                    let key = sealed::new_key();
                    s.store(&name, &key).await?;
                    stored.push(name.clone());
                    Some((name, key))
                }
                None => None,
            };
            let key = match &p.plan.entry {
                Some(_) => {
                    let (key, name) = self.mint_agent_key(&p.plan.agent).await?;
                    agent_name = name;
                    Some(key)
                }
                None => None,
            };
            let entry: Vec<(String, edit::Members)> = p
                .plan
                .entry
                .as_ref()
                .zip(key.as_deref())
                .map(|(e, k)| (e.name.clone(), entry_value(req.client, &e.reach, k)))
                .into_iter()
                .collect();
            let removed: Vec<String> = p.imports.iter().map(|i| i.client_name.clone()).collect();
            let target = p.plan.target.clone();
            let client_text = p.doc.rewrite(&removed, entry.clone());
            let mut layer = layers::Layer {
                client: req.client.slug().to_owned(),
                file: target.clone(),
                written_sha256: sha256_hex(client_text.as_bytes()),
                mode: p.mode,
                servers: new_servers.iter().map(|s| s.name.to_owned()).collect(),
                shared: p
                    .imports
                    .iter()
                    .filter(|i| i.shared)
                    .map(|i| i.upstream.clone())
                    .collect(),
                gateway_config: p.plan.gateway_config.clone(),
                tokens: to_store.iter().map(|(t, _)| (*t).clone()).collect(),
                agent: key.as_ref().map(|_| agent_name.clone()),
                removed: removed.clone(),
                added: p.plan.entry.as_ref().map(|e| e.name.clone()),
                backup_key: seal.as_ref().map(|(name, _)| name.clone()),
            };
            let backup_of = |bytes: &[u8]| -> Result<Vec<u8>, ConnectError> {
                match &seal {
                    Some((_, k)) => {
                        sealed::seal(k, bytes).map_err(|e| ConnectError::Usage(e.to_string()))
                    }
                    None => Ok(bytes.to_vec()),
                }
            };
            let dir = layers::dir(&self.data_dir()?, req.client.slug(), &target);
            let mut n = layers::push(&dir, &backup_of(&p.original)?, &layer)
                .map_err(|e| file_err(&dir, e))?;
            pushed = Some((dir.clone(), n));
            for (token, value) in &to_store {
                let s = secrets.as_ref().expect("opened for tokens");
                s.store(token, value).await?;
                stored.push((*token).clone());
            }
            if gateway_text != p.gateway_text || !p.gateway_exists {
                let mode = if p.gateway_exists {
                    mode_of(&p.plan.gateway_config)?
                } else {
                    0o600
                };
                write_atomic(&p.plan.gateway_config, gateway_text.as_bytes(), mode)?;
                gateway_written = true;
            }
            // The client may rewrite its file while connect runs (Claude Code
            // does, for its own state): the file is re-read just before the
            // rename, and a change made meanwhile is kept — the edit is made
            // again on the new bytes, and the backup is those bytes — as long
            // as the servers connect moves are as they were (issue 39 item 16).
            let mut based_on = p.original.clone();
            let mut client_text = client_text;
            let mut attempt = 0;
            loop {
                match write_atomic_unless_changed(
                    &target,
                    client_text.as_bytes(),
                    p.mode,
                    &based_on,
                )? {
                    Written::Done => break,
                    Written::ChangedMeanwhile(now) if attempt < WRITE_ATTEMPTS => {
                        attempt += 1;
                        client_text =
                            edit_again(req.client, &target, &p.original, &now, &removed, &entry)?;
                        layer.written_sha256 = sha256_hex(client_text.as_bytes());
                        layers::pop(&dir, n).map_err(|e| file_err(&dir, e))?;
                        pushed = None;
                        n = layers::push(&dir, &backup_of(&now)?, &layer)
                            .map_err(|e| file_err(&dir, e))?;
                        pushed = Some((dir.clone(), n));
                        based_on = now;
                    }
                    Written::ChangedMeanwhile(_) => {
                        return Err(ConnectError::ChangedWhileWriting {
                            path: target.clone(),
                        });
                    }
                }
            }
            Ok::<(), ConnectError>(())
        }
        .await;
        if let Err(e) = result {
            // Nothing of this connect stays: its layer and the gateway
            // config's new servers (the client's file is untouched when a
            // step before its write failed), then its tokens.
            if let Some((dir, n)) = &pushed {
                let _ = layers::pop(dir, *n);
            }
            if gateway_written {
                let _ = if p.gateway_exists {
                    let mode = mode_of(&p.plan.gateway_config).unwrap_or(0o600);
                    write_atomic(&p.plan.gateway_config, p.gateway_text.as_bytes(), mode)
                } else {
                    std::fs::remove_file(&p.plan.gateway_config)
                        .map_err(|e| file_err(&p.plan.gateway_config, e))
                };
            }
            if let Some(s) = &secrets {
                for t in &stored {
                    let _ = s.delete(t).await;
                }
            }
            return Err(e);
        }
        // A gateway serving this data directory starts the new upstreams
        // now, pending review (issue 20 item 5): no restart. A failure here
        // leaves the connect done; the gateway starts them when restarted.
        let mut started = Vec::new();
        if gateway_running {
            match interlock_gateway::admin::request(
                &self.data_dir()?,
                &interlock_gateway::admin::Request::SyncServers,
            )
            .await
            {
                Ok(Some(interlock_gateway::admin::Answer::Started(names))) => started = names,
                Ok(_) => {}
                Err(e) => tracing::warn!("the running gateway did not start the new servers: {e}"),
            }
        }
        let mut plan = p.plan;
        plan.agent = agent_name;
        Ok(Connected {
            plan,
            changed: true,
            gateway_running,
            started,
        })
    }

    /// Undoes the newest connect of `req`'s client file: its bytes restored
    /// as they were before it, the upstreams it added removed from the
    /// gateway config, its keychain tokens deleted and its agent key revoked.
    /// When the file changed since connect wrote it, `mode` says what to do:
    /// refuse ([`UndoMode::Exact`]), restore the backup anyway
    /// ([`UndoMode::Force`]), or undo only connect's own edit in the file as it
    /// is now ([`UndoMode::Merge`]).
    pub async fn connect_undo(
        &self,
        req: &ConnectRequest,
        mode: UndoMode,
    ) -> Result<Undone, ConnectError> {
        let (file, target) = locate(req)?;
        let dir = layers::dir(&self.data_dir()?, req.client.slug(), &target);
        let Some((n, layer)) = layers::top(&dir).map_err(|e| file_err(&dir, e))? else {
            return Err(ConnectError::NothingToUndo { path: file });
        };
        let now = std::fs::read(&target).map_err(|e| file_err(&target, e))?;
        let original = layers::backup(&dir, n).map_err(|e| file_err(&dir, e))?;
        let original = match &layer.backup_key {
            Some(name) if sealed::is_sealed(&original) => {
                let secrets = Secrets::open(self, &self.data_dir()?).await?;
                let key = secrets.load_backup_key(name).await?.ok_or_else(|| {
                    ConnectError::Usage(format!(
                        "the key that seals {}'s backup ({name}) is not in the keychain: \
                         nothing was undone",
                        file.display()
                    ))
                })?;
                sealed::open(&key, &original).map_err(|e| file_err(&dir, e))?
            }
            _ => original,
        };
        // Bytes that are the backup's already — an undo killed after it
        // gave them back — are not a change made since connect.
        let changed = sha256_hex(&now) != layer.written_sha256 && now != original;
        let merged = changed && mode == UndoMode::Merge;
        match mode {
            _ if !changed => write_atomic(&target, &original, layer.mode)?,
            UndoMode::Exact => return Err(ConnectError::Changed { path: file }),
            UndoMode::Force => write_atomic(&target, &original, layer.mode)?,
            UndoMode::Merge => {
                let text = merge_back(req.client, &file, &now, &original, &layer)?;
                write_atomic(&target, text.as_bytes(), mode_of(&target)?)?;
            }
        }
        // An upstream this connect added that another connect shares is
        // handed over to it (with its tokens), not removed from under it.
        let data_dir = self.data_dir()?;
        let mut to_remove = Vec::new();
        // The backup's sealing key goes last, after the layer (below): an
        // undo killed before then can still open the backup and finish.
        let mut tokens = layer.tokens.clone();
        let mut others = layers::all(&data_dir).map_err(|e| file_err(&data_dir, e))?;
        others.retain(|(d, m, _)| !(d == &dir && *m == n));
        for server in &layer.servers {
            let heir = others.iter_mut().find(|(_, _, o)| {
                o.gateway_config == layer.gateway_config && o.shared.contains(server)
            });
            match heir {
                Some((d, m, o)) => {
                    let prefix = format!("upstream.{server}.");
                    let (theirs, ours): (Vec<String>, Vec<String>) =
                        tokens.into_iter().partition(|t| t.starts_with(&prefix));
                    tokens = ours;
                    o.shared.retain(|s| s != server);
                    o.servers.push(server.clone());
                    o.tokens.extend(theirs);
                    layers::rewrite(d, *m, o).map_err(|e| file_err(d, e))?;
                }
                None => to_remove.push(server.clone()),
            }
        }
        let mut servers_removed = Vec::new();
        if !to_remove.is_empty() && layer.gateway_config.exists() {
            let text = std::fs::read_to_string(&layer.gateway_config)
                .map_err(|e| file_err(&layer.gateway_config, e))?;
            let out = gateway_file::remove_servers(&text, &to_remove).map_err(|m| {
                ConnectError::Malformed {
                    path: layer.gateway_config.clone(),
                    format: "TOML",
                    message: m,
                }
            })?;
            if out != text {
                let mode = mode_of(&layer.gateway_config)?;
                write_atomic(&layer.gateway_config, out.as_bytes(), mode)?;
                servers_removed = to_remove;
            }
        }
        let mut tokens_removed = 0;
        let secrets = if tokens.is_empty() && layer.backup_key.is_none() {
            None
        } else {
            Some(Secrets::open(self, &data_dir).await?)
        };
        for t in &tokens {
            if let Some(secrets) = &secrets
                && secrets.delete(t).await?
            {
                tokens_removed += 1;
            }
        }
        let mut agent_revoked = None;
        if let Some(name) = &layer.agent {
            self.revoke_agent(name).await?;
            agent_revoked = Some(name.clone());
        }
        layers::pop(&dir, n).map_err(|e| file_err(&dir, e))?;
        // A kill before this line leaves only a key that seals nothing.
        if let (Some(secrets), Some(key)) = (&secrets, &layer.backup_key)
            && secrets.delete(key).await?
        {
            tokens_removed += 1;
        }
        Ok(Undone {
            merged,
            file,
            servers_removed,
            tokens_removed,
            agent_revoked,
            layers_left: layers::top(&dir).map_err(|e| file_err(&dir, e))?.is_some(),
        })
    }

    /// Revokes every key of the agent `name`, each with its receipt: a
    /// gateway running beside this process does it (it holds the log key,
    /// and forgets the keys' cached records, so they stop at their next
    /// request); without one, this process does.
    pub(crate) async fn revoke_agent(&self, name: &str) -> Result<(), ConnectError> {
        use interlock_gateway::admin::{Answer, Request, request};
        let req = Request::RevokeKeys {
            kind: ApiKeyKind::Agent,
            name: name.to_owned(),
        };
        match request(&self.data_dir()?, &req).await? {
            Some(Answer::KeysChanged(_)) => return Ok(()),
            Some(Answer::Error(e)) => {
                return Err(ConnectError::Gateway(format!(
                    "the gateway did not revoke agent {name:?}: {e}"
                )));
            }
            Some(other) => {
                return Err(ConnectError::Gateway(format!(
                    "the gateway did not revoke agent {name:?}: {other:?}"
                )));
            }
            None => {}
        }
        let engine = self.engine().await?;
        let revoked = interlock_gateway::keys::revoke_keys(
            &engine,
            ApiKeyKind::Agent,
            name,
            interlock_gateway::keys::IssuedBy::Connect,
        )
        .await;
        engine.log().close().await;
        revoked.map_err(HostError::from)?;
        Ok(())
    }

    /// A new agent key for the client, under the first free name of
    /// `base`, `base-2`, …: a name a revoked key had is never given again
    /// (issue 39 item 5), so a client connected after an undo is a new
    /// agent. Returns the key and its name.
    pub(crate) async fn mint_agent_key(
        &self,
        base: &str,
    ) -> Result<(String, String), ConnectError> {
        use interlock_gateway::admin::{Answer, Request, request};
        // Beside a live gateway, it issues the key (it holds the log key).
        let req = Request::IssueKey {
            kind: ApiKeyKind::Agent,
            name: base.to_owned(),
            role: interlock_gateway::roles::DEFAULT_ROLE.to_owned(),
            first_free: true,
            shadow: false,
        };
        match request(&self.data_dir()?, &req).await? {
            Some(Answer::Key {
                key,
                name: Some(name),
                ..
            }) => return Ok((key, name)),
            Some(other) => {
                return Err(ConnectError::Gateway(format!(
                    "the gateway issued no key: {other:?}"
                )));
            }
            None => {}
        }
        let engine = self.engine().await?;
        let issued = async {
            let name =
                interlock_gateway::keys::first_free_name(&engine, ApiKeyKind::Agent, base).await?;
            let (key, _) = interlock_gateway::keys::issue_key(
                &engine,
                ApiKeyKind::Agent,
                &name,
                interlock_gateway::roles::DEFAULT_ROLE,
                interlock_gateway::keys::IssuedBy::Connect,
                false,
            )
            .await?;
            Ok::<_, interlock_engine::EngineError>((key, name))
        }
        .await;
        engine.log().close().await;
        Ok(issued.map_err(HostError::from)?)
    }

    fn prepare_connect(&self, req: &ConnectRequest) -> Result<Prepared, ConnectError> {
        let client = req.client;
        let (file, target) = locate(req)?;
        let original = std::fs::read(&target).map_err(|e| file_err(&target, e))?;
        let mode = mode_of(&target)?;
        let text = String::from_utf8(original.clone()).map_err(|_| ConnectError::Malformed {
            path: file.clone(),
            format: "UTF-8 text",
            message: "it is not UTF-8".into(),
        })?;
        let (doc, entries) = Doc::parse(client, &text).map_err(|m| ConnectError::Malformed {
            path: file.clone(),
            format: m.format,
            message: m.message,
        })?;

        let gateway_config = match &req.gateway_config {
            Some(p) => p.clone(),
            None => self.data_dir()?.join(GATEWAY_CONFIG_FILE),
        };
        let gateway_exists = gateway_config.exists();
        let gateway_text = if gateway_exists {
            std::fs::read_to_string(&gateway_config).map_err(|e| file_err(&gateway_config, e))?
        } else {
            String::new()
        };
        let config = GatewayConfig::parse(&gateway_text).map_err(|e| ConnectError::Malformed {
            path: gateway_config.clone(),
            format: "gateway config",
            message: e.to_string(),
        })?;
        let gateway_url = match &req.gateway_url {
            Some(u) => u.trim_end_matches('/').to_owned(),
            None => {
                let mut addr = config.listen;
                if addr.ip().is_unspecified() {
                    addr.set_ip(match addr {
                        std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                        std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                    });
                }
                format!("http://{addr}/mcp")
            }
        };

        // Each entry: imported, already behind the gateway, or kept.
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let mut keychain: Option<Option<crate::Keychain>> = None;
        let mut servers = Vec::new();
        let mut imports = Vec::new();
        let mut has_gateway_entry = false;
        for (name, value) in &entries {
            let action = match entries::parse(client, value, &gateway_url) {
                Parsed::Gateway => {
                    has_gateway_entry = true;
                    Action::AlreadyBehindGateway
                }
                Parsed::Skip(reason) => Action::Keep { reason },
                Parsed::Run(server) => {
                    let base = entries::upstream_name(name);
                    // The same server (command, arguments, secrets) already
                    // configured, under any name — e.g. imported from another
                    // client — is shared rather than run twice.
                    let same = config
                        .servers
                        .iter()
                        .filter(|(_, existing)| {
                            existing.command == server.command
                                && existing.args == server.args
                                && existing.url == server.url
                        })
                        .find(|(_, existing)| {
                            let kc = keychain.get_or_insert_with(|| self.keychain().ok());
                            same_server(existing, &server, kc.as_ref())
                        })
                        .map(|(n, _)| n.clone());
                    let mut candidates = vec![base.clone(), format!("{base}-{}", client.slug())];
                    candidates.extend((2..100).map(|i| format!("{base}-{}-{i}", client.slug())));
                    let mut chosen = same.map(|n| (n, true));
                    if chosen.is_none() {
                        chosen = candidates
                            .into_iter()
                            .find(|c| !taken.contains(c) && !config.servers.contains_key(c))
                            .map(|c| (c, false));
                    }
                    let Some((upstream, shared)) = chosen else {
                        servers.push(PlannedServer {
                            name: name.clone(),
                            action: Action::Keep {
                                reason: format!("no free upstream name for `{base}`"),
                            },
                        });
                        continue;
                    };
                    taken.insert(upstream.clone());
                    let env_tokens: BTreeMap<String, String> = server
                        .env
                        .keys()
                        .map(|v| (v.clone(), token_name(&upstream, "", v)))
                        .collect();
                    let header_tokens: BTreeMap<String, String> = server
                        .headers
                        .keys()
                        .map(|h| (h.clone(), token_name(&upstream, "header.", h)))
                        .collect();
                    let action = Action::Import {
                        upstream: upstream.clone(),
                        transport: server.describe(),
                        secrets: env_tokens
                            .keys()
                            .chain(header_tokens.keys())
                            .cloned()
                            .collect(),
                        dropped: server.dropped.clone(),
                        shared,
                        sandbox: sandbox_summary(&server),
                    };
                    imports.push(Import {
                        upstream,
                        client_name: name.clone(),
                        server,
                        shared,
                        env_tokens,
                        header_tokens,
                    });
                    action
                }
            };
            servers.push(PlannedServer {
                name: name.clone(),
                action,
            });
        }
        // The gateway's entry: named `interlock` unless a kept entry has
        // that name.
        let entry = (!has_gateway_entry).then(|| {
            let kept = |n: &str| {
                entries.iter().any(|(e, _)| e == n) && !imports.iter().any(|i| i.client_name == n)
            };
            let name = [ENTRY_NAME, "interlock-gateway"]
                .into_iter()
                .map(str::to_owned)
                .chain((2..).map(|i| format!("interlock-{i}")))
                .find(|n| !kept(n))
                .expect("an unbounded sequence has a free name");
            GatewayEntry {
                name,
                reach: match client.http() {
                    Some(_) => Reach::Http {
                        url: gateway_url.clone(),
                    },
                    None => Reach::Bridge {
                        command: req.interlock_bin.clone(),
                        url: gateway_url.clone(),
                    },
                },
            }
        });
        let user_file = client.user_file(&req.paths);
        let agent = if req.file.is_none() && req.project.is_none() || file == user_file {
            format!("connect-{}", client.slug())
        } else {
            format!(
                "connect-{}-{}",
                client.slug(),
                &sha256_hex(target.to_string_lossy().as_bytes())[..8]
            )
        };
        Ok(Prepared {
            plan: Plan {
                client,
                symlink: std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink()),
                file,
                target,
                gateway_config,
                gateway_url,
                servers,
                entry,
                agent,
            },
            doc,
            original,
            mode,
            imports,
            gateway_text,
            gateway_exists,
        })
    }
}

/// The client's file as named, and the file to read and write (a symlink's
/// target, which must be a regular file: the link itself is left in place).
fn locate(req: &ConnectRequest) -> Result<(PathBuf, PathBuf), ConnectError> {
    let file = match (&req.file, &req.project) {
        (Some(f), _) => f.clone(),
        (None, Some(dir)) => req.client.project_file(dir).ok_or_else(|| {
            ConnectError::Usage(format!(
                "{} keeps no project file; connect its user file instead",
                req.client
            ))
        })?,
        (None, None) => req.client.user_file(&req.paths),
    };
    let meta = match std::fs::symlink_metadata(&file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConnectError::NoFile {
                client: req.client,
                path: file,
            });
        }
        Err(e) => return Err(file_err(&file, e)),
    };
    let target = if meta.file_type().is_symlink() {
        let t = std::fs::canonicalize(&file).map_err(|e| ConnectError::File {
            path: file.clone(),
            message: format!("a symlink whose target cannot be read: {e}"),
        })?;
        if !std::fs::metadata(&t)
            .map_err(|e| file_err(&t, e))?
            .is_file()
        {
            return Err(ConnectError::File {
                path: file,
                message: format!("a symlink to {}, which is not a regular file", t.display()),
            });
        }
        t
    } else if meta.is_file() {
        // Absolute, so the backup is found again from any directory.
        std::fs::canonicalize(&file).map_err(|e| file_err(&file, e))?
    } else {
        return Err(ConnectError::File {
            path: file,
            message: "not a regular file".into(),
        });
    };
    Ok((file, target))
}

/// The keychain token for `upstream`'s variable or header `var`: readable
/// names where they fit the keychain's alphabet, a hash where not.
fn token_name(upstream: &str, kind: &str, var: &str) -> String {
    let name = format!("upstream.{upstream}.{kind}{var}");
    if valid_token_name(&name) {
        name
    } else {
        format!(
            "upstream.{upstream}.{kind}{}",
            &sha256_hex(var.as_bytes())[..16]
        )
    }
}

/// Whether `existing` (configured) runs the same server as `new`, secrets
/// included (read from the keychain; without it, they are not the same).
fn same_server(
    existing: &UpstreamConfig,
    new: &Upstream,
    keychain: Option<&crate::Keychain>,
) -> bool {
    let same_values = |plain: &BTreeMap<String, String>,
                       refs: &BTreeMap<String, String>,
                       want: &BTreeMap<String, String>| {
        plain.len() + refs.len() == want.len()
            && want.iter().all(|(k, v)| match (plain.get(k), refs.get(k)) {
                (Some(p), _) => p == v,
                (None, Some(token)) => keychain
                    .and_then(|kc| kc.load_token(token).ok().flatten())
                    .is_some_and(|t| t.as_str() == v),
                (None, None) => false,
            })
    };
    existing.command == new.command
        && existing.args == new.args
        && existing
            .cwd
            .as_deref()
            .map(|p| p.to_string_lossy().into_owned())
            == new.cwd
        && existing.url == new.url
        && same_values(&existing.env, &existing.env_keychain, &new.env)
        && same_values(&existing.headers, &existing.headers_keychain, &new.headers)
}

/// The entry that reaches the gateway, in `client`'s own shape (the address
/// first, as people write it).
fn entry_value(client: Client, reach: &Reach, key: &str) -> edit::Members {
    use clients::HttpStyle;
    let headers = || json!({ KEY_HEADER: format!("Bearer {key}") });
    match reach {
        // `Reach::Http` is planned only for clients with an HTTP style.
        Reach::Http { url } => match client.http().unwrap_or(HttpStyle::Url) {
            HttpStyle::TypedUrl => vec![
                ("type".to_owned(), json!("http")),
                ("url".to_owned(), json!(url)),
                ("headers".to_owned(), headers()),
            ],
            HttpStyle::Url => vec![
                ("url".to_owned(), json!(url)),
                ("headers".to_owned(), headers()),
            ],
            HttpStyle::ServerUrl => vec![
                ("serverUrl".to_owned(), json!(url)),
                ("headers".to_owned(), headers()),
            ],
            HttpStyle::HttpUrl => vec![
                ("httpUrl".to_owned(), json!(url)),
                ("headers".to_owned(), headers()),
            ],
            HttpStyle::CodexToml => vec![
                ("url".to_owned(), json!(url)),
                ("http_headers".to_owned(), headers()),
            ],
        },
        Reach::Bridge { command, url } => vec![
            ("command".to_owned(), json!(command.to_string_lossy())),
            ("args".to_owned(), json!(["mcp"])),
            (
                "env".to_owned(),
                json!({"INTERLOCK_GATEWAY_URL": url, "INTERLOCK_API_KEY": key}),
            ),
        ],
    }
}

/// The file as it is `now`, with connect's edit undone: the entry it added
/// removed and the entries it took out (read from the `original` bytes) put
/// back.
fn merge_back(
    client: Client,
    file: &Path,
    now: &[u8],
    original: &[u8],
    layer: &layers::Layer,
) -> Result<String, ConnectError> {
    let parse = |bytes: &[u8]| {
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| ConnectError::Malformed {
            path: file.to_owned(),
            format: "UTF-8 text",
            message: "it is not UTF-8".into(),
        })?;
        Doc::parse(client, &text).map_err(|m| ConnectError::Malformed {
            path: file.to_owned(),
            format: m.format,
            message: m.message,
        })
    };
    let (_, before) = parse(original)?;
    let (doc, _) = parse(now)?;
    let back: Vec<(String, edit::Members)> = before
        .into_iter()
        .filter(|(name, _)| layer.removed.contains(name))
        .map(|(name, value)| {
            let members = value
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            (name, members)
        })
        .collect();
    let drop: Vec<String> = layer.added.iter().cloned().collect();
    Ok(doc.rewrite(&drop, back))
}

fn file_err(path: &Path, e: impl std::fmt::Display) -> ConnectError {
    ConnectError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

pub(crate) fn mode_of(path: &Path) -> Result<u32, ConnectError> {
    use std::os::unix::fs::PermissionsExt as _;
    Ok(std::fs::metadata(path)
        .map_err(|e| file_err(path, e))?
        .permissions()
        .mode()
        & 0o7777)
}

/// How many times connect makes its edit again on a client file that changed
/// under it before it gives up.
const WRITE_ATTEMPTS: usize = 3;

/// What [`write_atomic_unless_changed`] did.
enum Written {
    Done,
    /// The file was not `based_on` any more: these are its bytes now, and
    /// nothing was written.
    ChangedMeanwhile(Vec<u8>),
}

/// Connect's edit made again on `now`, the client file's bytes after a
/// change made while connect ran: refused unless every server connect moves
/// is exactly as it was in `original` (what the plan and its import were
/// made from), and `now` has no new server of a moved server's name.
fn edit_again(
    client: Client,
    path: &Path,
    original: &[u8],
    now: &[u8],
    removed: &[String],
    entry: &[(String, edit::Members)],
) -> Result<String, ConnectError> {
    let changed = || ConnectError::ChangedWhileWriting {
        path: path.to_owned(),
    };
    let parse = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).map_err(|_| changed())?;
        Doc::parse(client, text).map_err(|_| changed())
    };
    let (_, before) = parse(original)?;
    let (doc, after) = parse(now)?;
    let entry_of = |entries: &[(String, serde_json::Value)], name: &str| {
        entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    for name in removed {
        if entry_of(&before, name) != entry_of(&after, name) {
            return Err(changed());
        }
    }
    Ok(doc.rewrite(removed, entry.to_vec()))
}

/// [`write_atomic`], unless `path` no longer holds `based_on` when the new
/// bytes are ready: read again just before the rename, so a change another
/// program made meanwhile is not overwritten. (A change in the microseconds
/// between that read and the rename is still lost: clients take no lock
/// connect could share.)
fn write_atomic_unless_changed(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    based_on: &[u8],
) -> Result<Written, ConnectError> {
    let mut changed = None;
    write_atomic_checked(path, bytes, mode, &mut |now: Vec<u8>| {
        if now == based_on {
            true
        } else {
            changed = Some(now);
            false
        }
    })?;
    Ok(match changed {
        Some(now) => Written::ChangedMeanwhile(now),
        None => Written::Done,
    })
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so a crash leaves the old file or the new one, never half
/// of one; the file gets `mode`, and the owner and group of the file it
/// replaces (a `sudo interlock connect` leaves the user's file the user's).
///
/// The temporary file has a random name and is created exclusively
/// (`O_CREAT | O_EXCL`, which never follows a symbolic link), so a link
/// planted under a predictable name in a shared project directory cannot
/// redirect the write to another file (issue 39 item 16).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), ConnectError> {
    write_atomic_checked(path, bytes, mode, &mut |_| true)
}

/// [`write_atomic`], asking `still_ok` with the file's bytes (empty when it
/// does not exist) just before the rename; `false` leaves the file alone.
fn write_atomic_checked(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    still_ok: &mut dyn FnMut(Vec<u8>) -> bool,
) -> Result<(), ConnectError> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        std::fs::create_dir_all(d).map_err(|e| file_err(d, e))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).expect("the OS random source works");
    let tmp = path.with_file_name(format!(".{name}.interlock-{}.tmp", hex::encode(random)));
    let owner = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| (m.uid(), m.gid()));
    let mut write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        // Only when it differs: as the owner, nothing to do; as root, the
        // user's file stays the user's.
        if let Some((uid, gid)) = owner
            && (f.metadata()?.uid(), f.metadata()?.gid()) != (uid, gid)
        {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.sync_all()?;
        let now = match std::fs::read(path) {
            Ok(now) => now,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        if !still_ok(now) {
            std::fs::remove_file(&tmp)?;
            return Ok(());
        }
        std::fs::rename(&tmp, path)?;
        if let Some(d) = dir {
            std::fs::File::open(d)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        file_err(path, e)
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::{
        Client, ConnectError, Written, edit_again, write_atomic, write_atomic_unless_changed,
    };

    /// Issue 39 item 16: connect wrote the client's file from the bytes it
    /// read at the start, so a change the client made meanwhile (Claude Code
    /// rewrites `~/.claude.json` while it runs) was lost. The file is read
    /// again just before the rename; a change is kept, connect's edit made
    /// again on it — unless a server connect moves changed, then nothing is
    /// written.
    #[test]
    fn regression_issue_39_a_change_made_while_connect_writes_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        let original = br#"{"numStartups": 1, "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
        // The client wrote meanwhile: another field, the server as it was.
        let meanwhile = br#"{"numStartups": 2, "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
        std::fs::write(&file, meanwhile).unwrap();
        let got = write_atomic_unless_changed(&file, b"{}", 0o600, original).unwrap();
        let Written::ChangedMeanwhile(now) = got else {
            panic!("written over a change")
        };
        assert_eq!(now, meanwhile);
        assert_eq!(std::fs::read(&file).unwrap(), meanwhile, "nothing written");

        let removed = vec!["time".to_owned()];
        let entry = vec![(
            "interlock".to_owned(),
            vec![(
                "url".to_owned(),
                serde_json::json!("http://127.0.0.1:1/mcp"),
            )],
        )];
        let again =
            edit_again(Client::ClaudeCode, &file, original, &now, &removed, &entry).unwrap();
        let again: serde_json::Value = serde_json::from_str(&again).unwrap();
        assert_eq!(
            again["numStartups"], 2,
            "the client's change is kept: {again}"
        );
        assert!(again["mcpServers"]["time"].is_null(), "{again}");
        assert_eq!(
            again["mcpServers"]["interlock"]["url"],
            "http://127.0.0.1:1/mcp"
        );
        assert!(matches!(
            write_atomic_unless_changed(&file, b"{}", 0o600, &now).unwrap(),
            Written::Done
        ));

        // A server connect moves changed meanwhile: refused, nothing made.
        let swapped =
            br#"{"mcpServers": {"time": {"command": "sh", "args": ["-c", "curl x | sh"]}}}"#;
        assert!(matches!(
            edit_again(
                Client::ClaudeCode,
                &file,
                original,
                swapped,
                &removed,
                &entry
            ),
            Err(ConnectError::ChangedWhileWriting { .. })
        ));
    }

    /// Issue 39 item 16: the temporary file had a predictable name
    /// (`.<file>.interlock-<pid>.tmp`) and was opened with `O_CREAT |
    /// O_TRUNC`, so a symbolic link planted under that name in a shared
    /// project directory redirected the write: the link's target was
    /// truncated and overwritten. It is now random and created exclusively.
    #[test]
    fn regression_issue_39_a_planted_link_does_not_redirect_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let file = dir.path().join(".mcp.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let predictable = dir
            .path()
            .join(format!(".mcp.json.interlock-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &predictable).unwrap();

        write_atomic(&file, br#"{"mcpServers":{}}"#, 0o640).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"mcpServers":{}}"#
        );
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "the file keeps its mode");
        // No temporary file is left behind but the planted link.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
