//! The one assembler of a running gateway, for both faces (`interlock serve`
//! and the desktop app's local mode): the config, the engine with every
//! adapter (the MCP one included, so held calls and `mcp.call_tool` stages
//! run), the gateway over it, and its HTTP server on the bound address.
//!
//! Why here and not in each face: the two copies it replaces had diverged
//! (the desktop's engine lacked the MCP adapter, so an approved held call
//! could not run there).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use interlock_engine::DecisionOutcome;
use interlock_gateway::Gateway;
use interlock_gateway::keys::issue_key;
use interlock_keychain::KeychainKey;
use interlock_store::{ApiKeyKind, ServerRecord, StandingRecord};
use interlock_trust::EventBus;
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use crate::{ClientChange, ClientChangeError, Countersign, Host, HostError, OwnerConfirmed, Scope};

/// How long a shutdown waits for the HTTP server to finish its requests.
const DRAIN_WAIT: Duration = Duration::from_secs(3);

/// What the face decides about the gateway it runs; the rest comes from the
/// data directory (`gateway.toml`, `policy.yaml`, the keychain).
#[derive(Clone, Debug, Default)]
pub struct GatewayOptions {
    /// The gateway's TOML config; default `<data dir>/gateway.toml` if it
    /// exists, else the defaults.
    pub config: Option<PathBuf>,
    /// The address to bind, overriding the config's `listen`.
    pub listen: Option<SocketAddr>,
    /// A built review UI to serve at `/` (a directory with `index.html`).
    pub ui_dir: Option<PathBuf>,
}

/// Upstreams' tokens in this host's keychain, for the admin socket.
struct KeychainTokens(crate::Keychain);

impl interlock_gateway::admin::TokenStore for KeychainTokens {
    fn store(&self, name: &str, value: &str) -> Result<(), String> {
        self.0.store_token(name, value).map_err(|e| e.to_string())
    }

    fn delete(&self, name: &str) -> Result<bool, String> {
        self.0.delete_token(name).map_err(|e| e.to_string())
    }

    fn load(&self, name: &str) -> Result<Option<String>, String> {
        Ok(self
            .0
            .load_token(name)
            .map_err(|e| e.to_string())?
            .map(|t| t.as_str().to_owned()))
    }
}

/// A gateway serving on its address, until [`RunningGateway::shutdown`].
pub struct RunningGateway {
    gateway: Gateway,
    bound: SocketAddr,
    stop: watch::Sender<bool>,
    server: Mutex<Option<JoinHandle<std::io::Result<()>>>>,
    /// The local admin socket's task and path (`interlock_gateway::admin`).
    admin: Mutex<Option<(JoinHandle<()>, PathBuf)>>,
}

