//! Starting a gateway: its upstreams and served-surface table made from the
//! config before the engine opens ([`Prepared`]), then its shared state over
//! the engine and the background tasks that keep it current — one supervisor
//! per upstream (connect, list, pin, probe; reconnect with backoff), the
//! reload loop, the engine-event relay, alert delivery and the tally.
//!
//! Why apart from [`crate::gateway`]: the state is what every face reads; the
//! tasks started here use the faces' rooms (probes, listing, alerts, tally),
//! and the state must not depend on them.

use std::sync::Arc;
use std::time::Duration;

use interlock_engine::Engine;
use tokio::sync::mpsc;

use crate::config::{ConfigError, GatewayConfig, Transport};
use crate::executor::McpAdapter;
use crate::gateway::Gateway;
use crate::upstream::table::{Upstream, Upstreams};

/// How often rows changed by other processes (a CLI approval) are picked up.
const RELOAD_EVERY: Duration = Duration::from_millis(500);
use crate::upstream::{Connection, LinkState, Signals, StaleListing, UpstreamSignal, backoff};
use interlock_trust::events::GatewayEvent;
use interlock_trust::pins::ServedSurfaces;

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
        let gw = Gateway::assemble(engine, config, policy, upstreams, served);
        for up in gw.0.upstreams.all() {
            tokio::spawn(supervise(gw.clone(), up));
        }
        tokio::spawn(reload_loop(gw.clone()));
        tokio::spawn(relay_engine_events(gw.clone()));
        tokio::spawn(announce_adopted_entries(gw.clone()));
        crate::alerts::spawn(&gw);
        crate::witnessing::spawn(&gw);
        tokio::spawn(crate::tally::tally(gw.clone()));
        gw
    }
}

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
        // LLM providers' `api_key_env` references.
        config.llm.resolve_env()?;
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

    /// Starts the supervisor of an upstream added at run time.
    pub(crate) fn supervise(&self, up: Arc<Upstream>) {
        tokio::spawn(supervise(self.clone(), up));
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

/// Lists and pins what `up` serves on `conn` now, then runs its probes;
/// returns the content listings kept from last time because they answered
/// with an error ([`crate::pinned::Kept`]).
async fn relist(
    gw: &Gateway,
    up: &Upstream,
    conn: &Connection,
    instructions: Option<&str>,
    list_timeout: Duration,
) -> Result<Vec<StaleListing>, crate::upstream::UpstreamError> {
    let limits = &gw.0.config.limits;
    let tools = conn
        .list_tools(list_timeout, limits.tools_list_caps())
        .await
        .map_err(|e| crate::upstream::UpstreamError::Unavailable(format!("tools/list: {e}")))?;
    let view = gw.0.pins.view(&up.name);
    let crate::pinned::Observed { mut listing, stale } = crate::pinned::listing(
        conn,
        up.hello().as_ref(),
        &up.pin,
        limits,
        instructions,
        tools,
        crate::pinned::Kept::LastListed(view.as_deref()),
    )
    .await?;
    listing.launch = up.transport.pinned_launch();
    gw.0.pins
        .observe(&up.name, listing)
        .await
        .map_err(|e| crate::upstream::UpstreamError::Unavailable(e.to_string()))?;
    // Behaviour, after the surface: the probes run on this connection, not
    // through the agent surface. A failure to record them is logged, and the
    // next re-check tries again.
    if let Err(e) = crate::probes::run(gw, &up.name, &up.probes, conn).await {
        tracing::warn!(server = %up.name, error = %e, "probes failed to run");
    }
    Ok(stale)
}

/// Keeps one upstream connected: connect, handshake, list and pin its tools;
/// re-list on `list_changed`, on request and periodically (sooner, with
/// backoff, while a listing is stale); reconnect with backoff when it dies.
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
                let relist = || relist(&gw, &up, &conn, instructions.as_deref(), list_timeout);
                match relist().await {
                    Err(e) => {
                        conn.close().await;
                        e.to_string()
                    }
                    Ok(stale) => {
                        *up.conn.write().expect("conn lock") = Some(Arc::clone(&conn));
                        let mut next_relist = Relisting::new(recheck_every);
                        next_relist.listed(&up, stale);
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
                                    Some(UpstreamSignal::SurfaceChanged) => match relist().await {
                                        Ok(stale) => next_relist.listed(&up, stale),
                                        Err(e) => break e.to_string(),
                                    },
                                    Some(UpstreamSignal::ResourceUpdated { uri, message }) => {
                                        let resource = (up.name.clone(), uri);
                                        let sent = gw.0.subscriptions.updated(&resource, &message);
                                        tracing::debug!(server = %up.name, uri = %resource.1, sent, "resource updated");
                                    }
                                    Some(UpstreamSignal::Closed(why)) => break why,
                                    None => break "closed".to_owned(),
                                },
                                _ = up.recheck.notified() => match relist().await {
                                    Ok(stale) => next_relist.listed(&up, stale),
                                    Err(e) => break e.to_string(),
                                },
                                _ = tokio::time::sleep(next_relist.wait()) => match relist().await {
                                    Ok(stale) => next_relist.listed(&up, stale),
                                    Err(e) => break e.to_string(),
                                },
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

/// When a connected upstream is listed again unasked: every `recheck_secs`,
/// and sooner, with backoff, while one of its listings is stale (answered
/// with an error and served as last listed).
struct Relisting {
    recheck_every: Duration,
    stale_times: u32,
}

impl Relisting {
    fn new(recheck_every: Duration) -> Relisting {
        Relisting {
            recheck_every,
            stale_times: 0,
        }
    }

    /// A listing succeeded with `stale` listings kept from last time: the
    /// link says so, and the next re-list is planned.
    fn listed(&mut self, up: &Upstream, stale: Vec<StaleListing>) {
        if stale.is_empty() {
            self.stale_times = 0;
        } else {
            self.stale_times = self.stale_times.saturating_add(1);
        }
        up.link.send_replace(LinkState::Up { stale });
    }

    fn wait(&self) -> Duration {
        match self.stale_times {
            0 => self.recheck_every,
            n => backoff(n.saturating_add(2)).min(self.recheck_every),
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
        // A decision whose process stopped between recording the deciding
        // approval or a rejection and moving the plan is finished (once, at
        // start); a rejection first: it vetoes.
        if first {
            match gw.0.engine.apply_recorded_rejections().await {
                Ok(moved) => {
                    for plan in moved {
                        tracing::warn!(%plan, "rejected plan left unmoved by a stopped process; moved to REJECTED");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "looking for unapplied rejections failed"),
            }
            match gw.0.engine.apply_reached_quorums().await {
                Ok(moved) => {
                    for plan in moved {
                        tracing::warn!(%plan, "approved plan left PROPOSED by a stopped process; moved to APPROVED");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "looking for unapplied approvals failed"),
            }
        }
        first = false;
        // A widening decided by another process (the CLI) replaces the
        // cached envelope.
        if let Err(e) = gw.envelopes().reload_changed(&gw.0.engine).await {
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
