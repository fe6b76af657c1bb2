//! Redelivering a sink's dead letters (issue 21): an operator's action, from
//! Settings → Alerts (`POST /api/v1/alerts/{sink}/redeliver`) or
//! `interlock alerts redeliver SINK`.
//!
//! A dead letter names the leaf range of a request given up on. Redelivery
//! reads those leaves again, keeps the events the sink's filter passes (what
//! the request carried), sends them oldest first, one try each, and settles
//! each dead letter whose requests were all accepted — so a second
//! redelivery sends nothing again. It stops at the first refusal: that dead
//! letter and the later ones stay, with the error returned. One redelivery
//! runs at a time per process (a second waits and then finds the settled
//! ones gone). The action is an `admin.action` leaf (`alerts.redeliver`):
//! who, which sink, which ranges were sent and which was refused.

use std::sync::Arc;

use interlock_alerts::{AlertEvent, Record, encode};
use interlock_canon::Map;
use interlock_engine::{Engine, EngineError};
use serde::Serialize;

use super::config::SinkConfig;
use super::delivery::{Sender, context, wanted};
use interlock_trust::events::EventType;

/// Dead letters handled by one redelivery (a sink with more is redelivered
/// again).
const MAX_DEAD_LETTERS: u32 = 1000;

/// Serializes redeliveries in this process.
static RUNNING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A redelivered dead letter's range.
#[derive(Clone, Debug, Serialize)]
pub struct Range {
    pub first_index: u64,
    pub last_index: u64,
}

/// What a redelivery did.
#[derive(Clone, Debug, Serialize)]
pub struct RedeliverOutcome {
    pub sink: String,
    /// The dead letters sent and settled, oldest first.
    pub redelivered: Vec<Range>,
    /// Events the receiver accepted.
    pub events: u64,
    /// The dead letter the receiver refused (it and later ones stay), and why.
    pub refused: Option<Range>,
    pub error: Option<String>,
    /// Dead letters left for this sink.
    pub remaining: u64,
    /// The leaf recording the action (`None` when there was nothing to send).
    pub leaf_index: Option<u64>,
}

/// Sends `sink`'s dead letters again; `by` names who asked (recorded).
pub async fn redeliver(
    sink: &SinkConfig,
    engine: &Engine,
    by: serde_json::Value,
) -> Result<RedeliverOutcome, EngineError> {
    let _one = RUNNING.lock().await;
    let store = engine.store();
    let origin = engine.log().origin().to_owned();
    let signed = store.latest_checkpoint().await?.map_or(0, |c| c.size);
    let letters = store
        .alert_dead_letters_oldest(&sink.name, MAX_DEAD_LETTERS)
        .await?;
    let shared = Arc::new(sink.clone());
    let sender = Sender::new(Arc::clone(&shared));
    let filter = sink.filter();
    let routes = super::routes::KeyRoutes::load(store).await?;
    let ctx = context(sink);
    let mut outcome = RedeliverOutcome {
        sink: sink.name.clone(),
        redelivered: Vec::new(),
        events: 0,
        refused: None,
        error: None,
        remaining: 0,
        leaf_index: None,
    };
    'letters: for letter in &letters {
        let range = Range {
            first_index: letter.first_idx,
            last_index: letter.last_idx,
        };
        // A dead letter names signed leaves; one past the signed size would
        // be a forged or corrupt row: it stays, refused.
        if letter.last_idx >= signed || letter.first_idx > letter.last_idx {
            outcome.refused = Some(range);
            outcome.error = Some(format!(
                "leaves {}..={} are not under the signed checkpoint ({signed} leaves)",
                letter.first_idx, letter.last_idx
            ));
            break;
        }
        let rows = store.leaves(letter.first_idx..letter.last_idx + 1).await?;
        let mut events: Vec<AlertEvent> = rows
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
            .filter(|e| wanted(sink, &filter, &routes, e))
            .collect();
        if sink.kind == interlock_alerts::SinkKind::OtlpTraces {
            super::delivery::fill_intents(store, &mut events).await?;
        }
        let requests = match encode(sink.kind, &events, &ctx) {
            Ok(r) => r,
            Err(e) => {
                outcome.refused = Some(range);
                outcome.error = Some(e.to_string());
                break;
            }
        };
        for r in &requests {
            if let Err(why) = sender.send(r).await {
                outcome.refused = Some(range);
                outcome.error = Some(why);
                break 'letters;
            }
        }
        if store
            .alert_dead_letter_settled(&sink.name, letter.id)
            .await?
        {
            outcome.events += events.len() as u64;
            outcome.redelivered.push(range);
        }
    }
    outcome.remaining = store
        .alert_cursor(&sink.name)
        .await?
        .map_or(0, |c| c.dead_letters);
    if !letters.is_empty() {
        let mut m = Map::new();
        m.insert("action".into(), "alerts.redeliver".into());
        m.insert(
            "by".into(),
            interlock_canon::from_serde_json(&by).unwrap_or(interlock_canon::Value::Null),
        );
        m.insert("sink".into(), sink.name.as_str().into());
        let facts = serde_json::json!({
            "redelivered": outcome.redelivered,
            "events": outcome.events,
            "refused": outcome.refused,
            "error": outcome.error,
        });
        if let serde_json::Value::Object(o) = facts {
            for (k, v) in o {
                if !v.is_null() {
                    m.insert(
                        k,
                        interlock_canon::from_serde_json(&v)
                            .unwrap_or(interlock_canon::Value::Null),
                    );
                }
            }
        }
        let leaf = engine.record(EventType::AdminAction.as_str(), m).await?;
        outcome.leaf_index = Some(leaf.index);
    }
    Ok(outcome)
}
