//! Where a long call reports to its agent: `notifications/progress` (and the
//! upstream's relayed log messages) on the SSE stream of the agent's request.
//! The transport (`mcp.rs`) opens the stream; the pipeline reports on it while
//! a call is held and relays the upstream's own progress while it runs.

use std::sync::atomic::{AtomicU64, Ordering};

use indexmap::IndexMap;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::jsonrpc;
use crate::upstream::relay::LogLevel;

/// The SSE stream of one agent request.
#[derive(Clone)]
pub struct Progress {
    /// The agent's progress token; `None` when the stream is for log
    /// messages only.
    pub(crate) token: Option<Box<RawValue>>,
    pub(crate) tx: mpsc::Sender<Vec<u8>>,
    /// The session's log level, for upstream log messages relayed here.
    pub(crate) log_level: Option<LogLevel>,
}

impl Progress {
    pub(crate) fn new(
        token: Option<Box<RawValue>>,
        tx: mpsc::Sender<Vec<u8>>,
        log_level: Option<LogLevel>,
    ) -> Progress {
        Progress {
            token,
            tx,
            log_level,
        }
    }

    /// Whether the agent asked for progress (not only log messages).
    pub(crate) fn takes_progress(&self) -> bool {
        self.token.is_some()
    }

    /// Sends one `notifications/progress` (nothing if the agent gave no token).
    pub(crate) async fn report(&self, progress: u64, message: &str) {
        let Some(token) = &self.token else { return };
        let params = json!({
            "progressToken": serde_json::from_str::<serde_json::Value>(token.get()).unwrap_or(serde_json::Value::Null),
            "progress": progress,
            "message": message,
        });
        let raw = serde_json::value::to_raw_value(&params).expect("JSON");
        let _ = self
            .tx
            .send(jsonrpc::notification("notifications/progress", Some(&raw)))
            .await;
    }
}

/// A progress token unique in this gateway process (agents' tokens may
/// collide, so the upstream gets the gateway's own).
pub(crate) fn next_progress_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("interlock-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Sets `_meta.progressToken` in a request's params, keeping the rest of
/// `_meta` as the agent sent it.
pub(crate) fn set_progress_token(members: &mut IndexMap<String, Box<RawValue>>, token: &str) {
    let mut meta = members
        .get("_meta")
        .and_then(|m| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(m.get()).ok())
        .unwrap_or_default();
    meta.insert(
        "progressToken".into(),
        serde_json::value::to_raw_value(token).expect("a string serializes"),
    );
    members.insert(
        "_meta".into(),
        serde_json::value::to_raw_value(&meta).expect("raw JSON serializes"),
    );
}
