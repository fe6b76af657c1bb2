//! Surface pinning: what each upstream server may serve, given the surface a
//! reviewer approved (the baseline), the one it lists now, and the drift
//! between them.
//!
//! - A server seen for the first time is PENDING: nothing of it is served.
//! - A TRUSTED server's tools are served as listed, except tools whose drift
//!   the drift policy holds or quarantines (hidden from `tools/list`, refused at
//!   `tools/call`). Quarantine is sticky: a tool that reverts stays blocked
//!   until a reviewer looks.
//! - Drift with server scope (instructions changed, anything critical) makes
//!   the server QUARANTINED: nothing of it is served.
//! - A reviewer's signed approval of the *observed* surface hash makes it the
//!   baseline (compare-and-swap: if the server listed something else since, the
//!   approval is refused, because it is about bytes no longer there).
//!
//! Every change of state is a log leaf and an event.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::{Decision, DsseEnvelope};
use interlock_engine::{Engine, EngineError};
use interlock_store::{ServerRecord, ServerStatus, ServerUpdate, StateChange, StoreError};
use interlock_surface::{
    Action, ContentKind, ContentRef, Drift, DriftKind, DriftPolicy, Scope, Surface, surface_hash,
};
use serde_json::value::RawValue;

use crate::events::{EventBus, EventType, GatewayEvent};

/// The separator between a server's name and its tool's name in exposed tool
/// names (`files__read_file`). Server names may not contain it.
pub const TOOL_SEPARATOR: &str = "__";

/// A changed surface as its leaf says it ([`Pins::observe`]).
struct SurfaceChange<'a> {
    status: ServerStatus,
    drift: &'a [Drift],
    drift_json: Vec<serde_json::Value>,
    blocked: &'a BTreeMap<String, String>,
    /// Some listed content (a prompt, a resource) is held back.
    content_held: bool,
    observed_hash: &'a str,
}

/// Why pinning could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("no server named {0:?}")]
    NoSuchServer(String),
    #[error("server {name:?} has listed no surface yet")]
    NothingObserved { name: String },
    #[error(
        "the surface of {name:?} changed since it was reviewed (signed {signed}, now {current}); review it again"
    )]
    SurfaceChanged {
        name: String,
        signed: String,
        current: String,
    },
    #[error(
        "the grant names definition {granted} of `{tool}`, but the approved definition is {approved}; review the tool again and grant that one"
    )]
    GrantForAnotherDefinition {
        tool: String,
        granted: String,
        approved: String,
    },
    #[error("the signed statement is about {0:?}, not a server")]
    NotAServerStatement(String),
    #[error("the signed statement is about {0:?}, not a tool (tool:<server>/<tool>)")]
    NotAToolStatement(String),
    #[error("server {server:?} lists no tool {tool:?}")]
    NoSuchTool { server: String, tool: String },
    #[error(
        "server {name:?} is {status}: approve the server first (a tool can be blocked during review, and approved once the server is)"
    )]
    ToolNeedsServer { name: String, status: String },
    #[error("server {name:?} listed an unusable surface: {message}")]
    BadSurface { name: String, message: String },
    #[error("server {0:?} kept changing under concurrent writers; try again")]
    Contended(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One drift as stored, shown and logged (`docs/schemas/drift-finding.schema.json`).
pub fn drift_record(d: &Drift, policy: &DriftPolicy) -> serde_json::Value {
    let mut record = serde_json::json!({
        "tool": d.tool,
        "kind": drift_kind_name(&d.kind),
        "severity": d.severity().name(),
        "action": policy.action(d).name(),
        "scope": match d.scope() {
            Scope::Server => "server",
            Scope::Tool(_) => "tool",
            Scope::Content(_) => "content",
        },
        "summary": d.to_string(),
        "findings": d.findings().iter().map(|f| f.to_string()).collect::<Vec<_>>(),
    });
    if let Some(c) = d.content() {
        record["content"] = serde_json::json!({"kind": c.kind.name(), "key": c.key});
    }
    if let DriftKind::LaunchChanged { from, to } = &d.kind {
        let json = |v: &Option<Value>| {
            v.as_ref()
                .map_or(serde_json::Value::Null, canon::to_serde_json)
        };
        record["launch"] = serde_json::json!({
            "from": json(from),
            "to": json(to),
            "changed": interlock_surface::launch_fields_changed(from.as_ref(), to.as_ref()),
        });
    }
    record
}

/// The prompts, resources and templates a row's stored drift holds or
/// quarantines, and why (the summaries of their drifts). Derived from the
/// drift, not stored apart: a content hold lifts when the entry reverts, and
/// a Critical content drift quarantines the whole server instead (sticky as
/// the server's status).
pub fn blocked_content(drift: &[serde_json::Value]) -> BTreeMap<ContentRef, String> {
    let mut out: BTreeMap<ContentRef, String> = BTreeMap::new();
    for d in drift {
        if !matches!(d["action"].as_str(), Some("hold" | "quarantine")) {
            continue;
        }
        let (Some(kind), Some(key)) = (
            d["content"]["kind"]
                .as_str()
                .and_then(ContentKind::from_name),
            d["content"]["key"].as_str(),
        ) else {
            continue;
        };
        let why = d["summary"].as_str().unwrap_or("changed since approval");
        out.entry(ContentRef::new(kind, key))
            .and_modify(|w| {
                w.push_str("; ");
                w.push_str(why);
            })
            .or_insert_with(|| why.to_owned());
    }
    out
}

/// What the first look at a surface found (issue 16 item 3), as shown to a
/// reviewer and logged with `server.pending`: `{"risk": "critical", "power":
/// [{"tool", "risk", "why"}, …], "findings": [{"tool", "field", "kind",
/// "excerpt"}, …]}`.
pub fn first_contact_record(surface: &Surface) -> serde_json::Value {
    let fc = interlock_surface::first_contact(surface, &interlock_surface::Scanner::default());
    serde_json::json!({
        "risk": fc.risk.name(),
        // What its tools can do (issue 46): part of the risk above.
        "power": fc.power.iter().map(|(tool, p)| serde_json::json!({
            "tool": tool,
            "risk": p.level.name(),
            "why": p.why,
        })).collect::<Vec<_>>(),
        "findings": fc.findings.iter().map(|l| serde_json::json!({
            "tool": l.tool,
            "field": l.field,
            "kind": l.finding.kind.name(),
            "excerpt": l.finding.excerpt,
        })).collect::<Vec<_>>(),
    })
}

/// [`first_contact_record`] of a stored server's observed surface, while it
/// is PENDING (after approval, drift says what changed instead).
pub fn first_contact_of(record: &ServerRecord) -> Option<serde_json::Value> {
    if record.status != ServerStatus::Pending {
        return None;
    }
    decode_surface(&record.name, record.observed.as_deref())
        .ok()
        .flatten()
        .map(|s| first_contact_record(&s))
}

/// A stable machine name for each kind of drift.
pub fn drift_kind_name(k: &DriftKind) -> &'static str {
    match k {
        DriftKind::ToolAdded { .. } => "tool_added",
        DriftKind::ToolRemoved => "tool_removed",
        DriftKind::ToolRenamed { .. } => "tool_renamed",
        DriftKind::DescriptionChanged { .. } => "description_changed",
        DriftKind::InputSchemaWidened { .. } => "input_schema_widened",
        DriftKind::InputSchemaNarrowed { .. } => "input_schema_narrowed",
        DriftKind::InputSchemaChanged { .. } => "input_schema_changed",
        DriftKind::AnnotationFlipped { .. } => "annotation_flipped",
        DriftKind::AnnotationChanged { .. } => "annotation_changed",
        DriftKind::OutputSchemaChanged { .. } => "output_schema_changed",
        DriftKind::TitleChanged { .. } => "title_changed",
        DriftKind::MetaChanged => "meta_changed",
        DriftKind::OtherFieldChanged { .. } => "other_field_changed",
        DriftKind::InstructionsChanged { .. } => "instructions_changed",
        DriftKind::LaunchChanged { .. } => "launch_changed",
        DriftKind::SuspiciousText { .. } => "suspicious_text",
        DriftKind::ContentAdded { entry, .. } => match entry.kind {
            ContentKind::Prompt => "prompt_added",
            ContentKind::Resource => "resource_added",
            ContentKind::ResourceTemplate => "resource_template_added",
        },
        DriftKind::ContentRemoved { entry } => match entry.kind {
            ContentKind::Prompt => "prompt_removed",
            ContentKind::Resource => "resource_removed",
            ContentKind::ResourceTemplate => "resource_template_removed",
        },
        DriftKind::ContentChanged { entry, .. } => match entry.kind {
            ContentKind::Prompt => "prompt_changed",
            ContentKind::Resource => "resource_changed",
            ContentKind::ResourceTemplate => "resource_template_changed",
        },
    }
}

