//! One sink's delivery task: log → events → requests → receiver, with the
//! cursor moved only after the receiver accepted a request.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use interlock_alerts::formats::FormatContext;
use interlock_alerts::{AlertEvent, Filter, Severity, SinkKind, WireRequest, encode};
use tokio::sync::watch;

use super::config::{SinkConfig, Start};
use super::feed::{Feed, Host};
use super::routes::KeyRoutes;

/// Requests of one batch in flight at once, for the formats that send one
/// event per request: a burst's webhook events do not wait on each other's
/// round trips, and the cursor still moves only past the whole batch.
const IN_FLIGHT: usize = 8;

/// The most of a receiver's error answer kept in the last error.
const ERROR_BODY_BYTES: usize = 200;

pub struct SinkTask {
    host: Host,
    sink: Arc<SinkConfig>,
    feed: Arc<Feed>,
    filter: Filter,
    sender: Sender,
    shutdown: watch::Receiver<bool>,
}

/// How a request's delivery ended.
enum Outcome {
    /// The receiver accepted it.
    Delivered,
    /// Given up on after this many attempts, for this reason.
    DeadLetter(u32, SendError),
    /// The gateway is shutting down: the batch is resent on the next start.
    Stopped,
}

/// What sends a sink's requests: its HTTP client, or its syslog connection.
pub struct Sender {
    sink: Arc<SinkConfig>,
    client: reqwest::Client,
    /// The syslog sink's connection (`None` for HTTP sinks).
    stream: Option<Result<super::stream::SyslogConn, String>>,
}

impl Sender {
    pub fn new(sink: Arc<SinkConfig>) -> Sender {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(sink.timeout_ms))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a reqwest client builds");
        let stream = (sink.kind == SinkKind::Syslog).then(|| super::stream::SyslogConn::new(&sink));
        Sender {
            sink,
            client,
            stream,
        }
    }

    /// One try of `request`: accepted, or why not.
    pub async fn send(&self, request: &WireRequest) -> Result<(), SendError> {
        match &self.stream {
            Some(Ok(conn)) => return conn.send(&request.body).await,
            Some(Err(why)) => return Err(why.clone()),
            None => {}
        }
        let url = match &request.url_suffix {
            Some(suffix) => format!("{}{suffix}", self.sink.url.trim_end_matches('/')),
            None => self.sink.url.clone(),
        };
        let mut req = self.client.post(url).body(request.body.clone());
        for (k, v) in &request.headers {
            req = req.header(k, v);
        }
        let answer = req.send().await.map_err(describe)?;
        let status = answer.status();
        let body = answer.bytes().await.unwrap_or_default();
        if status.is_success() {
            return self.sink.kind.accepted(&body);
        }
        let text = String::from_utf8_lossy(&body[..body.len().min(ERROR_BODY_BYTES)]).into_owned();
        Err(format!("HTTP {}: {}", status.as_u16(), text.trim()))
    }
}

/// The format context of `sink` (its secret, host name, links).
pub fn context(sink: &SinkConfig) -> FormatContext {
    FormatContext {
        secret: sink.secret.clone(),
        facility: sink.facility,
        hostname: sink.hostname.clone().unwrap_or_else(this_host),
        review_url: sink.review_url.clone(),
        index: sink.index.clone(),
    }
}

/// Why a request failed (kept as the sink's last error).
type SendError = String;

impl SinkTask {
    pub fn new(host: Host, sink: Arc<SinkConfig>, feed: Arc<Feed>) -> SinkTask {
        let shutdown = host.shutdown.clone();
        SinkTask {
            sender: Sender::new(Arc::clone(&sink)),
            filter: sink.filter(),
            host,
            sink,
            feed,
            shutdown,
        }
    }

    fn stopping(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Sleeps `d`, or less if the gateway shuts down; `false` then.
    async fn pause(&self, d: Duration) -> bool {
        let mut shutdown = self.shutdown.clone();
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = shutdown.wait_for(|s| *s) => {}
        }
        !self.stopping()
    }

    /// Requests of one batch this sink may have in flight at once: one where
    /// order matters (a PagerDuty resolve must not overtake its trigger; a
    /// syslog connection carries one write at a time), several for the
    /// formats that send an event per request (webhook, Slack).
    fn in_flight(&self) -> usize {
        match self.sink.kind {
            SinkKind::Pagerduty | SinkKind::Syslog => 1,
            _ => IN_FLIGHT,
        }
    }

