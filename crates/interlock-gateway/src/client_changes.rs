//! Connecting or undoing an AI client's config, and installing or undoing a
//! coding agent's hooks (issue 40 item 1), as this machine's owner asked
//! (issue 39 item 1). Connecting starts the client's MCP servers as the
//! gateway's user and rewrites a file in its home; undoing rewrites it back and
//! removes those servers with a signed decision. Neither is a reviewer's
//! action: a reviewer key proves only that someone holds it — a browser's
//! sign-in, a request through an SSH tunnel or a TLS proxy that arrives from
//! 127.0.0.1 — so the reviewer API refuses both
//! ([`crate::reviewer::clients`]). The owner asks through the desktop app's
//! native confirmation naming the commands, or `interlock connect` at the
//! machine's terminal; [`change_client`] takes an [`OwnerConfirmed`] to say so.
//!
//! Evidence before effect: the intent leaf is durable before the connector
//! touches the client's file (a process killed midway leaves the intent
//! without an outcome, which says the file may have changed); the outcome
//! leaf follows, whether it went through or was refused.

use serde_json::{Value, json};

use crate::connector::{ConnectorError, OnUnreachable};
use crate::gateway::Gateway;
use interlock_engine::EngineError;
use interlock_trust::events::EventType;

/// What the owner asked of a client's config file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientChange {
    /// Its MCP servers behind the gateway (`interlock connect`).
    Connect,
    /// The newest connect undone.
    Undo,
    /// Its own tools ask the gateway first (`interlock hooks install`).
    InstallHooks(OnUnreachable),
    /// Its hook settings given back as they were.
    UndoHooks,
}

impl ClientChange {
    pub fn name(self) -> &'static str {
        match self {
            ClientChange::Connect => "connect",
            ClientChange::Undo => "undo",
            ClientChange::InstallHooks(_) => "install_hooks",
            ClientChange::UndoHooks => "undo_hooks",
        }
    }

    /// The outcome leaf's kind when it went through.
    fn done(self) -> EventType {
        match self {
            ClientChange::Connect => EventType::ClientConnected,
            ClientChange::Undo => EventType::ClientUndone,
            ClientChange::InstallHooks(_) => EventType::ClientHooksInstalled,
            ClientChange::UndoHooks => EventType::ClientHooksUndone,
        }
    }
}

/// Proof, by construction, that this machine's owner confirmed the change:
/// made only by the shells that ask the owner natively (the desktop app's
/// dialog naming the commands). `by` is who the leaves name.
pub struct OwnerConfirmed {
    by: String,
}

impl OwnerConfirmed {
    /// The owner confirmed in `how` (e.g. "the desktop app's native
    /// confirmation"). Only code running as the owner on this machine calls
    /// this; nothing on the HTTP faces does.
    pub fn in_(how: &str) -> OwnerConfirmed {
        OwnerConfirmed {
            by: format!("owner ({how})"),
        }
    }
}

/// Why a client change did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ClientChangeError {
    /// This gateway has no connector or hook installer (a test's, a team
    /// gateway's).
    #[error(
        "this gateway does not change clients' files (run `interlock connect` or `interlock hooks install` on its machine)"
    )]
    NotAvailable,
    #[error(transparent)]
    Connector(#[from] ConnectorError),
    /// The evidence could not be written: nothing was changed, or (for the
    /// outcome) the change is on record only as an intent.
    #[error("not logged: {0}")]
    Log(#[from] EngineError),
}

/// Connects or undoes `slug` for the owner, with its intent and outcome on
/// the log (module doc). The answer is the connector's.
pub async fn change_client(
    gw: &Gateway,
    slug: &str,
    change: ClientChange,
    owner: &OwnerConfirmed,
) -> Result<Value, ClientChangeError> {
    let connector = gw.client_connector();
    let installer = gw.hook_installer();
    let known = match change {
        ClientChange::Connect | ClientChange::Undo => connector.as_ref().map(|c| c.knows(slug)),
        ClientChange::InstallHooks(_) | ClientChange::UndoHooks => {
            installer.as_ref().map(|i| i.knows(slug))
        }
    };
    match known {
        None => return Err(ClientChangeError::NotAvailable),
        Some(false) => return Err(ConnectorError::UnknownClient(slug.to_owned()).into()),
        Some(true) => {}
    }
    let mut intent = interlock_canon::Map::new();
    intent.insert("client".into(), slug.into());
    intent.insert("asked_by".into(), owner.by.as_str().into());
    intent.insert("change".into(), change.name().into());
    if let ClientChange::InstallHooks(on_unreachable) = change {
        intent.insert("on_unreachable".into(), on_unreachable.as_str().into());
    }
    let intent_index = gw
        .engine()
        .record(EventType::ClientChangeIntent.as_str(), intent.clone())
        .await?
        .index;
    // Both are there: `known` said so above.
    let outcome = match (change, connector, installer) {
        (ClientChange::Connect, Some(c), _) => c.connect(slug).await,
        (ClientChange::Undo, Some(c), _) => c.undo(slug).await,
        (ClientChange::InstallHooks(on_unreachable), _, Some(i)) => {
            i.install(slug, on_unreachable).await
        }
        (ClientChange::UndoHooks, _, Some(i)) => i.undo(slug).await,
        _ => Err(ConnectorError::Failed("no connector".into())),
    };
    let mut leaf = intent;
    // A log index fits JSON's safe integers for as long as any log lives;
    // past that it is kept as text rather than lost.
    let index = i64::try_from(intent_index)
        .ok()
        .and_then(|i| interlock_canon::Value::try_from(i).ok())
        .unwrap_or_else(|| intent_index.to_string().into());
    leaf.insert("intent_index".into(), index);
    match outcome {
        Ok(done) => {
            // An undo revoked the client's agent key in the store: the
            // gateway's key cache forgets it now, not in a few seconds.
            if let Some(agent) = done.get("agent_revoked").and_then(Value::as_str) {
                gw.forget_keys_named(interlock_store::ApiKeyKind::Agent, agent);
            }
            // An answer that is not canonical JSON (a float) is kept as text.
            let result = interlock_canon::from_serde_json(&json!(done))
                .unwrap_or_else(|_| done.to_string().into());
            leaf.insert("result".into(), result);
            gw.engine().record(change.done().as_str(), leaf).await?;
            Ok(done)
        }
        Err(e) => {
            leaf.insert("error".into(), e.to_string().into());
            gw.engine()
                .record(EventType::ClientChangeRefused.as_str(), leaf)
                .await?;
            Err(e.into())
        }
    }
}
