//! The envelope itself: what an approved tool was seen to do while it was
//! learned, checked against every later call.

use std::collections::{BTreeMap, BTreeSet};

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_inspect::DataClass;

use crate::facts::{ArgFacts, JsonType, ResultFacts};
use crate::finding::{EnvelopeFinding, FindingKind};

/// The envelope's format version, inside its canonical form (and so its hash).
pub const FORMAT: &str = "interlock.envelope/v1";

/// How far a result may grow past the largest one seen, at the least, in
/// bytes: a tool that answered 40 bytes while learning may answer 4 KiB.
pub const SIZE_SLACK_BYTES: u64 = 4096;

/// What an approved tool was seen to do. Sets only grow (by learning or by a
/// reviewer's widening); a call is inside when everything it shows is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    /// Calls observed (learning and widenings).
    pub calls: u64,
    /// Of them, how many answered an error.
    pub errors: u64,
    /// Hosts and path roots the arguments named.
    pub arg_hosts: BTreeSet<String>,
    pub arg_roots: BTreeSet<String>,
    /// Hosts and path roots results named (kept apart from the arguments': a
    /// link a result carries is not a host the tool was approved to reach).
    pub result_hosts: BTreeSet<String>,
    pub result_roots: BTreeSet<String>,
    /// PII and secret kinds results carried.
    pub classes: BTreeSet<DataClass>,
    /// The largest result seen, in bytes.
    pub max_result_bytes: u64,
    /// `structuredContent`'s top-level members, with every type each had.
    pub structured: BTreeMap<String, BTreeSet<JsonType>>,
}

/// How strict the check is (from the gateway's `[envelope]` policy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// A result may be this many times the largest seen (and at least
    /// [`SIZE_SLACK_BYTES`] more).
    pub size_factor: f64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { size_factor: 4.0 }
    }
}

/// A widening that cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WidenError {
    #[error("nothing to widen: none of the findings is something an envelope can take in")]
    NothingToWiden,
    #[error("a {kind} finding does not read back: {subject:?}")]
    Malformed { kind: &'static str, subject: String },
}

/// An envelope's stored form that does not read back.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("not an envelope: {0}")]
pub struct EnvelopeError(pub String);

impl Envelope {
    /// Learns what a call's arguments reached.
    pub fn observe_arguments(&mut self, args: &ArgFacts) {
        self.arg_hosts.extend(args.hosts.iter().cloned());
        self.arg_roots.extend(args.roots.iter().cloned());
    }

    /// Learns what a result carried (one call).
    pub fn observe_result(&mut self, result: &ResultFacts) {
        self.calls += 1;
        self.errors += u64::from(result.is_error);
        self.result_hosts.extend(result.hosts.iter().cloned());
        self.result_roots.extend(result.roots.iter().cloned());
        self.classes.extend(result.classes.iter().copied());
        self.max_result_bytes = self.max_result_bytes.max(result.bytes);
        for (k, t) in result.structured.iter().flatten() {
            self.structured.entry(k.clone()).or_default().insert(*t);
        }
    }

    /// What in `args` is outside: checked before the call is forwarded (a
    /// finding holds the call).
    pub fn check_arguments(&self, args: &ArgFacts) -> Vec<EnvelopeFinding> {
        let mut out = Vec::new();
        for h in args.hosts.difference(&self.arg_hosts) {
            out.push(EnvelopeFinding::new(FindingKind::NewArgumentHost, h));
        }
        for r in args.roots.difference(&self.arg_roots) {
            out.push(EnvelopeFinding::new(FindingKind::NewArgumentRoot, r));
        }
        out
    }