    fn wanted(&self, routes: &KeyRoutes, e: &AlertEvent) -> bool {
        wanted(&self.sink, &self.filter, routes, e)
    }

    pub async fn run(self) {
        let name = self.sink.name.clone();
        let poll = self.host.poll;
        let store = self.host.store.clone();
        let start = match self.sink.start {
            Start::Beginning => 0,
            Start::End => store.log_size().await.unwrap_or(0),
        };
        let mut next = loop {
            match store.alert_cursor_open(&name, start).await {
                Ok(c) => break c.next_idx,
                Err(e) => {
                    tracing::warn!("alerts: sink {name}: cannot open its cursor: {e}");
                    if !self.pause(poll * 10).await {
                        return;
                    }
                }
            }
        };
        let ctx = context(&self.sink);
        let mut signed_rx = self.feed.signed();
        let mut shutdown = self.shutdown.clone();
        while !self.stopping() {
            // Only leaves under a signed checkpoint: each event names the
            // checkpoint it can be verified against.
            let signed = *signed_rx.borrow_and_update();
            if next >= signed {
                tokio::select! {
                    changed = signed_rx.changed() => if changed.is_err() { return },
                    _ = shutdown.wait_for(|s| *s) => return,
                }
                continue;
            }
            let to = signed.min(next + u64::from(self.sink.batch_size));
            let events = match self.feed.events(next..to, signed).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!("alerts: sink {name}: reading leaves {next}..{to}: {e}");
                    if !self.pause(poll).await {
                        return;
                    }
                    continue;
                }
            };
            let routes = self.feed.routes().await;
            let mut events: Vec<AlertEvent> = events
                .iter()
                .filter(|e| self.wanted(&routes, e))
                .map(|e| AlertEvent::clone(e))
                .collect();
            if self.sink.kind == SinkKind::OtlpTraces
                && let Err(e) = fill_intents(&store, &mut events).await
            {
                tracing::warn!("alerts: sink {name}: reading intent leaves: {e}");
                if !self.pause(poll).await {
                    return;
                }
                continue;
            }
            let requests = match encode(self.sink.kind, &events, &ctx) {
                Ok(r) => r,
                Err(e) => {
                    // A sink without its secret: nothing can be sent; keep the
                    // cursor and say why (the config check makes this rare).
                    let _ = store.alert_failed(&name, 1, &e.to_string()).await;
                    if !self.pause(poll * 50).await {
                        return;
                    }
                    continue;
                }
            };
            // Futures collected first: a stream over a borrowing closure is
            // not provably `Send` for `tokio::spawn`.
            let sends: Vec<_> = requests.iter().map(|r| self.deliver(r)).collect();
            let outcomes: Vec<Outcome> = futures_util::stream::iter(sends)
                .buffered(self.in_flight())
                .collect()
                .await;
            if outcomes.iter().any(|o| matches!(o, Outcome::Stopped)) {
                // The cursor stays: the batch is resent on the next start.
                return;
            }
            let mut delivered = 0u64;
            for (request, outcome) in requests.iter().zip(outcomes) {
                match outcome {
                    Outcome::Delivered => delivered += request.events as u64,
                    Outcome::DeadLetter(attempts, why) => {
                        tracing::warn!(
                            "alerts: sink {name}: leaves {}..={} dead-lettered after {attempts} \
                             attempts: {why}",
                            request.first_index,
                            request.last_index
                        );
                        if let Err(e) = store
                            .alert_dead_letter(
                                &name,
                                request.first_index,
                                request.last_index,
                                attempts,
                                &why,
                            )
                            .await
                        {
                            tracing::warn!("alerts: sink {name}: {e}");
                        }
                    }
                    Outcome::Stopped => unreachable!("handled above"),
                }
            }
            // One write per batch, once every request in it is settled (the
            // leaves after the last request were filtered out): a crash
            // resends at most this batch.
            if let Err(e) = store.alert_advance(&name, to, delivered).await {
                tracing::warn!("alerts: sink {name}: {e}");
                continue;
            }
            next = to;
        }
    }

    /// Sends `request` until the receiver accepts it or `max_attempts` tries
    /// failed; each failed try is recorded as the sink's last error.
    async fn deliver(&self, request: &WireRequest) -> Outcome {
        let name = &self.sink.name;
        let store = &self.host.store;
        let mut attempts = 0u32;
        loop {
            let mut shutdown = self.shutdown.clone();
            let sent = tokio::select! {
                r = self.sender.send(request) => r,
                _ = shutdown.wait_for(|s| *s) => return Outcome::Stopped,
            };
            match sent {
                Ok(()) => return Outcome::Delivered,
                Err(why) => {
                    attempts += 1;
                    tracing::debug!("alerts: sink {name}: attempt {attempts}: {why}");
                    if attempts >= self.sink.max_attempts {
                        return Outcome::DeadLetter(attempts, why);
                    }
                    let _ = store.alert_failed(name, attempts, &why).await;
                    if !self.pause(backoff(&self.sink, attempts)).await {
                        return Outcome::Stopped;
                    }
                }
            }
        }
    }
}

