//! The gateway's configuration file (TOML): where to listen, the upstream
//! servers, roles, limits and the drift policy.
//!
//! ```toml
//! listen = "127.0.0.1:8717"
//! allowed_origins = ["http://localhost:5173"]
//!
//! [servers.files]
//! command = "npx"
//! args = ["mcp-server-filesystem", "/srv/data"]
//!
//! [servers.search]
//! url = "http://127.0.0.1:3001/mcp"
//! headers = { Authorization = "Bearer …" }
//!
//! [roles.developer]
//! tools = ["files__read_*", "search__*"]
//! ```
//!
//! Unknown keys are errors: a misspelt `quarantine_at` must not silently leave
//! the default in force.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use interlock_surface::{DriftPolicy, Severity};
use serde::Deserialize;

pub use crate::roles::RoleConfig;

/// Where the gateway listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8717";

pub use interlock_trust::pins::TOOL_SEPARATOR;

/// A configuration problem, naming the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl From<crate::llm::config::LlmConfigError> for ConfigError {
    fn from(e: crate::llm::config::LlmConfigError) -> ConfigError {
        ConfigError::Invalid(e.0)
    }
}

impl From<crate::alerts::config::AlertsConfigError> for ConfigError {
    fn from(e: crate::alerts::config::AlertsConfigError) -> ConfigError {
        ConfigError::Invalid(e.0)
    }
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// Socket address to bind. Loopback by default; anything else is the
    /// operator's explicit choice.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Origins (scheme://host:port) allowed to call the HTTP surfaces from a
    /// browser, besides the gateway's own. Requests without `Origin` (non-browser
    /// clients) are allowed; any other origin is refused (DNS rebinding).
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Extra `Host` header values accepted (besides loopback names and the
    /// listen address).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Seconds between periodic re-checks of every upstream's surface.
    #[serde(default = "default_recheck")]
    pub recheck_secs: u64,
    /// A built review UI (`ui/dist`) to serve at `/` for reviewers in a browser.
    #[serde(default)]
    pub ui_dir: Option<PathBuf>,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub drift: DriftConfig,
    /// Behavioural envelopes of approved tools (issue 16 item 2).
    #[serde(default)]
    pub envelope: EnvelopeConfig,
    #[serde(default)]
    pub servers: BTreeMap<String, UpstreamConfig>,
    #[serde(default)]
    pub roles: BTreeMap<String, RoleConfig>,
    #[serde(default)]
    pub calls: CallsConfig,
    #[serde(default)]
    pub log: LogConfig,
    /// `[alerts]`: sinks delivered from the log (issue 21).
    #[serde(default)]
    pub alerts: crate::alerts::config::AlertsConfig,
    /// `[store]`: where the database is (issue 20).
    #[serde(default)]
    pub store: StoreConfig,
    /// `[llm]`: the LLM proxy's providers and prompt policy (issue 42).
    #[serde(default)]
    pub llm: crate::llm::config::LlmConfig,
}

/// `[store]`: the database the gateway keeps its state and log in.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `postgres://USER@HOST/DATABASE` for a database several gateways
    /// share (teams), or `sqlite:///PATH`. Unset: the SQLite file in the data
    /// directory. `interlock --database` and `$INTERLOCK_DATABASE_URL` take
    /// precedence. A password here is readable by whoever reads the file:
    /// prefer a Unix socket with peer authentication, or `PGPASSFILE`.
    pub url: Option<String>,
}

impl StoreConfig {
    /// The configured location, if any (checked when the config is read).
    pub fn location(&self) -> Result<Option<interlock_store::StoreLocation>, ConfigError> {
        self.url
            .as_deref()
            .map(|u| {
                interlock_store::StoreLocation::parse(u)
                    .map_err(|e| ConfigError::Invalid(format!("store.url: {e}")))
            })
            .transpose()
    }
}

/// `[log]`: when checkpoints are signed and when a tool call's outcome leaf
/// reaches the disk (the durability contract in docs/ARCHITECTURE.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// At most one checkpoint is signed per this many milliseconds while the
    /// log grows (0: one per commit); one is signed at once when a proof or a
    /// checkpoint is asked for, and at shutdown.
    pub checkpoint_interval_ms: u64,
    /// An outcome leaf is `fsync`ed within this many milliseconds.
    pub flush_window_ms: u64,
    /// `"group"` (the default): a tool call's intent leaf is `fsync`ed before
    /// the call is forwarded, its outcome leaf committed before the agent sees
    /// the answer and `fsync`ed within `flush_window_ms`. `"strict"`: the
    /// outcome leaf is `fsync`ed before the answer as well.
    pub durability: DurabilityMode,
    /// Witnesses that cosign this log's checkpoints (issue 43): each a C2SP
    /// tlog-witness at `url` whose cosignatures verify with `key` (a
    /// `name+id+base64(0x04 ‖ key)` verifier key, what `interlock witness
    /// serve` prints). Checkpoints are submitted off the call path.
    pub witnesses: Vec<WitnessConfig>,
}

/// One witness of `[log] witnesses`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WitnessConfig {
    /// The witness's submission prefix (`http://127.0.0.1:8720`, or `https://…`).
    pub url: String,
    /// Its cosignature verifier key.
    pub key: String,
}

impl WitnessConfig {
    /// Where its `add-checkpoint` is.
    pub fn add_checkpoint_url(&self) -> String {
        format!("{}/add-checkpoint", self.url.trim_end_matches('/'))
    }
}

/// See [`LogConfig::durability`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    #[default]
    Group,
    Strict,
}

impl Default for LogConfig {
    fn default() -> Self {
        let d = interlock_log::LogOptions::default();
        LogConfig {
            checkpoint_interval_ms: d.checkpoint_interval.as_millis() as u64,
            flush_window_ms: d.flush_window.as_millis() as u64,
            durability: DurabilityMode::Group,
            witnesses: Vec::new(),
        }
    }
}

