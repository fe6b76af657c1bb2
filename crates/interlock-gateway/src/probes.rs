//! Effective-permission probes, run (issue 16 item 1).
//!
//! Why: a tool whose definition is unchanged can still do more than what was
//! approved; only calling it shows that. After every re-list of a server
//! marked `probes = "non-production"`, the supervisor calls each declared
//! probe on the upstream connection, directly — never through the agent
//! surface, never shown to agents, never a `tool.call` — and
//! `interlock_surface::probes` judges each outcome against its expectation
//! and the outcome adopted when a reviewer last approved the server. More
//! power than approved quarantines the server, in the same transaction as a
//! `server.probe_drift` leaf naming the evidence (evidence before effect).
//!
//! A tool a reviewer blocked, or whose drift holds it, is never called, not
//! even by a probe: it is recorded as not reached. Every probe call is a
//! `server.probe_call` leaf written before the call (issue 39 item 17).

use std::time::{Duration, Instant};

use interlock_canon::{self as canon, Map, Value};
use interlock_store::{ServerStatus, Store, StoreError};
use interlock_surface::probes::{Observation, Probe, ProbeAction, ProbeFinding, ProbeRun, assess};

use crate::gateway::Gateway;
use crate::upstream::{Connection, UpstreamError};
use interlock_trust::events::EventType;
use interlock_trust::pins::PinError;

/// Each probe's call waits at most this long (or the upstream timeout, if shorter).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// A whole round waits at most this long: the supervisor runs it between
/// re-lists, so a server that stalls its probes must not stall its own
/// supervision. Probes left when it is spent are `unreachable`.
const ROUND_BUDGET: Duration = Duration::from_secs(60);

/// What one round of probes came to.
#[derive(Debug)]
pub struct ProbeRound {
    pub runs: Vec<ProbeRun>,
    pub findings: Vec<ProbeFinding>,
    /// Whether this round quarantined the server.
    pub quarantined: bool,
    pub elapsed: Duration,
}

/// Runs `server`'s probes on `conn` and acts on the findings. `None` when
/// the server has no probes or is not in a state worth probing (rejected,
/// or never listed).
pub(crate) async fn run(
    gw: &Gateway,
    server: &str,
    probes: &[Probe],
    conn: &Connection,
) -> Result<Option<ProbeRound>, PinError> {
    if probes.is_empty() {
        return Ok(None);
    }
    let Some(view) = gw.pins().view(server) else {
        return Ok(None);
    };
    if view.record.status == ServerStatus::Rejected {
        return Ok(None);
    }
    let started = Instant::now();
    let timeout = gw.config().limits.upstream_timeout().min(PROBE_TIMEOUT);
    let mut runs = Vec::with_capacity(probes.len());
    for probe in probes {
        let listed = view
            .observed
            .as_ref()
            .is_some_and(|s| s.tool(&probe.tool).is_some());
        let left = ROUND_BUDGET.saturating_sub(started.elapsed());
        let observed = if !listed {
            Observation::unknown_tool()
        } else if let Some((_, why)) = view.blocked.get(&probe.tool) {
            Observation::unreachable(format!(
                "not called: the tool is blocked ({why}); a blocked tool is never called, probes included"
            ))
        } else if left.is_zero() {
            Observation::unreachable("the round's time budget was spent")
        } else {
            log_call(gw, server, probe).await?;
            call(conn, probe, timeout.min(left)).await
        };
        runs.push(ProbeRun::new(probe, &observed));
    }
    let store = gw.engine().store();
    let state = store.probe_state(server).await?;
    let baseline = match state.as_ref().and_then(|s| s.baseline.as_deref()) {
        Some(bytes) => decode_runs(server, bytes)?,
        None => Vec::new(),
    };
    let findings: Vec<ProbeFinding> = probes
        .iter()
        .zip(&runs)
        .filter_map(|(p, run)| assess(p, baseline.iter().find(|b| b.is_of(p)), run))
        .collect();
    let records = Value::Array(findings.iter().map(ProbeFinding::to_value).collect());
    let findings_bytes = canon::canonical_bytes(&records);
    let runs_bytes =
        canon::canonical_bytes(&Value::Array(runs.iter().map(ProbeRun::to_value).collect()));
    let changed = state.as_ref().map(|s| s.findings.as_slice()) != Some(findings_bytes.as_slice());
    store
        .record_probe_run(server, &runs_bytes, &findings_bytes)
        .await?;
    let grew = findings.iter().any(|f| f.action == ProbeAction::Quarantine);
    let mut quarantined = false;
    if grew && view.record.status == ServerStatus::Trusted {
        let headline = findings
            .iter()
            .find(|f| f.action == ProbeAction::Quarantine)
            .map(ProbeFinding::summary)
            .unwrap_or_default();
        quarantined = gw
            .pins()
            .quarantine(
                server,
                view.record.version,
                EventType::ServerProbeDrift,
                leaf_fields(&records),
                headline,
            )
            .await?
            .is_some();
    } else if changed && !findings.is_empty() {
        // Reported only (less than expected, nothing known, or a server not
        // served yet): evidence once per change, not at every re-check.
        let mut m = leaf_fields(&records);
        m.insert("server".into(), server.into());
        m.insert("status".into(), view.record.status.as_str().into());
        m.insert(
            "surface_hash".into(),
            view.record.observed_hash.clone().unwrap_or_default().into(),
        );
        gw.engine()
            .record(EventType::ServerProbeDrift.as_str(), m)
            .await
            .map_err(PinError::from)?;
    }
    let elapsed = started.elapsed();
    tracing::debug!(
        %server,
        probes = probes.len(),
        findings = findings.len(),
        quarantined,
        elapsed_ms = elapsed.as_secs_f64() * 1000.0,
        "probes ran"
    );
    Ok(Some(ProbeRound {
        runs,
        findings,
        quarantined,
        elapsed,
    }))
}

