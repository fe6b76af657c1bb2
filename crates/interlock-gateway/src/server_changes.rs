//! Servers added and removed at run time (issue 20 item 5), without a
//! restart.
//!
//! - **Adding** (`POST /api/v1/servers`, `interlock servers add` through the
//!   admin socket, and `interlock connect` / "Connect a client", which write
//!   `gateway.toml` and then ask the gateway to start what is new there —
//!   [`Gateway::sync_servers`]): the server joins the upstream table, its
//!   supervisor connects it, and it is *pending* like any new server — no
//!   tool is served until a reviewer approves its surface. The addition is a
//!   `server.added` leaf naming who asked, and is persisted in
//!   `gateway.toml` (in place, the rest of the file kept) by the host's
//!   [`ServerFile`].
//! - **Removing** is a signed decision: an approval statement about
//!   `server-removal:<name>` at [`interlock_surface::removal_hash`] of the
//!   server's name and transport, by a registered approver key, verified like
//!   every decision (strict signature, audience, policy, window, and the
//!   decision ledger, so a replayed statement is refused). The `server.removed`
//!   leaf embeds the envelope and commits in one transaction with the deletion
//!   of the server's row (and probe state, envelopes), so a server added again
//!   under the name starts pending.
//!
//! Safety: a stdio server runs a program on the gateway's machine, so only
//! a reviewer on this machine may add one over the API (as "Connect a
//! client"); an HTTP server may be added by any full reviewer key.

use std::sync::Arc;

use interlock_canon::{Digest, Map, Value};
use interlock_core::{Decision, DsseEnvelope};

use crate::config::{TOOL_SEPARATOR, UpstreamConfig, valid_server_name};
use crate::gateway::Gateway;
use crate::server_file::{NewServer, ServerChangeError, ServerFile};
use crate::server_requests::{Refused, ServerRequest};
use crate::upstream::table::Upstream;
use interlock_trust::events::{EventType, GatewayEvent};
use interlock_trust::pins::to_canon;

/// Signed removals name `server-removal:<name>`.
pub const REMOVAL_SUBJECT_PREFIX: &str = "server-removal:";

pub fn removal_subject(name: &str) -> String {
    format!("{REMOVAL_SUBJECT_PREFIX}{name}")
}

/// How a server is reached, as its removal statement binds it (never its
/// env values or headers).
pub fn transport_value(config: &UpstreamConfig) -> Value {
    let mut m = Map::new();
    if let Some(c) = &config.command {
        m.insert("kind".into(), "stdio".into());
        m.insert("command".into(), c.as_str().into());
        m.insert(
            "args".into(),
            Value::Array(config.args.iter().map(|a| a.as_str().into()).collect()),
        );
        // Only when set, so removals signed for servers without one bind
        // the same bytes as before.
        if config.sandbox != interlock_sandbox::Setting::Default {
            m.insert(
                "sandbox".into(),
                to_canon(&serde_json::to_value(&config.sandbox).expect("a setting serializes")),
            );
        }
    } else if let Some(u) = &config.url {
        m.insert("kind".into(), "http".into());
        m.insert("url".into(), u.as_str().into());
    }
    Value::Object(m)
}

impl Gateway {
    /// Hands the gateway the host's `gateway.toml` (once).
    pub fn set_server_file(&self, f: Arc<dyn ServerFile>) {
        let _ = self.0.server_file.set(f);
    }

    fn server_file(&self) -> Option<Arc<dyn ServerFile>> {
        self.0.server_file.get().cloned()
    }

    /// What a removal of `name` signs: its subject and hash. The server is
    /// configured (its transport is bound), or only stored (bound as `null`).
    pub async fn removal_terms(&self, name: &str) -> Result<(String, Digest), ServerChangeError> {
        let transport = match self.upstream(name) {
            Some(up) => transport_value(&up.config),
            None if self.engine().store().server(name).await?.is_some() => Value::Null,
            None => return Err(ServerChangeError::NoSuchServer(name.to_owned())),
        };
        Ok((
            removal_subject(name),
            interlock_surface::removal_hash(name, &transport),
        ))
    }

    /// Checks that `config` can run as server `name` beside the others.
    fn check_new(&self, name: &str, config: &UpstreamConfig) -> Result<(), ServerChangeError> {
        if !valid_server_name(name) {
            return Err(ServerChangeError::Invalid(format!(
                "{name:?}: a server name is lower-case letters, digits, `-` and `_` (no `{TOOL_SEPARATOR}`, not at either end), at most 64 bytes"
            )));
        }
        if self.upstream(name).is_some() {
            return Err(ServerChangeError::Exists(name.to_owned()));
        }
        config
            .transport(name)
            .map_err(|e| ServerChangeError::Invalid(e.to_string()))?;
        config
            .compiled_probes(name)
            .map_err(|e| ServerChangeError::Invalid(e.to_string()))?;
        let prefix = config.tool_prefix(name);
        for (other, p) in self.pins().prefixes() {
            if p.starts_with(&prefix) || prefix.starts_with(&p) {
                return Err(ServerChangeError::Invalid(format!(
                    "its tool prefix {prefix:?} and server {other:?}'s {p:?} could collide"
                )));
            }
        }
        Ok(())
    }

