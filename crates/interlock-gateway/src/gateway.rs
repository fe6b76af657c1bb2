//! The running gateway: the engine, the upstream supervisors, pinning, agent
//! sessions and the event bus, shared by the HTTP handlers.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use interlock_engine::Engine;
use interlock_store::{ApiKeyKind, ApiKeyRecord, StoreError};
use tokio::sync::{Notify, mpsc, watch};

use crate::config::{ConfigError, GatewayConfig, Transport};
use crate::executor::McpAdapter;
use crate::keys;
use crate::roles::Roles;
use crate::upstream::era::EraChoice;
use crate::upstream::relay::{RelayGuard, Relays};
use crate::upstream::{Connection, LinkState, ServerHello, Signals, UpstreamSignal, backoff};
use interlock_trust::events::{EventBus, GatewayEvent};
use interlock_trust::pins::{Pins, ServedSurfaces};

/// How long an authenticated key is trusted without asking the store again
/// (so a revocation takes effect within this time).
const KEY_CACHE_TTL: Duration = Duration::from_secs(5);

/// How often rows changed by other processes (a CLI approval) are picked up.
const RELOAD_EVERY: Duration = Duration::from_millis(500);

/// One upstream server and its current connection.
pub struct Upstream {
    pub name: String,
    pub transport: Transport,
    /// The protocol era the gateway may reach it in.
    pub protocol: EraChoice,
    conn: RwLock<Option<Arc<Connection>>>,
    hello: RwLock<Option<ServerHello>>,
    link: watch::Sender<LinkState>,
    recheck: Notify,
    /// Calls in flight that take progress (their notifications are relayed).
    relays: Arc<Relays>,
    /// Its effective-permission probes (empty unless marked
    /// `probes = "non-production"`), run after every re-list.
    probes: Vec<interlock_surface::probes::Probe>,
    /// What of its surface is pinned (`pin = [...]`).
    pub pin: crate::config::PinSet,
    /// Its config entry (secrets resolved): what call-path checks read
    /// (`roots`, the tool prefix), here rather than in the gateway's config
    /// because a server can be added at run time (`crate::servers`).
    pub config: crate::config::UpstreamConfig,
    /// Set when the server is removed at run time: its supervisor stops and
    /// closes the connection.
    removed: watch::Sender<bool>,
}

impl Upstream {
    /// Registers a call that takes progress: the upstream's
    /// `notifications/progress` for `token` (the gateway's, unique per call)
    /// reach `tx` with `agent_token` in its place, until the guard drops.
    pub fn relay(
        &self,
        token: String,
        agent_token: Box<serde_json::value::RawValue>,
        tx: tokio::sync::mpsc::Sender<Vec<u8>>,
        log_level: Option<crate::upstream::relay::LogLevel>,
        rules: Arc<crate::calls::scan::ScanPolicy>,
    ) -> RelayGuard {
        self.relays
            .register(token, agent_token, tx, log_level, rules)
    }

    /// The live connection, if up.
    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.conn.read().expect("conn lock").clone()
    }

    pub fn link(&self) -> LinkState {
        self.link.borrow().clone()
    }

    pub fn hello(&self) -> Option<ServerHello> {
        self.hello.read().expect("hello lock").clone()
    }

    /// Asks the supervisor to re-list the tools now.
    pub fn recheck(&self) {
        self.recheck.notify_one();
    }
}

/// The upstream servers, each with its connection slot; made from the
/// config before anything connects, and changed at run time when a server is
/// added or removed (`crate::servers`). Shared by the gateway (which keeps
/// them connected) and the engine's MCP adapter (which calls their tools for
/// plans).
pub struct Upstreams {
    servers: RwLock<BTreeMap<String, Arc<Upstream>>>,
    /// What confines every stdio server this gateway starts (issue 38).
    confiner: Arc<interlock_sandbox::Confiner>,
}

impl Upstreams {
    fn from_config(
        config: &GatewayConfig,
        confiner: Arc<interlock_sandbox::Confiner>,
    ) -> Result<Upstreams, ConfigError> {
        let mut upstreams = BTreeMap::new();
        for (name, up) in &config.servers {
            upstreams.insert(name.clone(), Arc::new(Upstream::new(name, up)?));
        }
        Ok(Upstreams {
            servers: RwLock::new(upstreams),
            confiner,
        })
    }