/// What a server lists now, as it listed it: the raw entries a surface is
/// built from and agents are served from (tools renamed, the rest as is).
#[derive(Debug, Default)]
pub struct Listing {
    /// The `instructions` of its `initialize` result, when pinned.
    pub instructions: Option<String>,
    /// `tools/list`, pages concatenated.
    pub tools: Vec<Box<RawValue>>,
    /// Each pinned and offered content listing (`prompts/list`, …), pages
    /// concatenated. A kind absent here is not pinned for this server.
    pub content: BTreeMap<ContentKind, Vec<Box<RawValue>>>,
    /// How a `command` server was started (`Transport::pinned_launch`),
    /// pinned with what it lists (issue 38).
    pub launch: Option<serde_json::Value>,
}

/// A tool as agents see it: renamed `server__tool`, everything else as the
/// upstream listed it, byte for byte.
#[derive(Debug)]
pub struct ExposedTool {
    pub server: String,
    pub upstream_name: String,
    pub exposed_name: String,
    pub definition: Box<RawValue>,
}

/// Why a tool is not served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotServed {
    UnknownTool,
    Pending,
    Rejected,
    ServerQuarantined,
    ToolHeld(String),
    ToolQuarantined(String),
    /// A reviewer blocked this tool (a signed decision about it alone).
    ToolBlocked,
}

/// Why a tool of a served server is not served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// Its drift is held for review (lifted if it reverts).
    Held,
    /// Its drift is quarantined (sticky until a reviewer decides).
    Quarantined,
    /// A reviewer blocked it (sticky until a reviewer approves it).
    ByReviewer,
}

impl Blocked {
    /// The name stored in the row's `blocked_tools` and shown.
    pub fn name(self) -> &'static str {
        match self {
            Blocked::Held => "hold",
            Blocked::Quarantined => "quarantine",
            Blocked::ByReviewer => "block",
        }
    }

    /// From the stored name (anything unknown is held: fail closed).
    pub fn from_stored(name: &str) -> Blocked {
        match name {
            "quarantine" => Blocked::Quarantined,
            "block" => Blocked::ByReviewer,
            _ => Blocked::Held,
        }
    }

    /// Kept when the tool's listing changes (only a reviewer lifts it).
    pub fn sticky(self) -> bool {
        self != Blocked::Held
    }
}

impl NotServed {
    pub fn message(&self, server: &str, tool: &str) -> String {
        match self {
            NotServed::UnknownTool => format!("unknown tool `{tool}` of server `{server}`"),
            NotServed::Pending => format!(
                "server `{server}` is pending review: its tools are served once a reviewer approves its surface"
            ),
            NotServed::Rejected => format!("server `{server}` was rejected by a reviewer"),
            NotServed::ServerQuarantined => format!(
                // Neutral on why (its surface, or its behaviour under a probe):
                // agents are never told what the gateway probes.
                "server `{server}` is quarantined: it departed from what a reviewer approved; a reviewer must re-approve it"
            ),
            NotServed::ToolHeld(why) => format!(
                "tool `{tool}` of server `{server}` is held for review: it changed since approval ({why})"
            ),
            NotServed::ToolQuarantined(why) => format!(
                "tool `{tool}` of server `{server}` is quarantined: it changed since approval ({why})"
            ),
            NotServed::ToolBlocked => {
                format!("tool `{tool}` of server `{server}` is blocked by a reviewer")
            }
        }
    }
}

