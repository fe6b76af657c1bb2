//! The one reader of the log that every sink shares.
//!
//! Why: measured with `benches/alerts_delivery.rs`, three sinks each polling
//! the store for the latest checkpoint, each reading and decoding every leaf
//! itself, and the webhook moving its cursor once per event, cost the gateway
//! more CPU per proxied call than the call itself. Here one task follows the
//! signed size — woken by the log writer when it signs a checkpoint
//! ([`interlock_log::Log::sealed_watch`]), and polling the store only every
//! `poll_ms` for checkpoints another process signed — and publishes it to
//! every sink; the events of recent leaves are decoded once, kept in a window,
//! and handed to each sink as it reaches them. A sink far behind the others
//! (new, or back from a long outage) reads and decodes its own range without
//! disturbing the window.
//!
//! The checkpoint interval of the log (a signature at most every 100 ms while
//! it grows) is the linger: a burst of calls becomes one batch per interval
//! per sink, not one wake-up per leaf.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use interlock_alerts::{AlertEvent, Record};
use interlock_store::{Store, StoreError};
use tokio::sync::{Mutex, watch};

use super::routes::KeyRoutes;

/// Decoded events kept for the sinks that follow the head of the log.
const WINDOW: usize = 8192;

/// Recent leaves' events, for the leaves `first..first + events.len()`.
#[derive(Default)]
struct Window {
    first: u64,
    events: VecDeque<Arc<AlertEvent>>,
}

impl Window {
    fn end(&self) -> u64 {
        self.first + self.events.len() as u64
    }
}

/// The shared tail of the log (one per gateway; sinks hold an `Arc`).
pub struct Feed {
    store: Store,
    origin: String,
    signed: watch::Receiver<u64>,
    window: Mutex<Window>,
    /// Per-key sinks, read again at most every [`ROUTES_TTL`] (an admin's
    /// change reaches delivery within it).
    routes: Mutex<(Option<std::time::Instant>, Arc<KeyRoutes>)>,
}

/// What delivery needs from the process it runs in: `interlock serve`
/// (the gateway's store, log and shutdown) or `interlock alerts run` (the
/// same database, polled).
#[derive(Clone)]
pub struct Host {
    pub store: Store,
    /// The log's origin (every record names it).
    pub origin: String,
    /// How often the store is read for checkpoints nothing woke delivery for.
    pub poll: Duration,
    /// Turns true when delivery should stop.
    pub shutdown: watch::Receiver<bool>,
    /// The log writer's signed size and its notification, when the log is
    /// written in this process.
    pub sealed: Option<(u64, watch::Receiver<u64>)>,
}

/// How long the per-key routes are used before they are read again.
const ROUTES_TTL: Duration = Duration::from_secs(1);

impl Feed {
    /// Starts following the signed size of `host`'s log; the task ends
    /// when `host.shutdown` turns true.
    pub fn start(host: &Host) -> Arc<Feed> {
        let store = host.store.clone();
        let poll = host.poll.max(Duration::from_millis(1));
        let (initial, mut sealed) = match &host.sealed {
            Some((size, rx)) => (*size, Some(rx.clone())),
            None => (0, None),
        };
        let (tx, signed) = watch::channel(initial);
        let mut shutdown = host.shutdown.clone();
        let poll_store = store.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(poll);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let woken = async {
                    match sealed.as_mut() {
                        Some(rx) => rx.changed().await.map(|()| *rx.borrow_and_update()),
                        None => std::future::pending().await,
                    }
                };
                let size = tokio::select! {
                    changed = woken => match changed {
                        Ok(size) => size,
                        Err(_) => return,
                    },
                    // Checkpoints another writer (a CLI on the same database;
                    // the gateway, when delivery runs in its own process)
                    // signed do not wake `sealed`.
                    _ = tick.tick() => match poll_store.latest_checkpoint().await {
                        Ok(c) => c.map_or(0, |c| c.size),
                        Err(e) => {
                            tracing::warn!("alerts: reading the latest checkpoint: {e}");
                            continue;
                        }
                    },
                    _ = shutdown.changed() => return,
                };
                tx.send_if_modified(|s| {
                    let grew = size > *s;
                    if grew {
                        *s = size;
                    }
                    grew
                });
            }
        });
        Arc::new(Feed {
            store,
            origin: host.origin.clone(),
            signed,
            window: Mutex::new(Window::default()),
            routes: Mutex::new((None, Arc::default())),
        })
    }

    /// The per-key routes (at most [`ROUTES_TTL`] old; the last ones read if
    /// the store cannot be read now).
    pub async fn routes(&self) -> Arc<KeyRoutes> {
        let mut r = self.routes.lock().await;
        if r.0.is_none_or(|at| at.elapsed() >= ROUTES_TTL) {
            match KeyRoutes::load(&self.store).await {
                Ok(routes) => *r = (Some(std::time::Instant::now()), Arc::new(routes)),
                Err(e) => tracing::warn!("alerts: reading per-key sinks: {e}"),
            }
        }
        Arc::clone(&r.1)
    }

    /// The signed size as it grows.
    pub fn signed(&self) -> watch::Receiver<u64> {
        self.signed.clone()
    }

    /// The events of the leaves in `range` (all under the signed checkpoint
    /// of `signed` leaves, which each record names), decoded once for every
    /// sink that asks while they are in the window.
    pub async fn events(
        &self,
        range: Range<u64>,
        signed: u64,
    ) -> Result<Vec<Arc<AlertEvent>>, StoreError> {
        let mut w = self.window.lock().await;
        if w.events.is_empty() || range.start > w.end() {
            // The window starts (again) here.
            w.first = range.start;
            w.events.clear();
        }
        if range.start < w.first {
            // Behind the window: read and decode alone.
            drop(w);
            return Ok(self
                .decode(range, signed)
                .await?
                .into_iter()
                .map(Arc::new)
                .collect());
        }
        if range.end > w.end() {
            let from = w.end();
            for e in self.decode(from..range.end, signed).await? {
                w.events.push_back(Arc::new(e));
            }
            while w.events.len() > WINDOW && w.first < range.start {
                w.events.pop_front();
                w.first += 1;
            }
        }
        let skip = usize::try_from(range.start - w.first).unwrap_or(usize::MAX);
        let take = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
        Ok(w.events.iter().skip(skip).take(take).cloned().collect())
    }

    async fn decode(&self, range: Range<u64>, signed: u64) -> Result<Vec<AlertEvent>, StoreError> {
        let rows = self.store.leaves(range).await?;
        Ok(rows
            .iter()
            .map(|row| {
                AlertEvent::from_leaf(
                    &row.data,
                    Record {
                        origin: self.origin.clone(),
                        index: row.idx,
                        leaf_hash: row.leaf_hash,
                        checkpoint_size: signed,
                    },
                    row.appended_at,
                )
            })
            .collect())
    }
}