    /// What confines the servers of this table.
    pub(crate) fn confiner(&self) -> &interlock_sandbox::Confiner {
        &self.confiner
    }

    pub fn get(&self, name: &str) -> Option<Arc<Upstream>> {
        self.servers
            .read()
            .expect("upstreams lock")
            .get(name)
            .cloned()
    }

    /// Every upstream now, by name.
    pub fn all(&self) -> Vec<Arc<Upstream>> {
        self.servers
            .read()
            .expect("upstreams lock")
            .values()
            .cloned()
            .collect()
    }

    /// Adds `up` unless a server of its name exists (false then).
    pub(crate) fn insert(&self, up: Arc<Upstream>) -> bool {
        let mut map = self.servers.write().expect("upstreams lock");
        if map.contains_key(&up.name) {
            return false;
        }
        map.insert(up.name.clone(), up);
        true
    }

    /// Takes the server named `name` out (it is no longer served or called).
    pub(crate) fn remove(&self, name: &str) -> Option<Arc<Upstream>> {
        self.servers.write().expect("upstreams lock").remove(name)
    }
}

impl Upstream {
    /// An upstream from its (secrets-resolved) config entry, not connected.
    pub(crate) fn new(
        name: &str,
        up: &crate::config::UpstreamConfig,
    ) -> Result<Upstream, ConfigError> {
        Ok(Upstream {
            name: name.to_owned(),
            transport: up.transport(name)?,
            protocol: up.protocol,
            conn: RwLock::new(None),
            hello: RwLock::new(None),
            link: watch::channel(LinkState::Connecting).0,
            recheck: Notify::new(),
            relays: Arc::new(Relays::default()),
            probes: up.compiled_probes(name)?,
            pin: up.pin.clone(),
            config: up.clone(),
            removed: watch::channel(false).0,
        })
    }

    /// Stops its supervisor (the server was removed).
    pub(crate) fn stop(&self) {
        self.removed.send_replace(true);
    }
}

/// A gateway whose parts exist but which has not started: the upstreams and
/// the served-surface table, made before the engine because the engine's MCP
/// adapter ([`Prepared::mcp_adapter`]) needs them. So the runtime is a tree —
/// gateway → engine → adapter → (upstreams, served surfaces) — with no
/// handle back to the gateway.
pub struct Prepared {
    config: GatewayConfig,
    policy: interlock_surface::DriftPolicy,
    upstreams: Arc<Upstreams>,
    served: ServedSurfaces,
}

impl Prepared {
    /// The executor and prober of `mcp.call_tool` / `mcp.tool_result` /
    /// `mcp.tool_pinned` stages, over this gateway's upstreams.
    pub fn mcp_adapter(&self) -> McpAdapter {
        McpAdapter::new(
            Arc::clone(&self.upstreams),
            self.served.clone(),
            self.config.limits.upstream_timeout(),
        )
    }

    /// Builds the gateway over an open engine (opened with
    /// [`Prepared::mcp_adapter`] among its adapters) and starts its background
    /// tasks (one supervisor per upstream, the reload loop, the engine-event
    /// relay).
    pub fn start(self, engine: Engine) -> Gateway {
        let Prepared {
            config,
            policy,
            upstreams,
            served,
        } = self;
        let events = EventBus::new();
        let (shutdown, _) = watch::channel(false);
        let gw = Gateway(Arc::new(Inner {
            pins: Pins::new(
                engine.clone(),
                policy,
                events.clone(),
                config
                    .servers
                    .iter()
                    .map(|(n, u)| (n.clone(), u.tool_prefix(n)))
                    .collect(),
                served,
            ),
            roles: Roles::new(&config.roles),
            engine,
            config,
            events,
            upstreams,
            sessions: Mutex::new(Sessions::default()),
            subscriptions: Default::default(),
            key_cache: Mutex::new(HashMap::new()),
            held: Default::default(),
            envelopes: Default::default(),
            review_answers: Default::default(),
            held_calls: Default::default(),
            tasks: Default::default(),
            sealer: Default::default(),
            signin: Default::default(),
            client_connector: Default::default(),
            server_file: Default::default(),
            key_limits: Default::default(),
            shutdown,
            metrics: Default::default(),
        }));
        for up in gw.0.upstreams.all() {
            tokio::spawn(supervise(gw.clone(), up));
        }
        tokio::spawn(reload_loop(gw.clone()));
        tokio::spawn(relay_engine_events(gw.clone()));
        tokio::spawn(announce_adopted_entries(gw.clone()));
        crate::alerts::spawn(&gw);
        tokio::spawn(crate::tally::tally(gw.clone()));
        gw
    }
}