    /// What in a result is outside: checked after the upstream answered and
    /// before the agent sees it (a finding withholds the result).
    pub fn check_result(&self, result: &ResultFacts, bounds: Bounds) -> Vec<EnvelopeFinding> {
        let mut out = Vec::new();
        for c in result.classes.difference(&self.classes) {
            out.push(EnvelopeFinding::new(FindingKind::NewDataClass, c.as_str()));
        }
        for h in result.hosts.difference(&self.result_hosts) {
            out.push(EnvelopeFinding::new(FindingKind::NewResultHost, h));
        }
        for r in result.roots.difference(&self.result_roots) {
            out.push(EnvelopeFinding::new(FindingKind::NewResultRoot, r));
        }
        let bound = self.size_bound(bounds);
        if result.bytes > bound {
            out.push(EnvelopeFinding::new(
                FindingKind::ResultTooLarge,
                &format!("{} bytes (the bound is {bound})", result.bytes),
            ));
        }
        for (k, t) in result.structured.iter().flatten() {
            match self.structured.get(k) {
                None => out.push(EnvelopeFinding::new(
                    FindingKind::NewStructuredKey,
                    &format!("{k}: {}", t.as_str()),
                )),
                Some(seen) if !seen.contains(t) => out.push(EnvelopeFinding::new(
                    FindingKind::StructuredTypeChanged,
                    &format!("{k}: {}", t.as_str()),
                )),
                Some(_) => {}
            }
        }
        out
    }

    /// The largest result inside: the largest seen × the factor, and at
    /// least [`SIZE_SLACK_BYTES`] past it.
    pub fn size_bound(&self, bounds: Bounds) -> u64 {
        let scaled = (self.max_result_bytes as f64 * bounds.size_factor.max(1.0)) as u64;
        scaled.max(self.max_result_bytes.saturating_add(SIZE_SLACK_BYTES))
    }

