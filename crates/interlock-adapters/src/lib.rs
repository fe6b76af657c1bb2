//! Executors and probers: the only place where Interlock touches infrastructure.
//!
//! Everything upstream of this crate (plans, policy, approvals, the log) is pure data.
//! A stage only *does* something when the engine hands it to an [`Executor`], and a
//! precondition or verify check only *observes* something through a [`Prober`]. Keeping
//! both behind two small, dyn-compatible traits means a deployment can add its own
//! (Kubernetes, a ticketing system, …) without the engine knowing, and that the
//! built-ins here can be reviewed as the complete list of what Interlock can reach.
//!
//! Built in (names as in `docs/SCHEMA.md`):
//! - filesystem ([`Filesystem`]): executors `fs.write_file`, `fs.ensure_absent`,
//!   `fs.make_dir`, `fs.read_file`; probes `fs.path_exists`, `fs.path_absent`,
//!   `fs.is_dir`, `fs.file_sha256`, `fs.file_contains`. Every path is confined to the
//!   configured roots, lexically and after following symlinks.
//! - argv commands ([`Commands`]): executor `cmd.run`, probe `cmd.exit_code`. Only
//!   allow-listed programs, never through a shell, with a cleared environment, a
//!   timeout that kills the whole process group, and output capped.
//!
//! Fail-closed rule for probes: anything that prevents an observation (bad params,
//! a path outside the roots, permission denied, a program not allow-listed, a
//! timeout) is [`ProbeOutcome::Unprobeable`], never [`ProbeOutcome::Met`]; the engine
//! halts on it exactly as on `Unmet`.
#![forbid(unsafe_code)]

mod cmd;
mod config;
mod confine;
mod fs;
mod params;
mod permit;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use interlock_canon::Value;
use interlock_core::{Check, ProbeValue, Registry, Stage};

pub use cmd::Commands;
pub use config::{AdapterConfig, CommandRule, ConfigError};
pub use fs::Filesystem;

/// What a probe saw. `observed` is a short human-readable account of the live state
/// that goes into the execution log, so a reviewer can see *why* a check held.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeOutcome {
    /// The live state satisfies the check.
    Met { observed: String },
    /// The live state was observed and does not satisfy the check.
    Unmet { observed: String },
    /// The live state could not be observed (bad params, outside the roots,
    /// permission denied, program not allow-listed, timeout …). Halts like `Unmet`:
    /// what cannot be seen is never assumed to be fine.
    Unprobeable { reason: String },
    /// The probe observed a typed value (a probe whose registry entry declares
    /// `returns`); the engine compares it with the check's `expect`. A value that
    /// cannot be compared is unmet (fail closed).
    Value { value: ProbeValue, observed: String },
}

impl ProbeOutcome {
    /// Whether the check holds. Only `Met` does.
    pub fn is_met(&self) -> bool {
        matches!(self, ProbeOutcome::Met { .. })
    }

    /// `Met` or `Unmet` depending on `holds`, with the same observation.
    pub fn from_bool(holds: bool, observed: impl Into<String>) -> ProbeOutcome {
        let observed = observed.into();
        if holds {
            ProbeOutcome::Met { observed }
        } else {
            ProbeOutcome::Unmet { observed }
        }
    }

    /// Judges this outcome against a check's `expect` (issue 23 item 2): a typed
    /// value is compared; an unevaluable comparison, or a probe that returned no
    /// value where one is expected, is unmet. Without an `expect`, a typed value
    /// is unprobeable (nothing says what it must be). Fail closed either way.
    pub fn judged(self, check: &Check) -> ProbeOutcome {
        match (self, &check.expect) {
            (ProbeOutcome::Value { value, observed }, Some(expect)) => {
                match expect.evaluate(&value) {
                    Ok(holds) => ProbeOutcome::from_bool(
                        holds,
                        format!("observed {value}, expected {expect}: {observed}"),
                    ),
                    Err(e) => ProbeOutcome::Unmet {
                        observed: format!(
                            "observed {value}, expected {expect}: could not be evaluated ({e})"
                        ),
                    },
                }
            }
            (ProbeOutcome::Value { value, .. }, None) => ProbeOutcome::Unprobeable {
                reason: format!("the probe returned {value} but the check has no `expect`"),
            },
            (ProbeOutcome::Met { observed } | ProbeOutcome::Unmet { observed }, Some(expect)) => {
                ProbeOutcome::Unmet {
                    observed: format!(
                        "expected {expect}, but the probe returned no value to compare ({observed})"
                    ),
                }
            }
            (other, _) => other,
        }
    }