/// An agent's MCP session (2025-11-25 clients).
#[derive(Clone, Debug)]
pub struct Session {
    pub agent: String,
    pub key_hash: String,
    pub protocol_version: String,
    /// The least severe log level the client wants relayed
    /// (`logging/setLevel`); `None`: every level.
    pub log_level: Option<crate::upstream::relay::LogLevel>,
}

#[derive(Default)]
pub(crate) struct Sessions {
    by_id: HashMap<String, Session>,
    /// Each agent key's sessions (by key hash), oldest first.
    by_key: HashMap<String, VecDeque<String>>,
}

/// The gateway holds `limits.max_sessions` sessions already.
#[derive(Debug, thiserror::Error)]
#[error(
    "the gateway holds its maximum of {max} sessions (limits.max_sessions); end one (DELETE /mcp) or try later"
)]
pub struct SessionRefused {
    pub max: usize,
}

pub(crate) struct Inner {
    pub engine: Engine,
    pub config: GatewayConfig,
    pub roles: Roles,
    pub pins: Pins,
    pub events: EventBus,
    pub upstreams: Arc<Upstreams>,
    pub(crate) sessions: Mutex<Sessions>,
    /// Sessions' resource subscriptions and standalone streams.
    pub(crate) subscriptions: crate::subscriptions::Subscriptions,
    key_cache: Mutex<HashMap<String, (ApiKeyRecord, Instant)>>,
    /// Held calls waiting for a reviewer, per agent key hash.
    held: Arc<Mutex<HashMap<String, usize>>>,
    /// Tools' behavioural envelopes (issue 16 item 2).
    envelopes: interlock_trust::envelopes::Envelopes,
    /// `POST /api/v1/servers/{name}/review` answers by `Idempotency-Key` (issue 22).
    review_answers: interlock_trust::review::idempotency::Cache,
    /// What the gateway knows of each held call beyond its plan (plan id →
    /// memo): its session, so a reviewer can approve *for this session*, and
    /// whether inspection held it. Kept in memory only: a session does not
    /// outlive the process either.
    held_calls: Mutex<indexmap::IndexMap<String, HeldMemo>>,
    /// Task-augmented calls (MCP tasks, 2025-11-25).
    tasks: crate::calls::tasks::Tasks,
    /// Seals held calls' round-trip states (2026-07-28 clients).
    sealer: crate::calls::round_trip::Sealer,
    /// Outstanding one-time sign-in links (issue 19).
    signin: Arc<crate::signin::SigninLinks>,
    /// The host's `interlock connect`, for `/api/v1/clients` (`crate::clients`).
    client_connector: std::sync::OnceLock<Arc<dyn crate::clients::ClientConnector>>,
    /// Per-key rate buckets and settings (issue 20 item 4).
    pub(crate) key_limits: crate::calls::limits::KeyLimits,
    /// The host's `gateway.toml`, for servers added and removed at run time.
    pub(crate) server_file: std::sync::OnceLock<Arc<dyn crate::servers::ServerFile>>,
    pub(crate) shutdown: watch::Sender<bool>,
    /// `/metrics` (issue 21).
    metrics: crate::metrics::Metrics,
}

/// The most held calls remembered; the oldest are forgotten first (their
/// *for this session* offer goes with them).
const HELD_CALLS_KEPT: usize = 4096;

/// What the gateway remembers of a held call (see `Inner::held_calls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldMemo {
    /// `standing::session_tag` of the call's session; `None` if stateless.
    pub session: Option<String>,
    /// Whether inspection (arguments that look like an attack, or outside
    /// the tool's envelope) held it, not only its risk: such a call is
    /// approved in its review only, and no standing approval covers its kind.
    pub inspection_hold: bool,
}

/// A held call's place among its key's `limits.held_calls_per_key`; freed
/// when the call stops waiting (however it ends).
pub(crate) struct HeldSlot {
    counts: Arc<Mutex<HashMap<String, usize>>>,
    key: String,
}

