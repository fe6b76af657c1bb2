//! Effective-permission probes (issue 16 item 1): what a probe expects, what
//! it observed, and whether the difference is behavioural drift.
//!
//! Why: a tool whose definition is byte-for-byte unchanged can still reach
//! further than what a reviewer approved (a `read_secret` that used to refuse
//! and now answers). Surface drift cannot see that; only calling the tool can.
//! The gateway calls declared probes on servers marked safe to probe and hands
//! the outcomes here; this module decides, without I/O, whether the server's
//! effective permission grew. Probe *results* never leave this module as text:
//! what is kept, logged and shown is their kind and SHA-256, because a probe
//! that now succeeds may well have returned the very secret it should not
//! reach.

use interlock_canon::{Digest, Map, Number, Value};

/// A test on a successful result's text: every string in the result (text
/// blocks, resource texts, `structuredContent` strings), joined by newlines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// The result holds this substring.
    ResultContains(String),
    /// The result does not hold this substring.
    ResultLacks(String),
}

impl Predicate {
    pub fn holds(&self, text: &str) -> bool {
        match self {
            Predicate::ResultContains(s) => text.contains(s.as_str()),
            Predicate::ResultLacks(s) => !text.contains(s.as_str()),
        }
    }

    /// The key it is written with in `gateway.toml` and records.
    pub fn name(&self) -> &'static str {
        match self {
            Predicate::ResultContains(_) => "result_contains",
            Predicate::ResultLacks(_) => "result_lacks",
        }
    }

    fn operand(&self) -> &str {
        match self {
            Predicate::ResultContains(s) | Predicate::ResultLacks(s) => s,
        }
    }
}

/// What a probe's call should come to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// The call is refused: a JSON-RPC error or an `isError` result.
    Denied,
    /// The call fails with a JSON-RPC error (not merely an `isError` result).
    Error,
    /// The call succeeds and every predicate holds on its result.
    Result(Vec<Predicate>),
}

impl Expectation {
    pub fn name(&self) -> &'static str {
        match self {
            Expectation::Denied => "denied",
            Expectation::Error => "error",
            Expectation::Result(_) => "result",
        }
    }

    /// As recorded: `{"kind": "denied"}` or `{"kind": "result",
    /// "predicates": [{"result_lacks": "…"}]}`.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), self.name().into());
        if let Expectation::Result(preds) = self {
            m.insert(
                "predicates".into(),
                Value::Array(
                    preds
                        .iter()
                        .map(|p| {
                            let mut one = Map::new();
                            one.insert(p.name().into(), p.operand().into());
                            Value::Object(one)
                        })
                        .collect(),
                ),
            );
        }
        Value::Object(m)
    }
}

/// One declared probe: a tool call and what it should come to.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The upstream tool's own name (not the agent-facing `server__tool`).
    pub tool: String,
    /// The call's arguments (an object).
    pub arguments: Map,
    pub expect: Expectation,
}

impl Probe {
    /// The SHA-256 of the arguments' canonical bytes: how the probe is named
    /// in evidence without repeating its arguments (which may name a secret's
    /// path) and how an outcome is matched to its baseline.
    pub fn arguments_hash(&self) -> Digest {
        interlock_canon::digest(&Value::Object(self.arguments.clone()))
    }
}

/// What a probe's call came to, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OutcomeKind {
    /// A result without `isError`: the tool did what was asked.
    Succeeded,
    /// A result with `isError: true`: the tool refused or failed.
    Refused,
    /// A JSON-RPC error.
    Errored,
    /// No answer (the connection failed, a timeout): nothing is known.
    Unreachable,
    /// The server lists no tool of that name.
    UnknownTool,
}

impl OutcomeKind {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeKind::Succeeded => "succeeded",
            OutcomeKind::Refused => "refused",
            OutcomeKind::Errored => "errored",
            OutcomeKind::Unreachable => "unreachable",
            OutcomeKind::UnknownTool => "unknown_tool",
        }
    }

    pub fn from_name(s: &str) -> Option<OutcomeKind> {
        Some(match s {
            "succeeded" => OutcomeKind::Succeeded,
            "refused" => OutcomeKind::Refused,
            "errored" => OutcomeKind::Errored,
            "unreachable" => OutcomeKind::Unreachable,
            "unknown_tool" => OutcomeKind::UnknownTool,
            _ => return None,
        })
    }

    /// How much the call was allowed to do: a success is more than a refusal
    /// or an error; an unanswered call tells nothing.
    fn power(self) -> Option<u8> {
        match self {
            OutcomeKind::Succeeded => Some(2),
            OutcomeKind::Refused | OutcomeKind::Errored => Some(1),
            OutcomeKind::Unreachable | OutcomeKind::UnknownTool => None,
        }
    }
}

