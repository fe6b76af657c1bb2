//! The gateway this app works with, and the few calls the shell makes into it.
//! Either the app hosts the engine and gateway in-process on the embedded
//! SQLite file (the default), or it connects to a team's gateway running
//! elsewhere (`INTERLOCK_TEAM_GATEWAY`, or `[team] url` in
//! `<data dir>/desktop.toml`) through its reviewer API. Everything here
//! delegates to the interlock crates (`interlock-host` opens the engine and
//! signs, `interlock-gateway` serves, announces, and is the team gateway's
//! client); the shell adds only where things come from (environment, keychain)
//! and how they are shown.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use interlock_core::RiskLevel;
use interlock_gateway::client::{ClientError, ReviewerClient, Subject};
use interlock_gateway::inbox::InboxEntry;
use interlock_host::team_audience::{AudiencePin, PinSource};
use interlock_host::{
    APPROVER_KEY, Countersign, Decision, GatewayOptions, Host, HostError, Keychain, KeychainKey,
    RunningGateway,
};
use interlock_trust::{EventBus, EventType, GatewayEvent, SubjectKind};
use serde::Serialize;
use serde_json::{Value, json};

/// The reviewer API key this app issues itself on every start (the previous
/// ones are revoked): the window's UI reads the API with it.
pub const REVIEWER_NAME: &str = "desktop";

/// How long an approval signed here stays valid (as `interlock plans approve`'s
/// default).
pub const APPROVAL_VALID_SECS: i64 = 2 * 60 * 60;

/// The keychain entry holding the team gateway's reviewer API key.
pub const TEAM_TOKEN: &str = "team-reviewer";

/// The running backend: shared by the tray, the notifications and the commands.
pub struct Backend {
    link: Link,
    pub key: KeychainKey,
    /// The gateway's origin (`http://127.0.0.1:PORT`, or the team gateway's),
    /// which the window loads.
    pub origin: String,
    pub data_dir: PathBuf,
    /// Whether the review UI is served at `/`.
    pub ui: bool,
    closed: std::sync::atomic::AtomicBool,
}

/// Where the gateway runs.
enum Link {
    /// In this process, on the embedded SQLite file.
    Local(RunningGateway),
    /// A team's gateway, through its reviewer API; its event stream is relayed
    /// onto a local bus so the tray and notifications work the same way.
    Team {
        client: ReviewerClient,
        /// The one audience this app signs for there.
        pin: AudiencePin,
        events: EventBus,
        relay: tokio::task::JoinHandle<()>,
    },
}

/// What starting needs from the environment.
pub struct Settings {
    /// `$INTERLOCK_DATA_DIR`, else the platform's data directory.
    pub data_dir: Option<PathBuf>,
    /// `$INTERLOCK_LISTEN`, else the gateway config's `listen`.
    pub listen: Option<SocketAddr>,
    /// A built review UI (a directory with `index.html`).
    pub ui_dir: Option<PathBuf>,
    /// `$INTERLOCK_TEAM_GATEWAY`: connect to this gateway instead of hosting
    /// one (else `[team] url` in `<data dir>/desktop.toml`).
    pub team_url: Option<String>,
    /// `$INTERLOCK_TEAM_REVIEWER_KEY`: the team gateway's reviewer API key,
    /// stored in the keychain on first use (later starts read it from there).
    pub team_token: Option<String>,
    /// `$INTERLOCK_TEAM_AUDIENCE`: the team gateway's log origin, the only
    /// audience this app signs for there (else `[team] audience`, else the
    /// first one the gateway reports; `interlock_host::team_audience`).
    pub team_audience: Option<String>,
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
        let nonempty = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Ok(Settings {
            data_dir: std::env::var_os("INTERLOCK_DATA_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            listen,
            ui_dir,
            team_url: nonempty("INTERLOCK_TEAM_GATEWAY"),
            team_token: nonempty("INTERLOCK_TEAM_REVIEWER_KEY"),
            team_audience: nonempty("INTERLOCK_TEAM_AUDIENCE"),
        })
    }
}

/// `[team]` in `<data dir>/desktop.toml`, if the file has one.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TeamFile {
    url: String,
    /// The team gateway's log origin (`team_audience`).
    audience: Option<String>,
}

