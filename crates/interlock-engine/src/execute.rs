//! `execute`: run an approved plan exactly once, stage by stage, fail-closed.
//!
//! Before anything runs: the stored document is re-validated under the policy in
//! force and re-hashed, and the approvals are re-verified now. The approval is then
//! consumed by one compare-and-swap (APPROVED → EXECUTING), so of any number of
//! concurrent callers — in this process or another sharing the database — exactly
//! one runs the plan. Per stage: every precondition is probed against live state
//! (unmet or unprobeable halts with nothing dispatched), the action is dispatched,
//! and every `verify` check is probed. Any failure halts; what committed is
//! recorded. Nothing is rolled back automatically: remediation is a new plan.

use interlock_adapters::ProbeOutcome;
use interlock_core::canon::{self, Map, Value};
use interlock_core::{Check, Stage, validate};
use interlock_store::{PlanRecord, PlanStatus};

use crate::engine::{Engine, int};
use crate::error::EngineError;

/// How one stage ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageResult {
    /// Dispatched and verified.
    Committed,
    /// A precondition was unmet or could not be probed: nothing was dispatched.
    PreconditionFailed(String),
    /// The action failed (it may have partly happened; the reason says what is known).
    DispatchFailed(String),
    /// The action ran but a `verify` check did not hold.
    VerifyFailed(String),
    /// Not reached, because an earlier stage halted the plan.
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageReport {
    pub stage_id: String,
    pub result: StageResult,
    /// The executor's one-line summary, when it ran.
    pub summary: Option<String>,
    /// The executor's output for the caller ([`ExecOutcome::output`]), when
    /// the stage committed.
    ///
    /// [`ExecOutcome::output`]: interlock_adapters::ExecOutcome::output
    pub output: Option<String>,
}

/// The outcome of one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionReport {
    pub plan_id: String,
    pub revision: i64,
    pub status: PlanStatus,
    pub stages: Vec<StageReport>,
}

impl ExecutionReport {
    /// The stages that committed, in order.
    pub fn committed(&self) -> Vec<&str> {
        self.stages
            .iter()
            .filter(|s| s.result == StageResult::Committed)
            .map(|s| s.stage_id.as_str())
            .collect()
    }
}

impl Engine {
    /// Runs the current revision of an approved plan. See the module docs.
    pub async fn execute(&self, plan_id: &str) -> Result<ExecutionReport, EngineError> {
        self.execute_checked(plan_id, None).await
    }

    /// Runs an approved plan only if its current revision is `proposer`'s and
    /// hashes to exactly `plan_hash`: for a caller (a held tool call) that knows
    /// which bytes it proposed, so it never runs another revision.
    pub async fn execute_exactly(
        &self,
        plan_id: &str,
        proposer: &str,
        plan_hash: &str,
    ) -> Result<ExecutionReport, EngineError> {
        self.execute_checked(plan_id, Some((proposer, plan_hash)))
            .await
    }