impl LogConfig {
    /// Bounds that keep the contract meaningful (and the writer's timers
    /// finite): a checkpoint at least once a minute, an outcome on disk within
    /// ten seconds.
    fn check(&self) -> Result<(), ConfigError> {
        if self.checkpoint_interval_ms > 60_000 {
            return Err(ConfigError::Invalid(format!(
                "log.checkpoint_interval_ms = {}: at most 60000 (a checkpoint at least once a minute)",
                self.checkpoint_interval_ms
            )));
        }
        if self.flush_window_ms > 10_000 {
            return Err(ConfigError::Invalid(format!(
                "log.flush_window_ms = {}: at most 10000",
                self.flush_window_ms
            )));
        }
        let mut names = std::collections::HashSet::new();
        for w in &self.witnesses {
            let key = interlock_merkle::CosignatureVerifier::from_vkey(&w.key).map_err(|e| {
                ConfigError::Invalid(format!("log.witnesses: key {:?}: {e}", w.key))
            })?;
            if !names.insert(key.name.clone()) {
                return Err(ConfigError::Invalid(format!(
                    "log.witnesses: {} is named twice",
                    key.name
                )));
            }
            let url = reqwest::Url::parse(&w.url).map_err(|e| {
                ConfigError::Invalid(format!("log.witnesses: url {:?}: {e}", w.url))
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                return Err(ConfigError::Invalid(format!(
                    "log.witnesses: url {:?} is not an http(s) address",
                    w.url
                )));
            }
        }
        Ok(())
    }

    /// The log writer's options.
    pub fn options(&self) -> interlock_log::LogOptions {
        interlock_log::LogOptions {
            checkpoint_interval: std::time::Duration::from_millis(self.checkpoint_interval_ms),
            flush_window: std::time::Duration::from_millis(self.flush_window_ms.max(1)),
        }
    }

    /// How an outcome leaf is acknowledged.
    pub fn outcome_durability(&self) -> interlock_log::Durability {
        match self.durability {
            DurabilityMode::Group => interlock_log::Durability::Committed,
            DurabilityMode::Strict => interlock_log::Durability::Durable,
        }
    }
}

/// The tool-call path: held calls and response scanning.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CallsConfig {
    /// How long a held call keeps its client waiting for a reviewer before it
    /// answers with the plan to retry later.
    pub hold_secs: u64,
    /// What to do with PII, secrets and injection text in tool results:
    /// `allow`, `redact` or `block`.
    pub response_pii: String,
    pub response_secrets: String,
    pub response_injection: String,
    /// The largest answer the response scan reads, in bytes: a larger one is
    /// withheld with an error saying so, never forwarded unscanned.
    pub response_max_bytes: usize,
}

impl Default for CallsConfig {
    fn default() -> Self {
        CallsConfig {
            hold_secs: 20,
            response_pii: "redact".into(),
            response_secrets: "redact".into(),
            response_injection: "redact".into(),
            response_max_bytes: 16 << 20,
        }
    }
}

fn default_listen() -> SocketAddr {
    DEFAULT_LISTEN.parse().expect("a valid socket address")
}

fn default_recheck() -> u64 {
    300
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            listen: default_listen(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            recheck_secs: default_recheck(),
            ui_dir: None,
            limits: Limits::default(),
            drift: DriftConfig::default(),
            envelope: EnvelopeConfig::default(),
            servers: BTreeMap::new(),
            roles: BTreeMap::new(),
            calls: CallsConfig::default(),
            log: LogConfig::default(),
            alerts: Default::default(),
            store: StoreConfig::default(),
            llm: Default::default(),
        }
    }
}

/// Bounds on what the gateway accepts and how long it waits.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body accepted on `/mcp` and the API, in bytes.
    pub max_body_bytes: usize,
    /// Largest message accepted from an upstream, in bytes.
    pub max_upstream_message_bytes: usize,
    /// How long a forwarded request may take before the agent gets an error.
    pub upstream_timeout_secs: u64,
    /// How long a starting stdio server may take to answer its handshake
    /// while its process lives (an `npx` download, a cold Python venv, a
    /// busy machine): it is restarted only after that (issue 45 item 6).
    pub upstream_start_secs: u64,
    /// Live agent sessions kept in all. When full, a new session is refused
    /// (503): a key cannot push out other keys' sessions.
    pub max_sessions: usize,
    /// Live sessions one agent key may hold; its next one evicts its own
    /// oldest (never another key's).
    pub sessions_per_key: usize,
    /// TCP connections served at once; further ones wait in the listen
    /// backlog until one closes.
    pub max_connections: usize,
    /// How long a client has to send a request's whole header block, and how
    /// long an idle keep-alive connection waits for its next request, before
    /// the connection is closed (slowloris).
    pub header_read_timeout_secs: u64,
    /// Largest request header block (request line and headers), in bytes;
    /// a larger one is answered 431.
    pub max_header_bytes: usize,
    /// How long a request's whole body may take to arrive (in all, not
    /// between frames) before the request is answered 408.
    pub body_timeout_secs: u64,
    /// Most bytes of tool definitions gathered for one `tools/list`: from one
    /// upstream across all its pages, and in the listing an agent gets.
    pub max_tools_list_bytes: usize,
    /// Most tools gathered for one `tools/list` (as for the bytes).
    pub max_tools: usize,
    /// Resource subscriptions one agent key may hold at once (all its sessions).
    pub subscriptions_per_key: usize,
    /// Held calls of one agent key waiting for a reviewer at once.
    pub held_calls_per_key: usize,
    /// Calls of one agent key forwarded upstream at once (issue 39 item 18:
    /// one agent cannot take every upstream slot); the next is refused with
    /// a retry hint until one ends. `0`: no cap.
    pub calls_in_flight_per_key: usize,
    /// TCP connections one agent key may be served on at once, of
    /// `max_connections` (issue 39 item 18: one agent's long-held streams
    /// cannot take every connection). A connection is the first key's that
    /// used it; a request on a further one is answered 429 and the
    /// connection closed. `0`: no share.
    pub connections_per_key: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 << 20,
            max_upstream_message_bytes: 16 << 20,
            upstream_timeout_secs: 120,
            upstream_start_secs: 600,
            max_sessions: 4096,
            sessions_per_key: 64,
            max_connections: 1024,
            header_read_timeout_secs: 10,
            max_header_bytes: 64 << 10,
            body_timeout_secs: 30,
            max_tools_list_bytes: 16 << 20,
            max_tools: 10_000,
            subscriptions_per_key: 256,
            held_calls_per_key: 16,
            calls_in_flight_per_key: 64,
            connections_per_key: 256,
        }
    }
}

impl Limits {
    pub fn upstream_timeout(&self) -> Duration {
        Duration::from_secs(self.upstream_timeout_secs)
    }