/// The `server.probe_call` leaf of one probe call, committed before it is
/// sent: no call of the gateway's own is off the log.
async fn log_call(gw: &Gateway, server: &str, probe: &Probe) -> Result<(), PinError> {
    let mut m = Map::new();
    m.insert("server".into(), server.into());
    m.insert("tool".into(), probe.tool.as_str().into());
    m.insert(
        "arguments_hash".into(),
        canon::digest(&Value::Object(probe.arguments.clone()))
            .to_string()
            .into(),
    );
    gw.engine()
        .record(EventType::ServerProbeCall.as_str(), m)
        .await
        .map_err(PinError::from)?;
    Ok(())
}

fn leaf_fields(records: &Value) -> Map {
    let mut m = Map::new();
    m.insert("findings".into(), records.clone());
    m
}

/// One probe's call, as the upstream answered it.
async fn call(conn: &Connection, probe: &Probe, timeout: Duration) -> Observation {
    let params = serde_json::json!({
        "name": probe.tool,
        "arguments": canon::to_serde_json(&Value::Object(probe.arguments.clone())),
    });
    let params = serde_json::value::to_raw_value(&params).expect("JSON serializes");
    match conn.request("tools/call", Some(&params), timeout).await {
        Ok(raw) => match canon::parse_json(raw.get().as_bytes()) {
            Ok(v) => Observation::of_result(&v),
            Err(e) => Observation::unreachable(format!("an unreadable result: {e}")),
        },
        Err(UpstreamError::Rpc(raw)) => match canon::parse_json(raw.get().as_bytes()) {
            Ok(v) => Observation::of_error(&v),
            Err(e) => Observation::unreachable(format!("an unreadable error: {e}")),
        },
        Err(e) => Observation::unreachable(e.to_string()),
    }
}

fn decode_runs(server: &str, bytes: &[u8]) -> Result<Vec<ProbeRun>, PinError> {
    let malformed = |e: String| {
        PinError::Store(StoreError::Malformed(format!(
            "server {server}: stored probe runs: {e}"
        )))
    };
    let v = canon::parse_json(bytes).map_err(|e| malformed(e.to_string()))?;
    v.as_array()
        .ok_or_else(|| malformed("not an array".into()))?
        .iter()
        .map(|r| ProbeRun::from_value(r).map_err(|e| malformed(e.to_string())))
        .collect()
}

/// A server's probes as shown to reviewers (the API's server view,
/// `interlock servers show`): `{observed, observed_at, baseline,
/// baseline_at, findings}`, or `None` if its probes never ran. Outcomes and
/// result hashes only: a probe's result text is never kept.
pub async fn probes_view(
    store: &Store,
    server: &str,
) -> Result<Option<serde_json::Value>, StoreError> {
    let Some(s) = store.probe_state(server).await? else {
        return Ok(None);
    };
    let json = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap_or_default();
    Ok(Some(serde_json::json!({
        "observed": json(&s.observed),
        "observed_at": s.observed_at,
        "baseline": s.baseline.as_deref().map(json),
        "baseline_at": s.baseline_at,
        "findings": json(&s.findings),
    })))
}