/// Whether `sink` (whose filter is `filter`) sends `e`: what its filter
/// passes — for the events of a key that names the sink, at the key's
/// minimum severity; a `keys_only` sink, only those — and for PagerDuty every
/// resolve the filter passes at any severity (a low-severity decision
/// settles a high-severity incident).
pub(crate) fn wanted(
    sink: &SinkConfig,
    filter: &Filter,
    routes: &KeyRoutes,
    e: &AlertEvent,
) -> bool {
    let resolve = sink.kind == SinkKind::Pagerduty
        && matches!(
            interlock_alerts::formats::pagerduty::action(e),
            interlock_alerts::formats::pagerduty::Action::Resolve(_)
        );
    match routes.route(&sink.name, e) {
        Some(key_min) => {
            filter.matches_any_severity(e)
                && (resolve
                    || e.severity >= key_min.or(sink.min_severity).unwrap_or(Severity::Info))
        }
        None if sink.keys_only => false,
        None => filter.matches(e) || (resolve && filter.matches_any_severity(e)),
    }
}

/// Fills in the intent leaf's hash and time of each forwarded call among
/// `events` (a span starts at its intent), with one read of the leaves they
/// span.
pub(crate) async fn fill_intents(
    store: &interlock_store::Store,
    events: &mut [AlertEvent],
) -> Result<(), interlock_store::StoreError> {
    let wanted = events
        .iter()
        .filter_map(|e| e.intent.as_ref())
        .filter(|i| i.leaf_hash.is_none())
        .map(|i| i.index);
    let (Some(lo), Some(hi)) = (wanted.clone().min(), wanted.max()) else {
        return Ok(());
    };
    let rows = store.leaves(lo..hi + 1).await?;
    for e in events.iter_mut() {
        if let Some(i) = &mut e.intent
            && let Some(row) = rows.iter().find(|r| r.idx == i.index)
        {
            i.leaf_hash = Some(row.leaf_hash);
            // The leaf's own time (what the span starts at), else when it
            // was stored.
            i.time = Some(
                interlock_receipts::open_leaf_unverified(&row.data)
                    .ok()
                    .map(|o| interlock_receipts::summarize(&o).time)
                    .unwrap_or(row.appended_at),
            );
        }
    }
    Ok(())
}

/// This machine's name (the syslog HOSTNAME), `-` (nil) if unknown.
fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "-".into())
}

/// A reqwest error in words, with its cause (timeouts and closed connections
/// read differently), never the URL's query (it may hold a token).
fn describe(e: reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_request() || e.is_body() {
        "the request failed"
    } else {
        "failed"
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {cause}")
    }
}

/// The delay before retry `attempt` (1, 2, ...): `backoff_ms · 2^(attempt-1)`
/// up to `backoff_max_ms`, times a random factor in [0.5, 1) so sinks that
/// failed together do not retry in lockstep.
pub fn backoff(sink: &SinkConfig, attempt: u32) -> Duration {
    let exp = sink
        .backoff_ms
        .saturating_mul(1u64 << attempt.saturating_sub(1).min(30))
        .min(sink.backoff_max_ms);
    let mut b = [0u8; 2];
    let _ = getrandom::fill(&mut b);
    let jitter = 0.5 + f64::from(u16::from_le_bytes(b)) / f64::from(u16::MAX) / 2.0;
    Duration::from_millis(((exp as f64) * jitter) as u64)
}
