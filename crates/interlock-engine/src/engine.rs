//! The engine handle: the store, the log, the policy, the adapters and the clock,
//! and the helpers every operation shares.

use std::path::PathBuf;
use std::sync::Arc;

use ed25519_dalek::VerifyingKey;
use interlock_adapters::{Adapters, Executor, Prober};
use interlock_core::canon::{self, Map, Value};
use interlock_core::{ActionSpec, KeyId, Policy, ProbeSpec, TrustedKeys};
use interlock_log::{Appended, Durability, Log, LogOptions, LogSigner};
use interlock_store::{ApproverKey, NewApproverKey, PlanRecord, PlanStatus, Store, StoreLocation};
use tokio::sync::broadcast;

use crate::clock::{Clock, SystemClock};
use crate::error::EngineError;
use crate::events::{EngineEvent, EventKind};

/// How to open an engine.
pub struct EngineConfig {
    /// Where the SQLite file lives (`<data_dir>/interlock.sqlite`) unless
    /// `database` says otherwise.
    pub data_dir: PathBuf,
    /// The database, when not the SQLite file in `data_dir`: a Postgres
    /// database shared by a team's gateways (issue 20), or another file.
    pub database: Option<StoreLocation>,
    pub policy: Policy,
    pub adapters: Adapters,
    /// The log's origin line in its checkpoints (C2SP tlog-checkpoint), and
    /// so the audience every statement made for this gateway names. `None`
    /// (the default): the origin the log was created with, and for a new log
    /// a [`fresh_origin`] — distinct for every gateway (issue 39 item
    /// 7), so a statement made for one is refused by every other.
    pub origin: Option<String>,
    pub clock: Arc<dyn Clock>,
    /// How the log signs checkpoints and defers `fsync`s.
    pub log: LogOptions,
    /// How an outcome leaf written with [`Engine::record_outcome`] is
    /// acknowledged: [`Durability::Committed`] by default (its intent leaf was
    /// durable before the effect), [`Durability::Durable`] for `strict`.
    pub outcome_durability: Durability,
}

impl EngineConfig {
    /// Where the engine's database is: `database`, else the SQLite file in
    /// `data_dir`.
    pub fn store_location(&self) -> StoreLocation {
        self.database
            .clone()
            .unwrap_or_else(|| StoreLocation::File(self.data_dir.join(DATABASE_FILE)))
    }

    /// The default policy, no adapters, the system clock.
    pub fn new(data_dir: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            data_dir: data_dir.into(),
            database: None,
            policy: Policy::default(),
            adapters: Adapters::new(),
            origin: None,
            clock: Arc::new(SystemClock),
            log: LogOptions::default(),
            outcome_durability: Durability::Committed,
        }
    }
}

/// Bringing your own executor in process (issue 23 item 5, for Rust embedders):
/// each call registers an action (or probe) in the policy's registry *and* the
/// adapter that performs it, so a plan can name it and the engine can run it —
/// the two never drift apart. Over a MCP server instead, no Rust is needed: see
/// `mcp` in docs/SCHEMA.md. Runnable: `cargo run -p interlock-engine --example
/// embedded_executor`.
impl EngineConfig {
    /// Registers `spec` and the executor that performs it (replacing a built-in
    /// of the same name).
    pub fn with_action(mut self, spec: ActionSpec, executor: Arc<dyn Executor>) -> EngineConfig {
        let name = spec.name.clone();
        self.policy.registry.add_action(spec);
        self.adapters = std::mem::take(&mut self.adapters).with_executor_for([name], executor);
        self
    }

    /// Registers `spec` and the prober that observes it. A probe whose spec
    /// declares `returns` answers [`interlock_adapters::ProbeOutcome::Value`].
    pub fn with_probe(mut self, spec: ProbeSpec, prober: Arc<dyn Prober>) -> EngineConfig {
        let name = spec.name.clone();
        self.policy.registry.add_probe(spec);
        self.adapters = std::mem::take(&mut self.adapters).with_prober_for([name], prober);
        self
    }
}