fn team_from_file(data_dir: &Path) -> Result<Option<TeamFile>, String> {
    let path = data_dir.join("desktop.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        team: Option<TeamFile>,
    }
    let f: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(f.team)
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

/// Makes sure the approver key exists in the keychain, then either opens the
/// engine and starts the gateway on loopback (trusting the key there and
/// issuing a fresh reviewer API key), or connects to the team gateway.
pub async fn start(settings: Settings) -> Result<Started, String> {
    let host = Host::new(settings.data_dir.clone());
    let data_dir = host.data_dir().map_err(|e| e.to_string())?;
    let file = team_from_file(&data_dir)?;
    let (team_url, file_audience) = match (settings.team_url.clone(), file) {
        // The file's audience is its address's: not another one's.
        (Some(u), Some(f)) if f.url == u => (Some(u), f.audience),
        (Some(u), _) => (Some(u), None),
        (None, Some(f)) => (Some(f.url), f.audience),
        (None, None) => (None, None),
    };
    let audience = settings.team_audience.clone().or(file_audience);
    // https://, or http:// to this machine only (issue 15, item 7): checked
    // before anything is read from or made in the keychain.
    let team_url = team_url
        .map(|u| crate::team::check_team_url(&u).map_err(|e| e.to_string()))
        .transpose()?;
    let keychain = host.keychain().map_err(|e| e.to_string())?;
    let (key, created_key) = keychain
        .load_or_create(APPROVER_KEY)
        .map_err(|e| e.to_string())?;
    match team_url {
        Some(url) => {
            let team = Team {
                url: url.as_str(),
                audience: audience.as_deref(),
            };
            start_team(settings, data_dir, keychain, key, created_key, team).await
        }
        None => start_local(settings, host, data_dir, key, created_key).await,
    }
}

async fn start_local(
    settings: Settings,
    host: Host,
    data_dir: PathBuf,
    key: KeychainKey,
    created_key: bool,
) -> Result<Started, String> {
    let t0 = Instant::now();
    let running = host
        .start_gateway(GatewayOptions {
            config: None,
            listen: settings.listen,
            ui_dir: settings.ui_dir.clone(),
        })
        .await
        .map_err(|e| e.to_string())?;
    // Idempotent: a key made on an earlier run (or by `interlock keys init`) is
    // trusted in this data directory too.
    running
        .trust_approver(&key, &identity(), "desktop keychain key")
        .await
        .map_err(|e| e.to_string())?;
    let reviewer_token = running
        .reissue_reviewer_key(REVIEWER_NAME)
        .await
        .map_err(|e| e.to_string())?;
    let origin = origin_of(running.bound());
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
            link: Link::Local(running),
            key,
            origin,
            data_dir,
            ui: settings.ui_dir.is_some(),
            closed: std::sync::atomic::AtomicBool::new(false),
        },
        reviewer_token,
        created_key,
    })
}

/// Team mode: nothing is hosted here. The reviewer API key comes from
/// `$INTERLOCK_TEAM_REVIEWER_KEY` once (then kept in the keychain); the
/// approver key must be registered on the team gateway by its public half,
/// which the app prints (and Settings shows) until it is.
/// The team gateway to connect to, as configured.
struct Team<'a> {
    url: &'a str,
    audience: Option<&'a str>,
}

