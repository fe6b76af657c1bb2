//! The engine handle: the store, the log, the policy, the adapters and the clock,
//! and the helpers every operation shares.

use std::path::PathBuf;
use std::sync::Arc;

use ed25519_dalek::VerifyingKey;
use interlock_adapters::Adapters;
use interlock_core::canon::{self, Map, Value};
use interlock_core::{KeyId, Policy, TrustedKeys};
use interlock_log::{Appended, Log, LogSigner};
use interlock_store::{ApproverKey, NewApproverKey, PlanRecord, PlanStatus, Store};
use tokio::sync::broadcast;

use crate::clock::{Clock, SystemClock};
use crate::error::EngineError;
use crate::events::{EngineEvent, EventKind};

/// How to open an engine.
pub struct EngineConfig {
    /// Where the SQLite file lives (`<data_dir>/interlock.sqlite`).
    pub data_dir: PathBuf,
    pub policy: Policy,
    pub adapters: Adapters,
    /// The log's origin line in its checkpoints (C2SP tlog-checkpoint).
    pub origin: String,
    pub clock: Arc<dyn Clock>,
}

impl EngineConfig {
    /// The default policy, no adapters, the system clock.
    pub fn new(data_dir: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            data_dir: data_dir.into(),
            policy: Policy::default(),
            adapters: Adapters::new(),
            origin: "interlock.local/log".to_owned(),
            clock: Arc::new(SystemClock),
        }
    }
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
    /// This engine's id as an executor: it names the leases it takes, so a
    /// lease renewed by nobody is known to be another, dead process's.
    pub(crate) executor_id: Arc<str>,
    events: broadcast::Sender<EngineEvent>,
}

impl Engine {
    /// Opens (creating if needed) the database in `config.data_dir`, and the log,
    /// whose checkpoints `log_signer` signs.
    pub async fn open(
        config: EngineConfig,
        log_signer: Arc<dyn LogSigner + Send + Sync>,
    ) -> Result<Engine, EngineError> {
        let store = Store::open(&config.data_dir.join(DATABASE_FILE)).await?;
        let log = Log::open(store.clone(), log_signer, &config.origin).await?;
        let (events, _) = broadcast::channel(1024);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let executor_id: Arc<str> = format!("pid-{}-{nanos:x}", std::process::id()).into();
        Ok(Engine {
            store,
            log,
            policy: Arc::new(config.policy),
            adapters: Arc::new(config.adapters),
            clock: config.clock,
            executor_id,
            events,
        })
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
            self.store
                .add_approver_key(&NewApproverKey {
                    key_id: key_id.to_string(),
                    public_key: key.to_bytes(),
                    identity: identity.to_owned(),
                    label: label.to_owned(),
                })
                .await?;
            self.append(
                "approver.registered",
                [
                    ("key_id", key_id.to_string().into()),
                    ("identity", identity.into()),
                    ("label", label.into()),
                ],
            )
            .await?;
        }
        Ok(key_id)
    }

    /// The approver keys currently trusted, with their identities.
    pub(crate) async fn trusted_approvers(
        &self,
    ) -> Result<(TrustedKeys, Vec<ApproverKey>), EngineError> {
        let records = self.store.approver_keys(false).await?;
        let mut trusted = TrustedKeys::new();
        for r in &records {
            // A stored key that is not a valid point is simply not trusted.
            if let Ok(key) = VerifyingKey::from_bytes(&r.public_key) {
                trusted.add(key);
            }
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
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert(
            "time".into(),
            Value::Number(canon::Number::from_i64(self.now()).expect("time fits in 2^53")),
        );
        m.extend(fields);
        Ok(self.log.append(Value::Object(m)).await?)
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
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert(
            "time".into(),
            Value::Number(canon::Number::from_i64(self.now()).expect("time fits in 2^53")),
        );
        m.extend(fields);
        Ok(self
            .log
            .append_with_change(Value::Object(m), change)
            .await?)
    }

    /// Appends one event to the log: `{"type": kind, "time": now, ...fields}`.
    pub(crate) async fn append<const N: usize>(
        &self,
        kind: &str,
        fields: [(&str, Value); N],
    ) -> Result<Appended, EngineError> {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert(
            "time".into(),
            Value::Number(canon::Number::from_i64(self.now()).expect("time fits in 2^53")),
        );
        for (k, v) in fields {
            m.insert(k.to_owned(), v);
        }
        Ok(self.log.append(Value::Object(m)).await?)
    }

    /// Moves a plan from one state to another (compare-and-swap), logs the
    /// transition and announces it. Returns false if another caller moved it first.
    pub(crate) async fn transition(
        &self,
        plan: &PlanRecord,
        from: PlanStatus,
        to: PlanStatus,
        reason: &str,
    ) -> Result<bool, EngineError> {
        if !self
            .store
            .transition(&plan.plan_id, plan.revision, from, to)
            .await?
        {
            return Ok(false);
        }
        let appended = self
            .append(
                "plan.transition",
                [
                    ("plan_id", plan.plan_id.as_str().into()),
                    ("revision", int(plan.revision)),
                    ("plan_hash", plan.plan_hash.as_str().into()),
                    ("from", from.as_str().into()),
                    ("to", to.as_str().into()),
                    ("reason", reason.into()),
                ],
            )
            .await?;
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