    /// How long a stdio server's handshake may take ([`Limits::upstream_start_secs`]).
    pub fn upstream_start_timeout(&self) -> Duration {
        Duration::from_secs(self.upstream_start_secs)
    }

    /// The cumulative bounds on one `tools/list`.
    pub fn tools_list_caps(&self) -> ListCaps {
        ListCaps {
            max_bytes: self.max_tools_list_bytes,
            max_items: self.max_tools,
        }
    }
}

/// Bounds on everything one listing gathers (every page, every upstream), so
/// an upstream paginating forever or listing a huge surface cannot exhaust the
/// gateway's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListCaps {
    pub max_bytes: usize,
    pub max_items: usize,
}

/// Severity thresholds for drift (see `interlock_surface::DriftPolicy`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriftConfig {
    /// Drift below this severity is only recorded.
    pub monitor_below: String,
    /// Drift at or above this severity is quarantined; between the two, held.
    pub quarantine_at: String,
}

impl Default for DriftConfig {
    fn default() -> Self {
        DriftConfig {
            monitor_below: "medium".into(),
            quarantine_at: "critical".into(),
        }
    }
}

impl DriftConfig {
    pub fn policy(&self) -> Result<DriftPolicy, ConfigError> {
        let sev = |field: &str, s: &str| {
            Ok(match s {
                "info" => Severity::Info,
                "low" => Severity::Low,
                "medium" => Severity::Medium,
                "high" => Severity::High,
                "critical" => Severity::Critical,
                other => {
                    return Err(ConfigError::Invalid(format!(
                        "drift.{field}: unknown severity {other:?} (info, low, medium, high, critical)"
                    )));
                }
            })
        };
        let policy = DriftPolicy {
            monitor_below: sev("monitor_below", &self.monitor_below)?,
            quarantine_at: sev("quarantine_at", &self.quarantine_at)?,
        };
        if policy.monitor_below > policy.quarantine_at {
            return Err(ConfigError::Invalid(
                "drift.monitor_below must not be above drift.quarantine_at".into(),
            ));
        }
        Ok(policy)
    }
}

/// What the gateway does with a call or result outside a tool's learned
/// envelope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvelopeMode {
    /// No envelope is learned or checked.
    Off,
    /// Findings are recorded in the call's leaf; nothing is held or withheld.
    Monitor,
    /// A call whose arguments are outside is held for a reviewer; a result
    /// outside is withheld (the default).
    #[default]
    Hold,
}

impl EnvelopeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeMode::Off => "off",
            EnvelopeMode::Monitor => "monitor",
            EnvelopeMode::Hold => "hold",
        }
    }
}

/// `[envelope]`: how a tool's behavioural envelope is learned and enforced.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvelopeConfig {
    pub mode: EnvelopeMode,
    /// Answered calls observed before the envelope is fixed.
    pub learn_calls: u64,
    /// And at least this long since the first observed call (0: calls only).
    pub learn_secs: u64,
    /// A result may be this many times the largest one learned (and at least
    /// 4 KiB more).
    pub size_factor: f64,
}

impl Default for EnvelopeConfig {
    fn default() -> Self {
        EnvelopeConfig {
            mode: EnvelopeMode::Hold,
            learn_calls: 20,
            learn_secs: 0,
            size_factor: 4.0,
        }
    }
}

