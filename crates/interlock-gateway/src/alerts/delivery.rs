//! One sink's delivery task: log → events → requests → receiver, with the
//! cursor moved only after the receiver accepted a request.

use std::sync::Arc;
use std::time::Duration;

use interlock_alerts::formats::FormatContext;
use interlock_alerts::{AlertEvent, Filter, Record, SinkKind, WireRequest, encode};
use tokio::sync::watch;

use super::config::{SinkConfig, Start};
use crate::Gateway;

/// The most of a receiver's error answer kept in the last error.
const ERROR_BODY_BYTES: usize = 200;

pub struct SinkTask {
    gw: Gateway,
    sink: Arc<SinkConfig>,
    filter: Filter,
    sender: Sender,
    shutdown: watch::Receiver<bool>,
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
    pub fn new(gw: Gateway, sink: Arc<SinkConfig>) -> SinkTask {
        let shutdown = gw.0.shutdown.subscribe();
        SinkTask {
            sender: Sender::new(Arc::clone(&sink)),
            filter: sink.filter(),
            gw,
            sink,
            shutdown,
        }
    }

    fn stopping(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Sleeps `d`, or less if the gateway shuts down; `false` then.
    async fn pause(&mut self, d: Duration) -> bool {
        let mut shutdown = self.shutdown.clone();
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = shutdown.wait_for(|s| *s) => {}
        }
        !self.stopping()
    }

    pub async fn run(mut self) {
        let name = self.sink.name.clone();
        let poll = Duration::from_millis(self.gw.config().alerts.poll_ms);
        let store = self.gw.engine().store().clone();
        let origin = self.gw.engine().log().origin().to_owned();
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
        while !self.stopping() {
            // Only leaves under a signed checkpoint: each event names the
            // checkpoint it can be verified against.
            let signed = match store.latest_checkpoint().await {
                Ok(c) => c.map_or(0, |c| c.size),
                Err(e) => {
                    tracing::warn!("alerts: sink {name}: {e}");
                    0
                }
            };
            if next >= signed {
                if !self.pause(poll).await {
                    return;
                }
                continue;
            }
            let to = signed.min(next + u64::from(self.sink.batch_size));
            let rows = match store.leaves(next..to).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!("alerts: sink {name}: reading leaves {next}..{to}: {e}");
                    if !self.pause(poll).await {
                        return;
                    }
                    continue;
                }
            };
            let events: Vec<AlertEvent> = rows
                .iter()
                .map(|row| {
                    AlertEvent::from_leaf(
                        &row.data,
                        Record {
                            origin: origin.clone(),
                            index: row.idx,
                            leaf_hash: row.leaf_hash,
                            checkpoint_size: signed,
                        },
                        row.appended_at,
                    )
                })
                .filter(|e| {
                    self.filter.matches(e)
                        || (self.sink.kind == SinkKind::Pagerduty
                            && matches!(
                                interlock_alerts::formats::pagerduty::action(e),
                                interlock_alerts::formats::pagerduty::Action::Resolve(_)
                            )
                            && self.filter.matches_any_severity(e))
                })
                .collect();
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
            for request in &requests {
                if !self.deliver(request).await {
                    return;
                }
            }
            // The leaves after the last request were filtered out.
            if let Err(e) = store.alert_advance(&name, to, 0).await {
                tracing::warn!("alerts: sink {name}: {e}");
                continue;
            }
            next = to;
        }
    }

    /// Sends `request` until the receiver accepts it or it is dead-lettered,
    /// moving the cursor past it either way; `false` if the gateway shut down
    /// first (the cursor stays: it is resent on the next start).
    async fn deliver(&mut self, request: &WireRequest) -> bool {
        let name = self.sink.name.clone();
        let store = self.gw.engine().store().clone();
        let mut attempts = 0u32;
        loop {
            let mut shutdown = self.shutdown.clone();
            let sent = tokio::select! {
                r = self.sender.send(request) => r,
                _ = shutdown.wait_for(|s| *s) => return false,
            };
            match sent {
                Ok(()) => {
                    if let Err(e) = store
                        .alert_advance(&name, request.last_index + 1, request.events as u64)
                        .await
                    {
                        tracing::warn!("alerts: sink {name}: {e}");
                    }
                    return true;
                }
                Err(why) => {
                    attempts += 1;
                    tracing::debug!("alerts: sink {name}: attempt {attempts}: {why}");
                    if attempts >= self.sink.max_attempts {
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
                        return true;
                    }
                    let _ = store.alert_failed(&name, attempts, &why).await;
                    if !self.pause(backoff(&self.sink, attempts)).await {
                        return false;
                    }
                }
            }
        }
    }
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