    async fn execute_checked(
        &self,
        plan_id: &str,
        expected: Option<(&str, &str)>,
    ) -> Result<ExecutionReport, EngineError> {
        let plan = self.plan(plan_id).await?;
        if let Some((proposer, plan_hash)) = expected
            && (plan.proposer != proposer || plan.plan_hash != plan_hash)
        {
            return Err(EngineError::NotApproved(format!(
                "plan `{plan_id}` is now revision {} by {} at {}, not the {plan_hash} by {proposer} that was proposed; it was not run",
                plan.revision, plan.proposer, plan.plan_hash
            )));
        }
        match plan.status {
            // A veto recorded by a process that stopped before it moved the
            // plan is made now: the plan does not run.
            PlanStatus::Approved if self.finish_recorded_rejection(&plan).await? => {
                return Err(EngineError::NotApproved(format!(
                    "plan `{}` was rejected (its rejection is on record); it was not run",
                    plan.plan_id
                )));
            }
            PlanStatus::Approved => {}
            PlanStatus::Executing | PlanStatus::Succeeded | PlanStatus::Halted => {
                return Err(EngineError::AlreadyStarted(plan.plan_id));
            }
            other => {
                return Err(EngineError::NotApproved(format!(
                    "plan `{}` is {} (it needs a valid approval of its current body first)",
                    plan.plan_id,
                    other.as_str()
                )));
            }
        }
        let doc = canon::parse_json(&plan.document).map_err(|e| {
            interlock_store::StoreError::Malformed(format!("plan `{plan_id}` document: {e}"))
        })?;
        let valid = validate(&doc, &self.policy).map_err(EngineError::Invalid)?;
        if valid.hash.to_string() != plan.plan_hash {
            return Err(EngineError::NotApproved(format!(
                "the stored body hashes to {}, not the approved {}",
                valid.hash, plan.plan_hash
            )));
        }
        let risk = valid.risk.level;
        let (approvals, expired) = self.valid_approvals(&plan).await?;
        let required = self.policy.approvals_required(risk);
        if approvals < required {
            // A concurrent caller may have consumed the approvals since we read the
            // plan: then the answer is "already started", not "not approved".
            if matches!(
                self.plan(plan_id).await?.status,
                PlanStatus::Executing | PlanStatus::Succeeded | PlanStatus::Halted
            ) {
                return Err(EngineError::AlreadyStarted(plan.plan_id));
            }
            if expired {
                self.transition(
                    &plan,
                    PlanStatus::Approved,
                    PlanStatus::Expired,
                    "approval expired",
                )
                .await?;
                return Err(EngineError::NotApproved(format!(
                    "the approval of plan `{plan_id}` has expired; it must be approved again"
                )));
            }
            return Err(EngineError::NotApproved(format!(
                "plan `{plan_id}` has {approvals} valid approval(s) of its current body; {required} needed"
            )));
        }
        // The one-shot gate: exactly one caller wins this compare-and-swap,
        // which consumes the approvals and takes the execution's lease in the
        // same transaction as the leaf that records it.
        let mut m = Map::new();
        m.insert("plan_id".into(), plan.plan_id.as_str().into());
        m.insert("revision".into(), int(plan.revision));
        m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
        m.insert("from".into(), PlanStatus::Approved.as_str().into());
        m.insert("to".into(), PlanStatus::Executing.as_str().into());
        m.insert("reason".into(), "approval consumed".into());
        // Marked running before its lease exists, so no sweep of this
        // engine's ever sees the lease without the mark.
        let _running = RunningMark::new(&self.running, &plan);
        let change = interlock_store::StateChange::StartExecution {
            plan_id: plan.plan_id.clone(),
            revision: plan.revision,
            owner: self.executor_id.to_string(),
            now: self.now(),
        };
        let started = match self.record_with_change("plan.transition", m, change).await {
            Ok(a) => a,
            Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
                return Err(EngineError::AlreadyStarted(plan.plan_id));
            }
            Err(e) => return Err(e),
        };
        let _heartbeat = self.keep_lease(&plan);
        self.announce(crate::events::EventKind::Executing, &plan, started.index);
        let stages = &valid.plan.body.stages;
        let mut reports = Vec::with_capacity(stages.len());
        let mut halted = false;
        for stage in stages {
            if halted {
                reports.push(StageReport {
                    stage_id: stage.id.clone(),
                    result: StageResult::NotRun,
                    summary: None,
                    output: None,
                });
                continue;
            }
            let report = self.run_stage(&plan, stage).await?;
            halted = report.result != StageResult::Committed;
            if !halted {
                self.store
                    .lease_committed(
                        &plan.plan_id,
                        plan.revision,
                        &self.executor_id,
                        &stage.id,
                        self.now(),
                    )
                    .await?;
            }
            reports.push(report);
        }
        let (to, reason) = if halted {
            let failed = reports
                .iter()
                .find(|r| !matches!(r.result, StageResult::Committed | StageResult::NotRun))
                .map(|r| format!("stage `{}`: {:?}", r.stage_id, r.result))
                .unwrap_or_default();
            (PlanStatus::Halted, failed)
        } else {
            (
                PlanStatus::Succeeded,
                "every stage committed and verified".to_owned(),
            )
        };
        let committed: Vec<Value> = reports
            .iter()
            .filter(|r| r.result == StageResult::Committed)
            .map(|r| r.stage_id.as_str().into())
            .collect();
        let mut extra = Map::new();
        extra.insert("committed".into(), Value::Array(committed));
        let mut m = Map::new();
        m.insert("plan_id".into(), plan.plan_id.as_str().into());
        m.insert("revision".into(), int(plan.revision));
        m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
        m.insert("from".into(), PlanStatus::Executing.as_str().into());
        m.insert("to".into(), to.as_str().into());
        m.insert("reason".into(), reason.as_str().into());
        m.extend(extra);
        let change = interlock_store::StateChange::PlanStatus {
            plan_id: plan.plan_id.clone(),
            revision: plan.revision,
            from: PlanStatus::Executing,
            to,
        };
        let appended = match self.record_with_change("plan.transition", m, change).await {
            Ok(a) => a,
            Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
                // Only this execution may move its plan out of EXECUTING; if
                // something else did (it was found lost and halted), say so
                // rather than log an end state that is not stored.
                let now = self.plan(&plan.plan_id).await?.status;
                return Err(EngineError::WrongState {
                    plan_id: plan.plan_id,
                    status: now.as_str().to_owned(),
                    action: "finishing an execution",
                    needed: "EXECUTING",
                });
            }
            Err(e) => return Err(e),
        };
        let kind = if halted {
            crate::events::EventKind::Halted
        } else {
            crate::events::EventKind::Succeeded
        };
        self.announce(kind, &plan, appended.index);
        Ok(ExecutionReport {
            plan_id: plan.plan_id,
            revision: plan.revision,
            status: to,
            stages: reports,
        })
    }

    async fn run_stage(
        &self,
        plan: &PlanRecord,
        stage: &Stage,
    ) -> Result<StageReport, EngineError> {
        let report = |result, summary| StageReport {
            stage_id: stage.id.clone(),
            result,
            summary,
            output: None,
        };
        // Preconditions: all must be met before anything is dispatched.
        for (i, check) in stage.preconditions.iter().enumerate() {
            let outcome = self.probe(check, stage).await;
            self.log_probe(plan, stage, "precondition", i, check, &outcome)
                .await?;
            if let Some(why) = not_met(&outcome) {
                return Ok(report(
                    StageResult::PreconditionFailed(format!(
                        "precondition {i} ({}): {why}",
                        check.probe
                    )),
                    None,
                ));
            }
        }
        let Some(executor) = self.adapters.executor(&stage.action) else {
            let why = format!("no executor is configured for `{}`", stage.action);
            self.log_dispatch(plan, stage, Err(&why), None).await?;
            return Ok(report(StageResult::DispatchFailed(why), None));
        };
        // Evidence before effect: the dispatch is on the log before the adapter
        // acts, so a process that dies mid-stage leaves a `stage.started` with no
        // `stage.dispatch` after it — the stage an auditor must treat as in doubt.
        self.log_stage_started(plan, stage).await?;
        let outcome = match executor.execute(stage).await {
            Ok(outcome) => outcome,
            Err(e) => {
                let why = e.to_string();
                self.log_dispatch(plan, stage, Err(&why), None).await?;
                return Ok(report(StageResult::DispatchFailed(why), None));
            }
        };
        self.log_dispatch(
            plan,
            stage,
            Ok(&outcome.summary),
            Some(outcome.detail.clone()),
        )
        .await?;
        for (i, check) in stage.verify.iter().enumerate() {
            let probed = self.probe(check, stage).await;
            self.log_probe(plan, stage, "verify", i, check, &probed)
                .await?;
            if let Some(why) = not_met(&probed) {
                return Ok(report(
                    StageResult::VerifyFailed(format!("verify {i} ({}): {why}", check.probe)),
                    Some(outcome.summary),
                ));
            }
        }
        Ok(StageReport {
            output: outcome.output,
            ..report(StageResult::Committed, Some(outcome.summary))
        })
    }

    async fn probe(&self, check: &Check, stage: &Stage) -> ProbeOutcome {
        match self.adapters.prober(&check.probe) {
            // A typed value is compared with the check's `expect` here, so what is
            // logged is the judgement (met / unmet), never a bare value.
            Some(prober) => {
                let check = check.for_stage(stage);
                prober
                    .probe(&check, check.target_or(stage))
                    .await
                    .judged(&check)
            }
            None => ProbeOutcome::Unprobeable {
                reason: format!("no prober is configured for `{}`", check.probe),
            },
        }
    }

    async fn log_probe(
        &self,
        plan: &PlanRecord,
        stage: &Stage,
        kind: &str,
        index: usize,
        check: &Check,
        outcome: &ProbeOutcome,
    ) -> Result<(), EngineError> {
        let (result, observed) = match outcome {
            ProbeOutcome::Met { observed } => ("met", observed),
            ProbeOutcome::Unmet { observed } => ("unmet", observed),
            ProbeOutcome::Unprobeable { reason } => ("unprobeable", reason),
            // `judged` never leaves a bare value; if one arrives it is not met.
            ProbeOutcome::Value { observed, .. } => ("unprobeable", observed),
        };
        self.append(
            "stage.probe",
            [
                ("plan_id", plan.plan_id.as_str().into()),
                ("revision", int(plan.revision)),
                ("plan_hash", plan.plan_hash.as_str().into()),
                ("stage", stage.id.as_str().into()),
                ("check", kind.into()),
                ("index", int(index as i64)),
                ("probe", check.probe.as_str().into()),
                ("target", check.target_or(stage).into()),
                ("result", result.into()),
                ("observed", observed.as_str().into()),
            ],
        )
        .await?;
        Ok(())
    }

    async fn log_stage_started(&self, plan: &PlanRecord, stage: &Stage) -> Result<(), EngineError> {
        self.record("stage.started", stage_facts(plan, stage))
            .await?;
        Ok(())
    }

    async fn log_dispatch(
        &self,
        plan: &PlanRecord,
        stage: &Stage,
        result: Result<&str, &str>,
        detail: Option<Value>,
    ) -> Result<(), EngineError> {
        let (status, text) = match result {
            Ok(summary) => ("dispatched", summary),
            Err(why) => ("failed", why),
        };
        let mut m = stage_facts(plan, stage);
        m.insert("result".into(), status.into());
        m.insert("summary".into(), text.into());
        m.insert("detail".into(), detail.unwrap_or(Value::Object(Map::new())));
        self.record("stage.dispatch", m).await?;
        Ok(())
    }
}