/// One server as the gateway sees it now.
#[derive(Debug)]
pub struct ServerView {
    pub record: ServerRecord,
    /// What agents see before each of its tool names.
    pub prefix: String,
    pub baseline: Option<Surface>,
    pub observed: Option<Surface>,
    /// Blocked tools and why (summary of their strongest drift).
    pub blocked: BTreeMap<String, (Blocked, String)>,
    /// What is served, by upstream tool name.
    pub served: BTreeMap<String, Arc<ExposedTool>>,
    /// Pinned prompts, resources and templates whose drift is held (or
    /// quarantined), and why: not listed, not read.
    pub blocked_content: BTreeMap<ContentRef, String>,
    /// The raw listing the served tools and content come from (kept across
    /// reloads).
    raw: Arc<Listing>,
}

impl ServerView {
    /// The server's one risk label (issue 46 item 2): the worst of what its
    /// tools can do ([`interlock_surface::surface_power`]: annotations, names,
    /// schemas), what the first-contact scan found while it is pending, and
    /// its open drift; low at least. The inbox, the server view, the Welcome
    /// page, notifications and the tray all show this one label.
    pub fn risk(&self) -> interlock_core::RiskLevel {
        use interlock_core::RiskLevel;
        let power = self
            .observed
            .as_ref()
            .and_then(|s| interlock_surface::surface_power(s).1)
            .map(|s| s.name().to_owned());
        let first_contact =
            first_contact_of(&self.record).and_then(|f| f["risk"].as_str().map(str::to_owned));
        let drift: Vec<serde_json::Value> =
            serde_json::from_slice(&self.record.drift).unwrap_or_default();
        let worst_drift = drift
            .iter()
            .filter_map(|d| d["severity"].as_str())
            .filter_map(RiskLevel::from_name)
            .max();
        [power, first_contact]
            .into_iter()
            .flatten()
            .filter_map(|name| RiskLevel::from_name(&name))
            .chain(worst_drift)
            .max()
            .unwrap_or(RiskLevel::Low)
    }

    /// Whether a reviewer has something to decide here: a pending or
    /// quarantined server, or one with held or quarantined tools. The
    /// inbox, the tray count and notifications all use this one rule.
    pub fn waits_for_review(&self) -> bool {
        matches!(
            self.record.status,
            ServerStatus::Pending | ServerStatus::Quarantined
        ) || self
            .blocked
            .values()
            .any(|(b, _)| *b != Blocked::ByReviewer)
            || !self.blocked_content.is_empty()
    }

    /// The pinned entries of `kind` that may be served now, as listed: those
    /// in the surface the row is about, less the held ones. `None` when
    /// `kind` is not pinned for this server (its listing is then read live).
    pub fn served_content(&self, kind: ContentKind) -> Option<Vec<&RawValue>> {
        let known = self.known_content(kind)?;
        Some(
            known
                .into_iter()
                .filter(|item| {
                    key_of(item, kind).is_some_and(|key| {
                        !self
                            .blocked_content
                            .contains_key(&ContentRef::new(kind, key))
                    })
                })
                .collect(),
        )
    }

    /// The last listing of `kind` this server answered, as it answered it
    /// (`None`: not listed since this process started, or not pinned). The
    /// gateway keeps it in place of a listing that answers with an error
    /// (issue 45 item 6): the same bytes, so the same surface hash.
    pub fn last_listing(&self, kind: ContentKind) -> Option<&[Box<RawValue>]> {
        self.raw.content.get(&kind).map(Vec::as_slice)
    }

    /// The pinned entries of `kind` in the surface the row is about, held
    /// ones included (so a read of a held entry is told it is held, not that
    /// it is unknown). `None` when `kind` is not pinned here.
    pub fn known_content(&self, kind: ContentKind) -> Option<Vec<&RawValue>> {
        let listed = self.raw.content.get(&kind)?;
        let observed = self.observed.as_ref();
        Some(
            listed
                .iter()
                .filter(|item| {
                    key_of(item, kind).is_some_and(|key| {
                        observed.is_some_and(|s| s.content(kind, &key).is_some())
                    })
                })
                .map(|b| &**b)
                .collect(),
        )
    }

    /// Whether a pinned entry may be read or got now: `Ok` when `kind` is
    /// not pinned here or the entry is served; otherwise why not.
    pub fn check_content(&self, kind: ContentKind, key: &str) -> Result<(), String> {
        if !self.raw.content.contains_key(&kind) {
            return Ok(());
        }
        if let Some(why) = self.blocked_content.get(&ContentRef::new(kind, key)) {
            return Err(format!(
                "{kind} `{key}` of server `{}` is held for review: it changed since approval ({why})",
                self.record.name
            ));
        }
        Ok(())
    }

    /// Whether `tool` is served, and if not, why.
    pub fn check(&self, tool: &str) -> Result<&Arc<ExposedTool>, NotServed> {
        match self.record.status {
            ServerStatus::Pending => return Err(NotServed::Pending),
            ServerStatus::Rejected => return Err(NotServed::Rejected),
            ServerStatus::Quarantined => return Err(NotServed::ServerQuarantined),
            ServerStatus::Trusted => {}
        }
        if let Some((blocked, why)) = self.blocked.get(tool) {
            return Err(match blocked {
                Blocked::Quarantined => NotServed::ToolQuarantined(why.clone()),
                Blocked::ByReviewer => NotServed::ToolBlocked,
                Blocked::Held => NotServed::ToolHeld(why.clone()),
            });
        }
        self.served.get(tool).ok_or(NotServed::UnknownTool)
    }
}

/// The current view of every server: what is served now. [`Pins`] alone
/// writes it; the engine's MCP adapter (plans that call tools) reads it. A
/// cheap-to-clone handle, made before the engine so the adapter can hold it
/// without holding the gateway.
#[derive(Clone, Default)]
pub struct ServedSurfaces(Arc<RwLock<HashMap<String, Arc<ServerView>>>>);

impl ServedSurfaces {
    /// The current view of a server.
    pub fn view(&self, name: &str) -> Option<Arc<ServerView>> {
        self.0.read().expect("views lock").get(name).cloned()
    }
}

/// Every server's pinning state; the gateway's one source of truth for what
/// may be served.
pub struct Pins {
    engine: Engine,
    policy: DriftPolicy,
    views: ServedSurfaces,
    /// One writer at a time per server (observe, approve, reload).
    writers: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    events: EventBus,
    /// Tool-name prefix per configured server (changed when a server is
    /// added or removed at run time; a server not here is not observed).
    prefixes: RwLock<HashMap<String, String>>,
}