async fn start_team(
    settings: Settings,
    data_dir: PathBuf,
    keychain: Keychain,
    key: KeychainKey,
    created_key: bool,
    team: Team<'_>,
) -> Result<Started, String> {
    let url = team.url;
    let token = match &settings.team_token {
        Some(t) => {
            keychain
                .store_token(TEAM_TOKEN, t.trim())
                .map_err(|e| e.to_string())?;
            zeroize_string(t.trim())
        }
        None => keychain
            .load_token(TEAM_TOKEN)
            .map_err(|e| e.to_string())?
            .map(|t| zeroize_string(&t))
            .ok_or_else(|| {
                format!(
                    "no reviewer API key for the team gateway {url}: start once with \
                     INTERLOCK_TEAM_REVIEWER_KEY set to a key from `interlock reviewers add NAME` \
                     on the gateway's machine (it is then kept in the OS keychain)"
                )
            })?,
    };
    let client = ReviewerClient::new(url, &token).map_err(|e| e.to_string())?;
    let origin = client.origin();
    // Checks the key (and that the gateway is there) now rather than at the
    // first notification; the tray still starts if the network is down.
    let mut registered = false;
    match client.approver_identity(&key.key_id().to_string()).await {
        Ok(identity) => registered = identity.is_some(),
        Err(ClientError::Api { status: 401, .. }) => {
            return Err(format!(
                "the team gateway {origin} refused the reviewer API key; set \
                 INTERLOCK_TEAM_REVIEWER_KEY to a current one"
            ));
        }
        Err(e) => eprintln!("interlock-desktop: team gateway {origin}: {e} (retrying)"),
    }
    if !registered {
        eprintln!(
            "interlock-desktop: register this app's approver key on the team gateway: \
             interlock keys register --public-key {} --identity {}",
            hex(key.public_key().as_bytes()),
            identity()
        );
    }
    let pin = AudiencePin::load(&data_dir, &origin, team.audience).map_err(|e| e.to_string())?;
    // Pinned now if the gateway answers (else at the first decision).
    match pin.ensure(&client).await {
        Ok(audience) => {
            let how = match pin.pinned().map(|(_, how)| how) {
                Some(PinSource::Configured) => "as configured",
                Some(PinSource::Remembered) => "as first seen there",
                _ => "pinned now, on first use",
            };
            eprintln!("interlock-desktop: signs for the team gateway's log {audience} ({how})");
        }
        Err(e) => eprintln!("interlock-desktop: team gateway {origin}: {e} (retrying)"),
    }
    let ui = client.serves_ui().await;
    let events = EventBus::new();
    let relay = tokio::spawn(client.clone().relay_events(events.clone()));
    eprintln!(
        "interlock-desktop: connected to the team gateway {origin}{}",
        if created_key {
            " (approver key created in the OS keychain)"
        } else {
            ""
        }
    );
    Ok(Started {
        backend: Backend {
            link: Link::Team {
                client,
                pin,
                events,
                relay,
            },
            key,
            origin,
            data_dir,
            ui,
            closed: std::sync::atomic::AtomicBool::new(false),
        },
        reviewer_token: token.to_string(),
        created_key,
    })
}