/// What a stage's `stage.started` and `stage.dispatch` leaves both say: which
/// plan (id, revision, hash) and which stage (id, action, target).
fn stage_facts(plan: &PlanRecord, stage: &Stage) -> Map {
    let mut m = Map::new();
    m.insert("plan_id".into(), plan.plan_id.as_str().into());
    m.insert("revision".into(), int(plan.revision));
    m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
    m.insert("stage".into(), stage.id.as_str().into());
    m.insert("action".into(), stage.action.as_str().into());
    m.insert("target".into(), stage.target.as_str().into());
    m
}

/// `None` if the check holds; otherwise why not.
fn not_met(outcome: &ProbeOutcome) -> Option<String> {
    match outcome {
        ProbeOutcome::Met { .. } => None,
        ProbeOutcome::Unmet { observed } => Some(format!("unmet ({observed})")),
        ProbeOutcome::Unprobeable { reason } => Some(format!("could not be probed ({reason})")),
        ProbeOutcome::Value { observed, .. } => Some(format!("not judged ({observed})")),
    }
}

/// How often a running execution renews its lease.
pub const LEASE_HEARTBEAT_SECS: u64 = 5;
/// How long a lease may go unrenewed before its execution counts as lost
/// (its process died): several heartbeats, so a busy machine is not mistaken
/// for a dead one.
pub const LEASE_TIMEOUT_SECS: i64 = 30;