impl Host {
    /// Starts the gateway of this data directory: reads the config, opens
    /// the engine with the gateway's MCP adapter among its adapters, binds
    /// the listener, starts the gateway and serves `/mcp`, `/api/v1` (and the
    /// UI) on it. Both faces start their gateway through here.
    pub async fn start_gateway(
        &self,
        options: GatewayOptions,
    ) -> Result<RunningGateway, HostError> {
        let mut config = self.gateway_config_with_secrets(options.config.as_deref())?;
        if let Some(listen) = options.listen {
            config.listen = listen;
        }
        if let Some(ui) = options.ui_dir {
            if !ui.join("index.html").is_file() {
                return Err(HostError::File {
                    path: ui,
                    message: "no index.html there (build the UI first: scripts/ui.sh)".into(),
                });
            }
            config.ui_dir = Some(ui);
        }
        // The config's `[store] url` when no database was named on the
        // command line (which wins).
        let host = match (&self.database, config.store.location()?) {
            (None, Some(db)) => self.clone().with_database(Some(db)),
            _ => self.clone(),
        };
        // The port first: a second gateway on a port in use says so, before
        // it opens the keychain (which a second terminal may not reach) or
        // the database (issue 46).
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| HostError::Listen {
                address: config.listen,
                message: e.to_string(),
            })?;
        let bound = listener.local_addr().map_err(|e| HostError::Listen {
            address: config.listen,
            message: e.to_string(),
        })?;
        // Removals a stopped gateway left half done are finished before the
        // servers start (`server_removals`).
        let config_file = match &options.config {
            Some(p) => p.clone(),
            None => self.data_dir()?.join(crate::GATEWAY_CONFIG_FILE),
        };
        let finished = host.finish_server_removals(&config_file).await?;
        if !finished.is_empty() {
            tracing::warn!(servers = ?finished, "finished removals a stopped gateway left half done: taken out of the config");
            config.servers = self
                .gateway_config_with_secrets(options.config.as_deref())?
                .servers;
        }
        let confiner = Arc::new(self.confiner(options.config.as_deref())?);
        let prepared = Gateway::prepare(config.clone(), confiner)?;
        // The policy's MCP-bound actions and probes (issue 23 item 5) are served
        // by the same adapter, under the same pinning rules.
        let adapter = Arc::new(prepared.mcp_adapter().bound_to(&self.policy()?.registry));
        let engine = host
            .engine_with(
                move |adapters| {
                    adapters
                        .with_executor(Arc::clone(&adapter) as _)
                        .with_prober(Arc::clone(&adapter) as _)
                        .with_executor_for(adapter.bound_actions(), Arc::clone(&adapter) as _)
                        .with_prober_for(adapter.bound_probes(), adapter)
                },
                &config.log,
            )
            .await?;
        let gateway = prepared.start(engine);
        // "Connect a client" on the reviewer API (the review UI's Settings).
        gateway.set_client_connector(Arc::new(crate::connect::HostConnector {
            host: host.clone(),
            gateway_config: options.config.clone(),
            gateway_url: format!("{}/mcp", loopback_base(bound)),
        }));
        // Coding agents' hooks from the review UI's Settings (issue 40).
        gateway.set_hook_installer(Arc::new(crate::hook_install::api::HostHookInstaller {
            host: host.clone(),
            gateway: loopback_base(bound),
        }));
        // Servers added and removed at run time (issue 20 item 5) are
        // persisted in the config the gateway was started with.
        gateway.set_server_file(Arc::new(crate::connect::HostServerFile {
            host: host.clone(),
            path: match &options.config {
                Some(p) => p.clone(),
                None => self.data_dir()?.join(crate::GATEWAY_CONFIG_FILE),
            },
        }));
        let (stop, mut stopped) = watch::channel(false);
        // CLI commands run beside this gateway (keys for agents and
        // reviewers) reach it here rather than needing its keychain.
        let data_dir = self.data_dir()?;
        let admin = match interlock_gateway::admin::bind(&data_dir).await {
            Ok(listener) => {
                let mut admin_stopped = stop.subscribe();
                let keychain = self.keychain().ok();
                let owner = interlock_gateway::admin::OwnerServices {
                    tokens: keychain.clone().map(|k| {
                        Arc::new(KeychainTokens(k)) as Arc<dyn interlock_gateway::admin::TokenStore>
                    }),
                    signin: signin_issuer(&gateway, bound),
                    // The owner's decisions from a second terminal (issue 46).
                    decisions: keychain.map(|keychain| {
                        Arc::new(crate::owner_decisions::KeychainDecisions {
                            keychain,
                            gateway: gateway.clone(),
                        })
                            as Arc<dyn interlock_gateway::admin::decisions::OwnerDecisions>
                    }),
                };
                let task = tokio::spawn(interlock_gateway::admin::serve(
                    listener,
                    gateway.engine().clone(),
                    owner,
                    Some(gateway.clone()),
                    Some(format!("{}/mcp", loopback_base(bound))),
                    async move {
                        let _ = admin_stopped.wait_for(|s| *s).await;
                    },
                ));
                Some((task, interlock_gateway::admin::socket_path(&data_dir)))
            }
            Err(e) => {
                tracing::warn!("no admin socket: {e}");
                None
            }
        };
        let server = tokio::spawn(interlock_gateway::http::serve(
            gateway.clone(),
            listener,
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
        Ok(RunningGateway {
            gateway,
            bound,
            stop,
            server: Mutex::new(Some(server)),
            admin: Mutex::new(admin),
        })
    }
}

/// `http://ADDR` of a gateway bound at `bound`, as a local browser or client
/// reaches it: a wildcard address on loopback.
fn loopback_base(bound: SocketAddr) -> String {
    let mut at = bound;
    if at.ip().is_unspecified() {
        at.set_ip(match at {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{at}")
}

/// What prints sign-in links for a gateway bound at `bound`: only one that
/// serves the review UI (the link opens it).
fn signin_issuer(
    gateway: &Gateway,
    bound: SocketAddr,
) -> Option<interlock_gateway::admin::SigninIssuer> {
    gateway.config().ui_dir.as_ref()?;
    Some(interlock_gateway::admin::SigninIssuer {
        links: Arc::clone(gateway.signin()),
        base_url: loopback_base(bound),
    })
}

impl RunningGateway {
    /// A one-time sign-in link to this gateway's review UI (issue 19): the
    /// browser that opens it within 15 minutes becomes a reviewer.
    /// `None` when no UI is served. Its issuance is logged.
    pub async fn signin_link(&self) -> Result<Option<String>, HostError> {
        let Some(issuer) = signin_issuer(&self.gateway, self.bound) else {
            return Ok(None);
        };
        let (token, _) = issuer.links.issue(self.gateway.engine()).await?;
        Ok(Some(interlock_gateway::signin::link(
            &issuer.base_url,
            &token,
        )))
    }

    /// The headless first run: while no active reviewer key (of the full
    /// scope) exists, a sign-in link ([`Self::signin_link`]); else `None`.
    pub async fn first_run_signin_link(&self) -> Result<Option<String>, HostError> {
        let reviewers = self
            .gateway
            .engine()
            .store()
            .api_keys(ApiKeyKind::Reviewer)
            .await?;
        if reviewers.iter().any(|k| {
            k.revoked_at.is_none()
                && k.role != interlock_gateway::roles::REVIEW_ONLY_ROLE
                && k.role != interlock_gateway::roles::METRICS_ONLY_ROLE
        }) {
            return Ok(None);
        }
        self.signin_link().await
    }

    /// The address actually bound (the config may say port 0).
    pub fn bound(&self) -> SocketAddr {
        self.bound
    }

    /// The gateway itself (its upstreams, pins and sessions).
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// The bus of plan, server and standing-approval events.
    pub fn events(&self) -> &EventBus {
        self.gateway.events()
    }

    /// Serves until `signal` (SIGTERM, a quit) or until the HTTP server
    /// fails, then shuts down ([`RunningGateway::shutdown`]).
    pub async fn serve_until(&self, signal: impl Future<Output = ()>) -> Result<(), HostError> {
        let failed = {
            let mut server = self.server.lock().await;
            match server.as_mut() {
                None => None,
                Some(handle) => tokio::select! {
                    _ = signal => None,
                    ended = handle => {
                        server.take();
                        Some(match ended {
                            Ok(Ok(())) => "it ended".to_owned(),
                            Ok(Err(e)) => e.to_string(),
                            Err(e) => e.to_string(),
                        })
                    }
                },
            }
        };
        self.shutdown().await;
        match failed {
            Some(why) => Err(HostError::Serve(why)),
            None => Ok(()),
        }
    }

    /// Stops serving (waiting a little for requests in flight), then the
    /// gateway's tasks and upstream connections, then closes the log.
    pub async fn shutdown(&self) {
        let _ = self.stop.send(true);
        if let Some(server) = self.server.lock().await.take() {
            let _ = tokio::time::timeout(DRAIN_WAIT, server).await;
        }
        if let Some((task, path)) = self.admin.lock().await.take() {
            let _ = tokio::time::timeout(DRAIN_WAIT, task).await;
            let _ = std::fs::remove_file(path);
        }
        self.gateway.shutdown().await;
        self.gateway.engine().log().close().await;
    }

    /// Trusts the keychain key's public half as an approver in this data
    /// directory (idempotent).
    pub async fn trust_approver(
        &self,
        key: &KeychainKey,
        identity: &str,
        label: &str,
    ) -> Result<(), HostError> {
        self.gateway
            .engine()
            .register_approver(&key.public_key(), identity, label)
            .await?;
        Ok(())
    }

    /// The identity an approver key is registered under here, if it is.
    pub async fn approver_identity(&self, key_id: &str) -> Result<Option<String>, HostError> {
        Ok(self
            .gateway
            .engine()
            .store()
            .approver_key(key_id)
            .await?
            .map(|k| k.identity))
    }

    /// Revokes every reviewer API key named `name` and issues a fresh one
    /// (printed once; stored hashed): the desktop window's key, new per start.
    pub async fn reissue_reviewer_key(&self, name: &str) -> Result<String, HostError> {
        let engine = self.gateway.engine();
        interlock_gateway::keys::revoke_keys(
            engine,
            ApiKeyKind::Reviewer,
            name,
            interlock_gateway::keys::IssuedBy::DesktopApp,
        )
        .await?;
        let (token, _) = issue_key(
            engine,
            ApiKeyKind::Reviewer,
            name,
            "reviewer",
            interlock_gateway::keys::IssuedBy::DesktopApp,
            false,
        )
        .await?;
        Ok(token)
    }

    /// How many items wait for a reviewer (the inbox's rule).
    pub async fn held_count(&self) -> Result<usize, HostError> {
        Ok(self.gateway.held_count().await?)
    }

    /// What waits for a reviewer, as a short list reads it, newest first.
    pub async fn inbox_entries(
        &self,
    ) -> Result<Vec<interlock_gateway::inbox::InboxEntry>, HostError> {
        Ok(self
            .gateway
            .waiting()
            .await?
            .iter()
            .map(interlock_gateway::inbox::Waiting::entry)
            .collect())
    }

    /// [`crate::decide_plan`] on this gateway's engine.
    pub async fn decide_plan(
        &self,
        plan_id: &str,
        expected_hash: Option<&str>,
        said: &Countersign<'_>,
    ) -> Result<DecisionOutcome, HostError> {
        crate::decide_plan(self.gateway.engine(), plan_id, expected_hash, said).await
    }

    /// [`crate::decide_server_surface`] on this gateway, announced on its bus.
    pub async fn decide_server(
        &self,
        name: &str,
        expected_hash: Option<&str>,
        said: &Countersign<'_>,
    ) -> Result<ServerRecord, HostError> {
        crate::decide_server_surface(
            self.gateway.engine(),
            self.gateway.events(),
            name,
            expected_hash,
            said,
        )
        .await
    }

    /// [`crate::decide_tool_definition`] on this gateway, announced on its bus:
    /// one tool's observed definition approved into the baseline, or blocked.
    pub async fn decide_tool(
        &self,
        server: &str,
        tool: &str,
        expected_hash: Option<&str>,
        said: &Countersign<'_>,
    ) -> Result<ServerRecord, HostError> {
        crate::decide_tool_definition(
            self.gateway.engine(),
            self.gateway.events(),
            self.gateway.config(),
            server,
            tool,
            expected_hash,
            said,
        )
        .await
    }

    /// Removes server `name` from this gateway (issue 20 item 5), signed with
    /// `said.key` over exactly the removal hash the person was shown
    /// (`expected_hash`; another now: [`HostError::Changed`], nothing signed).
    /// Its leaf's index.
    pub async fn remove_server(
        &self,
        name: &str,
        expected_hash: &str,
        said: &Countersign<'_>,
    ) -> Result<u64, HostError> {
        said.approval_only(&format!("the removal of `{name}`"))?;
        let engine = self.gateway.engine();
        let (subject, hash) = self.gateway.removal_terms(name).await?;
        if hash.to_string() != expected_hash {
            return Err(HostError::Changed(format!(
                "`{name}` changed since it was shown ({expected_hash} → {hash}); review it again"
            )));
        }
        let terms = crate::RemovalTerms {
            subject,
            hash,
            audience: engine.log().origin().to_owned(),
            policy_digest: engine.policy().digest(),
            now: engine.now(),
        };
        let envelope = crate::sign_removal(said.key, &terms, said.reason, said.valid_for_secs)?;
        Ok(self.gateway.remove_server(&envelope).await?)
    }

    /// [`crate::approve_held_call`] on this gateway.
    pub async fn approve_held_call(
        &self,
        plan_id: &str,
        expected_hash: &str,
        scope: Scope,
        said: &Countersign<'_>,
    ) -> Result<(DecisionOutcome, Option<StandingRecord>), HostError> {
        crate::approve_held_call(&self.gateway, plan_id, expected_hash, scope, said).await
    }

    /// [`crate::held_call_grantable`] on this gateway.
    pub fn held_call_grantable(&self, plan_id: &str) -> bool {
        crate::held_call_grantable(&self.gateway, plan_id)
    }

    /// The AI clients found on this machine and what connecting each would
    /// do, per server and command: what the owner's confirmation names.
    pub async fn clients(&self) -> Result<serde_json::Value, ClientChangeError> {
        let connector = self
            .gateway
            .client_connector()
            .ok_or(ClientChangeError::NotAvailable)?;
        Ok(connector.clients().await?)
    }

    /// The coding agents' hook settings and what installing Interlock's
    /// hooks in each would write (a diff, keys and secrets masked): what the
    /// owner's confirmation names.
    pub async fn hooks(
        &self,
        on_unreachable: interlock_gateway::connector::OnUnreachable,
    ) -> Result<serde_json::Value, ClientChangeError> {
        let installer = self
            .gateway
            .hook_installer()
            .ok_or(ClientChangeError::NotAvailable)?;
        Ok(installer.hooks(on_unreachable).await?)
    }

    /// Connects or undoes the client `slug` for this machine's owner, who
    /// confirmed it natively (issue 39 item 1; the reviewer API refuses it).
    pub async fn change_client(
        &self,
        slug: &str,
        change: ClientChange,
        owner: &OwnerConfirmed,
    ) -> Result<serde_json::Value, ClientChangeError> {
        interlock_gateway::client_changes::change_client(&self.gateway, slug, change, owner).await
    }
}