/// The origin a new log takes when none is given: `interlock.local/log/`
/// and 16 random hex digits, fixed in the database when the log is created
/// and adopted by every later writer (a team's gateways share it). Not the
/// log key's hash: one machine's keychain signs the logs of all its data
/// directories. A log created before this (issue 39 item 7) keeps the shared
/// `interlock.local/log` it was created with: its checkpoints are signed
/// under that name.
pub fn fresh_origin() -> String {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).expect("the OS random source works");
    format!("interlock.local/log/{}", hex::encode(random))
}

/// The name of the database file inside a data directory.
pub const DATABASE_FILE: &str = "interlock.sqlite";

/// A cheap-to-clone handle on one engine.
#[derive(Clone)]
pub struct Engine {
    pub(crate) store: Store,
    pub(crate) log: Log,
    pub(crate) policy: Arc<Policy>,
    pub(crate) adapters: Arc<Adapters>,
    pub(crate) clock: Arc<dyn Clock>,
    outcome_durability: Durability,
    /// This engine's id as an executor: it names the leases it takes, so a
    /// lease renewed by nobody is known to be another, dead process's.
    pub(crate) executor_id: Arc<str>,
    /// Executions this engine is running now: never counted lost, whatever
    /// the wall clock says of their leases.
    pub(crate) running: crate::execute::Running,
    /// Other processes' leases as this engine has watched them.
    pub(crate) watched: crate::execute::Watched,
    /// Approver registrations already checked against the log.
    verified_keys: Arc<std::sync::Mutex<std::collections::HashSet<(String, String, u64)>>>,
    events: broadcast::Sender<EngineEvent>,
}

impl Engine {
    /// Opens (creating if needed) the database in `config.data_dir`, and the log,
    /// whose checkpoints `log_signer` signs.
    pub async fn open(
        config: EngineConfig,
        log_signer: Arc<dyn LogSigner + Send + Sync>,
    ) -> Result<Engine, EngineError> {
        let store = Store::connect(&config.store_location()).await?;
        let log = match config.origin {
            Some(fixed) => Log::open_with(store.clone(), log_signer, &fixed, config.log).await?,
            None => {
                let origin = match store.get_meta(interlock_log::META_ORIGIN).await? {
                    Some(created_with) => created_with,
                    None => fresh_origin(),
                };
                match Log::open_with(store.clone(), log_signer.clone(), &origin, config.log).await {
                    // Another writer created the log meanwhile (a team's
                    // gateways starting together on a new database): its
                    // origin is the log's.
                    Err(interlock_log::LogError::OriginMismatch { stored, .. }) => {
                        Log::open_with(store.clone(), log_signer, &stored, config.log).await?
                    }
                    other => other?,
                }
            }
        };
        let (events, _) = broadcast::channel(1024);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let executor_id: Arc<str> = format!("pid-{}-{nanos:x}", std::process::id()).into();
        let engine = Engine {
            store,
            log,
            policy: Arc::new(config.policy),
            adapters: Arc::new(config.adapters),
            clock: config.clock,
            outcome_durability: config.outcome_durability,
            executor_id,
            running: Arc::default(),
            watched: Arc::default(),
            verified_keys: Arc::default(),
            events,
        };
        engine.linked().await
    }

