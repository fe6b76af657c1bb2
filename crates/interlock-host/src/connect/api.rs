//! [`interlock_gateway::connector::ClientConnector`] over this module: "Connect a
//! client" for the review UI (the desktop's Settings and first run): previews
//! over the reviewer API, connect and undo for the owner only
//! (`interlock_gateway::client_changes`). Only the known clients' user files — under the home
//! directory of the user running the gateway — are ever touched: a request
//! names a client by slug, never a path, a project or a gateway config.

use std::path::PathBuf;

use interlock_gateway::connector::{ClientConnector, ConnectorError};
use serde_json::{Value, json};

use super::{
    Action, Client, ConnectError, ConnectRequest, Paths, Plan, Reach, UndoMode, detect, layers,
    locate,
};
use crate::Host;

/// The host's connector for one running gateway.
pub(crate) struct HostConnector {
    pub host: Host,
    /// The config the gateway was started with (the upstreams go there).
    pub gateway_config: Option<PathBuf>,
    /// How clients reach this gateway (`http://127.0.0.1:PORT/mcp`).
    pub gateway_url: String,
}

/// The `interlock` binary a bridge entry runs: this one when this process is
/// it, else the one on the PATH, else one beside this executable (the
/// desktop app's package installs both).
pub(crate) fn interlock_bin() -> PathBuf {
    let exe = std::env::current_exe().ok();
    if let Some(e) = exe
        .as_ref()
        .filter(|e| e.file_name().is_some_and(|n| n == "interlock"))
    {
        return e.clone();
    }
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("interlock"))
            .find(|c| c.is_file())
    });
    on_path
        .or_else(|| {
            exe.and_then(|e| e.parent().map(|d| d.join("interlock")))
                .filter(|c| c.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("interlock"))
}

impl HostConnector {
    fn request(&self, client: Client) -> Result<ConnectRequest, ConnectorError> {
        Ok(ConnectRequest {
            client,
            paths: Paths::from_env().map_err(refused)?,
            project: None,
            file: None,
            gateway_config: self.gateway_config.clone(),
            gateway_url: Some(self.gateway_url.clone()),
            interlock_bin: interlock_bin(),
        })
    }

    fn client(slug: &str) -> Result<Client, ConnectorError> {
        Client::from_slug(slug).ok_or_else(|| ConnectorError::UnknownClient(slug.to_owned()))
    }

    /// Whether `req`'s file has a connect to undo.
    fn undoable(&self, req: &ConnectRequest) -> bool {
        let Ok(data_dir) = self.host.data_dir() else {
            return false;
        };
        locate(req).is_ok_and(|(_, target)| {
            layers::top(&layers::dir(&data_dir, req.client.slug(), &target))
                .is_ok_and(|t| t.is_some())
        })
    }
}

fn refused(e: ConnectError) -> ConnectorError {
    match e {
        ConnectError::Host(_) | ConnectError::Gateway(_) | ConnectError::File { .. } => {
            ConnectorError::Failed(e.to_string())
        }
        _ => ConnectorError::Refused(e.to_string()),
    }
}

fn joined(e: tokio::task::JoinError) -> ConnectorError {
    ConnectorError::Failed(e.to_string())
}

/// A plan as the API shows it.
pub(crate) fn plan_json(p: &Plan) -> Value {
    json!({
        "file": p.file,
        "gateway_config": p.gateway_config,
        "gateway_url": p.gateway_url,
        "agent": p.agent,
        "changes_anything": p.changes_anything(),
        "entry": p.entry.as_ref().map(|e| json!({
            "name": e.name,
            "reach": match &e.reach {
                Reach::Http { url } => json!({"kind": "http", "url": url}),
                Reach::Bridge { command, url } => json!({"kind": "bridge", "command": command, "url": url}),
            },
        })),
        "servers": p.servers.iter().map(|s| match &s.action {
            Action::Import { upstream, transport, secrets, dropped, shared, sandbox } => json!({
                "name": s.name, "action": "import", "upstream": upstream, "transport": transport,
                "secrets": secrets, "dropped": dropped, "shared": shared, "sandbox": sandbox,
            }),
            Action::AlreadyBehindGateway => json!({"name": s.name, "action": "already"}),
            Action::Keep { reason } => json!({"name": s.name, "action": "keep", "reason": reason}),
        }).collect::<Vec<_>>(),
    })
}

#[async_trait::async_trait]
impl ClientConnector for HostConnector {
    async fn clients(&self) -> Result<Value, ConnectorError> {
        let paths = Paths::from_env().map_err(refused)?;
        let mut out = Vec::new();
        for (client, file, found) in detect(&paths) {
            let req = self.request(client)?;
            let undoable = self.undoable(&req);
            // The preview reads the keychain (a blocking D-Bus call).
            let plan = if found {
                let host = self.host.clone();
                Some(
                    match tokio::task::spawn_blocking(move || host.connect_preview(&req))
                        .await
                        .map_err(joined)?
                    {
                        Ok(p) => plan_json(&p),
                        Err(e) => json!({"error": e.to_string()}),
                    },
                )
            } else {
                None
            };
            out.push(json!({
                "client": client.slug(),
                "name": client.name(),
                "file": file,
                "found": found,
                "undoable": undoable,
                "plan": plan,
            }));
        }
        Ok(json!({"clients": out, "gateway_url": self.gateway_url}))
    }

    fn knows(&self, slug: &str) -> bool {
        Client::from_slug(slug).is_some()
    }

    async fn connect(&self, slug: &str) -> Result<Value, ConnectorError> {
        let req = self.request(Self::client(slug)?)?;
        // `Host::connect` holds a parsed JSONC document (not `Send`) across
        // its awaits: it runs on a blocking thread of its own, on this runtime.
        let host = self.host.clone();
        let handle = tokio::runtime::Handle::current();
        let done = tokio::task::spawn_blocking(move || handle.block_on(host.connect(&req)))
            .await
            .map_err(joined)?
            .map_err(refused)?;
        // The gateway starts the new upstreams itself, after this returns
        // (`interlock_gateway::server_changes`): no restart.
        Ok(json!({
            "changed": done.changed,
            "started": done.started,
            "plan": plan_json(&done.plan),
        }))
    }

    async fn undo(&self, slug: &str) -> Result<Value, ConnectorError> {
        let req = self.request(Self::client(slug)?)?;
        let u = self
            .host
            .connect_undo(&req, UndoMode::Exact)
            .await
            .map_err(refused)?;
        // The gateway started those servers at connect; undo stops them, each
        // by a removal signed with this machine's approver key. Only the
        // owner reaches here — the desktop app's native confirmation, which
        // names this, made the `OwnerConfirmed` (issue 39 items 1 and 2; the
        // reviewer API refuses undo). Without a key they stay, pending, for a
        // removal signed on their page.
        let mut stopped = Vec::new();
        let mut still_running = Vec::new();
        for name in &u.servers_removed {
            match self
                .host
                .remove_running_server(name, "connect undone from the review UI", 600)
                .await
            {
                Ok(_) => stopped.push(name.clone()),
                Err(e) => still_running.push(json!({"name": name, "why": e.to_string()})),
            }
        }
        Ok(json!({
            "file": u.file,
            "merged": u.merged,
            "servers_removed": u.servers_removed,
            "servers_stopped": stopped,
            "servers_still_running": still_running,
            "tokens_removed": u.tokens_removed,
            "agent_revoked": u.agent_revoked,
            "layers_left": u.layers_left,
        }))
    }
}