impl Drop for HeldSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counts.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// An agent key has `limits.held_calls_per_key` calls waiting already.
#[derive(Debug, thiserror::Error)]
#[error(
    "this agent key has its maximum of {max} held calls waiting for a reviewer (limits.held_calls_per_key); wait for a decision before making more"
)]
pub(crate) struct HeldCapReached {
    pub max: usize,
}

/// A cheap-to-clone handle on the running gateway.
#[derive(Clone)]
pub struct Gateway(pub(crate) Arc<Inner>);

impl Gateway {
    /// The first step of starting a gateway: its upstreams and served-surface
    /// table from the config, before the engine is opened.
    ///
    /// It also starts building the inspection rules on a thread of their own
    /// ([`interlock_inspect::warm_up`]), so the first tool call does not wait
    /// for them while the upstreams and the log are still being opened.
    ///
    /// `confiner` confines every stdio server it starts (issue 38).
    pub fn prepare(
        mut config: GatewayConfig,
        confiner: Arc<interlock_sandbox::Confiner>,
    ) -> Result<Prepared, ConfigError> {
        // Alert sinks' `secret_env` references (keychain ones the host resolved).
        config.alerts.resolve_env()?;
        let policy = config.drift.policy()?;
        let upstreams = Arc::new(Upstreams::from_config(&config, confiner)?);
        if let Err(e) = std::thread::Builder::new()
            .name("inspect-warm-up".into())
            .spawn(interlock_inspect::warm_up)
        {
            // Not fatal: the first call builds them instead.
            tracing::debug!(error = %e, "could not start the inspection warm-up");
        }
        Ok(Prepared {
            policy,
            upstreams,
            served: ServedSurfaces::default(),
            config,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.0.engine
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.0.config
    }

    /// The gateway's metrics (`/metrics`).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.0.metrics
    }

    /// Hands the gateway the host's client connector (once; a second call
    /// is ignored): `/api/v1/clients` answers with it.
    pub fn set_client_connector(&self, c: Arc<dyn crate::clients::ClientConnector>) {
        let _ = self.0.client_connector.set(c);
    }

    /// The client connector, if the host gave one.
    pub fn client_connector(&self) -> Option<Arc<dyn crate::clients::ClientConnector>> {
        self.0.client_connector.get().cloned()
    }

    /// The outstanding one-time sign-in links (`crate::signin`).
    pub fn signin(&self) -> &Arc<crate::signin::SigninLinks> {
        &self.0.signin
    }

    pub fn pins(&self) -> &Pins {
        &self.0.pins
    }

    /// Tools' behavioural envelopes.
    pub(crate) fn review_answers(&self) -> &interlock_trust::review::idempotency::Cache {
        &self.0.review_answers
    }

    pub fn envelopes(&self) -> &interlock_trust::envelopes::Envelopes {
        &self.0.envelopes
    }

    /// How many items wait for a reviewer, by the inbox's rule: proposed
    /// plans, and servers that [`ServerView::waits_for_review`].
    ///
    /// [`ServerView::waits_for_review`]: interlock_trust::pins::ServerView::waits_for_review
    pub async fn held_count(&self) -> Result<usize, interlock_engine::EngineError> {
        let plans = self
            .engine()
            .plans(Some(interlock_store::PlanStatus::Proposed))
            .await?
            .len();
        let servers = self
            .pins()
            .views()
            .iter()
            .filter(|v| v.waits_for_review())
            .count();
        Ok(plans + servers)
    }

    pub fn events(&self) -> &EventBus {
        &self.0.events
    }

    pub fn roles(&self) -> &Roles {
        &self.0.roles
    }

    pub fn upstream(&self, name: &str) -> Option<Arc<Upstream>> {
        self.0.upstreams.get(name)
    }

    /// Every upstream now (the config's and those added at run time).
    pub fn upstreams(&self) -> Vec<Arc<Upstream>> {
        self.0.upstreams.all()
    }

    /// Every upstream's config entry now, by name.
    pub fn server_configs(&self) -> BTreeMap<String, crate::config::UpstreamConfig> {
        self.upstreams()
            .into_iter()
            .map(|u| (u.name.clone(), u.config.clone()))
            .collect()
    }

    /// Every configured upstream's exposed-tool prefix, by server name: what
    /// `interlock_trust::standing::approved_tool_hash` resolves a tool name with.
    pub fn tool_prefixes(&self) -> BTreeMap<String, String> {
        self.upstreams()
            .into_iter()
            .map(|u| (u.name.clone(), u.config.tool_prefix(&u.name)))
            .collect()
    }

    pub(crate) fn upstream_table(&self) -> &Upstreams {
        &self.0.upstreams
    }

    /// Starts the supervisor of an upstream added at run time.
    pub(crate) fn supervise(&self, up: Arc<Upstream>) {
        tokio::spawn(supervise(self.clone(), up));
    }

    /// Stops the background tasks and closes upstream connections.
    pub async fn shutdown(&self) {
        let _ = self.0.shutdown.send(true);
        for up in self.0.upstreams.all() {
            let conn = up.conn.write().expect("conn lock").take();
            if let Some(c) = conn {
                c.close().await;
            }
        }
    }

    /// The active key record for a presented bearer key of `kind`.
    pub async fn authenticate(
        &self,
        presented: &str,
        kind: ApiKeyKind,
    ) -> Result<Option<ApiKeyRecord>, StoreError> {
        let hash = keys::key_hash(presented);
        if let Some((rec, at)) = self.0.key_cache.lock().expect("cache lock").get(&hash)
            && at.elapsed() < KEY_CACHE_TTL
        {
            return Ok((rec.kind == kind).then(|| rec.clone()));
        }
        let found = keys::authenticate(&self.0.engine, presented, kind).await?;
        if let Some(rec) = &found {
            let mut cache = self.0.key_cache.lock().expect("cache lock");
            if cache.len() > 10_000 {
                cache.clear();
            }
            cache.insert(hash, (rec.clone(), Instant::now()));
        }
        Ok(found)
    }

    /// Forgets a key's cached record, so an admin's change to it (revoked,
    /// rotated, a new role or setting) applies to the next request.
    pub(crate) fn forget_key(&self, key_hash: &str) {
        self.0
            .key_cache
            .lock()
            .expect("cache lock")
            .remove(key_hash);
        self.0.key_limits.forget(key_hash);
    }

    /// Opens a session. A key at `limits.sessions_per_key` loses its own
    /// oldest session (a client that re-initializes without `DELETE` keeps
    /// working); a gateway at `limits.max_sessions` refuses the new one. No
    /// key's sessions are ever evicted by another key's.
    pub(crate) fn new_session(&self, session: Session) -> Result<String, SessionRefused> {
        let limits = &self.0.config.limits;
        let id = keys::generate_key()[keys::KEY_PREFIX.len()..].to_owned();
        let mut evicted = Vec::new();
        {
            let mut s = self.0.sessions.lock().expect("sessions lock");
            let key = session.key_hash.clone();
            let per_key = limits.sessions_per_key.max(1);
            loop {
                let own = s.by_key.get(&key).map_or(0, VecDeque::len);
                if own < per_key {
                    break;
                }
                let Some(old) = s.by_key.get_mut(&key).and_then(VecDeque::pop_front) else {
                    break;
                };
                s.by_id.remove(&old);
                evicted.push(old);
            }
            if s.by_id.len() >= limits.max_sessions.max(1) {
                return Err(SessionRefused {
                    max: limits.max_sessions,
                });
            }
            s.by_id.insert(id.clone(), session);
            s.by_key.entry(key).or_default().push_back(id.clone());
        }
        for old in evicted {
            self.forget_subscriptions(&old);
        }
        Ok(id)
    }

    /// A place for one more held call of the agent key with this hash, unless
    /// it has `limits.held_calls_per_key` waiting already.
    pub(crate) fn held_slot(&self, key_hash: &str) -> Result<HeldSlot, HeldCapReached> {
        let max = self.0.config.limits.held_calls_per_key;
        let mut counts = self.0.held.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts.entry(key_hash.to_owned()).or_default();
        if *n >= max {
            return Err(HeldCapReached { max });
        }
        *n += 1;
        Ok(HeldSlot {
            counts: Arc::clone(&self.0.held),
            key: key_hash.to_owned(),
        })
    }

    pub(crate) fn sealer(&self) -> &crate::calls::round_trip::Sealer {
        &self.0.sealer
    }

    pub(crate) fn tasks(&self) -> &crate::calls::tasks::Tasks {
        &self.0.tasks
    }

    /// Remembers a held call.
    pub(crate) fn remember_held_call(&self, plan_id: &str, memo: HeldMemo) {
        let mut m = self.0.held_calls.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= HELD_CALLS_KEPT {
            m.shift_remove_index(0);
        }
        m.insert(plan_id.to_owned(), memo);
    }

    /// What this process remembers of a held call (`None` if it was held
    /// before a restart, by another process, or long ago).
    pub fn held_memo(&self, plan_id: &str) -> Option<HeldMemo> {
        let m = self.0.held_calls.lock().unwrap_or_else(|e| e.into_inner());
        m.get(plan_id).cloned()
    }

    /// The ids of the live sessions of the agent key with this hash.
    pub(crate) fn sessions_of(&self, key_hash: &str) -> std::collections::BTreeSet<String> {
        self.0
            .sessions
            .lock()
            .expect("sessions lock")
            .by_key
            .get(key_hash)
            .map(|ids| ids.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn session(&self, id: &str) -> Option<Session> {
        self.0
            .sessions
            .lock()
            .expect("sessions lock")
            .by_id
            .get(id)
            .cloned()
    }

    /// Sets a session's log level; false if there is no such session.
    pub(crate) fn set_log_level(&self, id: &str, level: crate::upstream::relay::LogLevel) -> bool {
        let mut s = self.0.sessions.lock().expect("sessions lock");
        match s.by_id.get_mut(id) {
            Some(session) => {
                session.log_level = Some(level);
                true
            }
            None => false,
        }
    }

    pub(crate) fn end_session(&self, id: &str) -> bool {
        let ended = {
            let mut s = self.0.sessions.lock().expect("sessions lock");
            match s.by_id.remove(id) {
                Some(session) => {
                    if let Some(ids) = s.by_key.get_mut(&session.key_hash) {
                        ids.retain(|x| x != id);
                        if ids.is_empty() {
                            s.by_key.remove(&session.key_hash);
                        }
                    }
                    true
                }
                None => false,
            }
        };
        self.forget_subscriptions(id);
        ended
    }

    /// Drops an ended session's stream and subscriptions, and unsubscribes
    /// upstream from the resources nobody watches any more.
    fn forget_subscriptions(&self, id: &str) {
        for (server, uri) in self.0.subscriptions.end_session(id) {
            self.unsubscribe_upstream(&server, &uri);
        }
    }

    /// Tells `server` the gateway no longer wants updates of `uri` (in the
    /// background: nobody waits for it, and a failure only means a few
    /// updates nobody receives).
    pub(crate) fn unsubscribe_upstream(&self, server: &str, uri: &str) {
        self.tell_upstream(server, "resources/unsubscribe", uri);
    }

    /// Sends `method` (`resources/subscribe` or `…/unsubscribe`) for `uri` to
    /// `server` in the background, logging a failure.
    fn tell_upstream(&self, server: &str, method: &'static str, uri: &str) {
        let Some(conn) = self.upstream(server).and_then(|u| u.connection()) else {
            return;
        };
        let params = serde_json::value::to_raw_value(&serde_json::json!({ "uri": uri }))
            .expect("a URI serializes");
        let timeout = self.config().limits.upstream_timeout();
        let (server, uri) = (server.to_owned(), uri.to_owned());
        tokio::spawn(async move {
            if let Err(e) = conn.request(method, Some(&params), timeout).await {
                tracing::warn!(%server, %uri, error = %e, "{method} upstream failed");
            }
        });
    }
}

/// The egress proxy of `up`, when its sandbox lists destinations.
fn start_egress(gw: &Gateway, up: &Upstream) -> Option<crate::upstream::egress::EgressProxy> {
    let Transport::Stdio {
        sandbox: interlock_sandbox::Setting::Profile(profile),
        ..
    } = &up.transport
    else {
        return None;
    };
    let interlock_sandbox::Net::Allow(allowed) = &profile.net else {
        return None;
    };
    let path = gw.upstream_table().confiner().egress_socket(&up.name);
    if let Some(dir) = path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        tracing::warn!(server = %up.name, error = %e, "egress proxy: no directory for its socket");
        return None;
    }
    let (gw, name) = (gw.clone(), up.name.clone());
    let approved: crate::upstream::egress::MayConnect = Arc::new(move || {
        gw.pins()
            .view(&name)
            .is_some_and(|v| v.record.status == interlock_store::ServerStatus::Trusted)
    });
    match crate::upstream::egress::start(&up.name, &path, allowed.clone(), approved) {
        Ok(p) => Some(p),
        Err(e) => {
            // The server then starts with no network at all.
            tracing::warn!(server = %up.name, error = %e, "egress proxy did not start");
            None
        }
    }
}

/// Keeps one upstream connected: connect, handshake, list and pin its tools;
/// re-list on `list_changed`, on request and periodically; reconnect with
/// backoff when it dies.
async fn supervise(gw: Gateway, up: Arc<Upstream>) {
    // A `command` server whose sandbox lists destinations reaches them only
    // through its egress proxy, and only while approved (issue 38); the
    // proxy lives as long as this supervisor.
    let _egress = start_egress(&gw, &up);
    let mut shutdown = gw.0.shutdown.subscribe();
    let mut removed = up.removed.subscribe();
    let limits = gw.0.config.limits.clone();
    let recheck_every = Duration::from_secs(gw.0.config.recheck_secs);
    let list_timeout = limits.upstream_timeout().min(Duration::from_secs(60));
    let mut attempt = 0u32;
    loop {
        if *shutdown.borrow() || *removed.borrow() {
            return;
        }
        up.link.send_replace(LinkState::Connecting);
        let (tx, mut signals) = mpsc::unbounded_channel();
        let error = match Connection::open(
            &up.name,
            &up.transport,
            up.protocol,
            &limits,
            Signals::new(tx, Arc::clone(&up.relays)),
            gw.upstream_table().confiner(),
        )
        .await
        {
            Err(e) => e.to_string(),
            Ok((conn, hello)) => {
                let conn = Arc::new(conn);
                let instructions = hello.instructions.clone();
                *up.hello.write().expect("hello lock") = Some(hello);
                let relist = || async {
                    let tools = conn
                        .list_tools(list_timeout, limits.tools_list_caps())
                        .await?;
                    let mut listing = crate::listing::pinned_listing(
                        &conn,
                        up.hello().as_ref(),
                        &up.pin,
                        &limits,
                        instructions.as_deref(),
                        tools,
                    )
                    .await?;
                    listing.launch = up.transport.pinned_launch();
                    gw.0.pins
                        .observe(&up.name, listing)
                        .await
                        .map_err(|e| crate::upstream::UpstreamError::Unavailable(e.to_string()))?;
                    // Behaviour, after the surface: the probes run on this
                    // connection, not through the agent surface. A failure to
                    // record them is logged, and the next re-check tries again.
                    if let Err(e) = crate::probes::run(&gw, &up.name, &up.probes, &conn).await {
                        tracing::warn!(server = %up.name, error = %e, "probes failed to run");
                    }
                    Ok::<(), crate::upstream::UpstreamError>(())
                };
                match relist().await {
                    Err(e) => {
                        conn.close().await;
                        e.to_string()
                    }
                    Ok(()) => {
                        *up.conn.write().expect("conn lock") = Some(Arc::clone(&conn));
                        up.link.send_replace(LinkState::Up);
                        tracing::info!(server = %up.name, "upstream connected");
                        // A new connection (a restarted process, a new HTTP
                        // session) starts with no subscriptions: renew the
                        // ones sessions hold.
                        for uri in gw.0.subscriptions.watched(&up.name) {
                            gw.tell_upstream(&up.name, "resources/subscribe", &uri);
                        }
                        attempt = 0;
                        let why = loop {
                            tokio::select! {
                                s = signals.recv() => match s {
                                    Some(UpstreamSignal::SurfaceChanged) => {
                                        if let Err(e) = relist().await { break e.to_string() }
                                    }
                                    Some(UpstreamSignal::ResourceUpdated { uri, message }) => {
                                        let resource = (up.name.clone(), uri);
                                        let sent = gw.0.subscriptions.updated(&resource, &message);
                                        tracing::debug!(server = %up.name, uri = %resource.1, sent, "resource updated");
                                    }
                                    Some(UpstreamSignal::Closed(why)) => break why,
                                    None => break "closed".to_owned(),
                                },
                                _ = up.recheck.notified() => {
                                    if let Err(e) = relist().await { break e.to_string() }
                                }
                                _ = tokio::time::sleep(recheck_every) => {
                                    if let Err(e) = relist().await { break e.to_string() }
                                }
                                _ = shutdown.changed() => {
                                    conn.close().await;
                                    return;
                                }
                                _ = removed.changed() => {
                                    up.conn.write().expect("conn lock").take();
                                    conn.close().await;
                                    return;
                                }
                            }
                        };
                        up.conn.write().expect("conn lock").take();
                        conn.close().await;
                        why
                    }
                }
            }
        };
        let retry_in = backoff(attempt);
        attempt = attempt.saturating_add(1);
        tracing::warn!(server = %up.name, error = %error, ?retry_in, "upstream down");
        up.link.send_replace(LinkState::Down { error, retry_in });
        tokio::select! {
            _ = tokio::time::sleep(retry_in) => {}
            _ = up.recheck.notified() => {}
            _ = shutdown.changed() => return,
            _ = removed.changed() => return,
        }
    }
}

/// Picks up decisions made by other processes (`interlock servers approve`).
async fn reload_loop(gw: Gateway) {
    let mut shutdown = gw.0.shutdown.subscribe();
    // A decision committed by another gateway on the same Postgres database
    // wakes the loop at once; polling stays for SQLite and for what a lost
    // notification connection missed.
    let mut decided = gw.0.engine.store().subscribe_changes();
    let mut first = true;
    loop {
        match gw.0.pins.reload_changed().await {
            Ok(names) if !first => {
                for n in names {
                    tracing::info!(server = %n, "server state changed elsewhere; reloaded");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "reloading server state failed"),
        }
        first = false;
        // A widening decided by another process (the CLI) replaces the
        // cached envelope.
        if let Err(e) = gw.0.envelopes.reload_changed(&gw.0.engine).await {
            tracing::warn!(error = %e, "reloading envelopes failed");
        }
        // Entries other processes appended (a CLI approval) become visible to
        // the reviewer API's log and proofs.
        if let Err(e) = gw.0.engine.log().refresh().await {
            tracing::warn!(error = %e, "catching up with the log failed");
        }
        // An execution whose process died (this one's before a restart, or a
        // CLI's) is halted, with its evidence, and never re-run.
        match gw.0.engine.recover_lost_executions().await {
            Ok(halted) => {
                for plan in halted {
                    tracing::warn!(%plan, "execution lost with its process; halted");
                }
            }
            Err(e) => tracing::warn!(error = %e, "looking for lost executions failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(RELOAD_EVERY) => {}
            Ok(()) = decided.changed() => {}
            _ = shutdown.changed() => return,
        }
    }
}

/// Announces to this gateway's reviewers what other processes on the same
/// database recorded — a plan proposed or decided, a server met, quarantined
/// or decided through another gateway of the team (issue 20) — as the log
/// adopts their entries, so a desktop connected to any gateway is notified
/// of every item held on any of them.
async fn announce_adopted_entries(gw: Gateway) {
    let log = gw.0.engine.log();
    let mut adopted = log.adopted_ranges();
    let mut shutdown = gw.0.shutdown.subscribe();
    loop {
        let range = tokio::select! {
            r = adopted.recv() => match r {
                Ok(range) => range,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "announcing other gateways' entries lagged");
                    continue;
                }
                Err(_) => return,
            },
            _ = shutdown.changed() => return,
        };
        // Nobody to tell (no SSE stream, no desktop): skip reading them; a
        // reviewer who connects later reads the inbox itself.
        if !gw.0.events.has_listeners() {
            continue;
        }
        for index in range {
            let entry = match log.entry(index).await {
                Ok(entry) => entry,
                Err(e) => {
                    tracing::warn!(index, error = %e, "reading an adopted entry failed");
                    continue;
                }
            };
            if let Some(event) = GatewayEvent::of_recorded_server_leaf(index, &entry) {
                gw.0.events.send(event);
            } else if let Err(e) = gw.0.engine.announce_recorded(index, &entry).await {
                tracing::warn!(index, error = %e, "announcing an adopted plan event failed");
            }
        }
    }
}

async fn relay_engine_events(gw: Gateway) {
    let mut rx = gw.0.engine.subscribe();
    let mut shutdown = gw.0.shutdown.subscribe();
    loop {
        tokio::select! {
            e = rx.recv() => match e {
                Ok(e) => gw.0.events.send(GatewayEvent::from_engine(&e)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "event relay lagged");
                }
                Err(_) => return,
            },
            _ = shutdown.changed() => return,
        }
    }
}