/// One probe's observed outcome, with the result's text (for predicates
/// only; never kept) and its hash (kept).
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub kind: OutcomeKind,
    /// SHA-256 of the result's (or the JSON-RPC error's) canonical bytes.
    pub result_hash: Option<Digest>,
    /// The JSON-RPC error code, for [`OutcomeKind::Errored`].
    pub error_code: Option<i64>,
    /// Every string in the result, for predicates. Not recorded.
    pub text: String,
    /// Why nothing is known, for [`OutcomeKind::Unreachable`].
    pub detail: Option<String>,
}

impl Observation {
    /// A `tools/call` result: succeeded, or refused when `isError` is true.
    pub fn of_result(result: &Value) -> Observation {
        let refused = result.get("isError").and_then(Value::as_bool) == Some(true);
        let mut text = String::new();
        collect_strings(result, &mut text);
        Observation {
            kind: if refused {
                OutcomeKind::Refused
            } else {
                OutcomeKind::Succeeded
            },
            result_hash: Some(interlock_canon::digest(result)),
            error_code: None,
            text,
            detail: None,
        }
    }

    /// A JSON-RPC error object.
    pub fn of_error(error: &Value) -> Observation {
        let mut text = String::new();
        collect_strings(error, &mut text);
        Observation {
            kind: OutcomeKind::Errored,
            result_hash: Some(interlock_canon::digest(error)),
            error_code: error
                .get("code")
                .and_then(Value::as_number)
                .and_then(Number::as_i64),
            text,
            detail: None,
        }
    }

    pub fn unreachable(detail: impl Into<String>) -> Observation {
        Observation {
            kind: OutcomeKind::Unreachable,
            result_hash: None,
            error_code: None,
            text: String::new(),
            detail: Some(detail.into()),
        }
    }

    pub fn unknown_tool() -> Observation {
        Observation {
            kind: OutcomeKind::UnknownTool,
            result_hash: None,
            error_code: None,
            text: String::new(),
            detail: None,
        }
    }
}

fn collect_strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(m) => m.values().for_each(|i| collect_strings(i, out)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// An outcome against its expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// As expected.
    Met,
    /// Not as expected. `grew`: the call was allowed more than expected (a
    /// denial that succeeded, a success whose result is not what was
    /// approved); otherwise it was allowed less (a refusal where a result was
    /// expected). `failed`: the predicates that did not hold.
    Violated { grew: bool, failed: Vec<Predicate> },
    /// Nothing is known (no answer, no such tool).
    Inconclusive,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Violated { grew: true, .. } => "exceeded",
            Verdict::Violated { grew: false, .. } => "narrowed",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// Whether an observation meets an expectation.
///
/// A failed predicate on a *successful* call counts as more power: the call
/// still runs, but what it returns is no longer what the reviewer pinned
/// (a `result_lacks = "BEGIN PRIVATE KEY"` that now appears, a
/// `result_contains = "[redacted]"` that no longer does).
pub fn evaluate(expect: &Expectation, observed: &Observation) -> Verdict {
    use OutcomeKind::*;
    let violated = |grew| Verdict::Violated {
        grew,
        failed: Vec::new(),
    };
    match (expect, observed.kind) {
        (_, Unreachable | UnknownTool) => Verdict::Inconclusive,
        (Expectation::Denied, Refused | Errored) => Verdict::Met,
        (Expectation::Denied, Succeeded) => violated(true),
        (Expectation::Error, Errored) => Verdict::Met,
        (Expectation::Error, Refused) => violated(false),
        (Expectation::Error, Succeeded) => violated(true),
        (Expectation::Result(_), Refused | Errored) => violated(false),
        (Expectation::Result(preds), Succeeded) => {
            let failed: Vec<Predicate> = preds
                .iter()
                .filter(|p| !p.holds(&observed.text))
                .cloned()
                .collect();
            if failed.is_empty() {
                Verdict::Met
            } else {
                Verdict::Violated { grew: true, failed }
            }
        }
    }
}

/// One probe's run as kept (the baseline, the last observation): no result
/// text, only what can be compared and shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeRun {
    pub tool: String,
    pub arguments_hash: Digest,
    pub outcome: OutcomeKind,
    pub result_hash: Option<Digest>,
    pub error_code: Option<i64>,
    pub detail: Option<String>,
    pub verdict: Verdict,
}