impl Pins {
    pub fn new(
        engine: Engine,
        policy: DriftPolicy,
        events: EventBus,
        prefixes: HashMap<String, String>,
        views: ServedSurfaces,
    ) -> Pins {
        Pins {
            engine,
            policy,
            prefixes: RwLock::new(prefixes),
            views,
            writers: tokio::sync::Mutex::new(HashMap::new()),
            events,
        }
    }

    pub fn policy(&self) -> &DriftPolicy {
        &self.policy
    }

    async fn writer(&self, name: &str) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(
            self.writers
                .lock()
                .await
                .entry(name.to_owned())
                .or_default(),
        )
    }

    /// The current view of a server.
    pub fn view(&self, name: &str) -> Option<Arc<ServerView>> {
        self.views.view(name)
    }

    /// The server and upstream tool an exposed tool name means: the view with
    /// the longest prefix that lists the rest as a tool (served or not).
    pub fn resolve(&self, exposed: &str) -> Option<(Arc<ServerView>, String)> {
        let views = self.views.0.read().expect("views lock");
        let mut best: Option<(Arc<ServerView>, String)> = None;
        for v in views.values() {
            let Some(tool) = exposed.strip_prefix(v.prefix.as_str()) else {
                continue;
            };
            let known = v.observed.as_ref().is_some_and(|s| s.tool(tool).is_some())
                || v.blocked.contains_key(tool);
            if known
                && best
                    .as_ref()
                    .is_none_or(|(b, _)| b.prefix.len() < v.prefix.len())
            {
                best = Some((Arc::clone(v), tool.to_owned()));
            }
        }
        best
    }

    /// Every view, by name.
    pub fn views(&self) -> Vec<Arc<ServerView>> {
        let mut v: Vec<_> = self
            .views
            .0
            .read()
            .expect("views lock")
            .values()
            .cloned()
            .collect();
        v.sort_by(|a, b| a.record.name.cmp(&b.record.name));
        v
    }

    /// Records what a server lists now (after connect, `list_changed`, or a
    /// periodic re-check) and applies the drift policy.
    pub async fn observe(&self, name: &str, listing: Listing) -> Result<Arc<ServerView>, PinError> {
        let observed = parse_surface(name, &listing)?;
        let observed_hash = surface_hash(&observed).to_string();
        let raw_tools = Arc::new(listing);
        let lock = self.writer(name).await;
        let _guard = lock.lock().await;
        // A server removed at run time while its listing was in flight is
        // not written back (its row is gone with its removal's leaf).
        if !self
            .prefixes
            .read()
            .expect("prefixes lock")
            .contains_key(name)
        {
            return Err(PinError::NoSuchServer(name.to_owned()));
        }
        let store = self.engine.store();
        for _attempt in 0..8 {
            let Some(record) = store.server(name).await? else {
                match self
                    .first_contact(name, &observed, &observed_hash, &raw_tools)
                    .await?
                {
                    Some(view) => return Ok(view),
                    // Another writer inserted it first: read it again.
                    None => continue,
                }
            };
            if record.observed_hash.as_deref() == Some(observed_hash.as_str()) {
                // Same surface as last time (a reconnect, a reordered listing).
                let view = self.install(record, Arc::clone(&raw_tools));
                return Ok(view);
            }
            let baseline = decode_surface(name, record.baseline.as_deref())?;
            let (status, drift, blocked) = self.judge(&record, baseline.as_ref(), &observed);
            let drift_json: Vec<serde_json::Value> = drift
                .iter()
                .map(|d| drift_record(d, &self.policy))
                .collect();
            let update = ServerUpdate {
                status,
                baseline_hash: record.baseline_hash.clone(),
                baseline: record.baseline.clone(),
                observed_hash: Some(observed_hash.clone()),
                observed: Some(canon::canonical_bytes(&observed.to_value())),
                drift: serde_json::to_vec(&drift_json).expect("JSON serializes"),
                blocked_tools: serde_json::to_vec(&blocked).expect("JSON serializes"),
            };
            let Some(new) = store.update_server(name, record.version, &update).await? else {
                continue;
            };
            // What is served changes before the leaf saying why is written: a
            // call whose intent leaf comes after this drift leaf re-checks the
            // view after writing it (calls::pipeline), so it sees the drift and
            // is not forwarded. That is what lets `receipts claims` prove, from
            // the log alone, that nothing ran inside a drift window.
            let previously_blocked: BTreeMap<String, String> =
                serde_json::from_slice(&record.blocked_tools).unwrap_or_default();
            let previous_drift: Vec<serde_json::Value> =
                serde_json::from_slice(&record.drift).unwrap_or_default();
            let content_held = blocked_content(&drift_json);
            let unblocked = blocked != previously_blocked
                || status != record.status
                || content_held != blocked_content(&previous_drift);
            let view = self.install(new, raw_tools);
            if !drift.is_empty() || unblocked {
                // A drift that reverted (a held tool listed as approved again)
                // is a leaf too: its window closes here, with `drift` empty.
                let change = SurfaceChange {
                    status,
                    drift: &drift,
                    drift_json,
                    blocked: &blocked,
                    content_held: !content_held.is_empty(),
                    observed_hash: &observed_hash,
                };
                self.record_change(name, &record, change).await?;
            }
            return Ok(view);
        }
        Err(PinError::Contended(name.to_owned()))
    }

    /// A server seen for the first time: inserted PENDING, its first-contact
    /// scan in the `server.pending` leaf. `None` when another writer inserted
    /// it first.
    async fn first_contact(
        &self,
        name: &str,
        observed: &Surface,
        observed_hash: &str,
        raw_tools: &Arc<Listing>,
    ) -> Result<Option<Arc<ServerView>>, PinError> {
        let store = self.engine.store();
        let update = ServerUpdate {
            status: ServerStatus::Pending,
            baseline_hash: None,
            baseline: None,
            observed_hash: Some(observed_hash.to_owned()),
            observed: Some(canon::canonical_bytes(&observed.to_value())),
            drift: b"[]".to_vec(),
            blocked_tools: b"{}".to_vec(),
        };
        let record = match store.insert_server(name, &update).await {
            Ok(r) => r,
            Err(StoreError::Duplicate { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        // First contact is scanned too: the findings and the risk are
        // evidence in the leaf and shown in the pending review.
        let first = first_contact_record(observed);
        let risk = first["risk"].as_str().unwrap_or("low").to_owned();
        let found = first["findings"].as_array().map_or(0, Vec::len);
        let index = self
            .log(
                EventType::ServerPending,
                name,
                [
                    ("surface_hash", observed_hash.into()),
                    ("tools", int(observed.tools().len())),
                    ("first_contact", to_canon(&first)),
                ],
            )
            .await?;
        self.events.send(GatewayEvent::server(
            EventType::ServerPending,
            name,
            if found == 0 {
                format!(
                    "New MCP server `{name}` ({} tools) waits for review",
                    observed.tools().len()
                )
            } else {
                format!(
                    "New MCP server `{name}` ({} tools) waits for review: {found} finding(s), {risk} risk",
                    observed.tools().len()
                )
            },
            // The one risk of the server (findings and what its tools can
            // do, issue 46), as the inbox and the server page show it.
            risk.as_str(),
            observed_hash,
            Some(index),
        ));
        Ok(Some(self.install(record, Arc::clone(raw_tools))))
    }

    /// What a changed listing means for a server: its status, the drift
    /// from its approved baseline, and the tools (or content) it holds back.
    /// Quarantines are sticky until a reviewer decides; a pending or rejected
    /// server only remembers what it lists.
    fn judge(
        &self,
        record: &ServerRecord,
        baseline: Option<&Surface>,
        observed: &Surface,
    ) -> (ServerStatus, Vec<Drift>, BTreeMap<String, String>) {
        match (baseline, record.status) {
            (Some(baseline), ServerStatus::Trusted | ServerStatus::Quarantined) => {
                let drifts = interlock_surface::diff(baseline, observed);
                let (server_action, tool_actions) = self.policy.assess(&drifts);
                // Held content is derived from the stored drift (see
                // [`blocked_content`]); nothing more to carry here.
                let mut status = record.status;
                if matches!(server_action, Some(Action::Hold | Action::Quarantine)) {
                    status = ServerStatus::Quarantined;
                }
                // Quarantines are sticky until a reviewer decides.
                let mut blocked: BTreeMap<String, String> =
                    serde_json::from_slice::<BTreeMap<String, String>>(&record.blocked_tools)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(_, a)| Blocked::from_stored(a).sticky())
                        .collect();
                for (tool, action) in tool_actions {
                    if action != Action::Monitor {
                        let e = blocked
                            .entry(tool)
                            .or_insert_with(|| action.name().to_owned());
                        if action == Action::Quarantine && e != Blocked::ByReviewer.name() {
                            *e = Blocked::Quarantined.name().to_owned();
                        }
                    }
                }
                (status, drifts, blocked)
            }
            // Pending and rejected servers: just remember what they list
            // (and the tools a reviewer blocked during review).
            _ => (record.status, Vec::new(), reviewer_blocks(record)),
        }
    }

    /// The leaf and event of a surface change (a drift, a quarantine, a held
    /// tool, or a drift reverted).
    async fn record_change(
        &self,
        name: &str,
        record: &ServerRecord,
        change: SurfaceChange<'_>,
    ) -> Result<(), PinError> {
        let SurfaceChange {
            status,
            drift,
            drift_json,
            blocked,
            content_held,
            observed_hash,
        } = change;
        let worst = drift
            .iter()
            .map(|d| d.severity())
            .max()
            .unwrap_or(interlock_surface::Severity::Info);
        let kind =
            if status == ServerStatus::Quarantined && record.status != ServerStatus::Quarantined {
                EventType::ServerQuarantined
            } else if !blocked.is_empty() || content_held {
                EventType::ServerDriftHeld
            } else {
                EventType::ServerDrift
            };
        let index = self
            .log(
                kind,
                name,
                [
                    (
                        "baseline_hash",
                        record.baseline_hash.clone().unwrap_or_default().into(),
                    ),
                    ("surface_hash", observed_hash.into()),
                    ("status", status.as_str().into()),
                    ("drift", to_canon(&serde_json::Value::Array(drift_json))),
                    (
                        "blocked_tools",
                        to_canon(&serde_json::to_value(blocked).expect("JSON")),
                    ),
                ],
            )
            .await?;
        let headline = drift
            .iter()
            .max_by_key(|d| d.severity())
            .map(|d| d.to_string())
            .unwrap_or_else(|| "the drift reverted to the approved surface".into());
        self.events.send(GatewayEvent::server(
            kind,
            name,
            headline,
            worst.name(),
            observed_hash,
            Some(index),
        ));
        Ok(())
    }

    /// Quarantines a TRUSTED server on behavioural evidence (a probe whose
    /// permission grew): the `kind` leaf with `fields` (plus the server and
    /// its hashes) commits in the same transaction as the row's flip, so the
    /// evidence is durable before the quarantine takes effect. `None` if the
    /// server is not TRUSTED at `seen_version`, the row the evidence was
    /// gathered against (a reviewer decided meanwhile, adopting a new
    /// baseline: the next re-check judges against that one).
    pub async fn quarantine(
        &self,
        name: &str,
        seen_version: i64,
        kind: EventType,
        fields: Map,
        headline: String,
    ) -> Result<Option<ServerRecord>, PinError> {
        let lock = self.writer(name).await;
        let _guard = lock.lock().await;
        let store = self.engine.store();
        for _attempt in 0..8 {
            let record = store
                .server(name)
                .await?
                .ok_or_else(|| PinError::NoSuchServer(name.to_owned()))?;
            if record.status != ServerStatus::Trusted || record.version != seen_version {
                return Ok(None);
            }
            let mut m = fields.clone();
            m.insert("server".into(), name.into());
            m.insert("status".into(), ServerStatus::Quarantined.as_str().into());
            m.insert(
                "baseline_hash".into(),
                record.baseline_hash.clone().unwrap_or_default().into(),
            );
            m.insert(
                "surface_hash".into(),
                record.observed_hash.clone().unwrap_or_default().into(),
            );
            let change = StateChange::Server {
                name: name.to_owned(),
                expected_version: record.version,
                update: ServerUpdate {
                    status: ServerStatus::Quarantined,
                    baseline_hash: record.baseline_hash.clone(),
                    baseline: record.baseline.clone(),
                    observed_hash: record.observed_hash.clone(),
                    observed: record.observed.clone(),
                    drift: record.drift.clone(),
                    blocked_tools: record.blocked_tools.clone(),
                },
            };
            // Stricter first, as in `observe`: the quarantine is served before
            // its leaf is written, so a call whose intent leaf follows it sees
            // it when it re-checks (nothing runs inside a drift window). If the
            // leaf is not written, the row is re-read and served as it is.
            let raw = self
                .view(name)
                .map(|v| Arc::clone(&v.raw))
                .unwrap_or_default();
            let mut provisional = record.clone();
            provisional.status = ServerStatus::Quarantined;
            self.install(provisional, Arc::clone(&raw));
            let index = match self
                .engine
                .record_with_change(kind.as_str(), m, change)
                .await
            {
                Ok(appended) => appended.index,
                Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
                    self.reload(name).await?;
                    continue;
                }
                Err(e) => {
                    self.reload(name).await?;
                    return Err(e.into());
                }
            };
            let new = store
                .server(name)
                .await?
                .ok_or_else(|| PinError::NoSuchServer(name.to_owned()))?;
            self.install(new.clone(), raw);
            self.events.send(GatewayEvent::server(
                EventType::ServerQuarantined,
                name,
                headline,
                "critical",
                record.observed_hash.as_deref().unwrap_or_default(),
                Some(index),
            ));
            return Ok(Some(new));
        }
        Err(PinError::Contended(name.to_owned()))
    }

    /// Starts pinning a server added at run time, its tools named after
    /// `prefix`.
    pub fn add_server(&self, name: &str, prefix: String) {
        self.prefixes
            .write()
            .expect("prefixes lock")
            .insert(name.to_owned(), prefix);
    }

    /// The tool-name prefixes of the servers pinned now.
    pub fn prefixes(&self) -> HashMap<String, String> {
        self.prefixes.read().expect("prefixes lock").clone()
    }

    /// Removes a server (`crate::servers`): no longer observed, its view
    /// gone, and — in one transaction with `leaf` — its row, probe state and
    /// envelopes deleted, so a server added again under the name starts
    /// pending. The row is read under the server's writer lock, so a first
    /// listing landing meanwhile is removed with it instead of refusing the
    /// removal; `fields` gain the row's `last_status`. Another process
    /// changing the row between the read and the commit still refuses it
    /// (`Contended`). Returns the leaf's index.
    pub async fn remove_server(
        &self,
        name: &str,
        kind: EventType,
        mut fields: Map,
    ) -> Result<u64, PinError> {
        let lock = self.writer(name).await;
        let _guard = lock.lock().await;
        let record = self.engine.store().server(name).await?;
        fields.insert(
            "last_status".into(),
            record
                .as_ref()
                .map_or(Value::Null, |r| r.status.as_str().into()),
        );
        let change = StateChange::RemoveServer {
            name: name.to_owned(),
            expected_version: record.as_ref().map(|r| r.version),
        };
        let index = match self
            .engine
            .record_with_change(kind.as_str(), fields, change)
            .await
        {
            Ok(a) => a.index,
            Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
                return Err(PinError::Contended(name.to_owned()));
            }
            Err(e) => return Err(e.into()),
        };
        self.prefixes.write().expect("prefixes lock").remove(name);
        self.views.0.write().expect("views lock").remove(name);
        Ok(index)
    }

    /// Re-reads one server's row (another process may have decided about it).
    pub async fn reload(&self, name: &str) -> Result<Option<Arc<ServerView>>, PinError> {
        let Some(record) = self.engine.store().server(name).await? else {
            return Ok(None);
        };
        let raw = self
            .view(name)
            .map(|v| Arc::clone(&v.raw))
            .unwrap_or_default();
        Ok(Some(self.install(record, raw)))
    }

    /// Re-reads every row whose version changed; returns the names reloaded.
    pub async fn reload_changed(&self) -> Result<Vec<String>, PinError> {
        let mut changed = Vec::new();
        for record in self.engine.store().servers().await? {
            let current = self.view(&record.name).map(|v| v.record.version);
            if current != Some(record.version) {
                changed.push(record.name.clone());
                self.install_keeping_listing(record);
            }
        }
        Ok(changed)
    }

    /// Applies a reviewer's signed decision about one tool (approve or block).
    pub async fn decide_tool(&self, envelope: &DsseEnvelope) -> Result<ServerRecord, PinError> {
        let record =
            crate::tool_decision::decide_tool(&self.engine, &self.policy, envelope, &self.events)
                .await?;
        Ok(self.install_decided(record))
    }

    /// Applies a reviewer's signed decision about a server's observed surface.
    pub async fn decide(&self, envelope: &DsseEnvelope) -> Result<ServerRecord, PinError> {
        let record = decide_server(&self.engine, envelope, &self.events).await?;
        Ok(self.install_decided(record))
    }

    /// Serves what a decision made of a row, from the listing already held.
    fn install_decided(&self, record: ServerRecord) -> ServerRecord {
        self.install_keeping_listing(record.clone());
        record
    }

    /// Installs `record` with the listing the server's view holds, read and
    /// replaced in one step under the views lock, and never over a newer
    /// row's view.
    ///
    /// Why one step: the reload loop read a server's listing, an upstream
    /// connecting installed its first listing meanwhile (0.6 ms apart), and
    /// the loop's install replaced it with the empty one it had read. The
    /// server was then approved and served without tools until its next
    /// re-listing (`key_limits::a_key_over_its_rate_is_refused_with_the_retry_time_and_a_leaf`
    /// waited 60 s for `time__get_current_time` on CI, 2026-12-08).
    fn install_keeping_listing(&self, record: ServerRecord) -> Arc<ServerView> {
        let prefix = self.prefix_of(&record.name);
        let mut views = self.views.0.write().expect("views lock");
        let current = views.get(&record.name);
        if let Some(current) = current
            && current.record.version > record.version
        {
            return Arc::clone(current);
        }
        let raw = current.map(|v| Arc::clone(&v.raw)).unwrap_or_default();
        let view = Arc::new(build_view(record, prefix, raw));
        views.insert(view.record.name.clone(), Arc::clone(&view));
        view
    }

    /// The prefix of `server`'s tools.
    fn prefix_of(&self, server: &str) -> String {
        self.prefixes
            .read()
            .expect("prefixes lock")
            .get(server)
            .cloned()
            .unwrap_or_else(|| format!("{server}{TOOL_SEPARATOR}"))
    }

    fn install(&self, record: ServerRecord, raw: Arc<Listing>) -> Arc<ServerView> {
        let prefix = self.prefix_of(&record.name);
        let view = Arc::new(build_view(record, prefix, raw));
        self.views
            .0
            .write()
            .expect("views lock")
            .insert(view.record.name.clone(), Arc::clone(&view));
        view
    }

    async fn log<const N: usize>(
        &self,
        kind: EventType,
        server: &str,
        fields: [(&str, Value); N],
    ) -> Result<u64, PinError> {
        let mut m = Map::new();
        m.insert("server".into(), server.into());
        for (k, v) in fields {
            m.insert(k.to_owned(), v);
        }
        Ok(self.engine.record(kind.as_str(), m).await?.index)
    }
}

