//! The engine and gateway this app hosts, and the few calls the shell makes into
//! them. Everything here delegates to the interlock crates (`interlock-host`
//! opens the engine and signs, `interlock-gateway` serves and announces); the
//! shell adds only where things come from (environment, keychain) and how they
//! are shown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use interlock_core::Decision;
use interlock_engine::Engine;
use interlock_gateway::keys::issue_key;
use interlock_gateway::{Gateway, GatewayEvent};
use interlock_host::{APPROVER_KEY, Host, HostError};
use interlock_keychain::KeychainKey;
use interlock_store::ApiKeyKind;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

/// The reviewer API key this app issues itself on every start (the previous
/// ones are revoked): the window's UI reads the API with it.
pub const REVIEWER_NAME: &str = "desktop";

/// How long an approval signed here stays valid (as `interlock plans approve`'s
/// default).
pub const APPROVAL_VALID_SECS: i64 = 2 * 60 * 60;

/// The running backend: shared by the tray, the notifications and the commands.
pub struct Backend {
    pub gateway: Gateway,
    pub key: KeychainKey,
    /// `http://127.0.0.1:PORT` — the gateway's origin, which the window loads.
    pub origin: String,
    pub data_dir: PathBuf,
    /// Whether the review UI is served at `/`.
    pub ui: bool,
    shutdown: watch::Sender<bool>,
    closed: std::sync::atomic::AtomicBool,
    server: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// What starting needs from the environment.
pub struct Settings {
    /// `$INTERLOCK_DATA_DIR`, else the platform's data directory.
    pub data_dir: Option<PathBuf>,
    /// `$INTERLOCK_LISTEN`, else the gateway config's `listen`.
    pub listen: Option<SocketAddr>,
    /// A built review UI (a directory with `index.html`).
    pub ui_dir: Option<PathBuf>,
}

impl Settings {
    pub fn from_env(ui_candidates: &[PathBuf]) -> Result<Settings, String> {
        let listen = match std::env::var("INTERLOCK_LISTEN") {
            Ok(s) if !s.is_empty() => Some(s.parse().map_err(|_| {
                format!("INTERLOCK_LISTEN={s:?} is not an address like 127.0.0.1:8717")
            })?),
            _ => None,
        };
        let ui_dir = std::env::var_os("INTERLOCK_UI_DIR")
            .map(PathBuf::from)
            .into_iter()
            .chain(ui_candidates.iter().cloned())
            .find(|d| d.join("index.html").is_file());
        Ok(Settings {
            data_dir: std::env::var_os("INTERLOCK_DATA_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            listen,
            ui_dir,
        })
    }
}

/// What `start` hands back besides the backend: the reviewer key (for the
/// window's initialization script only) and timings.
pub struct Started {
    pub backend: Backend,
    pub reviewer_token: String,
    /// Whether the approver key was created now (first run).
    pub created_key: bool,
}

fn identity() -> String {
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "reviewer".to_owned());
    format!("human:{user}")
}

/// Opens the engine, makes sure the approver key exists in the keychain and is
/// trusted, issues a fresh reviewer API key, and starts the gateway on loopback.
pub async fn start(settings: Settings) -> Result<Started, String> {
    let t0 = Instant::now();
    let host = Host::new(settings.data_dir);
    let data_dir = host.data_dir().map_err(|e| e.to_string())?;
    let engine = host.engine().await.map_err(|e| e.to_string())?;
    let keychain = host.keychain().map_err(|e| e.to_string())?;
    let (key, created_key) = match keychain.load_key(APPROVER_KEY).map_err(|e| e.to_string())? {
        Some(k) => (k, false),
        None => (
            keychain
                .create_key(APPROVER_KEY)
                .map_err(|e| e.to_string())?,
            true,
        ),
    };
    // Idempotent: a key made on an earlier run (or by `interlock keys init`) is
    // trusted in this data directory too.
    engine
        .register_approver(&key.public_key(), &identity(), "desktop keychain key")
        .await
        .map_err(|e| e.to_string())?;
    engine
        .store()
        .revoke_api_keys(ApiKeyKind::Reviewer, REVIEWER_NAME)
        .await
        .map_err(|e| e.to_string())?;
    let (reviewer_token, _) = issue_key(&engine, ApiKeyKind::Reviewer, REVIEWER_NAME, "reviewer")
        .await
        .map_err(|e| e.to_string())?;

    let mut config = host.gateway_config(None).map_err(|e| e.to_string())?;
    if let Some(l) = settings.listen {
        config.listen = l;
    }
    config.ui_dir = settings.ui_dir.clone();
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| {
            format!(
                "cannot listen on {}: {e} (set INTERLOCK_LISTEN or `listen` in gateway.toml)",
                config.listen
            )
        })?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let origin = origin_of(bound);
    let gateway = Gateway::start(engine, config).map_err(|e| e.to_string())?;
    let (shutdown, mut stop) = watch::channel(false);
    let server = tokio::spawn({
        let gw = gateway.clone();
        async move {
            let stopped = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            if let Err(e) = interlock_gateway::http::serve(gw, listener, stopped).await {
                eprintln!("interlock-desktop: the gateway stopped: {e}");
            }
        }
    });
    eprintln!(
        "interlock-desktop: gateway on {origin} (data {}, {} ms{})",
        data_dir.display(),
        t0.elapsed().as_millis(),
        if created_key {
            ", approver key created in the OS keychain"
        } else {
            ""
        }
    );
    Ok(Started {
        backend: Backend {
            gateway,
            key,
            origin,
            data_dir,
            ui: settings.ui_dir.is_some(),
            shutdown,
            closed: std::sync::atomic::AtomicBool::new(false),
            server: tokio::sync::Mutex::new(Some(server)),
        },
        reviewer_token,
        created_key,
    })
}

