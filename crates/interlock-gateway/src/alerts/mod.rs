//! Alert delivery (issue 21): every configured sink reads committed, signed
//! leaves *from the log* and delivers them — never from the call path, so a
//! slow or dead sink cannot slow a tool call; the call path does not know the
//! sinks exist.
//!
//! One reader follows the log's signed size and decodes each leaf once for
//! every sink ([`feed`]). Each sink has one task ([`delivery`]): it takes a
//! batch of events from its durable cursor (`interlock_store::AlertCursor`)
//! up to the latest signed checkpoint, turns them into wire requests with
//! `interlock_alerts` (pure), sends each request with retries (exponential
//! backoff with jitter) and moves the cursor only once the receiver accepted
//! it. After `max_attempts` a request is dead-lettered (its leaf range and
//! last error kept in the store) and the cursor moves on. A restart resumes
//! at the cursor; a crash resends at most the request in flight, and the leaf
//! index travels as its idempotency key.

pub mod config;
pub mod delivery;
pub mod feed;
pub mod redeliver;
pub mod routes;
pub mod stream;

use std::sync::Arc;

use interlock_store::{AlertCursor, DeadLetter};
use serde::Serialize;

pub use config::{AlertsConfig, SinkConfig, Start};

use crate::Gateway;

/// One sink's state, as the reviewer API and `interlock alerts status` show it.
#[derive(Clone, Debug, Serialize)]
pub struct SinkStatus {
    pub name: String,
    pub kind: &'static str,
    pub url: String,
    /// `ok`, `retrying` (the request in flight failed at least once) or
    /// `dead_letter` (its latest request was given up on).
    pub state: &'static str,
    /// The next leaf index to deliver.
    pub next_index: u64,
    /// Signed leaves not yet delivered (the latest checkpoint's size less the
    /// cursor).
    pub lag: u64,
    pub delivered: u64,
    pub attempts: u32,
    pub dead_letters: u64,
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    pub last_delivered_at: Option<i64>,
    /// The most recent dead letters, newest first.
    pub recent_dead_letters: Vec<DeadLetterView>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeadLetterView {
    pub first_index: u64,
    pub last_index: u64,
    pub attempts: u32,
    pub error: String,
    pub at: i64,
}

impl From<DeadLetter> for DeadLetterView {
    fn from(d: DeadLetter) -> Self {
        DeadLetterView {
            first_index: d.first_idx,
            last_index: d.last_idx,
            attempts: d.attempts,
            error: d.error,
            at: d.at,
        }
    }
}

/// Starts one delivery task per configured sink in the gateway's process
/// (they end with the gateway) — unless `[alerts] process = "separate"`,
/// when `interlock alerts run` delivers beside it.
pub fn spawn(gw: &Gateway) {
    let alerts = &gw.config().alerts;
    if alerts.sinks.is_empty() || alerts.process == config::Process::Separate {
        return;
    }
    let log = gw.engine().log();
    run(
        feed::Host {
            store: gw.engine().store().clone(),
            origin: log.origin().to_owned(),
            poll: std::time::Duration::from_millis(alerts.poll_ms),
            shutdown: gw.0.shutdown.subscribe(),
            sealed: Some((log.sealed_size(), log.sealed_watch())),
        },
        &alerts.sinks,
    );
}

/// Starts the shared reader and one delivery task per sink in `host`; the
/// tasks end when its shutdown turns true.
pub fn run(host: feed::Host, sinks: &[SinkConfig]) -> Vec<tokio::task::JoinHandle<()>> {
    let feed = feed::Feed::start(&host);
    sinks
        .iter()
        .map(|sink| {
            let task =
                delivery::SinkTask::new(host.clone(), Arc::new(sink.clone()), Arc::clone(&feed));
            tokio::spawn(task.run())
        })
        .collect()
}

/// The status of every configured sink.
pub async fn status(gw: &Gateway) -> Result<Vec<SinkStatus>, interlock_store::StoreError> {
    status_of(&gw.config().alerts.sinks, gw.engine().store()).await
}

/// The outcome of a *Send test*.
#[derive(Clone, Debug, Serialize)]
pub struct TestOutcome {
    pub sink: String,
    pub ok: bool,
    /// Why the receiver did not accept it.
    pub error: Option<String>,
    /// The leaf index the test event's record names.
    pub index: u64,
}

/// Sends one test event through `sink` now (one try, no retry, the cursor
/// untouched): the record of the latest signed leaf, kind `alert.test`.
pub async fn send_test(
    sink: &SinkConfig,
    store: &interlock_store::Store,
    origin: &str,
) -> Result<TestOutcome, interlock_store::StoreError> {
    let checkpoint = store.latest_checkpoint().await?;
    let size = checkpoint.as_ref().map_or(0, |c| c.size);
    let leaf = match size.checked_sub(1) {
        Some(i) => store.leaf(i).await?,
        None => None,
    };
    let record = interlock_alerts::Record {
        origin: origin.to_owned(),
        index: leaf.as_ref().map_or(0, |l| l.idx),
        leaf_hash: leaf.as_ref().map_or([0; 32], |l| l.leaf_hash),
        checkpoint_size: size,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let event = interlock_alerts::AlertEvent::test_event(record, now);
    let sink = Arc::new(sink.clone());
    let mut outcome = TestOutcome {
        sink: sink.name.clone(),
        ok: true,
        error: None,
        index: event.record.index,
    };
    let requests = match interlock_alerts::encode(sink.kind, &[event], &delivery::context(&sink)) {
        Ok(r) => r,
        Err(e) => {
            outcome.ok = false;
            outcome.error = Some(e.to_string());
            return Ok(outcome);
        }
    };
    let sender = delivery::Sender::new(sink);
    for r in &requests {
        if let Err(e) = sender.send(r).await {
            outcome.ok = false;
            outcome.error = Some(e);
            break;
        }
    }
    Ok(outcome)
}

/// The status of `sinks` in `store` (for a CLI beside the gateway too).
pub async fn status_of(
    sinks: &[SinkConfig],
    store: &interlock_store::Store,
) -> Result<Vec<SinkStatus>, interlock_store::StoreError> {
    let signed = store.latest_checkpoint().await?.map_or(0, |c| c.size);
    let mut out = Vec::new();
    for sink in sinks {
        let cursor = store
            .alert_cursor(&sink.name)
            .await?
            .unwrap_or(AlertCursor {
                sink: sink.name.clone(),
                ..AlertCursor::default()
            });
        let recent = store.alert_dead_letters(&sink.name, 5).await?;
        let state = if cursor.attempts > 0 {
            "retrying"
        } else if cursor.dead_letters > 0
            && recent
                .first()
                .is_some_and(|d| Some(d.at) == cursor.last_error_at)
        {
            "dead_letter"
        } else {
            "ok"
        };
        out.push(SinkStatus {
            name: sink.name.clone(),
            kind: sink.kind.as_str(),
            url: sink.url.clone(),
            state,
            next_index: cursor.next_idx,
            lag: signed.saturating_sub(cursor.next_idx),
            delivered: cursor.delivered,
            attempts: cursor.attempts,
            dead_letters: cursor.dead_letters,
            last_error: cursor.last_error,
            last_error_at: cursor.last_error_at,
            last_delivered_at: cursor.last_delivered_at,
            recent_dead_letters: recent.into_iter().map(Into::into).collect(),
        });
    }
    Ok(out)
}