/// Applies a reviewer's signed decision about a server: verifies it (trusted
/// key, policy, window) against the server's *current* observed surface hash,
/// then swaps the row; logs the decision with the statement embedded. Used by
/// the gateway's reviewer API and by `interlock servers approve|reject`.
pub async fn decide_server(
    engine: &Engine,
    envelope: &DsseEnvelope,
    events: &EventBus,
) -> Result<ServerRecord, PinError> {
    let claimed = interlock_core::decision::ApprovalStatement::claimed_by(envelope)
        .map_err(|e| PinError::Engine(EngineError::Decision(e)))?;
    let name = claimed
        .plan_id
        .strip_prefix(SERVER_SUBJECT_PREFIX)
        .ok_or_else(|| PinError::NotAServerStatement(claimed.plan_id.clone()))?
        .to_owned();
    let store = engine.store();
    let record = store
        .server(&name)
        .await?
        .ok_or_else(|| PinError::NoSuchServer(name.clone()))?;
    let (Some(observed_hash), Some(observed)) = (&record.observed_hash, &record.observed) else {
        return Err(PinError::NothingObserved { name });
    };
    let current: Digest = observed_hash
        .parse()
        .map_err(|_| StoreError::Malformed(format!("server {name} has a malformed hash")))?;
    if claimed.plan_hash != current {
        return Err(PinError::SurfaceChanged {
            name,
            signed: claimed.plan_hash.to_string(),
            current: observed_hash.clone(),
        });
    }
    let verified = engine
        .accept_subject_decision(envelope, &server_subject(&name), current)
        .await?;
    let update = match verified.statement.decision {
        Decision::Approve => ServerUpdate {
            status: ServerStatus::Trusted,
            baseline_hash: Some(observed_hash.clone()),
            baseline: Some(observed.clone()),
            observed_hash: Some(observed_hash.clone()),
            observed: Some(observed.clone()),
            drift: b"[]".to_vec(),
            // A tool a reviewer blocked stays blocked: approving the server
            // is not approving that tool.
            blocked_tools: serde_json::to_vec(&reviewer_blocks(&record)).expect("JSON serializes"),
        },
        Decision::Reject => ServerUpdate {
            status: ServerStatus::Rejected,
            baseline_hash: record.baseline_hash.clone(),
            baseline: record.baseline.clone(),
            observed_hash: Some(observed_hash.clone()),
            observed: Some(observed.clone()),
            drift: record.drift.clone(),
            blocked_tools: record.blocked_tools.clone(),
        },
    };
    let kind = match verified.statement.decision {
        Decision::Approve => EventType::ServerApproved,
        Decision::Reject => EventType::ServerRejected,
    };
    let mut m = Map::new();
    m.insert("server".into(), name.as_str().into());
    m.insert("surface_hash".into(), observed_hash.as_str().into());
    m.insert(
        "previous_baseline_hash".into(),
        record.baseline_hash.clone().unwrap_or_default().into(),
    );
    // Issue 16 item 1: the probe outcomes the reviewer was shown become the
    // probes' baseline, recorded in the approval's leaf.
    let probe_baseline = match verified.statement.decision {
        Decision::Approve => store.probe_state(&name).await?.map(|s| s.observed),
        Decision::Reject => None,
    };
    if let Some(runs) = &probe_baseline {
        m.insert(
            "probe_baseline".into(),
            canon::parse_json(runs).map_err(|e| {
                StoreError::Malformed(format!("server {name}: stored probe runs: {e}"))
            })?,
        );
    }
    let (new, index) = commit_decision(
        engine,
        kind,
        m,
        Signed {
            verified: &verified,
            envelope,
        },
        &record,
        (update, probe_baseline),
        (name.clone(), observed_hash.clone()),
    )
    .await?;
    events.send(GatewayEvent::server(
        kind,
        &name,
        format!(
            "{} `{name}` ({})",
            if kind == EventType::ServerApproved {
                "Approved"
            } else {
                "Rejected"
            },
            verified.identity
        ),
        "info",
        observed_hash,
        Some(index),
    ));
    Ok(new)
}