impl ProbeRun {
    pub fn new(probe: &Probe, observed: &Observation) -> ProbeRun {
        ProbeRun {
            tool: probe.tool.clone(),
            arguments_hash: probe.arguments_hash(),
            outcome: observed.kind,
            result_hash: observed.result_hash,
            error_code: observed.error_code,
            detail: observed.detail.clone(),
            verdict: evaluate(&probe.expect, observed),
        }
    }

    /// Whether this run is of `probe` (same tool, same arguments).
    pub fn is_of(&self, probe: &Probe) -> bool {
        self.tool == probe.tool && self.arguments_hash == probe.arguments_hash()
    }

    /// The observed part, as recorded and shown: `{"outcome", "result_hash",
    /// "error_code"?, "detail"?}`.
    pub fn observed_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("outcome".into(), self.outcome.name().into());
        m.insert(
            "result_hash".into(),
            self.result_hash
                .map_or(Value::Null, |d| d.to_string().into()),
        );
        if let Some(code) = self.error_code.and_then(Number::from_i64) {
            m.insert("error_code".into(), Value::Number(code));
        }
        if let Some(d) = &self.detail {
            m.insert("detail".into(), d.as_str().into());
        }
        Value::Object(m)
    }

    /// As stored: the observed part with `tool`, `arguments_hash`, `verdict`
    /// and the predicates that failed.
    pub fn to_value(&self) -> Value {
        let Value::Object(mut m) = self.observed_value() else {
            unreachable!("an object")
        };
        m.insert("tool".into(), self.tool.as_str().into());
        m.insert(
            "arguments_hash".into(),
            self.arguments_hash.to_string().into(),
        );
        m.insert("verdict".into(), self.verdict.name().into());
        if let Verdict::Violated { failed, .. } = &self.verdict {
            m.insert(
                "failed".into(),
                Value::Array(
                    failed
                        .iter()
                        .map(|p| {
                            let mut one = Map::new();
                            one.insert(p.name().into(), p.operand().into());
                            Value::Object(one)
                        })
                        .collect(),
                ),
            );
        }
        Value::Object(m)
    }

    /// Reads [`ProbeRun::to_value`] back.
    pub fn from_value(v: &Value) -> Result<ProbeRun, ProbeRecordError> {
        let bad = |what: &str| ProbeRecordError(what.to_owned());
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let digest = |k: &str| -> Result<Option<Digest>, ProbeRecordError> {
            match v.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(d)) => d.parse().map(Some).map_err(|_| bad(k)),
                Some(_) => Err(bad(k)),
            }
        };
        let failed = v
            .get("failed")
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .map(|p| {
                let m = p.as_object().ok_or_else(|| bad("failed"))?;
                match m.iter().next() {
                    Some((k, Value::String(s))) if k == "result_contains" => {
                        Ok(Predicate::ResultContains(s.clone()))
                    }
                    Some((k, Value::String(s))) if k == "result_lacks" => {
                        Ok(Predicate::ResultLacks(s.clone()))
                    }
                    _ => Err(bad("failed")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let verdict = match s("verdict").ok_or_else(|| bad("verdict"))? {
            "met" => Verdict::Met,
            "exceeded" => Verdict::Violated { grew: true, failed },
            "narrowed" => Verdict::Violated {
                grew: false,
                failed,
            },
            "inconclusive" => Verdict::Inconclusive,
            _ => return Err(bad("verdict")),
        };
        Ok(ProbeRun {
            tool: s("tool").ok_or_else(|| bad("tool"))?.to_owned(),
            arguments_hash: digest("arguments_hash")?.ok_or_else(|| bad("arguments_hash"))?,
            outcome: s("outcome")
                .and_then(OutcomeKind::from_name)
                .ok_or_else(|| bad("outcome"))?,
            result_hash: digest("result_hash")?,
            error_code: v
                .get("error_code")
                .and_then(Value::as_number)
                .and_then(Number::as_i64),
            detail: s("detail").map(str::to_owned),
            verdict,
        })
    }
}

/// A stored probe run that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[error("malformed probe run: bad or missing `{0}`")]
pub struct ProbeRecordError(pub String);

/// Why a probe's outcome is a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// Expected refused (or an error), and the call succeeded: the server's
    /// effective permission grew.
    PermissionGrew,
    /// The call succeeded, but a predicate on its result failed.
    ResultDeparted,
    /// Meets its expectation, but was refused at approval and succeeds now.
    BeyondBaseline,
    /// Allowed less than expected (a refusal where a result was expected).
    Narrowed,
    /// Nothing could be learned (no answer, or no such tool listed).
    Inconclusive,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::PermissionGrew => "permission_grew",
            FindingKind::ResultDeparted => "result_departed",
            FindingKind::BeyondBaseline => "beyond_baseline",
            FindingKind::Narrowed => "narrowed",
            FindingKind::Inconclusive => "inconclusive",
        }
    }
}