    pub(crate) fn unprobeable(reason: impl Into<String>) -> ProbeOutcome {
        ProbeOutcome::Unprobeable {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ProbeOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeOutcome::Met { observed } => write!(f, "met: {observed}"),
            ProbeOutcome::Unmet { observed } => write!(f, "unmet: {observed}"),
            ProbeOutcome::Unprobeable { reason } => write!(f, "unprobeable: {reason}"),
            ProbeOutcome::Value { value, observed } => write!(f, "observed {value}: {observed}"),
        }
    }
}

/// Observes live state for checks.
#[async_trait]
pub trait Prober: Send + Sync {
    /// Probe names this prober answers (each must be registered in
    /// [`interlock_core::Registry`], see [`Adapters::unregistered`]).
    fn probes(&self) -> Vec<&'static str>;

    /// Observes live state for one check. `target` is the check's target or its
    /// stage's target ([`Check::target_or`]); it is passed separately because a
    /// check does not know its stage.
    async fn probe(&self, check: &Check, target: &str) -> ProbeOutcome;
}

/// What an executor did, for the execution log.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecOutcome {
    /// One line for humans, e.g. `wrote 12 bytes to /srv/app/config.toml`.
    pub summary: String,
    /// A JSON object of facts (bytes written, `sha256:` of content, exit code,
    /// capped stdout …) that the log records, so a receipt says what actually ran.
    pub detail: Value,
    /// What the stage produced for whoever ran the plan, as raw JSON (an MCP
    /// tool's result, handed back to the agent whose held call it was). Not
    /// logged: the log records `detail`, which names its hash.
    pub output: Option<String>,
}

/// Why an executor did not (fully) perform a stage.
///
/// The variants are distinct because the engine and the reviewer care about the
/// difference: `Forbidden` and `InvalidParams` mean nothing was attempted; `Io`,
/// `Timeout` and `NonZeroExit` mean something may have been started.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// Outside the allowed roots, a symlink escaping them, or a program that is not
    /// allow-listed. Nothing was touched or spawned.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Parameters or target that this executor cannot use (missing, wrong type,
    /// out of range, relative path). Nothing was touched or spawned.
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    /// The operating system refused or failed the operation.
    #[error("I/O error: {0}")]
    Io(String),
    /// A command ran past its deadline and was killed (with its process group).
    #[error("timed out after {timeout_ms} ms; the process group was killed")]
    Timeout { timeout_ms: u64 },
    /// A command exited unsuccessfully. `code` is `None` when a signal ended it.
    #[error("exited with {}: {stderr_tail}", match code { Some(c) => format!("code {c}"), None => "a signal".to_owned() })]
    NonZeroExit {
        code: Option<i32>,
        /// The last bytes the command wrote to stderr (lossy UTF-8), to say why.
        stderr_tail: String,
    },
    /// This executor does not implement the stage's action.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Performs stages.
#[async_trait]
pub trait Executor: Send + Sync {
    /// Action names this executor performs (each must be registered in
    /// [`interlock_core::Registry`], see [`Adapters::unregistered`]).
    fn actions(&self) -> Vec<&'static str>;

    /// Performs one stage. Called only after its preconditions were met.
    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError>;
}

/// The executors and probers of a deployment, by action and probe name.
///
/// The engine looks a stage's action up here; a missing entry means the stage cannot
/// run (and a missing prober means the check is unprobeable), which it treats as a
/// halt rather than a skip.
#[derive(Clone, Default)]
pub struct Adapters {
    executors: BTreeMap<String, Arc<dyn Executor>>,
    probers: BTreeMap<String, Arc<dyn Prober>>,
}