/// A reviewer's statement as the engine verified it, with the envelope it
/// came in (logged whole, so an auditor re-verifies it offline).
#[derive(Clone, Copy)]
pub struct Signed<'a> {
    pub verified: &'a interlock_engine::VerifiedDecision,
    pub envelope: &'a DsseEnvelope,
}

/// Writes a reviewer's decision about a server row: its leaf — `fields`, the
/// row's `blocked_tools` after it, who signed, why, and the envelope — and the
/// row's compare-and-swap to `update` (adopting a probe baseline with it, if
/// given), in one transaction (a server is never
/// trusted on a change whose evidence a crash could lose). `subject` is what
/// was signed, `(name, hash)`, for the error when the row moved meanwhile.
/// The new row and the leaf's index.
pub async fn commit_decision(
    engine: &Engine,
    kind: EventType,
    mut fields: Map,
    signed: Signed<'_>,
    record: &ServerRecord,
    (update, probe_baseline): (ServerUpdate, Option<Vec<u8>>),
    subject: (String, String),
) -> Result<(ServerRecord, u64), PinError> {
    let Signed { verified, envelope } = signed;
    fields.insert(
        "blocked_tools".into(),
        to_canon(&serde_json::from_slice(&update.blocked_tools).unwrap_or_default()),
    );
    fields.insert("approver".into(), verified.identity.as_str().into());
    fields.insert(
        "approver_key_id".into(),
        verified.statement.approver_key_id.to_string().into(),
    );
    fields.insert("reason".into(), verified.statement.reason.as_str().into());
    fields.insert("envelope".into(), to_canon(&envelope.to_json()));
    let change = match probe_baseline {
        // The probes' baseline is adopted in the same transaction.
        Some(probe_baseline) => StateChange::ServerWithProbeBaseline {
            name: record.name.clone(),
            expected_version: record.version,
            update: Box::new(update),
            probe_baseline,
        },
        None => StateChange::Server {
            name: record.name.clone(),
            expected_version: record.version,
            update,
        },
    };
    let index = match engine
        .record_with_change(kind.as_str(), fields, change)
        .await
    {
        Ok(appended) => appended.index,
        Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
            return Err(PinError::SurfaceChanged {
                name: subject.0,
                signed: subject.1,
                current: "(changed while deciding)".into(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let new = engine
        .store()
        .server(&record.name)
        .await?
        .ok_or_else(|| PinError::NoSuchServer(record.name.clone()))?;
    Ok((new, index))
}

/// The tools of `record` a reviewer blocked (kept across listings and server
/// decisions until that tool is approved).
pub fn reviewer_blocks(record: &ServerRecord) -> BTreeMap<String, String> {
    serde_json::from_slice::<BTreeMap<String, String>>(&record.blocked_tools)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, a)| Blocked::from_stored(a) == Blocked::ByReviewer)
        .collect()
}

/// Signed statements about a server's surface name `server:<name>` where a
/// plan statement names a plan id.
pub const SERVER_SUBJECT_PREFIX: &str = "server:";

pub fn server_subject(name: &str) -> String {
    format!("{SERVER_SUBJECT_PREFIX}{name}")
}

fn int(n: usize) -> Value {
    Value::Number(canon::Number::from_i64(n as i64).expect("small"))
}

/// A serde_json value as a canonical value (for log fields).
pub fn to_canon(v: &serde_json::Value) -> Value {
    canon::parse_json(&serde_json::to_vec(v).expect("JSON serializes"))
        .expect("serde_json output is valid JSON")
}

pub fn parse_surface(name: &str, listing: &Listing) -> Result<Surface, PinError> {
    let bad = |message: String| PinError::BadSurface {
        name: name.to_owned(),
        message,
    };
    let parse_all = |items: &[Box<RawValue>], what: &str| {
        items
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                canon::parse_json(raw.get().as_bytes()).map_err(|e| bad(format!("{what} {i}: {e}")))
            })
            .collect::<Result<Vec<Value>, PinError>>()
    };
    let tools = parse_all(&listing.tools, "tool")?;
    let mut surface =
        Surface::from_tools_list(&Value::Array(tools), listing.instructions.as_deref())
            .map_err(|e| bad(e.to_string()))?;
    for (kind, items) in &listing.content {
        let items = parse_all(items, kind.list_key())?;
        surface = surface
            .with_listing(*kind, &items)
            .map_err(|e| bad(e.to_string()))?;
    }
    Ok(surface.with_launch(listing.launch.as_ref().map(to_canon)))
}

