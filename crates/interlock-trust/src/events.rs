//! The gateway's event bus: plan events from the engine and server events from
//! pinning, in one stream, for the reviewer API's SSE endpoint (and the desktop
//! app's notifications).

use interlock_engine::{EngineEvent, EventKind};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// Declares [`EventType`]: each variant with the name the log, the SSE stream
/// and the UI know it by.
macro_rules! event_types {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// Every kind of event on the bus and of leaf the gateway writes, as a
        /// type; serialized as its dotted name (`plan.proposed`, `tool.call`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum EventType {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
        }

        impl EventType {
            /// The dotted name.
            pub fn as_str(self) -> &'static str {
                match self { $(EventType::$variant => $name,)* }
            }

            /// The type a dotted name means, if it is one.
            pub fn parse(name: &str) -> Option<EventType> {
                match name { $($name => Some(EventType::$variant),)* _ => None }
            }
        }
    };
}

event_types! {
    PlanProposed = "plan.proposed",
    PlanApproved = "plan.approved",
    PlanRejected = "plan.rejected",
    PlanExpired = "plan.expired",
    PlanExecuting = "plan.executing",
    PlanSucceeded = "plan.succeeded",
    PlanHalted = "plan.halted",
    /// A new server (or a changed one after a rejection) waits for review.
    ServerPending = "server.pending",
    /// Drift quarantined the server.
    ServerQuarantined = "server.quarantined",
    /// Drift held some of its tools.
    ServerDriftHeld = "server.drift_held",
    /// Drift the policy only monitors.
    ServerDrift = "server.drift",
    /// A log leaf only: probe findings (issue 16 item 1): a server's
    /// effective permission grew (written with its quarantine, which the
    /// bus announces as `server.quarantined`), or findings only reported.
    ServerProbeDrift = "server.probe_drift",
    /// A log leaf only: one probe about to call a tool upstream (issue 39
    /// item 17), written before the call — evidence before effect: the
    /// server, the tool and the arguments' digest, so what the gateway itself
    /// called is on the log beside what agents called.
    ServerProbeCall = "server.probe_call",
    ServerApproved = "server.approved",
    ServerRejected = "server.rejected",
    /// A reviewer asked to run a stdio server (issue 39 item 1): nothing
    /// runs until the machine's owner confirms it.
    ServerRequested = "server.requested",
    /// A server added at run time (issue 20 item 5): pending review.
    ServerAdded = "server.added",
    /// A reviewer's signed removal of a server.
    ServerRemoved = "server.removed",
    /// A log leaf only: an admin action (issue 20 item 3) — a key created,
    /// updated, rotated or revoked, an admin token created or revoked.
    AdminAction = "admin.action",
    /// A reviewer approved one tool's definition into its server's baseline.
    ToolApproved = "tool.approved",
    /// A reviewer blocked one tool.
    ToolBlocked = "tool.blocked",
    StandingGranted = "standing.granted",
    StandingRevoked = "standing.revoked",
    /// A log leaf only: one per tool-call verdict.
    ToolCall = "tool.call",
    /// A log leaf only: a call about to be forwarded upstream, written (durable)
    /// before it is sent — evidence before effect. Its `tool.call` outcome leaf
    /// names it (`intent_index`).
    ToolCallIntent = "tool.call.intent",
    /// A log leaf only: a coding agent's own tool use its hook reported
    /// (issue 40) and what the gateway answered.
    HookCall = "hook.call",
    /// A log leaf only: a request to a model through the LLM proxy (issue
    /// 42): the scan's verdict, written before the request leaves.
    LlmCall = "llm.call",
    /// A log leaf only: what the scan of a model's answer found and
    /// redacted (issue 42), when it found anything; names its `llm.call`.
    LlmResponse = "llm.response",
    /// A log leaf only: a prompt read.
    PromptGet = "prompt.get",
    /// A log leaf only: a resource read.
    ResourceRead = "resource.read",
    /// A log leaf only: a `completion/complete` an agent asked (issue 39
    /// item 11): its request inspected, its answer scanned.
    CompletionComplete = "completion.complete",
    /// A log leaf only: an API key issued.
    ApiKeyIssued = "apikey.issued",
    /// A log leaf only: a one-time sign-in link printed (its token's hash and
    /// expiry; `crate::signin`).
    SigninIssued = "signin.issued",
    /// A log leaf only: a sign-in link redeemed by a browser (the token's
    /// hash, the reviewer key's hash and the approver key registered).
    SigninRedeemed = "signin.redeemed",
    /// A log leaf only: a reviewer asked to connect or undo an AI client,
    /// written (durable) before its file is touched — evidence before effect.
    /// Its outcome (`client.connected`, `client.undone`,
    /// `client.hooks_installed`, `client.hooks_undone` or
    /// `client.change_refused`) names it (`intent_index`).
    ClientChangeIntent = "client.change.intent",
    /// A log leaf only: a client change asked for was refused or failed; the
    /// reason (its file may be untouched or, for a failure midway, restored
    /// by the connector's own backup).
    ClientChangeRefused = "client.change_refused",
    /// A log leaf only: a reviewer connected an AI client from the reviewer
    /// API (`crate::clients`): what moved behind the gateway.
    ClientConnected = "client.connected",
    /// A log leaf only: a reviewer undid a client's connect.
    ClientUndone = "client.undone",
    /// A log leaf only: the owner installed a coding agent's hooks (issue
    /// 40): its own tools now ask the gateway first.
    ClientHooksInstalled = "client.hooks_installed",
    /// A log leaf only: the owner gave a coding agent's hook settings back.
    ClientHooksUndone = "client.hooks_undone",
    /// A log leaf only: a tool's behavioural envelope was learned and is now
    /// enforced (the envelope and its hash).
    ToolEnvelopeFixed = "tool.envelope_fixed",
    /// A reviewer's signed decision widened a tool's envelope.
    ToolEnvelopeWidened = "tool.envelope_widened",
}