    /// Links old approver rows to their registration leaves (see
    /// [`link_registrations`](Self::link_registrations)).
    async fn linked(self) -> Result<Engine, EngineError> {
        self.link_registrations().await?;
        Ok(self)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn log(&self) -> &Log {
        &self.log
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// Every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// Trusts `key` as an approver for `identity` (e.g. `human:alice`). Recorded in
    /// the log, because who may approve is itself a decision.
    pub async fn register_approver(
        &self,
        key: &VerifyingKey,
        identity: &str,
        label: &str,
    ) -> Result<KeyId, EngineError> {
        let key_id = KeyId::of(key);
        let existing = self.store.approver_key(&key_id.to_string()).await?;
        if existing.is_none() {
            // The row and its `approver.registered` leaf commit together; the
            // row names the leaf, which is what makes the key trusted.
            let mut m = Map::new();
            m.insert("key_id".into(), key_id.to_string().into());
            m.insert("identity".into(), identity.into());
            m.insert("label".into(), label.into());
            let change = interlock_store::StateChange::AddApproverKey(NewApproverKey {
                key_id: key_id.to_string(),
                public_key: key.to_bytes(),
                identity: identity.to_owned(),
                label: label.to_owned(),
            });
            self.record_with_change("approver.registered", m, change)
                .await?;
        }
        Ok(key_id)
    }

    /// Whether the log backs `record`: its `registered_leaf` is an
    /// `approver.registered` leaf of the verified log for this key id and
    /// identity. A row added or edited in the database outside the log is not.
    /// Verified once per key and identity, then remembered.
    async fn registration_holds(&self, record: &ApproverKey) -> Result<bool, EngineError> {
        let Some(index) = record.registered_leaf else {
            return Ok(false);
        };
        let cache_key = (record.key_id.clone(), record.identity.clone(), index);
        if self
            .verified_keys
            .lock()
            .expect("lock")
            .contains(&cache_key)
        {
            return Ok(true);
        }
        let entry = match self.log.verified_entry(index).await {
            Ok(e) => e,
            Err(
                interlock_log::LogError::MalformedEntry { .. }
                | interlock_log::LogError::OutOfRange { .. },
            ) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let field = |k: &str| entry.get(k).and_then(Value::as_str);
        let holds = field("type") == Some("approver.registered")
            && field("key_id") == Some(record.key_id.as_str())
            && field("identity") == Some(record.identity.as_str());
        if holds {
            self.verified_keys.lock().expect("lock").insert(cache_key);
        }
        Ok(holds)
    }

    /// Matches key rows from before registrations were linked to their leaves
    /// (`registered_leaf` empty) with their `approver.registered` leaves, once
    /// per database (a row added outside the log later stays unlinked and
    /// untrusted; it does not make every open scan the log again).
    async fn link_registrations(&self) -> Result<(), EngineError> {
        const LINKED: &str = "approver_keys.linked_to_log";
        if self.store.get_meta(LINKED).await?.is_some() {
            return Ok(());
        }
        let unlinked: Vec<ApproverKey> = self
            .store
            .approver_keys(true)
            .await?
            .into_iter()
            .filter(|k| k.registered_leaf.is_none())
            .collect();
        if unlinked.is_empty() {
            self.store.set_meta(LINKED, "1").await?;
            return Ok(());
        }
        for index in 0..self.log.size() {
            let entry = self.log.verified_entry(index).await?;
            if entry.get("type").and_then(Value::as_str) != Some("approver.registered") {
                continue;
            }
            let field = |k: &str| entry.get(k).and_then(Value::as_str);
            if let Some(k) = unlinked.iter().find(|k| {
                field("key_id") == Some(k.key_id.as_str())
                    && field("identity") == Some(k.identity.as_str())
            }) {
                self.store.set_registered_leaf(&k.key_id, index).await?;
            }
        }
        self.store.set_meta(LINKED, "1").await?;
        Ok(())
    }

    /// The approver keys currently trusted, with their identities (also what
    /// `interlock servers approve --from-lock` checks a lockfile's
    /// statements against, issue 22).
    pub async fn trusted_approvers(&self) -> Result<(TrustedKeys, Vec<ApproverKey>), EngineError> {
        let mut records = Vec::new();
        let mut trusted = TrustedKeys::new();
        for r in self.store.approver_keys(false).await? {
            // A row the log does not back is not trusted (docs/THREAT-MODEL.md).
            if !self.registration_holds(&r).await? {
                tracing::warn!(key_id = %r.key_id, identity = %r.identity, "approver key without its approver.registered leaf: not trusted");
                continue;
            }
            // A stored key that is not a valid point is simply not trusted.
            let Ok(key) = VerifyingKey::from_bytes(&r.public_key) else {
                continue;
            };
            // The leaf vouches for the key id, the SHA-256 of the whole public
            // key: a row whose key was swapped for another (whoever can write
            // the database) no longer hashes to it (issue 39 item 9).
            if KeyId::of(&key).to_string() != r.key_id {
                tracing::warn!(key_id = %r.key_id, identity = %r.identity, "approver row whose public key is not the registered one: not trusted");
                continue;
            }
            trusted.add(key);
            records.push(r);
        }
        Ok((trusted, records))
    }

    /// The current revision of a plan.
    pub async fn plan(&self, plan_id: &str) -> Result<PlanRecord, EngineError> {
        self.store
            .current_plan(plan_id)
            .await?
            .ok_or_else(|| EngineError::NoSuchPlan(plan_id.to_owned()))
    }

    /// Current revisions, newest first, optionally of one status.
    pub async fn plans(&self, status: Option<PlanStatus>) -> Result<Vec<PlanRecord>, EngineError> {
        Ok(self.store.list_plans(status).await?)
    }

    /// Every revision of a plan, oldest first.
    pub async fn revisions(&self, plan_id: &str) -> Result<Vec<PlanRecord>, EngineError> {
        Ok(self.store.plan_revisions(plan_id).await?)
    }

    /// Appends one event from a layer above (the gateway's drift, quarantine and
    /// tool-call records) to the log: `{"type": kind, "time": now, ...fields}`.
    pub async fn record(&self, kind: &str, fields: Map) -> Result<Appended, EngineError> {
        Ok(self.log.append(self.event(kind, fields)).await?)
    }

    /// Records the outcome of an effect whose intent is already durable on the
    /// log (a forwarded tool call): committed before this returns, so a killed
    /// process loses nothing acknowledged, and `fsync`ed within the log's flush
    /// window — or before this returns, with `strict` durability
    /// (`EngineConfig::outcome_durability`). docs/ARCHITECTURE.md states the
    /// contract.
    pub async fn record_outcome(&self, kind: &str, fields: Map) -> Result<Appended, EngineError> {
        let entry = self.event(kind, fields);
        Ok(match self.outcome_durability {
            Durability::Committed => self.log.append_committed(entry).await?,
            Durability::Durable => self.log.append(entry).await?,
        })
    }

    /// `{"type": kind, "time": now, ...fields}`: what every leaf of the engine says.
    fn event(&self, kind: &str, fields: Map) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert(
            "time".into(),
            Value::Number(canon::Number::from_i64(self.now()).expect("time fits in 2^53")),
        );
        m.extend(fields);
        Value::Object(m)
    }

    /// [`record`](Self::record), with the state change the event records applied in
    /// the same transaction as its leaf: both durable, or neither
    /// (`LogError::ChangeRefused` if the change's compare-and-swap lost).
    pub async fn record_with_change(
        &self,
        kind: &str,
        fields: Map,
        change: interlock_store::StateChange,
    ) -> Result<Appended, EngineError> {
        Ok(self
            .log
            .append_with_change(self.event(kind, fields), change)
            .await?)
    }

    /// Appends one event to the log: `{"type": kind, "time": now, ...fields}`.
    pub(crate) async fn append<const N: usize>(
        &self,
        kind: &str,
        fields: [(&str, Value); N],
    ) -> Result<Appended, EngineError> {
        let fields = fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        Ok(self.log.append(self.event(kind, fields)).await?)
    }

    /// Moves a plan from one state to another (compare-and-swap) in the same
    /// transaction as the `plan.transition` leaf that records it, and announces
    /// it. Returns false if another caller moved it first (nothing is logged).
    pub(crate) async fn transition(
        &self,
        plan: &PlanRecord,
        from: PlanStatus,
        to: PlanStatus,
        reason: &str,
    ) -> Result<bool, EngineError> {
        if !from.can_transition_to(to) {
            return Err(interlock_store::StoreError::InvalidTransition { from, to }.into());
        }
        let mut m = Map::new();
        m.insert("plan_id".into(), plan.plan_id.as_str().into());
        m.insert("revision".into(), int(plan.revision));
        m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
        m.insert("from".into(), from.as_str().into());
        m.insert("to".into(), to.as_str().into());
        m.insert("reason".into(), reason.into());
        let change = interlock_store::StateChange::PlanStatus {
            plan_id: plan.plan_id.clone(),
            revision: plan.revision,
            from,
            to,
        };
        let appended = match self.record_with_change("plan.transition", m, change).await {
            Ok(a) => a,
            Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Some(kind) = event_kind(to) {
            self.announce(kind, plan, appended.index);
        }
        Ok(true)
    }

    pub(crate) fn announce(&self, kind: EventKind, plan: &PlanRecord, log_index: u64) {
        let Ok(plan_hash) = plan.plan_hash.parse() else {
            return;
        };
        // No receivers is fine: nobody is listening yet.
        let _ = self.events.send(EngineEvent {
            kind,
            plan_id: plan.plan_id.clone(),
            revision: plan.revision,
            plan_hash,
            title: plan.title.clone(),
            risk: interlock_core::RiskLevel::from_name(&plan.risk)
                .unwrap_or(interlock_core::RiskLevel::High),
            log_index,
        });
    }
}

impl Engine {
    /// Announces a plan event another process recorded (a plan proposed,
    /// decided or run through another gateway on the same database), as
    /// [`Engine::announce`] does for this one's: `entry` is the leaf at
    /// `index`, adopted from the shared log. Leaves that are not plan events
    /// are ignored; a plan row not found is an error.
    pub async fn announce_recorded(&self, index: u64, entry: &Value) -> Result<(), EngineError> {
        let field = |k: &str| entry.get(k);
        let kind = match field("type").and_then(Value::as_str) {
            Some("plan.proposed") => EventKind::Proposed,
            Some("plan.transition") => {
                let to = field("to").and_then(Value::as_str).unwrap_or_default();
                match to.parse::<PlanStatus>().ok().and_then(event_kind) {
                    Some(kind) => kind,
                    None => return Ok(()),
                }
            }
            Some("executor.lost") => EventKind::Halted,
            _ => return Ok(()),
        };
        let (Some(plan_id), Some(revision)) = (
            field("plan_id").and_then(Value::as_str),
            field("revision").and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                _ => None,
            }),
        ) else {
            return Ok(());
        };
        let plan = self
            .store
            .plan_revision(plan_id, revision)
            .await?
            .ok_or_else(|| interlock_store::StoreError::NotFound {
                what: format!("plan {plan_id} revision {revision}"),
            })?;
        self.announce(kind, &plan, index);
        Ok(())
    }
}

fn event_kind(status: PlanStatus) -> Option<EventKind> {
    Some(match status {
        PlanStatus::Proposed => EventKind::Proposed,
        PlanStatus::Approved => EventKind::Approved,
        PlanStatus::Rejected => EventKind::Rejected,
        PlanStatus::Expired => EventKind::Expired,
        PlanStatus::Executing => EventKind::Executing,
        PlanStatus::Succeeded => EventKind::Succeeded,
        PlanStatus::Halted => EventKind::Halted,
        PlanStatus::Superseded => return None,
    })
}

/// An integer log field.
pub(crate) fn int(i: i64) -> Value {
    Value::Number(canon::Number::from_i64(i).expect("log integers fit in 2^53"))
}