fn zeroize_string(s: &str) -> zeroize::Zeroizing<String> {
    zeroize::Zeroizing::new(s.to_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    /// A plan or a server.
    pub kind: SubjectKind,
    /// Plan id or server name.
    pub subject: String,
    /// What an Approve must sign: the plan hash, or the server's observed
    /// surface hash, as of the event.
    pub hash: String,
    /// The event that put it on hold.
    pub event: EventType,
    pub title: String,
    pub risk: String,
    /// A held tool call this app's gateway held for its risk (not for what
    /// inspection found): its notification may approve it for an hour.
    pub grantable: bool,
}

impl Backend {
    /// Where events come from: the in-process gateway's bus, or the team
    /// gateway's stream relayed onto a local one.
    pub fn events(&self) -> &EventBus {
        match &self.link {
            Link::Local(running) => running.events(),
            Link::Team { events, .. } => events,
        }
    }

    /// Whether the app connects to a team gateway (else it hosts one).
    pub fn is_team(&self) -> bool {
        matches!(self.link, Link::Team { .. })
    }

    /// The origin of the review UI this app serves itself (the in-process
    /// gateway's), the only page whose `decide` signs without a native
    /// confirmation; `None` in team mode, where every page is the team
    /// gateway's.
    pub fn own_ui_origin(&self) -> Option<&str> {
        match self.link {
            Link::Local(_) => Some(&self.origin),
            Link::Team { .. } => None,
        }
    }

    /// The audience a decision signed here names: the in-process gateway's
    /// log origin, or the one pinned for the team gateway (taken on first
    /// use if none is yet; issue 39 item 7).
    pub async fn audience(&self) -> Result<String, DecideError> {
        match &self.link {
            Link::Local(running) => Ok(running.gateway().engine().log().origin().to_owned()),
            Link::Team { client, pin, .. } => Ok(pin.ensure(client).await?),
        }
    }

    /// A plan's risk as the gateway's store has it now, for the revision at
    /// exactly `hash` (a notification's Approve re-checks it here rather than
    /// trusting what the event said). `changed` if the plan is no longer at
    /// `hash`; `refused` if its risk label is not one this app knows.
    pub async fn plan_risk_now(&self, plan_id: &str, hash: &str) -> Result<RiskLevel, DecideError> {
        let (current, risk) = match &self.link {
            Link::Local(running) => {
                let r = running
                    .gateway()
                    .engine()
                    .plan(plan_id)
                    .await
                    .map_err(|e| DecideError {
                        code: "refused",
                        message: e.to_string(),
                    })?;
                (r.plan_hash, r.risk)
            }
            Link::Team { client, .. } => {
                let shown = client
                    .subject(Subject::Plan, plan_id)
                    .await
                    .map_err(|e| DecideError::from(HostError::Remote(e)))?;
                let text = |k: &str| shown["plan"][k].as_str().unwrap_or_default().to_owned();
                (text("plan_hash"), text("risk"))
            }
        };
        if current != hash {
            return Err(DecideError {
                code: "changed",
                message: format!(
                    "`{plan_id}` changed since it was shown ({hash} → {current}); review it again"
                ),
            });
        }
        RiskLevel::from_name(&risk).ok_or_else(|| DecideError {
            code: "refused",
            message: format!("`{plan_id}` has an unknown risk label {risk:?}"),
        })
    }

    /// The in-process gateway (none in team mode): what a server's
    /// notification reads its risk from, and what tests set up.
    pub fn local_gateway(&self) -> Option<&interlock_gateway::Gateway> {
        match &self.link {
            Link::Local(running) => Some(running.gateway()),
            Link::Team { .. } => None,
        }
    }

    /// The item a notification should be raised for, if `e` puts one on hold.
    pub async fn held_by(&self, e: &GatewayEvent) -> Option<Held> {
        if !e.kind.holds_for_review() {
            return None;
        }
        let (kind, hash) = match e.subject_kind {
            SubjectKind::Plan => (SubjectKind::Plan, e.plan_hash.clone()?),
            _ => (SubjectKind::Server, e.observed_hash.clone()?),
        };
        let grantable = kind == SubjectKind::Plan && self.held_call_grantable(&e.subject);
        // A server's notification says the server's one risk label (issue 46:
        // it said "medium" where the window said LOW): the event's own risk is
        // the drift's alone, without what the server's tools can do.
        let risk = match (kind, self.local_gateway()) {
            (SubjectKind::Server, Some(gw)) => gw
                .pins()
                .view(&e.subject)
                .map(|v| {
                    v.risk()
                        .max(RiskLevel::from_name(&e.risk).unwrap_or(RiskLevel::Low))
                })
                .map_or_else(|| e.risk.clone(), |r| r.name().to_owned()),
            _ => e.risk.clone(),
        };
        Some(Held {
            grantable,
            kind,
            subject: e.subject.clone(),
            hash,
            event: e.kind,
            title: e.title.clone(),
            risk,
        })
    }

    /// What this app's reviewer says, with the keychain key, valid
    /// [`APPROVAL_VALID_SECS`].
    fn countersign<'a>(&'a self, decision: Decision, reason: &'a str) -> Countersign<'a> {
        Countersign {
            key: &self.key,
            decision,
            reason,
            valid_for_secs: APPROVAL_VALID_SECS,
        }
    }

    /// What waits for a reviewer, as the tray lists it (the inbox's rule
    /// and its risk labels), newest first.
    pub async fn inbox_entries(&self) -> Result<Vec<InboxEntry>, String> {
        match &self.link {
            Link::Local(running) => running.inbox_entries().await.map_err(|e| e.to_string()),
            Link::Team { client, .. } => client.inbox_entries().await.map_err(|e| e.to_string()),
        }
    }

    /// Signs a decision about exactly `hash` with the keychain key.
    pub async fn decide(
        &self,
        kind: SubjectKind,
        subject: &str,
        hash: &str,
        decision: Decision,
        reason: &str,
    ) -> Result<Value, DecideError> {
        let said = self.countersign(decision, reason);
        let running = match &self.link {
            Link::Local(running) => running,
            Link::Team { client, pin, .. } => {
                let subject_kind = match kind {
                    SubjectKind::Plan => Subject::Plan,
                    SubjectKind::Server => Subject::Server,
                    other => return Err(DecideError::not_decidable(other)),
                };
                let mut answer =
                    interlock_host::decide_remote(client, pin, subject_kind, subject, hash, &said)
                        .await?;
                answer["subject_kind"] = json!(kind.as_str());
                return Ok(answer);
            }
        };
        match kind {
            SubjectKind::Plan => {
                let o = running.decide_plan(subject, Some(hash), &said).await?;
                let mut answer = interlock_gateway::views::decision_outcome_json(&o);
                answer["subject_kind"] = json!("plan");
                Ok(answer)
            }
            SubjectKind::Server => {
                let r = running.decide_server(subject, Some(hash), &said).await?;
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
            other => Err(DecideError::not_decidable(other)),
        }
    }

    /// Approves or blocks one tool of a server (issue 46: the window lacked
    /// the browser's per-tool decisions), signing exactly the definition
    /// hash shown. This app's own gateway only: a team gateway's are made in
    /// a browser signed in to it, or with its CLI.
    pub async fn decide_tool(
        &self,
        server: &str,
        tool: &str,
        hash: &str,
        decision: Decision,
        reason: &str,
    ) -> Result<Value, DecideError> {
        let said = self.countersign(decision, reason);
        let Link::Local(running) = &self.link else {
            return Err(DecideError::team_only("a decision about one tool"));
        };
        let r = running.decide_tool(server, tool, Some(hash), &said).await?;
        Ok(json!({
            "subject_kind": "tool",
            "name": r.name,
            "tool": tool,
            "decision": decision.name(),
            "status": r.status.as_str(),
            "version": r.version,
        }))
    }

    /// Removes a server from this app's gateway (issue 46: the window lacked
    /// the browser's Remove), signing exactly the removal hash shown.
    pub async fn remove_server(
        &self,
        name: &str,
        hash: &str,
        reason: &str,
    ) -> Result<Value, DecideError> {
        let said = self.countersign(Decision::Approve, reason);
        let Link::Local(running) = &self.link else {
            return Err(DecideError::team_only("a server's removal"));
        };
        let index = running.remove_server(name, hash, &said).await?;
        Ok(json!({"subject_kind": "removal", "name": name, "removed": true, "log_index": index}))
    }

    /// Approves a held call for `scope` (issue 18): its plan at exactly
    /// `hash`, and for a scope wider than once the standing approval the
    /// gateway offers for it, both signed with the keychain key. A team
    /// gateway's held calls are approved once only from here (their scoped
    /// grants are made in the team gateway's review page, signed in the
    /// browser); asking for more is refused with nothing signed.
    pub async fn approve_held(
        &self,
        plan_id: &str,
        hash: &str,
        scope: interlock_host::Scope,
        reason: &str,
    ) -> Result<Value, DecideError> {
        use interlock_host::Scope;
        let running = match &self.link {
            Link::Local(running) => running,
            Link::Team { .. } if scope == Scope::Once => {
                return self
                    .decide(SubjectKind::Plan, plan_id, hash, Decision::Approve, reason)
                    .await;
            }
            Link::Team { .. } => {
                return Err(DecideError {
                    code: "team",
                    message: format!(
                        "approving `{plan_id}` {} is done in the team gateway's review page; nothing was signed",
                        scope.label().to_lowercase()
                    ),
                });
            }
        };
        let said = self.countersign(Decision::Approve, reason);
        let (outcome, grant) = running
            .approve_held_call(plan_id, hash, scope, &said)
            .await?;
        let mut answer = interlock_gateway::views::decision_outcome_json(&outcome);
        answer["subject_kind"] = json!("plan");
        answer["scope"] = json!(scope.as_str());
        if let Some(g) = grant {
            answer["standing"] = json!({"id": g.id, "expires_at": g.expires_at});
        }
        Ok(answer)
    }

    /// Whether a held call's notification may offer a scoped approval (this
    /// process held it, and not for what inspection found).
    pub fn held_call_grantable(&self, plan_id: &str) -> bool {
        match &self.link {
            Link::Local(running) => running.held_call_grantable(plan_id),
            Link::Team { .. } => false,
        }
    }

    /// The AI clients found on this machine and what connecting each would
    /// do (the in-process gateway's preview). A team gateway's clients are on
    /// its machine: `team`.
    pub async fn clients(&self) -> Result<Value, DecideError> {
        Ok(self.local_for_clients()?.clients().await?)
    }

    /// The coding agents' hook settings and what installing Interlock's hooks
    /// would write in each (the in-process gateway's preview).
    pub async fn hooks(
        &self,
        on_unreachable: interlock_host::OnUnreachable,
    ) -> Result<Value, DecideError> {
        Ok(self.local_for_clients()?.hooks(on_unreachable).await?)
    }

    /// Connects or undoes a client for the owner, who confirmed it in the
    /// app's native dialog ([`crate::clients`]).
    pub async fn change_client(
        &self,
        slug: &str,
        change: interlock_host::ClientChange,
        owner: &interlock_host::OwnerConfirmed,
    ) -> Result<Value, DecideError> {
        Ok(self
            .local_for_clients()?
            .change_client(slug, change, owner)
            .await?)
    }

    fn local_for_clients(&self) -> Result<&RunningGateway, DecideError> {
        match &self.link {
            Link::Local(running) => Ok(running),
            Link::Team { .. } => Err(DecideError {
                code: "team",
                message: "this app reviews for a team gateway: connect clients on the machine \
                          that runs them, with `interlock connect`"
                    .into(),
            }),
        }
    }

    /// The approver key's public half, for settings. Never the secret.
    pub async fn approver_info(&self) -> Value {
        let key_id = self.key.key_id().to_string();
        let identity = match &self.link {
            Link::Local(running) => running.approver_identity(&key_id).await.ok().flatten(),
            Link::Team { client, .. } => client.approver_identity(&key_id).await.ok().flatten(),
        };
        json!({
            "key_id": key_id,
            "fingerprint": self.key.fingerprint(),
            "public_key": hex(self.key.public_key().as_bytes()),
            "identity": identity,
            "keychain_service": interlock_host::keychain_service(),
            "gateway": self.origin,
            "team": self.is_team(),
            "data_dir": self.data_dir,
        })
    }

    /// Stops serving, then the gateway's tasks, then closes the log (or, in
    /// team mode, stops following the team gateway's events).
    pub async fn shutdown(&self) {
        if self.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        match &self.link {
            Link::Local(running) => running.shutdown().await,
            Link::Team { relay, .. } => relay.abort(),
        }
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

impl DecideError {
    /// What the app signs only on its own gateway.
    fn team_only(what: &str) -> DecideError {
        DecideError {
            code: "invalid",
            message: format!(
                "{what} on a team gateway is made in a browser signed in to it, or with `interlock servers` on its machine"
            ),
        }
    }

    fn not_decidable(kind: SubjectKind) -> DecideError {
        DecideError {
            code: "invalid",
            message: format!(
                "subjectKind must be `plan` or `server`, not {:?}",
                kind.as_str()
            ),
        }
    }
}

impl From<HostError> for DecideError {
    fn from(e: HostError) -> DecideError {
        let code = match &e {
            HostError::Changed(_) => "changed",
            HostError::Engine(_)
            | HostError::Pin(_)
            | HostError::Decision(_)
            | HostError::ServerChange(_)
            | HostError::ApprovalOnly(_) => "refused",
            HostError::Scope(_) | HostError::ScopeNotOffered(_) => "scope",
            HostError::Keychain(_) | HostError::NoApproverKey => "keychain",
            // The team gateway answered no (a refused statement, an unknown
            // item), or could not be reached.
            HostError::Remote(ClientError::Api { .. }) => "refused",
            HostError::Remote(ClientError::Transport(_)) => "unreachable",
            // The team gateway named another log than the one pinned.
            HostError::WrongAudience { .. } => "audience",
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

    /// The address from `[team] url` in `desktop.toml` is checked as the
    /// environment's is, and the app does not start (nor touch the keychain).
    #[tokio::test]
    async fn regression_team_mode_refuses_a_plain_http_gateway_at_start() {
        let dir = std::env::temp_dir().join(format!("interlock-team-url-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("desktop.toml"),
            "[team]\nurl = \"http://gateway.example:8717\"\n",
        )
        .unwrap();
        let settings = |team_url: Option<&str>| Settings {
            data_dir: Some(dir.clone()),
            listen: None,
            ui_dir: None,
            team_url: team_url.map(str::to_owned),
            team_token: Some("ilk_never_sent".to_owned()),
            team_audience: None,
        };
        for from_env in [Some("http://10.1.2.3:8717"), None] {
            let err = start(settings(from_env)).await.err().expect("refused");
            assert!(err.contains("use https://"), "{err}");
            assert!(
                err.contains(from_env.unwrap_or("http://gateway.example:8717")),
                "{err}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `[team] audience` is read with the address it belongs to, and a
    /// misspelt key is an error rather than an audience silently not pinned.
    #[test]
    fn desktop_toml_names_the_team_audience_beside_its_address() {
        let dir = std::env::temp_dir().join(format!("interlock-team-toml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("desktop.toml"),
            "[team]\nurl = \"https://gw.example\"\naudience = \"interlock.local/log/00aa\"\n",
        )
        .unwrap();
        let team = team_from_file(&dir).unwrap().unwrap();
        assert_eq!(team.url, "https://gw.example");
        assert_eq!(team.audience.as_deref(), Some("interlock.local/log/00aa"));
        std::fs::write(
            dir.join("desktop.toml"),
            "[team]\nurl = \"https://gw.example\"\naudiance = \"x\"\n",
        )
        .unwrap();
        let err = team_from_file(&dir).err().unwrap();
        assert!(err.contains("audiance"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

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