impl fmt::Debug for Adapters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adapters")
            .field("actions", &self.executors.keys().collect::<Vec<_>>())
            .field("probes", &self.probers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Adapters {
    /// No adapters: every action is unsupported and every check unprobeable.
    pub fn new() -> Adapters {
        Adapters::default()
    }

    /// The built-in filesystem and argv-command adapters, configured by `config`.
    /// Fails if a root does not exist or is not a directory (confinement needs its
    /// real path).
    pub fn builtin(config: &AdapterConfig) -> Result<Adapters, ConfigError> {
        let fs = Arc::new(Filesystem::new(config)?);
        let cmd = Arc::new(Commands::new(config)?);
        Ok(Adapters::new()
            .with_executor(Arc::new(permit::HookPermit))
            .with_executor(Arc::new(permit::LlmPermit))
            .with_executor(fs.clone())
            .with_prober(fs)
            .with_executor(cmd.clone())
            .with_prober(cmd))
    }

    /// Registers `executor` for each of its actions, replacing earlier ones for the
    /// same names (so a deployment can override a built-in).
    pub fn with_executor(self, executor: Arc<dyn Executor>) -> Adapters {
        let names = executor.actions();
        self.with_executor_for(names, executor)
    }

    /// Registers `executor` for the actions `names` (known only at run time, such
    /// as the policy's MCP-bound actions), replacing earlier ones.
    pub fn with_executor_for<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
        executor: Arc<dyn Executor>,
    ) -> Adapters {
        for action in names {
            self.executors.insert(action.into(), executor.clone());
        }
        self
    }

    /// Registers `prober` for each of its probes, replacing earlier ones.
    pub fn with_prober(self, prober: Arc<dyn Prober>) -> Adapters {
        let names = prober.probes();
        self.with_prober_for(names, prober)
    }

    /// Registers `prober` for the probes `names`, replacing earlier ones.
    pub fn with_prober_for<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
        prober: Arc<dyn Prober>,
    ) -> Adapters {
        for probe in names {
            self.probers.insert(probe.into(), prober.clone());
        }
        self
    }

    /// The executor for an action.
    pub fn executor(&self, action: &str) -> Option<&Arc<dyn Executor>> {
        self.executors.get(action)
    }

    /// The prober for a probe.
    pub fn prober(&self, probe: &str) -> Option<&Arc<dyn Prober>> {
        self.probers.get(probe)
    }

    /// The action names with an executor.
    pub fn actions(&self) -> impl Iterator<Item = &str> + '_ {
        self.executors.keys().map(String::as_str)
    }

    /// The probe names with a prober.
    pub fn probes(&self) -> impl Iterator<Item = &str> + '_ {
        self.probers.keys().map(String::as_str)
    }

    /// Executes a stage with the executor registered for its action;
    /// [`ExecError::Unsupported`] when there is none.
    pub async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        match self.executor(&stage.action) {
            Some(e) => e.execute(stage).await,
            None => Err(ExecError::Unsupported(format!(
                "no executor for action `{}`",
                stage.action
            ))),
        }
    }

    /// Probes a check of `stage` with the prober registered for it;
    /// [`ProbeOutcome::Unprobeable`] when there is none.
    pub async fn probe(&self, check: &Check, stage: &Stage) -> ProbeOutcome {
        match self.prober(&check.probe) {
            Some(p) => {
                let check = check.for_stage(stage);
                p.probe(&check, check.target_or(stage)).await.judged(&check)
            }
            None => ProbeOutcome::unprobeable(format!("no prober for probe `{}`", check.probe)),
        }
    }

    /// Names of actions and probes served here but not registered in `registry`
    /// (as `action NAME` / `probe NAME`). A plan can only use registered names, so
    /// these adapters would be unreachable: usually a configuration mistake worth
    /// refusing at start-up.
    pub fn unregistered(&self, registry: &Registry) -> Vec<String> {
        let actions = self
            .actions()
            .filter(|a| registry.action(a).is_none())
            .map(|a| format!("action {a}"));
        let probes = self
            .probes()
            .filter(|p| registry.probe(p).is_none())
            .map(|p| format!("probe {p}"));
        actions.chain(probes).collect()
    }
}

/// Builds a JSON object for [`ExecOutcome::detail`].
pub(crate) fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// An integer as a [`Value`]; values beyond 2^53 (never reached for sizes and codes
/// we report) saturate rather than fail, since the detail is informational.
pub(crate) fn int(i: impl TryInto<i64>) -> Value {
    let i = i.try_into().unwrap_or(i64::MAX);
    let n = interlock_canon::Number::from_i64(i.clamp(
        -interlock_canon::MAX_SAFE_INTEGER,
        interlock_canon::MAX_SAFE_INTEGER,
    ))
    .expect("clamped into the safe range");
    Value::Number(n)
}

/// Milliseconds of a duration, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