/// The executions an engine is running now, by plan id and revision.
pub(crate) type Running =
    std::sync::Arc<std::sync::Mutex<std::collections::HashSet<(String, i64)>>>;

/// Other processes' leases as an engine's sweeps have read them, by plan id
/// and revision.
pub(crate) type Watched =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<(String, i64), Watch>>>;

/// One lease as the sweeps have seen it: its heartbeat when last read, since
/// when (on the monotonic clock) it has read so, and whether it was seen to
/// change — to be renewed — while watched.
pub(crate) struct Watch {
    heartbeat_at: i64,
    since: std::time::Instant,
    renewed: bool,
}

/// Marks an execution running in its engine until dropped.
struct RunningMark {
    running: Running,
    key: (String, i64),
}

impl RunningMark {
    fn new(running: &Running, plan: &PlanRecord) -> RunningMark {
        let key = (plan.plan_id.clone(), plan.revision);
        running.lock().expect("lock").insert(key.clone());
        RunningMark {
            running: running.clone(),
            key,
        }
    }
}

impl Drop for RunningMark {
    fn drop(&mut self) {
        self.running.lock().expect("lock").remove(&self.key);
    }
}

/// Renews a lease until dropped (the execution ended, or its task was dropped).
pub(crate) struct Heartbeat(tokio::task::JoinHandle<()>);

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Engine {
    fn keep_lease(&self, plan: &PlanRecord) -> Heartbeat {
        let engine = self.clone();
        let (plan_id, revision) = (plan.plan_id.clone(), plan.revision);
        Heartbeat(tokio::spawn(async move {
            let mut tick =
                tokio::time::interval(std::time::Duration::from_secs(LEASE_HEARTBEAT_SECS));
            tick.tick().await;
            loop {
                tick.tick().await;
                match engine
                    .store
                    .renew_lease(&plan_id, revision, &engine.executor_id, engine.now())
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::error!(%plan_id, revision, "the execution's lease was taken over");
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(%plan_id, revision, error = %e, "renewing an execution lease failed")
                    }
                }
            }
        }))
    }

    /// Finds executions whose process died (a plan EXECUTING whose lease went
    /// unrenewed for [`LEASE_TIMEOUT_SECS`]) and halts each — never re-runs it —
    /// with an `executor.lost` leaf naming the stages that committed, the halt and
    /// its leaf in one transaction. Returns the plan ids halted.
    ///
    /// A heartbeat is wall-clock time, and the wall clock steps (issue 44: a
    /// step forward by hours made a gateway halt its own running execution
    /// as lost; a step back would keep a dead one EXECUTING for hours). So a
    /// lease counts as lost only if it is not one this engine is running, and
    /// either this engine has watched it go unrenewed for the timeout on the
    /// monotonic clock, or its heartbeat is older than the timeout by the
    /// wall clock and no renewal of it was seen (a lease a dead process left
    /// before this one started is halted at once, as before).
    pub async fn recover_lost_executions(&self) -> Result<Vec<String>, EngineError> {
        let mut halted = Vec::new();
        let executing = self.store.lost_executions(i64::MAX).await?;
        let lost: Vec<_> = {
            let stale_before = self.now() - LEASE_TIMEOUT_SECS;
            let timeout = std::time::Duration::from_secs(LEASE_TIMEOUT_SECS.unsigned_abs());
            let running = self.running.lock().expect("lock");
            let mut watched = self.watched.lock().expect("lock");
            watched.retain(|(id, revision), _| {
                executing
                    .iter()
                    .any(|l| &l.plan_id == id && l.revision == *revision)
            });
            executing
                .into_iter()
                .filter(|l| {
                    let key = (l.plan_id.clone(), l.revision);
                    if running.contains(&key) {
                        return false;
                    }
                    let now = std::time::Instant::now();
                    let watch = watched.entry(key).or_insert(Watch {
                        heartbeat_at: l.heartbeat_at,
                        since: now,
                        renewed: false,
                    });
                    if watch.heartbeat_at != l.heartbeat_at {
                        *watch = Watch {
                            heartbeat_at: l.heartbeat_at,
                            since: now,
                            renewed: true,
                        };
                    }
                    watch.since.elapsed() >= timeout
                        || (l.heartbeat_at < stale_before && !watch.renewed)
                })
                .collect()
        };
        for lost in lost {
            let Some(plan) = self
                .store
                .plan_revision(&lost.plan_id, lost.revision)
                .await?
            else {
                continue;
            };
            let mut m = Map::new();
            m.insert("plan_id".into(), plan.plan_id.as_str().into());
            m.insert("revision".into(), int(plan.revision));
            m.insert("plan_hash".into(), plan.plan_hash.as_str().into());
            m.insert("from".into(), PlanStatus::Executing.as_str().into());
            m.insert("to".into(), PlanStatus::Halted.as_str().into());
            m.insert("executor".into(), lost.owner.as_str().into());
            m.insert("last_heartbeat".into(), int(lost.heartbeat_at));
            m.insert(
                "committed".into(),
                Value::Array(lost.committed.iter().map(|s| s.as_str().into()).collect()),
            );
            m.insert(
                "reason".into(),
                "executor lost: its process stopped renewing the lease; not re-run".into(),
            );
            let change = interlock_store::StateChange::PlanStatus {
                plan_id: plan.plan_id.clone(),
                revision: plan.revision,
                from: PlanStatus::Executing,
                to: PlanStatus::Halted,
            };
            match self.record_with_change("executor.lost", m, change).await {
                Ok(appended) => {
                    self.announce(crate::events::EventKind::Halted, &plan, appended.index);
                    halted.push(plan.plan_id);
                }
                // Finished (or recovered by another process) meanwhile.
                Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(halted)
    }
}