/// What a finding calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProbeAction {
    /// Shown and logged; the server stays as it is.
    Report,
    /// More power than approved: the whole server is quarantined.
    Quarantine,
}

impl ProbeAction {
    pub fn name(self) -> &'static str {
        match self {
            ProbeAction::Report => "report",
            ProbeAction::Quarantine => "quarantine",
        }
    }
}

/// One probe whose outcome departs from its expectation or its baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeFinding {
    pub probe: Probe,
    pub run: ProbeRun,
    /// The outcome adopted at approval, if there was one for this probe.
    pub baseline: Option<OutcomeKind>,
    pub kind: FindingKind,
    pub action: ProbeAction,
}

impl ProbeFinding {
    /// A one-line explanation for reviewers (no result text).
    pub fn summary(&self) -> String {
        let p = &self.probe;
        match self.kind {
            FindingKind::PermissionGrew => format!(
                "probe {}: expected {}, but the call {} — the server's effective permission grew",
                p.tool,
                p.expect.name(),
                self.run.outcome.name()
            ),
            FindingKind::ResultDeparted => {
                let failed = match &self.run.verdict {
                    Verdict::Violated { failed, .. } => failed
                        .iter()
                        .map(|f| format!("{} {:?}", f.name(), f.operand()))
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => String::new(),
                };
                format!(
                    "probe {}: the call succeeded but its result fails {failed}",
                    p.tool
                )
            }
            FindingKind::BeyondBaseline => format!(
                "probe {}: {} at approval, {} now",
                p.tool,
                self.baseline.map_or("unknown", OutcomeKind::name),
                self.run.outcome.name()
            ),
            FindingKind::Narrowed => format!(
                "probe {}: expected {}, the call {} (less than expected)",
                p.tool,
                p.expect.name(),
                self.run.outcome.name()
            ),
            FindingKind::Inconclusive => format!(
                "probe {}: {}{}",
                p.tool,
                self.run.outcome.name(),
                self.run
                    .detail
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
        }
    }

    /// The evidence record (its JSON Schema is
    /// `docs/schemas/probe-finding.schema.json`): the probe (tool, arguments
    /// hash), what was expected, what was observed (outcome, the result's
    /// SHA-256), the baseline outcome, the finding's kind and action.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("tool".into(), self.probe.tool.as_str().into());
        m.insert(
            "arguments_hash".into(),
            self.run.arguments_hash.to_string().into(),
        );
        m.insert("expected".into(), self.probe.expect.to_value());
        m.insert("observed".into(), self.run.observed_value());
        m.insert(
            "baseline".into(),
            self.baseline.map_or(Value::Null, |b| b.name().into()),
        );
        m.insert("kind".into(), self.kind.name().into());
        m.insert("action".into(), self.action.name().into());
        m.insert("summary".into(), self.summary().into());
        Value::Object(m)
    }
}