    /// Starts serving `config` as server `name` (pending until reviewed),
    /// with its `server.added` leaf naming `by`. Not persisted: the caller
    /// wrote the file, or will.
    async fn start_server(
        &self,
        name: &str,
        config: &UpstreamConfig,
        by: &str,
    ) -> Result<u64, ServerChangeError> {
        self.check_new(name, config)?;
        let up = Arc::new(
            Upstream::new(name, config).map_err(|e| ServerChangeError::Invalid(e.to_string()))?,
        );
        let mut fields = Map::new();
        fields.insert("server".into(), name.into());
        fields.insert("transport".into(), transport_value(config));
        fields.insert("added_by".into(), by.into());
        let index = self
            .engine()
            .record(EventType::ServerAdded.as_str(), fields)
            .await?
            .index;
        if !self.upstream_table().insert(Arc::clone(&up)) {
            return Err(ServerChangeError::Exists(name.to_owned()));
        }
        self.pins().add_server(name, config.tool_prefix(name));
        self.supervise(up);
        self.events().send(GatewayEvent::server(
            EventType::ServerAdded,
            name,
            format!("Added `{name}` ({by}); pending review"),
            "info",
            "",
            Some(index),
        ));
        Ok(index)
    }

    /// Adds a server at run time (the API, `interlock servers add`):
    /// checked, persisted in `gateway.toml`, then started, pending review.
    pub async fn add_server(&self, new: &NewServer, by: &str) -> Result<u64, ServerChangeError> {
        let config = new.config()?;
        self.check_new(&new.name, &config)?;
        if self.engine().store().server(&new.name).await?.is_some() {
            return Err(ServerChangeError::StaleRow(new.name.clone()));
        }
        if let Some(file) = self.server_file() {
            let new = new.clone();
            tokio::task::spawn_blocking(move || file.add(&new.name, &new))
                .await
                .map_err(|e| ServerChangeError::File(e.to_string()))?
                .map_err(ServerChangeError::File)?;
        }
        self.start_server(&new.name, &config, by).await
    }

    /// Keeps a reviewer's request to run a stdio server for the owner to
    /// confirm (`crate::server_requests`): checked as an addition would be,
    /// its `server.requested` leaf naming the command, nothing started.
    /// Returns the leaf's index.
    pub async fn request_server(
        &self,
        new: &NewServer,
        by: &str,
    ) -> Result<u64, ServerChangeError> {
        let config = new.config()?;
        self.check_new(&new.name, &config)?;
        if self.engine().store().server(&new.name).await?.is_some() {
            return Err(ServerChangeError::StaleRow(new.name.clone()));
        }
        let refused = |r: Refused| match r {
            Refused::Exists => ServerChangeError::RequestExists(new.name.clone()),
            Refused::Full => ServerChangeError::TooManyRequests,
        };
        self.requests().check(&new.name).map_err(refused)?;
        let mut fields = Map::new();
        fields.insert("server".into(), new.name.as_str().into());
        fields.insert("transport".into(), transport_value(&config));
        fields.insert("requested_by".into(), by.into());
        let leaf = self
            .engine()
            .record(EventType::ServerRequested.as_str(), fields)
            .await?
            .index;
        self.requests()
            .insert(ServerRequest {
                server: new.clone(),
                requested_by: by.to_owned(),
                requested_at: self.engine().now(),
                leaf,
            })
            .map_err(refused)?;
        self.events().send(GatewayEvent::server(
            EventType::ServerRequested,
            &new.name,
            format!(
                "`{by}` asks to run `{}` as server `{}`; the machine's owner confirms it (`interlock servers confirm {}`)",
                new.command.as_deref().unwrap_or_default(),
                new.name,
                new.name
            ),
            "medium",
            "",
            Some(leaf),
        ));
        Ok(leaf)
    }

    /// The requests to run a program that wait for the owner, oldest first.
    pub fn server_requests(&self) -> Vec<ServerRequest> {
        self.requests().list()
    }

