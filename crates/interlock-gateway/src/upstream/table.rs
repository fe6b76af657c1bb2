//! The upstream servers the gateway knows, each with its connection slot and
//! link state: made from the config before anything connects, changed at run
//! time when a server is added or removed. Shared by the gateway (whose
//! supervisors keep them connected) and the engine's MCP adapter (which calls
//! their tools for plans), so it sits below both.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::{Notify, watch};

use crate::config::{ConfigError, GatewayConfig, Transport};
use crate::upstream::era::EraChoice;
use crate::upstream::relay::{RelayGuard, Relays};
use crate::upstream::{Connection, LinkState, ServerHello};

/// One upstream server and its current connection.
pub struct Upstream {
    pub name: String,
    pub transport: Transport,
    /// The protocol era the gateway may reach it in.
    pub protocol: EraChoice,
    pub(crate) conn: RwLock<Option<Arc<Connection>>>,
    pub(crate) hello: RwLock<Option<ServerHello>>,
    pub(crate) link: watch::Sender<LinkState>,
    pub(crate) recheck: Notify,
    /// Calls in flight that take progress (their notifications are relayed).
    pub(crate) relays: Arc<Relays>,
    /// Its effective-permission probes (empty unless marked
    /// `probes = "non-production"`), run after every re-list.
    pub(crate) probes: Vec<interlock_surface::probes::Probe>,
    /// What of its surface is pinned (`pin = [...]`).
    pub pin: crate::config::PinSet,
    /// Its config entry (secrets resolved): what call-path checks read
    /// (`roots`, the tool prefix), here rather than in the gateway's config
    /// because a server can be added at run time (`crate::server_changes`).
    pub config: crate::config::UpstreamConfig,
    /// Set when the server is removed at run time: its supervisor stops and
    /// closes the connection.
    pub(crate) removed: watch::Sender<bool>,
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
        screen: Arc<dyn crate::upstream::relay::Screen>,
    ) -> RelayGuard {
        self.relays
            .register(token, agent_token, tx, log_level, screen)
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
/// added or removed (`crate::server_changes`). Shared by the gateway (which keeps
/// them connected) and the engine's MCP adapter (which calls their tools for
/// plans).
pub struct Upstreams {
    servers: RwLock<BTreeMap<String, Arc<Upstream>>>,
    /// What confines every stdio server this gateway starts (issue 38).
    confiner: Arc<interlock_sandbox::Confiner>,
}

impl Upstreams {
    pub(crate) fn from_config(
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