impl EnvelopeConfig {
    fn check(&self) -> Result<(), ConfigError> {
        if self.learn_calls == 0 {
            return Err(ConfigError::Invalid(
                "envelope.learn_calls must be at least 1 (use mode = \"off\" to learn nothing)"
                    .into(),
            ));
        }
        if !(self.size_factor.is_finite() && self.size_factor >= 1.0) {
            return Err(ConfigError::Invalid(
                "envelope.size_factor must be a number of at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// One upstream MCP server: a child process over stdio, or a Streamable HTTP URL.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Program to spawn (stdio transport).
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Environment variables whose values live in the OS keychain, never in
    /// this file: `NAME = "token name"` (a token the host reads from the
    /// keychain when it starts the gateway; `interlock connect` writes them
    /// for the API tokens it moves out of a client's config). Resolved into
    /// `env` by [`GatewayConfig::resolve_secrets`]; a server with an
    /// unresolved one is refused rather than started without its token.
    #[serde(default)]
    pub env_keychain: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Streamable HTTP endpoint (HTTP transport).
    pub url: Option<String>,
    /// Extra HTTP headers for every request (e.g. the upstream's own auth).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// HTTP headers whose values live in the OS keychain (as `env_keychain`).
    #[serde(default)]
    pub headers_keychain: BTreeMap<String, String>,
    /// What agents see before each tool name. Default `<name>__`; `""` keeps
    /// the upstream's own names (for a gateway in front of one server, so
    /// agents' prompts keep working).
    pub prefix: Option<String>,
    /// Directories this server's path arguments may point into; a path outside
    /// them is flagged as traversal. Empty: only well-known sensitive paths are.
    #[serde(default)]
    pub roots: Vec<String>,
    /// The protocol era to reach it in: `"auto"` (default: 2026-07-28 when
    /// its `server/discover` lists it, else the 2025-11-25 handshake),
    /// `"2025-11-25"` or `"2026-07-28"` (see `upstream::era`).
    #[serde(default)]
    pub protocol: crate::upstream::era::EraChoice,
    /// `probes = "non-production"`: this server may be probed — its declared
    /// `probe` calls are real tool calls, made at every re-check. Absent:
    /// never probed; any other value is refused (so is a `probe` list
    /// without it), so probing is never switched on by a typo or a default.
    pub probes: Option<ProbeMarking>,
    /// `[[servers.NAME.probe]]`: effective-permission probes (see
    /// [`UpstreamConfig::compiled_probes`] and docs/GATEWAY.md "Probes").
    #[serde(default)]
    pub probe: Vec<ProbeConfig>,
    /// `pin = ["tools", "prompts", "instructions"]` (the default): what of
    /// the server's surface is pinned at approval and watched for drift.
    /// `"resources"` adds its resources and resource templates (off by
    /// default: a file server's listing changes whenever a file does).
    /// `"tools"` cannot be left out: no tool is served unpinned.
    #[serde(default)]
    pub pin: PinSet,
    /// What a `command` server may reach (issue 38): absent, the profile
    /// derived from its launch; `{ read = [...], write = [...], net = ...,
    /// limits = {...} }` adds to it; `"off"` runs it unconfined (shown as a
    /// warning and recorded in its approval). Pinned with its surface.
    #[serde(default)]
    pub sandbox: interlock_sandbox::Setting,
}

/// One part of a server's surface that can be pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinPart {
    Tools,
    Prompts,
    Resources,
    Instructions,
}

/// What of a server's surface is pinned (`pin = [...]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinSet(std::collections::BTreeSet<PinPart>);

impl Default for PinSet {
    /// Tools, prompts and instructions.
    fn default() -> PinSet {
        PinSet([PinPart::Tools, PinPart::Prompts, PinPart::Instructions].into())
    }
}

impl PinSet {
    /// Whether `part` is pinned.
    pub fn pins(&self, part: PinPart) -> bool {
        self.0.contains(&part)
    }

    /// The pinned parts' names, as written in `pin`.
    pub fn names(&self) -> Vec<&'static str> {
        self.0
            .iter()
            .map(|p| match p {
                PinPart::Tools => "tools",
                PinPart::Prompts => "prompts",
                PinPart::Resources => "resources",
                PinPart::Instructions => "instructions",
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for PinSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PinSet, D::Error> {
        let parts = Vec::<PinPart>::deserialize(d)?;
        let set: std::collections::BTreeSet<PinPart> = parts.into_iter().collect();
        if !set.contains(&PinPart::Tools) {
            return Err(serde::de::Error::custom(
                "pin must include \"tools\": the gateway never serves a tool it has not pinned",
            ));
        }
        Ok(PinSet(set))
    }
}

/// The one marking that lets the gateway probe a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ProbeMarking {
    /// A server whose tools may be called by the gateway itself, with the
    /// declared arguments, at every re-check: a test or staging instance.
    #[serde(rename = "non-production")]
    NonProduction,
}

/// One `[[servers.NAME.probe]]` as written: `tool`, `arguments` (a table),
/// `expect` (`"denied"`, `"error"`, or a table of predicates:
/// `{ result_contains = "…", result_lacks = "…" }`, each a string or a list
/// of strings, all of which must hold on a successful result).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    pub tool: String,
    #[serde(default)]
    pub arguments: toml::Table,
    pub expect: toml::Value,
}

/// At most this many probes per server: each is a real call at every re-check.
pub const MAX_PROBES: usize = 32;

impl UpstreamConfig {
    /// The declared probes, checked: none unless the server is marked
    /// `probes = "non-production"`, and a `probe` list on an unmarked server
    /// is an error (a reviewer who declared probes expects them to run).
    /// Whether each tool exists is only known once the server lists its
    /// tools; a probe of an unknown tool is a probe finding then.
    pub fn compiled_probes(
        &self,
        name: &str,
    ) -> Result<Vec<interlock_surface::probes::Probe>, ConfigError> {
        use interlock_surface::probes::{Expectation, Predicate, Probe};
        if self.probes.is_none() {
            if !self.probe.is_empty() {
                return Err(ConfigError::Invalid(format!(
                    "servers.{name}: probes are declared but the server is not marked safe to probe; \
                     probes are real tool calls, so add `probes = \"non-production\"` if this server \
                     is a test or staging instance, or remove the `probe` entries"
                )));
            }
            return Ok(Vec::new());
        }
        if self.probe.len() > MAX_PROBES {
            return Err(ConfigError::Invalid(format!(
                "servers.{name}: {} probes declared, at most {MAX_PROBES}",
                self.probe.len()
            )));
        }
        let mut out = Vec::with_capacity(self.probe.len());
        for (i, p) in self.probe.iter().enumerate() {
            let at = format!("servers.{name}.probe[{i}]");
            let bad = |m: String| ConfigError::Invalid(format!("{at}: {m}"));
            if p.tool.trim().is_empty() || p.tool.len() > 128 {
                return Err(bad(
                    "`tool` is the upstream tool's name (1 to 128 bytes)".into()
                ));
            }
            let mut arguments = interlock_canon::Map::new();
            for (k, v) in &p.arguments {
                arguments.insert(
                    k.clone(),
                    toml_to_canon(v).map_err(|m| bad(format!("arguments.{k}: {m}")))?,
                );
            }
            let expect = match &p.expect {
                toml::Value::String(s) if s == "denied" => Expectation::Denied,
                toml::Value::String(s) if s == "error" => Expectation::Error,
                toml::Value::String(s) => {
                    return Err(bad(format!(
                        "expect = {s:?}: give \"denied\", \"error\" or a table of predicates \
                         ({{ result_contains = \"…\" }} / {{ result_lacks = \"…\" }})"
                    )));
                }
                toml::Value::Table(t) => {
                    if t.is_empty() {
                        return Err(bad("expect = {}: name at least one predicate (result_contains, result_lacks)".into()));
                    }
                    let mut preds = Vec::new();
                    for (k, v) in t {
                        let make: fn(String) -> Predicate = match k.as_str() {
                            "result_contains" => Predicate::ResultContains,
                            "result_lacks" => Predicate::ResultLacks,
                            other => {
                                return Err(bad(format!(
                                    "expect.{other}: unknown predicate; known: result_contains, result_lacks"
                                )));
                            }
                        };
                        let texts: Vec<&toml::Value> = match v {
                            toml::Value::Array(a) => a.iter().collect(),
                            one => vec![one],
                        };
                        for t in texts {
                            match t {
                                toml::Value::String(s) if !s.is_empty() => {
                                    preds.push(make(s.clone()))
                                }
                                _ => {
                                    return Err(bad(format!(
                                        "expect.{k}: a non-empty string or a list of them"
                                    )));
                                }
                            }
                        }
                    }
                    Expectation::Result(preds)
                }
                other => {
                    return Err(bad(format!(
                        "expect: a string (\"denied\", \"error\") or a table of predicates, not a {}",
                        other.type_str()
                    )));
                }
            };
            out.push(Probe {
                tool: p.tool.clone(),
                arguments,
                expect,
            });
        }
        Ok(out)
    }

    /// The tool-name prefix in force.
    pub fn tool_prefix(&self, name: &str) -> String {
        self.prefix
            .clone()
            .unwrap_or_else(|| format!("{name}{TOOL_SEPARATOR}"))
    }
}

/// How to reach an upstream, once validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        /// Its confinement (`interlock_sandbox`).
        sandbox: interlock_sandbox::Setting,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// The launch as pinned with the server's surface (issue 38): for a
    /// `command` server its command, arguments, environment names, working
    /// directory and sandbox setting; `None` for an HTTP server.
    pub fn pinned_launch(&self) -> Option<serde_json::Value> {
        self.launch()
            .map(|(launch, sandbox)| launch.pinned(sandbox))
    }

    /// How a `command` server is started, and its sandbox setting; `None`
    /// for an HTTP server.
    pub fn launch(&self) -> Option<(interlock_sandbox::Launch<'_>, &interlock_sandbox::Setting)> {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                sandbox,
            } => Some((
                interlock_sandbox::Launch {
                    command,
                    args,
                    env,
                    cwd: cwd.as_deref(),
                },
                sandbox,
            )),
            Transport::Http { .. } => None,
        }
    }