    /// The owner confirms a waiting request (the admin socket: only the
    /// data directory's owner reaches it): added as `add_server` adds, its
    /// `server.added` leaf naming both the owner's confirmation and who
    /// asked. A request that cannot be carried out waits on.
    pub async fn confirm_server(&self, name: &str, by: &str) -> Result<u64, ServerChangeError> {
        let request = self
            .requests()
            .take(name)
            .ok_or_else(|| ServerChangeError::NoSuchRequest(name.to_owned()))?;
        let by = format!("{by}, requested by {}", request.requested_by);
        match self.add_server(&request.server, &by).await {
            Ok(index) => Ok(index),
            Err(e) => {
                self.requests().restore(request);
                Err(e)
            }
        }
    }

    /// The owner declines a waiting request; `true` if there was one.
    pub fn decline_server(&self, name: &str) -> bool {
        self.requests().take(name).is_some()
    }

    /// Starts every server `gateway.toml` configures that is not running
    /// (after `interlock connect` wrote it): the names started. A server
    /// the file no longer has keeps running until a signed removal.
    pub async fn sync_servers(&self, by: &str) -> Result<Vec<String>, ServerChangeError> {
        let Some(file) = self.server_file() else {
            return Ok(Vec::new());
        };
        let servers = tokio::task::spawn_blocking(move || file.load())
            .await
            .map_err(|e| ServerChangeError::File(e.to_string()))?
            .map_err(ServerChangeError::File)?;
        let mut started = Vec::new();
        for (name, config) in servers {
            if self.upstream(&name).is_some() {
                continue;
            }
            self.start_server(&name, &config, by).await?;
            started.push(name);
        }
        Ok(started)
    }

    /// Applies a reviewer's signed removal of a server: verified, its leaf
    /// and the row's deletion committed together, the server stopped and
    /// taken out of `gateway.toml`. Returns the leaf's index.
    pub async fn remove_server(&self, envelope: &DsseEnvelope) -> Result<u64, ServerChangeError> {
        let claimed = interlock_core::decision::ApprovalStatement::claimed_by(envelope)
            .map_err(interlock_engine::EngineError::Decision)?;
        let name = claimed
            .plan_id
            .strip_prefix(REMOVAL_SUBJECT_PREFIX)
            .ok_or_else(|| ServerChangeError::NotARemoval(claimed.plan_id.clone()))?
            .to_owned();
        if claimed.decision != Decision::Approve {
            return Err(ServerChangeError::NotApproved);
        }
        let (subject, hash) = self.removal_terms(&name).await?;
        if claimed.plan_hash != hash {
            return Err(ServerChangeError::Changed {
                name,
                signed: claimed.plan_hash.to_string(),
                current: hash.to_string(),
            });
        }
        let verified = self
            .engine()
            .accept_subject_decision(envelope, &subject, hash)
            .await?;
        let mut fields = Map::new();
        fields.insert("server".into(), name.as_str().into());
        fields.insert("removal_hash".into(), hash.to_string().into());
        fields.insert("approver".into(), verified.identity.as_str().into());
        fields.insert(
            "approver_key_id".into(),
            verified.statement.approver_key_id.to_string().into(),
        );
        fields.insert("reason".into(), verified.statement.reason.as_str().into());
        fields.insert("envelope".into(), to_canon(&envelope.to_json()));
        let file = self.server_file();
        if let Some(file) = file.clone() {
            let n = name.clone();
            tokio::task::spawn_blocking(move || file.begin_removal(&n))
                .await
                .map_err(|e| ServerChangeError::File(e.to_string()))?
                .map_err(ServerChangeError::File)?;
        }
        let removed = self
            .pins()
            .remove_server(&name, EventType::ServerRemoved, fields)
            .await;
        let index = match removed {
            Ok(index) => index,
            Err(e) => {
                if let Some(file) = file {
                    let n = name.clone();
                    // Refused: nothing to finish. A note left behind is
                    // dropped at the next start, which finds the row.
                    let _ = tokio::task::spawn_blocking(move || file.end_removal(&n)).await;
                }
                return Err(e.into());
            }
        };
        if let Some(up) = self.upstream_table().remove(&name) {
            up.stop();
        }
        if let Some(file) = file {
            let n = name.clone();
            let persisted = tokio::task::spawn_blocking(move || {
                file.remove(&n)?;
                file.end_removal(&n)
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r);
            if let Err(e) = persisted {
                // Removed and logged; only the file lags, and the note
                // stays: the next start takes it out of the file.
                tracing::warn!(server = %name, error = %e, "could not remove it from the config file");
            }
        }
        self.events().send(GatewayEvent::server(
            EventType::ServerRemoved,
            &name,
            format!("Removed `{name}` ({})", verified.identity),
            "info",
            &hash.to_string(),
            Some(index),
        ));
        Ok(index)
    }
}