/// Whether a probe's run is a finding, given the run adopted for it at
/// approval (`baseline`, if any).
///
/// An outcome the reviewer approved as it is (the same outcome and verdict
/// at approval) is no finding: the reviewer saw it. Otherwise more power
/// than expected, or than at approval, quarantines; less, or nothing known,
/// is reported.
pub fn assess(probe: &Probe, baseline: Option<&ProbeRun>, run: &ProbeRun) -> Option<ProbeFinding> {
    let baseline = baseline.filter(|b| b.is_of(probe));
    let finding = |kind, action| {
        Some(ProbeFinding {
            probe: probe.clone(),
            run: run.clone(),
            baseline: baseline.map(|b| b.outcome),
            kind,
            action,
        })
    };
    if let Some(b) = baseline
        && let (Some(then), Some(now)) = (b.outcome.power(), run.outcome.power())
        && now > then
        && run.verdict == Verdict::Met
    {
        return finding(FindingKind::BeyondBaseline, ProbeAction::Quarantine);
    }
    if run.verdict == Verdict::Met {
        return None;
    }
    if baseline.is_some_and(|b| b.outcome == run.outcome && b.verdict == run.verdict) {
        return None;
    }
    match &run.verdict {
        Verdict::Met => None,
        Verdict::Violated { grew: true, failed } if failed.is_empty() => {
            finding(FindingKind::PermissionGrew, ProbeAction::Quarantine)
        }
        Verdict::Violated { grew: true, .. } => {
            finding(FindingKind::ResultDeparted, ProbeAction::Quarantine)
        }
        Verdict::Violated { grew: false, .. } => {
            finding(FindingKind::Narrowed, ProbeAction::Report)
        }
        Verdict::Inconclusive => finding(FindingKind::Inconclusive, ProbeAction::Report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(s: &str) -> Value {
        interlock_canon::parse_json(s.as_bytes()).unwrap()
    }

    fn probe(expect: Expectation) -> Probe {
        let mut arguments = Map::new();
        arguments.insert("path".into(), "/etc/shadow".into());
        Probe {
            tool: "read_secret".into(),
            arguments,
            expect,
        }
    }

    fn ok(text: &str) -> Observation {
        Observation::of_result(&json(&format!(
            r#"{{"content":[{{"type":"text","text":{text:?}}}]}}"#
        )))
    }

    fn refused() -> Observation {
        Observation::of_result(&json(
            r#"{"content":[{"type":"text","text":"permission denied"}],"isError":true}"#,
        ))
    }

    fn rpc_error() -> Observation {
        Observation::of_error(&json(r#"{"code":-32602,"message":"no such file"}"#))
    }

    #[test]
    fn outcomes_are_classified_from_the_answer() {
        assert_eq!(ok("hi").kind, OutcomeKind::Succeeded);
        assert_eq!(refused().kind, OutcomeKind::Refused);
        let e = rpc_error();
        assert_eq!((e.kind, e.error_code), (OutcomeKind::Errored, Some(-32602)));
        // Strings from structuredContent and nested resources are searched too.
        let nested = Observation::of_result(&json(
            r#"{"content":[{"type":"resource","resource":{"uri":"x://","text":"deep"}}],"structuredContent":{"k":["secret"]}}"#,
        ));
        assert!(nested.text.contains("deep") && nested.text.contains("secret"));
        // The hash is over the result's canonical bytes: key order does not matter.
        let a = Observation::of_result(&json(r#"{"a":1,"content":[]}"#));
        let b = Observation::of_result(&json(r#"{"content":[],"a":1}"#));
        assert_eq!(a.result_hash, b.result_hash);
        assert!(a.result_hash.is_some());
    }

    #[test]
    fn each_expectation_is_evaluated_against_each_outcome() {
        use Expectation::*;
        let grew = Verdict::Violated {
            grew: true,
            failed: vec![],
        };
        let narrowed = Verdict::Violated {
            grew: false,
            failed: vec![],
        };
        assert_eq!(evaluate(&Denied, &refused()), Verdict::Met);
        assert_eq!(evaluate(&Denied, &rpc_error()), Verdict::Met);
        assert_eq!(evaluate(&Denied, &ok("root:x:0")), grew);
        assert_eq!(evaluate(&Error, &rpc_error()), Verdict::Met);
        assert_eq!(evaluate(&Error, &refused()), narrowed);
        assert_eq!(evaluate(&Error, &ok("")), grew);
        assert_eq!(evaluate(&Result(vec![]), &refused()), narrowed);
        assert_eq!(
            evaluate(&Denied, &Observation::unreachable("timeout")),
            Verdict::Inconclusive
        );
        assert_eq!(
            evaluate(&Denied, &Observation::unknown_tool()),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn predicates_hold_or_name_what_failed() {
        let lacks = Predicate::ResultLacks("BEGIN PRIVATE KEY".into());
        let contains = Predicate::ResultContains("[redacted]".into());
        let expect = Expectation::Result(vec![lacks.clone(), contains.clone()]);
        assert_eq!(evaluate(&expect, &ok("key: [redacted]")), Verdict::Met);
        assert_eq!(
            evaluate(&expect, &ok("-----BEGIN PRIVATE KEY----- [redacted]")),
            Verdict::Violated {
                grew: true,
                failed: vec![lacks.clone()]
            }
        );
        assert_eq!(
            evaluate(&expect, &ok("-----BEGIN PRIVATE KEY-----")),
            Verdict::Violated {
                grew: true,
                failed: vec![lacks, contains]
            }
        );
    }

    /// The hole of issue 16 item 1: the definition is the same, the denial
    /// is gone. Against its expectation and its baseline, that quarantines.
    #[test]
    fn regression_a_denied_probe_that_now_succeeds_is_permission_grown() {
        let p = probe(Expectation::Denied);
        let baseline = ProbeRun::new(&p, &refused());
        assert_eq!(assess(&p, Some(&baseline), &baseline), None);
        let now = ProbeRun::new(&p, &ok("root:$6$..."));
        let f = assess(&p, Some(&baseline), &now).expect("a finding");
        assert_eq!(
            (f.kind, f.action, f.baseline),
            (
                FindingKind::PermissionGrew,
                ProbeAction::Quarantine,
                Some(OutcomeKind::Refused)
            )
        );
        // The record names the result by hash only, never its text.
        let rec = interlock_canon::canonical_string(&f.to_value());
        assert!(!rec.contains("root:"), "{rec}");
        assert!(rec.contains(&now.result_hash.unwrap().to_string()), "{rec}");
        // Without a baseline (before approval) it is the same finding.
        assert_eq!(
            assess(&p, None, &now).map(|f| f.kind),
            Some(FindingKind::PermissionGrew)
        );
    }

    #[test]
    fn what_the_reviewer_approved_as_it_was_is_no_finding() {
        // Approved while the denied probe already succeeded: the reviewer saw it.
        let p = probe(Expectation::Denied);
        let then = ProbeRun::new(&p, &ok("a"));
        let now = ProbeRun::new(&p, &ok("b"));
        assert_eq!(assess(&p, Some(&then), &now), None);
        // A baseline of another probe (arguments changed in the config) does not count.
        let mut other = p.clone();
        other.arguments.insert("path".into(), "/etc/passwd".into());
        let then_other = ProbeRun::new(&other, &ok("a"));
        assert!(assess(&p, Some(&then_other), &now).is_some());
    }

    #[test]
    fn more_than_at_approval_quarantines_even_when_expected() {
        // A result probe that was refused at approval and succeeds now.
        let p = probe(Expectation::Result(vec![]));
        let then = ProbeRun::new(&p, &refused());
        let now = ProbeRun::new(&p, &ok("x"));
        let f = assess(&p, Some(&then), &now).unwrap();
        assert_eq!(
            (f.kind, f.action),
            (FindingKind::BeyondBaseline, ProbeAction::Quarantine)
        );
    }

    #[test]
    fn less_power_or_no_answer_is_reported_not_quarantined() {
        let p = probe(Expectation::Result(vec![]));
        let f = assess(&p, None, &ProbeRun::new(&p, &refused())).unwrap();
        assert_eq!(
            (f.kind, f.action),
            (FindingKind::Narrowed, ProbeAction::Report)
        );
        let f = assess(
            &p,
            None,
            &ProbeRun::new(&p, &Observation::unreachable("timed out")),
        )
        .unwrap();
        assert_eq!(
            (f.kind, f.action),
            (FindingKind::Inconclusive, ProbeAction::Report)
        );
        assert!(f.summary().contains("timed out"));
        let f = assess(&p, None, &ProbeRun::new(&p, &Observation::unknown_tool())).unwrap();
        assert_eq!(f.action, ProbeAction::Report);
    }

    #[test]
    fn a_stored_run_reads_back_unchanged() {
        let p = probe(Expectation::Result(vec![Predicate::ResultLacks(
            "x".into(),
        )]));
        for obs in [
            ok("x"),
            ok("y"),
            refused(),
            rpc_error(),
            Observation::unreachable("t"),
        ] {
            let run = ProbeRun::new(&p, &obs);
            assert_eq!(ProbeRun::from_value(&run.to_value()).unwrap(), run);
        }
        assert!(ProbeRun::from_value(&json(r#"{"tool":"t"}"#)).is_err());
    }
}