    /// The share of observed calls that answered an error.
    pub fn error_rate(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.errors as f64 / self.calls as f64
        }
    }

    /// A reviewer's widening: this envelope ∪ what a held call showed.
    pub fn widened(&self, args: &ArgFacts, result: Option<&ResultFacts>) -> Envelope {
        let mut e = self.clone();
        e.observe_arguments(args);
        if let Some(r) = result {
            e.observe_result(r);
        }
        e
    }

    /// A reviewer's widening by the findings of a held call or withheld
    /// result (as its leaf records them): this envelope ∪ what they found (an
    /// argument host or root is taken in for results as well).
    /// An `outputSchema` violation is not taken in (the schema is part of the
    /// approved surface, changed only by re-approving it), nor an error rate.
    pub fn widened_by(&self, findings: &[EnvelopeFinding]) -> Result<Envelope, WidenError> {
        let mut e = self.clone();
        let mut took = false;
        for f in findings {
            let bad = || WidenError::Malformed {
                kind: f.kind.as_str(),
                subject: f.subject.clone(),
            };
            let s = f.subject.clone();
            match f.kind {
                // A host (root) the reviewer lets the tool reach may show up
                // in what it answers: the call never ran, so its result could
                // not be observed, and a second hold for it would be noise.
                FindingKind::NewArgumentHost => {
                    e.result_hosts.insert(s.clone());
                    e.arg_hosts.insert(s)
                }
                FindingKind::NewArgumentRoot => {
                    e.result_roots.insert(s.clone());
                    e.arg_roots.insert(s)
                }
                FindingKind::NewResultHost => e.result_hosts.insert(s),
                FindingKind::NewResultRoot => e.result_roots.insert(s),
                FindingKind::NewDataClass => {
                    e.classes.insert(DataClass::parse(&s).ok_or_else(bad)?)
                }
                FindingKind::ResultTooLarge => {
                    let bytes: u64 = s
                        .split_once(' ')
                        .and_then(|(n, _)| n.parse().ok())
                        .ok_or_else(bad)?;
                    e.max_result_bytes = e.max_result_bytes.max(bytes);
                    true
                }
                FindingKind::NewStructuredKey | FindingKind::StructuredTypeChanged => {
                    let (k, t) = s.rsplit_once(": ").ok_or_else(bad)?;
                    let t = JsonType::parse(t).ok_or_else(bad)?;
                    e.structured.entry(k.to_owned()).or_default().insert(t)
                }
                FindingKind::OutputSchemaViolation | FindingKind::ErrorRateRose => continue,
            };
            took = true;
        }
        if took {
            Ok(e)
        } else {
            Err(WidenError::NothingToWiden)
        }
    }

    /// The canonical form: what is hashed, stored and shown to a reviewer.
    pub fn to_value(&self) -> Value {
        let strings = |s: &BTreeSet<String>| {
            Value::Array(s.iter().map(|x| Value::String(x.clone())).collect())
        };
        let mut m = Map::new();
        m.insert("format".into(), FORMAT.into());
        m.insert("calls".into(), int(self.calls));
        m.insert("errors".into(), int(self.errors));
        m.insert("arg_hosts".into(), strings(&self.arg_hosts));
        m.insert("arg_roots".into(), strings(&self.arg_roots));
        m.insert("result_hosts".into(), strings(&self.result_hosts));
        m.insert("result_roots".into(), strings(&self.result_roots));
        m.insert(
            "data_classes".into(),
            Value::Array(self.classes.iter().map(|c| c.as_str().into()).collect()),
        );
        m.insert("max_result_bytes".into(), int(self.max_result_bytes));
        let mut s = Map::new();
        for (k, types) in &self.structured {
            s.insert(
                k.clone(),
                Value::Array(types.iter().map(|t| t.as_str().into()).collect()),
            );
        }
        m.insert("structured".into(), Value::Object(s));
        Value::Object(m)
    }

    /// Reads [`Envelope::to_value`]'s form back.
    pub fn from_value(v: &Value) -> Result<Envelope, EnvelopeError> {
        let err = |what: &str| EnvelopeError(what.to_owned());
        let m = v.as_object().ok_or_else(|| err("not an object"))?;
        if m.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(err("format is not interlock.envelope/v1"));
        }
        let count = |k: &str| {
            m.get(k)
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64())
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| err(&format!("{k} is not a count")))
        };
        let list = |k: &str| -> Result<Vec<&str>, EnvelopeError> {
            m.get(k)
                .and_then(Value::as_array)
                .ok_or_else(|| err(&format!("{k} is not a list")))?
                .iter()
                .map(|x| {
                    x.as_str()
                        .ok_or_else(|| err(&format!("{k} holds a non-string")))
                })
                .collect()
        };
        let owned = |k: &str| -> Result<BTreeSet<String>, EnvelopeError> {
            Ok(list(k)?.into_iter().map(str::to_owned).collect())
        };
        let mut structured = BTreeMap::new();
        let s = m
            .get("structured")
            .and_then(Value::as_object)
            .ok_or_else(|| err("structured is not an object"))?;
        for (k, types) in s {
            let types = types
                .as_array()
                .ok_or_else(|| err("structured types are not a list"))?
                .iter()
                .map(|t| {
                    t.as_str()
                        .and_then(JsonType::parse)
                        .ok_or_else(|| err("unknown JSON type"))
                })
                .collect::<Result<BTreeSet<_>, _>>()?;
            structured.insert(k.clone(), types);
        }
        Ok(Envelope {
            calls: count("calls")?,
            errors: count("errors")?,
            arg_hosts: owned("arg_hosts")?,
            arg_roots: owned("arg_roots")?,
            result_hosts: owned("result_hosts")?,
            result_roots: owned("result_roots")?,
            classes: list("data_classes")?
                .into_iter()
                .map(|c| DataClass::parse(c).ok_or_else(|| err("unknown data class")))
                .collect::<Result<_, _>>()?,
            max_result_bytes: count("max_result_bytes")?,
            structured,
        })
    }

    /// The envelope's hash: SHA-256 over the JCS bytes of
    /// [`Envelope::to_value`]. A reviewer's widening names it (compare and swap).
    pub fn hash(&self) -> Digest {
        canon::digest(&self.to_value())
    }
}

fn int(n: u64) -> Value {
    let n = i64::try_from(n.min(canon::MAX_SAFE_INTEGER as u64)).expect("bounded");
    Value::Number(canon::Number::from_i64(n).expect("a safe integer"))
}