/// The key (name, URI, URI template) of a raw listed entry.
fn key_of(item: &RawValue, kind: ContentKind) -> Option<String> {
    let members: IndexMap<String, Box<RawValue>> = serde_json::from_str(item.get()).ok()?;
    serde_json::from_str::<String>(members.get(kind.key_field())?.get()).ok()
}

/// A stored surface (a row's baseline or observed bytes, a kept approved
/// surface, a lockfile's surface) as a [`Surface`]; `None` for no bytes.
pub fn decode_surface(name: &str, bytes: Option<&[u8]>) -> Result<Option<Surface>, PinError> {
    let Some(bytes) = bytes else { return Ok(None) };
    let v = canon::parse_json(bytes)
        .map_err(|e| StoreError::Malformed(format!("server {name}: stored surface: {e}")))?;
    Surface::from_stored(&v)
        .map(Some)
        .map_err(|e| StoreError::Malformed(format!("server {name}: stored surface: {e}")).into())
}

fn build_view(record: ServerRecord, prefix: String, raw: Arc<Listing>) -> ServerView {
    let name = record.name.clone();
    let baseline = decode_surface(&name, record.baseline.as_deref())
        .ok()
        .flatten();
    let observed = decode_surface(&name, record.observed.as_deref())
        .ok()
        .flatten();
    let blocked_names: BTreeMap<String, String> =
        serde_json::from_slice(&record.blocked_tools).unwrap_or_default();
    let drift: Vec<serde_json::Value> = serde_json::from_slice(&record.drift).unwrap_or_default();
    let mut blocked = BTreeMap::new();
    for (tool, action) in blocked_names {
        let action = Blocked::from_stored(&action);
        let why = drift
            .iter()
            .filter(|d| d["tool"].as_str() == Some(tool.as_str()))
            .filter_map(|d| d["summary"].as_str())
            .collect::<Vec<_>>()
            .join("; ");
        blocked.insert(
            tool,
            (
                action,
                if action == Blocked::ByReviewer {
                    "blocked by a reviewer".into()
                } else if why.is_empty() {
                    "reverted; awaiting review".into()
                } else {
                    why
                },
            ),
        );
    }
    // Serve only what the observed surface (the one the row's state is about)
    // holds, from the raw listing with the same tools.
    let mut served = BTreeMap::new();
    if let Some(observed) = &observed {
        for raw in raw.tools.iter() {
            let Ok(mut members) =
                serde_json::from_str::<IndexMap<String, Box<RawValue>>>(raw.get())
            else {
                continue;
            };
            let Some(tool_name) = members
                .get("name")
                .and_then(|n| serde_json::from_str::<String>(n.get()).ok())
            else {
                continue;
            };
            if observed.tool(&tool_name).is_none() {
                continue;
            }
            let exposed_name = format!("{prefix}{tool_name}");
            members.insert(
                "name".into(),
                serde_json::value::to_raw_value(&exposed_name).expect("a string serializes"),
            );
            let definition =
                serde_json::value::to_raw_value(&members).expect("raw JSON serializes");
            served.insert(
                tool_name.clone(),
                Arc::new(ExposedTool {
                    server: name.clone(),
                    upstream_name: tool_name,
                    exposed_name,
                    definition,
                }),
            );
        }
    }
    let blocked_content = blocked_content(&drift);
    ServerView {
        record,
        prefix,
        baseline,
        observed,
        blocked,
        served,
        blocked_content,
        raw,
    }
}
