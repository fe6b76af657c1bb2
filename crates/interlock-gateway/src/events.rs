//! The gateway's event bus: plan events from the engine and server events from
//! pinning, in one stream, for the reviewer API's SSE endpoint (and the desktop
//! app's notifications).

use interlock_engine::{EngineEvent, EventKind};
use serde::Serialize;
use tokio::sync::broadcast;

/// One thing a reviewer may want to know about now.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct GatewayEvent {
    /// `plan.proposed`, `plan.approved`, …, `server.pending`,
    /// `server.quarantined`, `server.drift_held`, `server.drift`,
    /// `server.approved`, `server.rejected`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `plan` or `server`.
    pub subject_kind: &'static str,
    /// The plan id or server name.
    pub subject: String,
    /// One line for a notification.
    pub title: String,
    /// Risk (plans) or worst drift severity (servers).
    pub risk: String,
    /// The plan hash, for plan events (what an Approve action must sign).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// The surface hash a server event is about (what an Approve of the
    /// server must sign), so a notification never has to re-read the store
    /// and race a newer change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_index: Option<u64>,
}

impl GatewayEvent {
    pub fn server(
        kind: &str,
        name: &str,
        title: String,
        risk: &str,
        observed_hash: &str,
        log_index: Option<u64>,
    ) -> GatewayEvent {
        GatewayEvent {
            kind: kind.to_owned(),
            subject_kind: "server",
            subject: name.to_owned(),
            title,
            risk: risk.to_owned(),
            plan_hash: None,
            observed_hash: Some(observed_hash.to_owned()),
            revision: None,
            log_index,
        }
    }

    /// Reads an event as the SSE stream serializes it (another gateway's, for
    /// the desktop app connected to a team gateway). `None` if it is not one.
    pub fn from_json(v: &serde_json::Value) -> Option<GatewayEvent> {
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let subject_kind = match v.get("subject_kind")?.as_str()? {
            "plan" => "plan",
            "server" => "server",
            "standing" => "standing",
            _ => return None,
        };
        Some(GatewayEvent {
            kind: text("type")?,
            subject_kind,
            subject: text("subject")?,
            title: text("title").unwrap_or_default(),
            risk: text("risk").unwrap_or_default(),
            plan_hash: text("plan_hash"),
            observed_hash: text("observed_hash"),
            revision: v.get("revision").and_then(|x| x.as_i64()),
            log_index: v.get("log_index").and_then(|x| x.as_u64()),
        })
    }

    pub fn from_engine(e: &EngineEvent) -> GatewayEvent {
        let kind = match e.kind {
            EventKind::Proposed => "plan.proposed",
            EventKind::Approved => "plan.approved",
            EventKind::Rejected => "plan.rejected",
            EventKind::Expired => "plan.expired",
            EventKind::Executing => "plan.executing",
            EventKind::Succeeded => "plan.succeeded",
            EventKind::Halted => "plan.halted",
        };
        GatewayEvent {
            kind: kind.to_owned(),
            subject_kind: "plan",
            subject: e.plan_id.clone(),
            title: e.title.clone(),
            risk: e.risk.name().to_owned(),
            plan_hash: Some(e.plan_hash.to_string()),
            observed_hash: None,
            revision: Some(e.revision),
            log_index: Some(e.log_index),
        }
    }
}

/// A cheap-to-clone sender; subscribers that fall behind lose the oldest
/// events (and are told so by `broadcast`'s `Lagged`).
#[derive(Clone)]
pub struct EventBus(broadcast::Sender<GatewayEvent>);

impl Default for EventBus {
    fn default() -> Self {
        EventBus::new()
    }
}

impl EventBus {
    pub fn new() -> EventBus {
        EventBus(broadcast::channel(1024).0)
    }

    pub fn send(&self, e: GatewayEvent) {
        let _ = self.0.send(e);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.0.subscribe()
    }
}