impl EventType {
    /// Whether an event of this type puts an item on hold for a reviewer (a
    /// notification with Approve / Reject / Review).
    pub fn holds_for_review(self) -> bool {
        matches!(
            self,
            EventType::PlanProposed
                | EventType::ServerPending
                | EventType::ServerQuarantined
                | EventType::ServerDriftHeld
        )
    }

    /// Whether an event of this type settles its subject (a notification
    /// about it is no longer actionable).
    pub fn settles(self) -> bool {
        matches!(
            self,
            EventType::PlanApproved
                | EventType::PlanRejected
                | EventType::PlanExpired
                | EventType::PlanExecuting
                | EventType::PlanSucceeded
                | EventType::PlanHalted
                | EventType::ServerApproved
                | EventType::ServerRejected
                | EventType::ServerRemoved
        )
    }

    fn of_plan(kind: EventKind) -> EventType {
        match kind {
            EventKind::Proposed => EventType::PlanProposed,
            EventKind::Approved => EventType::PlanApproved,
            EventKind::Rejected => EventType::PlanRejected,
            EventKind::Expired => EventType::PlanExpired,
            EventKind::Executing => EventType::PlanExecuting,
            EventKind::Succeeded => EventType::PlanSucceeded,
            EventKind::Halted => EventType::PlanHalted,
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    Plan,
    Server,
    Standing,
}

impl SubjectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Plan => "plan",
            SubjectKind::Server => "server",
            SubjectKind::Standing => "standing",
        }
    }

    pub fn parse(name: &str) -> Option<SubjectKind> {
        match name {
            "plan" => Some(SubjectKind::Plan),
            "server" => Some(SubjectKind::Server),
            "standing" => Some(SubjectKind::Standing),
            _ => None,
        }
    }
}

impl std::fmt::Display for SubjectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a reviewer may want to know about now.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct GatewayEvent {
    #[serde(rename = "type")]
    pub kind: EventType,
    pub subject_kind: SubjectKind,
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
        kind: EventType,
        name: &str,
        title: String,
        risk: &str,
        observed_hash: &str,
        log_index: Option<u64>,
    ) -> GatewayEvent {
        GatewayEvent {
            kind,
            subject_kind: SubjectKind::Server,
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
    /// the desktop app connected to a team gateway). `None` if it is not one
    /// (or of a type this version does not know).
    pub fn from_json(v: &serde_json::Value) -> Option<GatewayEvent> {
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let subject_kind = SubjectKind::parse(v.get("subject_kind")?.as_str()?)?;
        Some(GatewayEvent {
            kind: EventType::parse(v.get("type")?.as_str()?)?,
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

    /// The event a server leaf recorded by another process stands for (a
    /// server that another gateway on the same database met, quarantined or
    /// had decided): its kind, name and surface hash come from the leaf; the
    /// title is generic, since the observing gateway's wording is not
    /// recorded. `None` for leaves that announce nothing to a reviewer.
    pub fn of_recorded_server_leaf(
        index: u64,
        entry: &interlock_core::canon::Value,
    ) -> Option<GatewayEvent> {
        let kind = EventType::parse(entry.get("type")?.as_str()?)?;
        let name = entry.get("server")?.as_str()?;
        let hash = entry
            .get("surface_hash")
            .and_then(|h| h.as_str())
            .unwrap_or_default();
        let (title, risk) = match kind {
            EventType::ServerPending => {
                let risk = entry
                    .get("first_contact")
                    .and_then(|f| f.get("risk"))
                    .and_then(|r| r.as_str());
                (
                    format!("New MCP server `{name}` waits for review"),
                    // The risk the leaf recorded, as for a server met here
                    // (issue 46: one number everywhere); an older leaf's
                    // missing one reads as medium.
                    risk.unwrap_or("medium"),
                )
            }
            EventType::ServerQuarantined => (
                format!("MCP server `{name}` quarantined: its surface drifted"),
                "high",
            ),
            EventType::ServerDriftHeld => (
                format!("MCP server `{name}` drifted: its changed tools are held"),
                "medium",
            ),
            EventType::ServerApproved => (format!("Approved `{name}`"), "info"),
            EventType::ServerRejected => (format!("Rejected `{name}`"), "info"),
            EventType::ServerRemoved => (format!("Removed `{name}`"), "info"),
            _ => return None,
        };
        Some(GatewayEvent::server(
            kind,
            name,
            title,
            risk,
            hash,
            Some(index),
        ))
    }

    pub fn from_engine(e: &EngineEvent) -> GatewayEvent {
        GatewayEvent {
            kind: EventType::of_plan(e.kind),
            subject_kind: SubjectKind::Plan,
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

    /// Whether anyone listens (an SSE stream, the desktop app): what is
    /// announced only to be heard need not be worked out otherwise.
    pub fn has_listeners(&self) -> bool {
        self.0.receiver_count() > 0
    }
}
