//! What the host hands the gateway to connect AI clients' config files to it
//! ([`ClientConnector`]; `interlock connect`, issue 19 item 2) and to put
//! coding agents' own tools behind it ([`HookInstaller`]; `interlock hooks
//! install`, issue 40). The gateway must
//! not depend on the host that assembles it, so the work comes in through this
//! trait; the reviewer API's preview over it is [`crate::reviewer::clients`], and
//! the owner's connect and undo [`crate::client_changes`]. A room of
//! its own so the runtime that holds the connector need not import the routes.

use serde_json::Value;

/// Why a connector refused.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// No client of that slug.
    #[error("unknown client {0:?}")]
    UnknownClient(String),
    /// The request cannot be done as things are (no file, nothing to undo,
    /// a file changed since connect, a malformed file): the user can act.
    #[error("{0}")]
    Refused(String),
    /// It failed (the keychain, the file system).
    #[error("{0}")]
    Failed(String),
}

/// The host's `interlock connect`, for the review UI. Answers are JSON
/// already shaped for the API (see `openapi.json`, `/api/v1/clients`).
#[async_trait::async_trait]
pub trait ClientConnector: Send + Sync + 'static {
    /// Every known client: its slug, name, user file, whether that file
    /// exists, whether a connect of it can be undone, and — for a file that
    /// exists — what connecting it would do, per server.
    async fn clients(&self) -> Result<Value, ConnectorError>;
    /// Whether `slug` names one of its clients: an unknown one is refused
    /// before anything is logged (a request names a client, never a path).
    fn knows(&self, slug: &str) -> bool;
    /// Connects the client `slug` (as `interlock connect SLUG --yes`).
    async fn connect(&self, slug: &str) -> Result<Value, ConnectorError>;
    /// Undoes its newest connect (as `interlock connect --undo SLUG`).
    async fn undo(&self, slug: &str) -> Result<Value, ConnectorError>;
}

/// What the gateway does when it cannot answer a hook: the hook's command
/// says it (`--on-unreachable`), the owner chooses it per client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnUnreachable {
    /// Deny the tool use (fail closed; the default).
    #[default]
    Deny,
    /// Let the client ask its user, as it would without Interlock.
    Ask,
}

impl OnUnreachable {
    pub fn as_str(self) -> &'static str {
        match self {
            OnUnreachable::Deny => "deny",
            OnUnreachable::Ask => "ask",
        }
    }

    pub fn parse(s: &str) -> Option<OnUnreachable> {
        match s {
            "deny" => Some(OnUnreachable::Deny),
            "ask" => Some(OnUnreachable::Ask),
            _ => None,
        }
    }
}

/// The host's `interlock hooks install`, for the review UI (issue 40 item 1):
/// each coding agent's user-level hook settings, with a diff of what
/// installing would write. Answers are JSON shaped for the API
/// (`/api/v1/hooks` in `openapi.json`).
#[async_trait::async_trait]
pub trait HookInstaller: Send + Sync + 'static {
    /// Every coding agent with hooks: its slug, name, settings file, whether
    /// it exists, whether an install can be undone, and what installing
    /// (with `on_unreachable`) would change, as a unified diff with keys and
    /// secrets masked.
    async fn hooks(&self, on_unreachable: OnUnreachable) -> Result<Value, ConnectorError>;
    /// Whether `slug` names one of them (a request names a client, never a path).
    fn knows(&self, slug: &str) -> bool;
    /// Installs the hooks of `slug` (as `interlock hooks install SLUG --yes`).
    async fn install(
        &self,
        slug: &str,
        on_unreachable: OnUnreachable,
    ) -> Result<Value, ConnectorError>;
    /// Gives its settings file back (as `interlock hooks install SLUG --undo`).
    async fn undo(&self, slug: &str) -> Result<Value, ConnectorError>;
}