/// The origin a browser uses for a bound address (loopback when bound to all).
pub fn origin_of(bound: SocketAddr) -> String {
    let ip = bound.ip();
    let host = if ip.is_unspecified() {
        "127.0.0.1".to_owned()
    } else if ip.is_ipv6() {
        format!("[{ip}]")
    } else {
        ip.to_string()
    };
    format!("http://{host}:{}", bound.port())
}

/// A held item as the notifications and the tray see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// `plan` or `server`.
    pub kind: &'static str,
    /// Plan id or server name.
    pub subject: String,
    /// What an Approve must sign: the plan hash, or the server's observed
    /// surface hash, as of the event.
    pub hash: String,
    /// The event type (`plan.proposed`, `server.quarantined`, …).
    pub event: String,
    pub title: String,
    pub risk: String,
}

impl Backend {
    pub fn engine(&self) -> &Engine {
        self.gateway.engine()
    }

    /// The item a notification should be raised for, if `e` puts one on hold.
    pub async fn held_by(&self, e: &GatewayEvent) -> Option<Held> {
        if !matches!(
            e.kind.as_str(),
            "plan.proposed" | "server.pending" | "server.quarantined" | "server.drift_held"
        ) {
            return None;
        }
        let hash = match e.subject_kind {
            "plan" => e.plan_hash.clone()?,
            _ => e.observed_hash.clone()?,
        };
        Some(Held {
            kind: if e.subject_kind == "plan" {
                "plan"
            } else {
                "server"
            },
            subject: e.subject.clone(),
            hash,
            event: e.kind.clone(),
            title: e.title.clone(),
            risk: e.risk.clone(),
        })
    }

    /// How many items wait for a reviewer (the inbox's rule).
    pub async fn held_count(&self) -> Result<usize, String> {
        self.gateway.held_count().await.map_err(|e| e.to_string())
    }

    /// Signs a decision about exactly `hash` with the keychain key.
    pub async fn decide(
        &self,
        kind: &str,
        subject: &str,
        hash: &str,
        decision: Decision,
        reason: &str,
    ) -> Result<Value, DecideError> {
        match kind {
            "plan" => {
                let o = interlock_host::decide_plan(
                    self.engine(),
                    &self.key,
                    subject,
                    Some(hash),
                    decision,
                    reason,
                    APPROVAL_VALID_SECS,
                )
                .await?;
                Ok(json!({
                    "subject_kind": "plan",
                    "plan_id": o.plan_id,
                    "revision": o.revision,
                    "decision": o.decision.name(),
                    "status": o.status.as_str(),
                    "approvals": o.approvals,
                    "approvals_required": o.approvals_required,
                    "log_index": o.log_index,
                }))
            }
            "server" => {
                let r = interlock_host::decide_server_surface(
                    self.engine(),
                    self.gateway.events(),
                    &self.key,
                    subject,
                    Some(hash),
                    decision,
                    reason,
                    APPROVAL_VALID_SECS,
                )
                .await?;
                Ok(json!({
                    "subject_kind": "server",
                    "name": r.name,
                    "decision": decision.name(),
                    "status": r.status.as_str(),
                    "baseline_hash": r.baseline_hash,
                    "observed_hash": r.observed_hash,
                    "version": r.version,
                }))
            }
            other => Err(DecideError {
                code: "invalid",
                message: format!("subjectKind must be `plan` or `server`, not {other:?}"),
            }),
        }
    }

    /// The approver key's public half, for settings. Never the secret.
    pub async fn approver_info(&self) -> Value {
        let key_id = self.key.key_id().to_string();
        let identity = self
            .engine()
            .store()
            .approver_key(&key_id)
            .await
            .ok()
            .flatten()
            .map(|k| k.identity);
        let public: String = self
            .key
            .public_key()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        json!({
            "key_id": key_id,
            "fingerprint": self.key.fingerprint(),
            "public_key": public,
            "identity": identity,
            "keychain_service": interlock_host::keychain_service(),
            "gateway": self.origin,
            "data_dir": self.data_dir,
        })
    }

    /// Stops serving, then the gateway's tasks, then closes the log.
    pub async fn shutdown(&self) {
        if self.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = self.shutdown.send(true);
        if let Some(server) = self.server.lock().await.take() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), server).await;
        }
        self.gateway.shutdown().await;
        self.engine().log().close().await;
    }
}

/// Why a decision was not recorded; the command's error (`{code, message}`).
#[derive(Debug, Serialize)]
pub struct DecideError {
    /// `changed` (the item is not what was shown: review it again), `refused`
    /// (the engine refused the statement or the item is not held), `invalid`,
    /// `keychain`, `internal`.
    pub code: &'static str,
    pub message: String,
}

impl From<HostError> for DecideError {
    fn from(e: HostError) -> DecideError {
        let code = match &e {
            HostError::Changed(_) => "changed",
            HostError::Engine(_) | HostError::Pin(_) | HostError::Decision(_) => "refused",
            HostError::Keychain(_) | HostError::NoApproverKey => "keychain",
            _ => "internal",
        };
        DecideError {
            code,
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for DecideError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_what_a_browser_uses() {
        assert_eq!(
            origin_of("127.0.0.1:8717".parse().unwrap()),
            "http://127.0.0.1:8717"
        );
        assert_eq!(
            origin_of("0.0.0.0:9000".parse().unwrap()),
            "http://127.0.0.1:9000"
        );
        assert_eq!(
            origin_of("[::1]:9000".parse().unwrap()),
            "http://[::1]:9000"
        );
    }
}