    /// A short description for humans (`stdio: npx …` / `http: URL`).
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                format!("stdio: {command} {}", args.join(" "))
                    .trim_end()
                    .to_owned()
            }
            Transport::Http { url, .. } => format!("http: {url}"),
        }
    }
}

impl UpstreamConfig {
    /// How to reach this server. Refused while keychain references are
    /// unresolved: a server started without its token would fail in ways
    /// that look like the server's fault.
    pub fn transport(&self, name: &str) -> Result<Transport, ConfigError> {
        if let Some(var) = self
            .env_keychain
            .keys()
            .chain(self.headers_keychain.keys())
            .next()
        {
            return Err(ConfigError::Invalid(format!(
                "servers.{name}: `{var}` is kept in the OS keychain and was not read from it \
                 (only a gateway started by the host resolves keychain references)"
            )));
        }
        self.shape(name)
    }

    /// The transport as written, keychain references aside (what a config
    /// check can know without the keychain).
    fn shape(&self, name: &str) -> Result<Transport, ConfigError> {
        for (field, refs) in [
            ("env_keychain", &self.env_keychain),
            ("headers_keychain", &self.headers_keychain),
        ] {
            for (var, token) in refs {
                if !valid_token_name(token) {
                    return Err(ConfigError::Invalid(format!(
                        "servers.{name}.{field}.{var}: {token:?} is not a keychain token name \
                         (1 to 128 of A-Z a-z 0-9 . _ -)"
                    )));
                }
            }
        }
        if let Some(var) = self.env.keys().find(|k| self.env_keychain.contains_key(*k)) {
            return Err(ConfigError::Invalid(format!(
                "servers.{name}: `{var}` is in both `env` and `env_keychain`"
            )));
        }
        if let Some(h) = self
            .headers
            .keys()
            .find(|k| self.headers_keychain.contains_key(*k))
        {
            return Err(ConfigError::Invalid(format!(
                "servers.{name}: `{h}` is in both `headers` and `headers_keychain`"
            )));
        }
        match (&self.command, &self.url) {
            (Some(command), None) => {
                if !self.headers.is_empty() || !self.headers_keychain.is_empty() {
                    return Err(ConfigError::Invalid(format!(
                        "servers.{name}: `headers` is for `url` servers"
                    )));
                }
                Ok(Transport::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self.cwd.clone(),
                    sandbox: self.sandbox.clone(),
                })
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ConfigError::Invalid(format!(
                        "servers.{name}: url must be http:// or https://, not {url:?}"
                    )));
                }
                if !self.args.is_empty()
                    || !self.env.is_empty()
                    || !self.env_keychain.is_empty()
                    || self.cwd.is_some()
                    || self.sandbox != interlock_sandbox::Setting::Default
                {
                    return Err(ConfigError::Invalid(format!(
                        "servers.{name}: `args`, `env`, `cwd` and `sandbox` are for `command` servers"
                    )));
                }
                Ok(Transport::Http {
                    url: url.clone(),
                    headers: self.headers.clone(),
                })
            }
            (Some(_), Some(_)) => Err(ConfigError::Invalid(format!(
                "servers.{name}: give either `command` (stdio) or `url` (HTTP), not both"
            ))),
            (None, None) => Err(ConfigError::Invalid(format!(
                "servers.{name}: give `command` (stdio) or `url` (Streamable HTTP)"
            ))),
        }
    }
}

