//! The running gateway: the engine, the upstream supervisors, pinning, agent
//! sessions and the event bus, shared by the HTTP handlers.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use interlock_engine::Engine;
use interlock_store::{ApiKeyKind, ApiKeyRecord, StoreError};
use tokio::sync::watch;

use crate::config::GatewayConfig;
use crate::keys;
use crate::roles::Roles;
use crate::upstream::table::{Upstream, Upstreams};
use interlock_trust::events::EventBus;
use interlock_trust::pins::{Pins, ServedSurfaces};

/// How long an authenticated key is trusted without asking the store again
/// (so a revocation takes effect within this time).
const KEY_CACHE_TTL: Duration = Duration::from_secs(5);

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
    pub(crate) subscriptions: crate::sessions::subscriptions::Subscriptions,
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
    held_calls: Mutex<indexmap::IndexMap<String, interlock_trust::scopes::HeldMemo>>,
    /// Task-augmented calls (MCP tasks, 2025-11-25).
    tasks: crate::sessions::tasks::Tasks,
    /// Seals held calls' round-trip states (2026-07-28 clients).
    sealer: crate::sessions::round_trip::Sealer,
    /// Outstanding one-time sign-in links (issue 19).
    signin: Arc<crate::signin::SigninLinks>,
    /// Each agent key's share of the TCP connections (`crate::connections`).
    connection_shares: crate::connections::ConnectionShares,
    /// The host's `interlock connect`, for `/api/v1/clients` (`crate::reviewer::clients`).
    client_connector: std::sync::OnceLock<Arc<dyn crate::connector::ClientConnector>>,
    /// The host's `interlock hooks install`, for `/api/v1/hooks` (`crate::reviewer::agent_hooks`).
    hook_installer: std::sync::OnceLock<Arc<dyn crate::connector::HookInstaller>>,
    /// Per-key rate buckets and settings (issue 20 item 4).
    pub(crate) key_limits: crate::sessions::limits::KeyLimits,
    /// Programs a reviewer asked to run, waiting for the owner (issue 39).
    pub(crate) server_requests: crate::server_requests::ServerRequests,
    /// The host's `gateway.toml`, for servers added and removed at run time.
    pub(crate) server_file: std::sync::OnceLock<Arc<dyn crate::server_file::ServerFile>>,
    pub(crate) shutdown: watch::Sender<bool>,
    /// `/metrics` (issue 21).
    metrics: crate::metrics::Metrics,
}

/// The most held calls remembered; the oldest are forgotten first (their
/// *for this session* offer goes with them).
const HELD_CALLS_KEPT: usize = 4096;

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
    /// The shared state of a gateway over its parts, nothing started yet
    /// (`crate::start` starts it).
    pub(crate) fn assemble(
        engine: Engine,
        config: GatewayConfig,
        policy: interlock_surface::DriftPolicy,
        upstreams: Arc<Upstreams>,
        served: ServedSurfaces,
    ) -> Gateway {
        let events = EventBus::new();
        let (shutdown, _) = watch::channel(false);
        Gateway(Arc::new(Inner {
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
            connection_shares: Default::default(),
            client_connector: Default::default(),
            hook_installer: Default::default(),
            server_file: Default::default(),
            key_limits: Default::default(),
            server_requests: Default::default(),
            shutdown,
            metrics: Default::default(),
        }))
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

    /// Each agent key's share of the TCP connections (`crate::connections`).
    pub(crate) fn connection_shares(&self) -> &crate::connections::ConnectionShares {
        &self.0.connection_shares
    }

    /// The programs reviewers asked to run (`crate::server_changes`).
    pub(crate) fn requests(&self) -> &crate::server_requests::ServerRequests {
        &self.0.server_requests
    }

    /// Hands the gateway the host's client connector (once; a second call
    /// is ignored): `/api/v1/clients` answers with it.
    pub fn set_client_connector(&self, c: Arc<dyn crate::connector::ClientConnector>) {
        let _ = self.0.client_connector.set(c);
    }

    /// The client connector, if the host gave one.
    pub fn client_connector(&self) -> Option<Arc<dyn crate::connector::ClientConnector>> {
        self.0.client_connector.get().cloned()
    }

    /// Hands the gateway the host's hook installer (once): `/api/v1/hooks`
    /// answers with it.
    pub fn set_hook_installer(&self, h: Arc<dyn crate::connector::HookInstaller>) {
        let _ = self.0.hook_installer.set(h);
    }

    /// The hook installer, if the host gave one.
    pub fn hook_installer(&self) -> Option<Arc<dyn crate::connector::HookInstaller>> {
        self.0.hook_installer.get().cloned()
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
        Ok(self.waiting().await?.len())
    }

    /// What waits for a reviewer, newest first ([`crate::inbox`]).
    pub async fn waiting(
        &self,
    ) -> Result<Vec<crate::inbox::Waiting>, interlock_engine::EngineError> {
        crate::inbox::waiting(self.engine(), self.pins()).await
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

    /// Forgets every cached key of `kind` named `name`, whose keys were
    /// revoked or changed outside the admin API (the CLI, an owner's undo of
    /// a connect or of hooks), so a revoked key stops at its next request
    /// rather than when its cache entry ages out.
    pub(crate) fn forget_keys_named(&self, kind: ApiKeyKind, name: &str) {
        let hashes: Vec<String> = self
            .0
            .key_cache
            .lock()
            .expect("cache lock")
            .iter()
            .filter(|(_, (rec, _))| rec.kind == kind && rec.name == name)
            .map(|(hash, _)| hash.clone())
            .collect();
        for hash in hashes {
            self.forget_key(&hash);
        }
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

    pub(crate) fn sealer(&self) -> &crate::sessions::round_trip::Sealer {
        &self.0.sealer
    }

    pub(crate) fn tasks(&self) -> &crate::sessions::tasks::Tasks {
        &self.0.tasks
    }

    /// Remembers a held call.
    pub(crate) fn remember_held_call(
        &self,
        plan_id: &str,
        memo: interlock_trust::scopes::HeldMemo,
    ) {
        let mut m = self.0.held_calls.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= HELD_CALLS_KEPT {
            m.shift_remove_index(0);
        }
        m.insert(plan_id.to_owned(), memo);
    }

    /// What this process remembers of a held call (`None` if it was held
    /// before a restart, by another process, or long ago).
    pub fn held_memo(&self, plan_id: &str) -> Option<interlock_trust::scopes::HeldMemo> {
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
    pub(crate) fn tell_upstream(&self, server: &str, method: &'static str, uri: &str) {
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