/// A TOML value as a canonical one: a probe's arguments are hashed and sent
/// as JSON, so only what JSON holds is accepted (no dates, no integers beyond
/// 2^53 − 1, no non-finite floats).
fn toml_to_canon(v: &toml::Value) -> Result<interlock_canon::Value, String> {
    use interlock_canon::{Number, Value};
    Ok(match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => {
            Value::Number(Number::from_i64(*i).ok_or_else(|| format!("{i} is beyond ±(2^53 − 1)"))?)
        }
        toml::Value::Float(f) => {
            Value::Number(Number::from_f64(*f).ok_or_else(|| format!("{f} is not finite"))?)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => return Err(format!("{d}: dates are not JSON; write a string")),
        toml::Value::Array(a) => {
            Value::Array(a.iter().map(toml_to_canon).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| Ok((k.clone(), toml_to_canon(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// Whether `name` may name an upstream server: lower-case ASCII letters,
/// digits, `-` and single `_`, at most 64 bytes (it becomes a tool-name prefix).
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.contains(TOOL_SEPARATOR)
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !name.starts_with('_')
        && !name.ends_with('_')
}

/// Whether `name` may name a keychain token (what `interlock-keychain`
/// accepts: 1 to 128 of `A-Z a-z 0-9 . _ -`).
pub fn valid_token_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

impl GatewayConfig {
    /// Every server's exposed-tool prefix, by name (what
    /// `interlock_trust::standing::approved_tool_hash` resolves a tool name with).
    pub fn tool_prefixes(&self) -> BTreeMap<String, String> {
        self.servers
            .iter()
            .map(|(name, server)| (name.clone(), server.tool_prefix(name)))
            .collect()
    }

    /// Whether any server keeps an environment variable or header in the
    /// OS keychain (so the keychain need not be opened otherwise).
    pub fn has_keychain_references(&self) -> bool {
        self.servers
            .values()
            .any(|u| !u.env_keychain.is_empty() || !u.headers_keychain.is_empty())
            || self.alerts.has_keychain_references()
            || self.llm.has_keychain_references()
    }

    /// Replaces every `env_keychain` / `headers_keychain` reference with the
    /// value `lookup` finds for its token, in `env` / `headers`. The gateway
    /// does not open the keychain itself (the host does: it owns the
    /// keychain service name); a missing token is an error naming the server
    /// and variable, never a server started without it.
    pub fn resolve_secrets(
        &mut self,
        mut lookup: impl FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<(), ConfigError> {
        self.alerts.resolve_secrets(&mut lookup)?;
        self.llm.resolve_secrets(&mut lookup)?;
        for (name, up) in &mut self.servers {
            for (refs, into) in [
                (&mut up.env_keychain, &mut up.env),
                (&mut up.headers_keychain, &mut up.headers),
            ] {
                for (var, token) in std::mem::take(refs) {
                    let value = lookup(&token)
                        .map_err(|e| {
                            ConfigError::Invalid(format!(
                                "servers.{name}: `{var}` from the keychain (token {token}): {e}"
                            ))
                        })?
                        .ok_or_else(|| {
                            ConfigError::Invalid(format!(
                                "servers.{name}: `{var}` is kept in the OS keychain as token \
                                 {token}, and the keychain has no such token"
                            ))
                        })?;
                    into.insert(var, value);
                }
            }
        }
        Ok(())
    }

    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<GatewayConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        GatewayConfig::parse(&text).map_err(|e| match e {
            ConfigError::Parse { message, .. } => ConfigError::Parse {
                path: path.to_owned(),
                message,
            },
            other => other,
        })
    }

    /// Parses and checks config text.
    pub fn parse(text: &str) -> Result<GatewayConfig, ConfigError> {
        let config: GatewayConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: PathBuf::from("<config>"),
            message: e.to_string(),
        })?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), ConfigError> {
        self.log.check()?;
        self.store.location()?;
        self.envelope.check()?;
        self.alerts.check()?;
        self.llm.check()?;
        for (name, upstream) in &self.servers {
            if !valid_server_name(name) {
                return Err(ConfigError::Invalid(format!(
                    "servers.{name}: a server name is lower-case letters, digits, `-` and `_` \
                     (no `__`, not at either end), at most 64 bytes"
                )));
            }
            upstream.shape(name)?;
            upstream.compiled_probes(name)?;
            if let Some(p) = &upstream.prefix
                && !p
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
            {
                return Err(ConfigError::Invalid(format!(
                    "servers.{name}.prefix: letters, digits, `_`, `-` and `.` only"
                )));
            }
        }
        // Two servers' tool names can collide when one's prefix starts the
        // other's (the same prefix, or `""` beside any other server): server
        // `a` with prefix `""` and a tool `b__x` would shadow server `b`'s `x`.
        let prefixes: Vec<(&String, String)> = self
            .servers
            .iter()
            .map(|(n, u)| (n, u.tool_prefix(n)))
            .collect();
        for (i, (a, pa)) in prefixes.iter().enumerate() {
            for (b, pb) in &prefixes[i + 1..] {
                if pa.starts_with(pb.as_str()) || pb.starts_with(pa.as_str()) {
                    return Err(ConfigError::Invalid(format!(
                        "servers.{a} (prefix {pa:?}) and servers.{b} (prefix {pb:?}): their tool \
                         names could collide, since one prefix starts the other; give each \
                         server a distinct prefix (an empty prefix only for a gateway in front \
                         of one server)"
                    )));
                }
            }
        }
        for (name, role) in &self.roles {
            for glob in &role.tools {
                crate::roles::Glob::new(glob).map_err(|e| {
                    ConfigError::Invalid(format!("roles.{name}.tools: {glob:?}: {e}"))
                })?;
            }
        }
        self.drift.policy()?;
        for (name, role) in &self.roles {
            if let Some(r) = &role.max_risk
                && interlock_core::RiskLevel::from_name(r).is_none()
            {
                return Err(ConfigError::Invalid(format!(
                    "roles.{name}.max_risk: {r:?} is not low, medium, high or critical"
                )));
            }
        }
        for (field, v) in [
            ("response_pii", &self.calls.response_pii),
            ("response_secrets", &self.calls.response_secrets),
            ("response_injection", &self.calls.response_injection),
        ] {
            v.parse::<interlock_inspect::Action>()
                .map_err(|e| ConfigError::Invalid(format!("calls.{field}: {e}")))?;
        }
        if self.recheck_secs == 0 {
            return Err(ConfigError::Invalid(
                "recheck_secs must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: a server's environment secrets are referenced from the
    /// keychain, never written here; the reference is checked at load,
    /// refused where it cannot apply, resolved by the host into `env` /
    /// `headers`, and a server whose reference is not resolved is not started.
    #[test]
    fn keychain_references_are_checked_and_resolved_never_started_unresolved() {
        let text = "[servers.gh]\ncommand = \"npx\"\nenv = { LOG = \"1\" }\n\
                    env_keychain = { GITHUB_TOKEN = \"upstream.gh.GITHUB_TOKEN\" }\n\
                    [servers.api]\nurl = \"http://127.0.0.1:9/mcp\"\n\
                    headers_keychain = { Authorization = \"upstream.api.Authorization\" }\n";
        let mut c = GatewayConfig::parse(text).unwrap();
        assert!(c.has_keychain_references());
        let e = c.servers["gh"].transport("gh").unwrap_err().to_string();
        assert!(e.contains("GITHUB_TOKEN") && e.contains("keychain"), "{e}");
        let mut asked = Vec::new();
        c.resolve_secrets(|t| {
            asked.push(t.to_owned());
            Ok(Some(format!("secret-of-{t}")))
        })
        .unwrap();
        assert_eq!(
            asked,
            ["upstream.api.Authorization", "upstream.gh.GITHUB_TOKEN"]
        );
        match c.servers["gh"].transport("gh").unwrap() {
            Transport::Stdio { env, .. } => {
                assert_eq!(env["GITHUB_TOKEN"], "secret-of-upstream.gh.GITHUB_TOKEN");
                assert_eq!(env["LOG"], "1");
            }
            other => panic!("{other:?}"),
        }
        match c.servers["api"].transport("api").unwrap() {
            Transport::Http { headers, .. } => {
                assert_eq!(
                    headers["Authorization"],
                    "secret-of-upstream.api.Authorization"
                )
            }
            other => panic!("{other:?}"),
        }
        let mut missing = GatewayConfig::parse(text).unwrap();
        let e = missing
            .resolve_secrets(|_| Ok(None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("servers.api") && e.contains("no such token"),
            "{e}"
        );
        for bad in [
            "[servers.a]\nurl = \"http://x/mcp\"\nenv_keychain = { T = \"t\" }\n",
            "[servers.a]\ncommand = \"x\"\nheaders_keychain = { T = \"t\" }\n",
            "[servers.a]\ncommand = \"x\"\nenv_keychain = { T = \"not a name!\" }\n",
            "[servers.a]\ncommand = \"x\"\nenv = { T = \"1\" }\nenv_keychain = { T = \"t\" }\n",
        ] {
            assert!(GatewayConfig::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    /// Issue 16 item 2: `[envelope]` defaults to holding after 20 calls, takes
    /// monitor and off, and refuses what would make no sense.
    #[test]
    fn envelope_section_sets_learning_and_enforcement() {
        let d = GatewayConfig::parse("").unwrap().envelope;
        assert_eq!(
            (d.mode, d.learn_calls, d.learn_secs),
            (EnvelopeMode::Hold, 20, 0)
        );
        let c = GatewayConfig::parse(
            "[envelope]\nmode = \"monitor\"\nlearn_calls = 5\nlearn_secs = 60\n",
        )
        .unwrap()
        .envelope;
        assert_eq!(
            (c.mode, c.learn_calls, c.learn_secs),
            (EnvelopeMode::Monitor, 5, 60)
        );
        for bad in [
            "[envelope]\nmode = \"block\"\n",
            "[envelope]\nlearn_calls = 0\n",
            "[envelope]\nsize_factor = 0.5\n",
            "[envelope]\nlearn = 3\n",
        ] {
            assert!(GatewayConfig::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    /// Issue 17: the durability contract's knobs: the defaults (checkpoints at
    /// most every 100 ms, outcome leaves committed and fsynced within 10 ms),
    /// `strict`, and an unknown mode refused rather than ignored.
    #[test]
    fn log_section_sets_the_durability_contract() {
        let d = GatewayConfig::parse("").unwrap().log;
        assert_eq!(
            d.options(),
            interlock_log::LogOptions {
                checkpoint_interval: std::time::Duration::from_millis(100),
                flush_window: std::time::Duration::from_millis(10),
            }
        );
        assert_eq!(d.outcome_durability(), interlock_log::Durability::Committed);
        let strict =
            GatewayConfig::parse("[log]\ndurability = \"strict\"\ncheckpoint_interval_ms = 0\n")
                .unwrap()
                .log;
        assert_eq!(
            strict.outcome_durability(),
            interlock_log::Durability::Durable
        );
        assert!(strict.options().checkpoint_interval.is_zero());
        let e = GatewayConfig::parse("[log]\ndurability = \"eventually\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("eventually"), "{e}");
        // An interval that would overflow the writer's timers is refused.
        let e = GatewayConfig::parse("[log]\ncheckpoint_interval_ms = 18446744073709551615\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("log.checkpoint_interval_ms"), "{e}");
        assert!(GatewayConfig::parse("[log]\nflush_window_ms = 60000\n").is_err());
    }

    #[test]
    fn regression_empty_prefix_is_refused_beside_another_server() {
        let two = |pa: &str, pb: &str| {
            GatewayConfig::parse(&format!(
                "[servers.alpha]\ncommand = \"a\"\n{pa}\n[servers.beta]\ncommand = \"b\"\n{pb}\n"
            ))
        };
        // An empty prefix beside any other server: `alpha`'s tool `beta__x`
        // would be indistinguishable from `beta`'s `x`.
        let e = two("prefix = \"\"", "").unwrap_err().to_string();
        assert!(
            e.contains("servers.alpha") && e.contains("servers.beta") && e.contains("collide"),
            "{e}"
        );
        assert!(two("prefix = \"\"", "prefix = \"\"").is_err());
        // One prefix starting the other collides the same way.
        assert!(two("prefix = \"gh\"", "prefix = \"gh_x\"").is_err());
        // Alone, an empty prefix is fine; distinct prefixes are fine.
        assert!(GatewayConfig::parse("[servers.alpha]\ncommand = \"a\"\nprefix = \"\"\n").is_ok());
        assert!(two("", "").is_ok());
        assert!(two("prefix = \"a_\"", "prefix = \"b_\"").is_ok());
    }

    #[test]
    fn a_full_config_parses() {
        let c = GatewayConfig::parse(
            r#"
listen = "127.0.0.1:9000"
[servers.files]
command = "npx"
args = ["mcp-server-filesystem", "/tmp"]
[servers.search]
url = "http://127.0.0.1:3001/mcp"
[roles.developer]
tools = ["files__read_*"]
[drift]
quarantine_at = "critical"
"#,
        )
        .unwrap();
        assert_eq!(c.listen.port(), 9000);
        assert!(matches!(
            c.servers["files"].transport("files").unwrap(),
            Transport::Stdio { .. }
        ));
        assert_eq!(c.drift.policy().unwrap().quarantine_at, Severity::Critical);
    }

    /// Issue 16 item 4: by default, annotation flips toward more power and
    /// risky new tools (high) are held, and only injection wording (critical)
    /// quarantines; the gateway's defaults are the surface crate's.
    #[test]
    fn regression_default_drift_thresholds_hold_high_and_quarantine_critical() {
        let p = DriftConfig::default().policy().unwrap();
        assert_eq!(p, DriftPolicy::default());
        assert_eq!(
            p.action_for(Severity::High),
            interlock_surface::Action::Hold
        );
        assert_eq!(
            p.action_for(Severity::Critical),
            interlock_surface::Action::Quarantine
        );
    }

    #[test]
    fn mistakes_are_named() {
        let err = |t: &str| GatewayConfig::parse(t).unwrap_err().to_string();
        assert!(err("quarantine_at = 'high'").contains("unknown field"));
        assert!(err("[servers.a__b]\ncommand='x'").contains("servers.a__b"));
        assert!(err("[servers.x]\ncommand='x'\nurl='http://a'").contains("not both"));
        assert!(err("[servers.x]\nurl='ftp://a'").contains("http://"));
        assert!(err("[drift]\nquarantine_at='severe'").contains("unknown severity"));
        assert!(err("listen = 'nowhere'").contains("listen"));
    }

    /// Issue 15 item 21: which era an upstream is reached in, by version name.
    #[test]
    fn an_upstreams_protocol_era_is_chosen_by_version() {
        use crate::upstream::era::EraChoice;
        let era = |line: &str| {
            GatewayConfig::parse(&format!("[servers.x]\ncommand = 'x'\n{line}"))
                .map(|c| c.servers["x"].protocol)
        };
        assert_eq!(era("").unwrap(), EraChoice::Auto);
        assert_eq!(era("protocol = 'auto'").unwrap(), EraChoice::Auto);
        assert_eq!(
            era("protocol = '2025-11-25'").unwrap(),
            EraChoice::Handshake
        );
        assert_eq!(
            era("protocol = '2026-07-28'").unwrap(),
            EraChoice::Stateless
        );
        let e = era("protocol = '2025-06-18'").unwrap_err().to_string();
        assert!(e.contains("2025-11-25") && e.contains("2026-07-28"), "{e}");
    }

    /// Issue 16 item 6: `pin` defaults to tools, prompts and instructions;
    /// resources are opt-in, tools cannot be left out, typos are refused.
    #[test]
    fn pin_sets_are_typed_and_always_pin_tools() {
        let pin = |body: &str| {
            GatewayConfig::parse(&format!("[servers.x]\ncommand = 'x'\n{body}"))
                .map(|c| c.servers["x"].pin.clone())
        };
        let default = pin("").unwrap();
        assert!(default.pins(PinPart::Tools) && default.pins(PinPart::Prompts));
        assert!(default.pins(PinPart::Instructions) && !default.pins(PinPart::Resources));
        let all = pin(r#"pin = ["tools", "prompts", "resources", "instructions"]"#).unwrap();
        assert!(all.pins(PinPart::Resources));
        let tools_only = pin(r#"pin = ["tools"]"#).unwrap();
        assert!(!tools_only.pins(PinPart::Prompts) && !tools_only.pins(PinPart::Instructions));
        let e = pin(r#"pin = ["prompts"]"#).unwrap_err().to_string();
        assert!(e.contains("must include \"tools\""), "{e}");
        let e = pin(r#"pin = ["tools", "promts"]"#).unwrap_err().to_string();
        assert!(e.contains("promts"), "{e}");
    }

    /// Issue 16 item 1: probes are typed at load, and never switched on by
    /// accident.
    #[test]
    fn probe_configs_are_checked_at_load() {
        use interlock_surface::probes::{Expectation, Predicate};
        let parse = |body: &str| {
            GatewayConfig::parse(&format!("[servers.x]\ncommand = 'x'\n{body}"))
                .map(|c| c.servers["x"].compiled_probes("x").unwrap())
        };
        let err = |body: &str| parse(body).unwrap_err().to_string();
        let probes = parse(
            r#"probes = "non-production"
[[servers.x.probe]]
tool = "read_secret"
arguments = { path = "/etc/shadow", depth = 2, deep = { list = [1, true] } }
expect = "denied"
[[servers.x.probe]]
tool = "stat"
expect = "error"
[[servers.x.probe]]
tool = "read_file"
arguments = { path = "/srv/readme" }
expect = { result_contains = "readme", result_lacks = ["BEGIN PRIVATE KEY", "AKIA"] }
"#,
        )
        .unwrap();
        assert_eq!(probes.len(), 3);
        assert_eq!(probes[0].expect, Expectation::Denied);
        assert_eq!(probes[0].arguments["path"].as_str(), Some("/etc/shadow"));
        assert_eq!(probes[1].expect, Expectation::Error);
        assert!(probes[1].arguments.is_empty());
        assert_eq!(
            probes[2].expect,
            Expectation::Result(vec![
                Predicate::ResultContains("readme".into()),
                Predicate::ResultLacks("BEGIN PRIVATE KEY".into()),
                Predicate::ResultLacks("AKIA".into()),
            ])
        );
        // No marking, no probes; a probe list without the marking is refused.
        assert!(parse("").unwrap().is_empty());
        let e = err("[[servers.x.probe]]\ntool = 't'\nexpect = 'denied'\n");
        assert!(
            e.contains("servers.x") && e.contains("non-production"),
            "{e}"
        );
        // Only the one marking.
        let e = err("probes = 'production'\n");
        assert!(e.contains("non-production"), "{e}");
        let e = err("probes = true\n");
        assert!(e.contains("probes"), "{e}");
        let marked = |p: &str| {
            err(&format!(
                "probes = 'non-production'\n[[servers.x.probe]]\n{p}"
            ))
        };
        let e = marked("tool = 't'\nexpect = 'allowed'\n");
        assert!(e.contains("probe[0]") && e.contains("\"allowed\""), "{e}");
        let e = marked("tool = 't'\nexpect = { result_matches = 'x' }\n");
        assert!(
            e.contains("unknown predicate") && e.contains("result_matches"),
            "{e}"
        );
        let e = marked("tool = 't'\nexpect = { result_lacks = 3 }\n");
        assert!(e.contains("expect.result_lacks"), "{e}");
        let e = marked("tool = 't'\nexpect = {}\n");
        assert!(e.contains("at least one predicate"), "{e}");
        let e = marked("tool = 't'\nexpect = 1\n");
        assert!(e.contains("not a integer"), "{e}");
        let e = marked("tool = ''\nexpect = 'denied'\n");
        assert!(e.contains("`tool`"), "{e}");
        let e = marked("tool = 't'\narguments = { when = 1979-05-27 }\nexpect = 'denied'\n");
        assert!(e.contains("arguments.when") && e.contains("dates"), "{e}");
        let e = marked("tool = 't'\nexpect = 'denied'\nargs = {}\n");
        assert!(e.contains("unknown field"), "{e}");
        let e = marked("tool = 't'\n");
        assert!(e.contains("expect"), "{e}");
        let many = "[[servers.x.probe]]\ntool = 't'\nexpect = 'denied'\n".repeat(MAX_PROBES + 1);
        let e = err(&format!("probes = 'non-production'\n{many}"));
        assert!(e.contains("at most"), "{e}");
    }

    #[test]
    fn the_default_binds_loopback() {
        assert!(GatewayConfig::default().listen.ip().is_loopback());
    }
}
