//! Typed expectations: a check's `expect {op, value}` compared with the typed value
//! its probe observed (issue 23 item 2).
//!
//! A probe that declares what it returns (`returns: number | string | boolean |
//! version | list` in the registry) observes one [`ProbeValue`]; the plan says what
//! that value must be, as plain data ("at least 2 replicas healthy", "version ≥
//! 1.4"). Both halves are checked twice: at validation, that the operator suits the
//! probe's type and the expected value has it (so a reviewer never approves a
//! comparison that cannot be made), and at run time, where anything that cannot be
//! evaluated — a value of another type, a version that does not parse — is
//! [`Unevaluable`], which the engine treats as unmet: fail closed.

use std::cmp::Ordering;
use std::fmt;

use regex::{Regex, RegexBuilder};

use crate::canon::{self, Value};

/// The most compiled-program memory a `matches` pattern may take: bounded work for
/// validation and probing alike.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// What a probe returns, as declared in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    Number,
    String,
    Boolean,
    /// A version, compared by SemVer 2.0 precedence (`1.4` reads as `1.4.0`).
    Version,
    /// A list of JSON values; `contains` asks whether one of them equals the value.
    List,
}

impl ValueType {
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Number => "number",
            ValueType::String => "string",
            ValueType::Boolean => "boolean",
            ValueType::Version => "version",
            ValueType::List => "list",
        }
    }

    pub fn from_name(name: &str) -> Option<ValueType> {
        Some(match name {
            "number" => ValueType::Number,
            "string" => ValueType::String,
            "boolean" => ValueType::Boolean,
            "version" => ValueType::Version,
            "list" => ValueType::List,
            _ => return None,
        })
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A comparison operator of `expect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpectOp {
    Equals,
    NotEquals,
    /// `observed ≥ value` (numbers, versions).
    AtLeast,
    /// `observed ≤ value` (numbers, versions).
    AtMost,
    /// A substring of a string, or an item of a list.
    Contains,
    /// A regular expression (Rust `regex` syntax) found in a string; anchor it with
    /// `^…$` to require the whole string.
    Matches,
}

impl ExpectOp {
    pub fn name(self) -> &'static str {
        match self {
            ExpectOp::Equals => "equals",
            ExpectOp::NotEquals => "not_equals",
            ExpectOp::AtLeast => "at_least",
            ExpectOp::AtMost => "at_most",
            ExpectOp::Contains => "contains",
            ExpectOp::Matches => "matches",
        }
    }

    pub fn from_name(name: &str) -> Option<ExpectOp> {
        Some(match name {
            "equals" => ExpectOp::Equals,
            "not_equals" => ExpectOp::NotEquals,
            "at_least" => ExpectOp::AtLeast,
            "at_most" => ExpectOp::AtMost,
            "contains" => ExpectOp::Contains,
            "matches" => ExpectOp::Matches,
            _ => return None,
        })
    }

    /// Whether this operator compares values of type `ty`.
    pub fn applies_to(self, ty: ValueType) -> bool {
        use ExpectOp::*;
        match self {
            Equals | NotEquals => true,
            AtLeast | AtMost => matches!(ty, ValueType::Number | ValueType::Version),
            Contains => matches!(ty, ValueType::String | ValueType::List),
            Matches => ty == ValueType::String,
        }
    }
}

impl fmt::Display for ExpectOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A check's `expect`: what the probe's value must be.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub op: ExpectOp,
    /// The operand exactly as written in the plan (it is part of the hashed body).
    pub value: Value,
}

/// A value a probe observed, typed by what its probe declares it returns.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeValue {
    Number(f64),
    String(String),
    Boolean(bool),
    Version(semver::Version),
    List(Vec<Value>),
}

impl ProbeValue {
    pub fn ty(&self) -> ValueType {
        match self {
            ProbeValue::Number(_) => ValueType::Number,
            ProbeValue::String(_) => ValueType::String,
            ProbeValue::Boolean(_) => ValueType::Boolean,
            ProbeValue::Version(_) => ValueType::Version,
            ProbeValue::List(_) => ValueType::List,
        }
    }

    /// Reads a JSON value as a value of type `ty` (a version is a string).
    pub fn from_value(ty: ValueType, value: &Value) -> Result<ProbeValue, Unevaluable> {
        let mismatch = || Unevaluable::WrongType {
            expected: ty,
            found: value.kind(),
        };
        Ok(match (ty, value) {
            (ValueType::Number, Value::Number(n)) => ProbeValue::Number(n.as_f64()),
            (ValueType::String, Value::String(s)) => ProbeValue::String(s.clone()),
            (ValueType::Boolean, Value::Bool(b)) => ProbeValue::Boolean(*b),
            (ValueType::Version, Value::String(s)) => ProbeValue::Version(parse_version(s)?),
            (ValueType::List, Value::Array(items)) => ProbeValue::List(items.clone()),
            _ => return Err(mismatch()),
        })
    }

    /// Reads a tool's or program's text output as a value of type `ty`: a number,
    /// `true`/`false`, a version, a JSON array for a list; a string as it is
    /// (surrounding whitespace trimmed for every type but string).
    pub fn from_text(ty: ValueType, text: &str) -> Result<ProbeValue, Unevaluable> {
        let t = text.trim();
        let not = || Unevaluable::NotReadable {
            expected: ty,
            text: t.chars().take(80).collect(),
        };
        Ok(match ty {
            ValueType::String => ProbeValue::String(text.to_owned()),
            ValueType::Number => match t.parse::<f64>() {
                Ok(f) if f.is_finite() => ProbeValue::Number(f),
                _ => return Err(not()),
            },
            ValueType::Boolean => match t {
                "true" => ProbeValue::Boolean(true),
                "false" => ProbeValue::Boolean(false),
                _ => return Err(not()),
            },
            ValueType::Version => ProbeValue::Version(parse_version(t)?),
            ValueType::List => match canon::parse_json(t.as_bytes()) {
                Ok(Value::Array(items)) => ProbeValue::List(items),
                _ => return Err(not()),
            },
        })
    }
}

impl fmt::Display for ProbeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeValue::Number(n) => write!(f, "{n}"),
            ProbeValue::String(s) => write!(f, "{s:?}"),
            ProbeValue::Boolean(b) => write!(f, "{b}"),
            ProbeValue::Version(v) => write!(f, "version {v}"),
            ProbeValue::List(items) => {
                f.write_str(&canon::canonical_string(&Value::Array(items.clone())))
            }
        }
    }
}

/// Why an expectation could not be evaluated; the engine counts it as unmet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unevaluable {
    #[error("expected a {expected}, found {found}")]
    WrongType {
        expected: ValueType,
        found: &'static str,
    },
    #[error("`{text}` is not a {expected}")]
    NotReadable { expected: ValueType, text: String },
    #[error("`{0}` is not a version (SemVer, or one to three numbers such as `1.4`)")]
    NotAVersion(String),
    #[error("`{op}` does not compare {ty} values")]
    OperatorNotFor { op: ExpectOp, ty: ValueType },
    #[error("invalid pattern: {0}")]
    BadPattern(String),
    #[error("the probe returned no value to compare")]
    NoValue,
}

/// A version: SemVer 2.0, or `MAJOR[.MINOR]` read as `MAJOR.MINOR.0` (so the
/// seed's `version ≥ 1.4` is plain data); a leading `v` is allowed.
pub fn parse_version(s: &str) -> Result<semver::Version, Unevaluable> {
    let t = s.strip_prefix('v').unwrap_or(s);
    if let Ok(v) = semver::Version::parse(t) {
        return Ok(v);
    }
    let parts: Vec<&str> = t.split('.').collect();
    let numeric =
        |p: &&str| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit());
    if (1..=2).contains(&parts.len()) && parts.iter().all(numeric) {
        let padded = format!("{t}{}", ".0".repeat(3 - parts.len()));
        if let Ok(v) = semver::Version::parse(&padded) {
            return Ok(v);
        }
    }
    Err(Unevaluable::NotAVersion(s.chars().take(80).collect()))
}

/// Checks a `matches` pattern's syntax without compiling it: compiling (an NFA and
/// its caches) costs far more than parsing, and validation runs on every propose
/// and before every execution; the syntax tree alone (no translation) is ~¼ of a
/// full parse again. What only translation or compilation finds — an unknown
/// Unicode class, a pattern too big to compile — is still refused when probed:
/// unevaluable, so unmet.
fn pattern_syntax(p: &str) -> Result<(), Unevaluable> {
    regex_syntax::ast::parse::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(p)
        .map(|_| ())
        .map_err(|e| Unevaluable::BadPattern(e.to_string()))
}

fn pattern(p: &str) -> Result<Regex, Unevaluable> {
    RegexBuilder::new(p)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| Unevaluable::BadPattern(e.to_string()))
}

impl Expectation {
    /// Checks, at validation, that this expectation can be evaluated against values
    /// of type `ty`: the operator applies to it and the operand has the right shape.
    /// The error is a sentence for the proposer.
    pub fn check_against(&self, ty: ValueType) -> Result<(), String> {
        if !self.op.applies_to(ty) {
            return Err(format!(
                "`{}` does not compare {ty} values (this probe returns a {ty})",
                self.op
            ));
        }
        match self.op {
            ExpectOp::Contains if ty == ValueType::List => Ok(()),
            ExpectOp::Contains | ExpectOp::Matches => match &self.value {
                Value::String(p) if self.op == ExpectOp::Matches => {
                    pattern_syntax(p).map_err(|e| e.to_string())
                }
                Value::String(_) => Ok(()),
                other => Err(format!(
                    "`{}` needs a string value, found {}",
                    self.op,
                    other.kind()
                )),
            },
            _ => ProbeValue::from_value(ty, &self.value)
                .map(|_| ())
                .map_err(|e| format!("`expect.value`: {e}")),
        }
    }

    /// Whether `observed` meets this expectation. Anything that cannot be compared
    /// is an error, never `true`.
    pub fn evaluate(&self, observed: &ProbeValue) -> Result<bool, Unevaluable> {
        let ty = observed.ty();
        if !self.op.applies_to(ty) {
            return Err(Unevaluable::OperatorNotFor { op: self.op, ty });
        }
        match (self.op, observed) {
            (ExpectOp::Contains, ProbeValue::List(items)) => Ok(items.contains(&self.value)),
            (ExpectOp::Contains, ProbeValue::String(s)) => match &self.value {
                Value::String(needle) => Ok(s.contains(needle.as_str())),
                other => Err(Unevaluable::WrongType {
                    expected: ValueType::String,
                    found: other.kind(),
                }),
            },
            (ExpectOp::Matches, ProbeValue::String(s)) => match &self.value {
                Value::String(p) => Ok(pattern(p)?.is_match(s)),
                other => Err(Unevaluable::WrongType {
                    expected: ValueType::String,
                    found: other.kind(),
                }),
            },
            (op, observed) => {
                let expected = ProbeValue::from_value(ty, &self.value)?;
                let ordering = compare(observed, &expected).ok_or(Unevaluable::WrongType {
                    expected: ty,
                    found: self.value.kind(),
                })?;
                Ok(match op {
                    ExpectOp::Equals => ordering == Ordering::Equal,
                    ExpectOp::NotEquals => ordering != Ordering::Equal,
                    ExpectOp::AtLeast => ordering != Ordering::Less,
                    ExpectOp::AtMost => ordering != Ordering::Greater,
                    ExpectOp::Contains | ExpectOp::Matches => unreachable!("handled above"),
                })
            }
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op, canon::canonical_string(&self.value))
    }
}

/// How two values of one type order; `None` for values that do not compare (NaN
/// never reaches here: intake rejects it; lists and booleans only compare equal or
/// not). Versions compare by SemVer precedence, so build metadata is ignored.
fn compare(a: &ProbeValue, b: &ProbeValue) -> Option<Ordering> {
    match (a, b) {
        (ProbeValue::Number(x), ProbeValue::Number(y)) => x.partial_cmp(y),
        (ProbeValue::String(x), ProbeValue::String(y)) => Some(x.cmp(y)),
        (ProbeValue::Boolean(x), ProbeValue::Boolean(y)) => Some(if x == y {
            Ordering::Equal
        } else {
            Ordering::Less
        }),
        (ProbeValue::Version(x), ProbeValue::Version(y)) => Some(x.cmp_precedence(y)),
        (ProbeValue::List(x), ProbeValue::List(y)) => Some(if x == y {
            Ordering::Equal
        } else {
            Ordering::Less
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(op: &str, value: Value) -> Expectation {
        Expectation {
            op: ExpectOp::from_name(op).unwrap(),
            value,
        }
    }

    fn num(n: f64) -> Value {
        Value::Number(canon::Number::from_f64(n).unwrap())
    }

    #[test]
    fn at_least_on_numbers() {
        let e = exp("at_least", num(2.0));
        assert_eq!(e.evaluate(&ProbeValue::Number(2.0)), Ok(true));
        assert_eq!(e.evaluate(&ProbeValue::Number(3.0)), Ok(true));
        assert_eq!(e.evaluate(&ProbeValue::Number(1.0)), Ok(false));
    }

    #[test]
    fn versions_compare_as_versions_not_text() {
        let e = exp("at_least", "1.4".into());
        // As text "1.10.0" < "1.4"; as versions it is greater.
        assert_eq!(
            e.evaluate(&ProbeValue::from_text(ValueType::Version, "1.10.0").unwrap()),
            Ok(true)
        );
        assert_eq!(
            e.evaluate(&ProbeValue::from_text(ValueType::Version, "v1.3.9").unwrap()),
            Ok(false)
        );
        // A pre-release precedes its release.
        assert_eq!(
            e.evaluate(&ProbeValue::from_text(ValueType::Version, "1.4.0-rc.1").unwrap()),
            Ok(false)
        );
        assert_eq!(
            exp("at_most", "2".into())
                .evaluate(&ProbeValue::from_text(ValueType::Version, "2.0.0+build.7").unwrap()),
            Ok(true)
        );
    }

    #[test]
    fn unevaluable_is_an_error_never_true() {
        // Every op against a value of another type than its operand.
        for op in [
            "equals",
            "not_equals",
            "at_least",
            "at_most",
            "contains",
            "matches",
        ] {
            let e = exp(op, num(2.0));
            assert!(
                e.evaluate(&ProbeValue::Boolean(true)).is_err(),
                "{op} on a boolean"
            );
        }
        assert!(
            exp("not_equals", num(1.0))
                .evaluate(&ProbeValue::String("x".into()))
                .is_err()
        );
        assert!(ProbeValue::from_text(ValueType::Version, "latest").is_err());
        assert!(ProbeValue::from_text(ValueType::Number, "NaN").is_err());
        assert!(
            exp("matches", "(".into())
                .evaluate(&ProbeValue::String("x".into()))
                .is_err()
        );
    }

    #[test]
    fn contains_and_matches() {
        assert_eq!(
            exp("contains", "ok".into()).evaluate(&ProbeValue::String("all ok".into())),
            Ok(true)
        );
        assert_eq!(
            exp("contains", "eu-1".into())
                .evaluate(&ProbeValue::List(vec!["eu-1".into(), "us-2".into()])),
            Ok(true)
        );
        assert_eq!(
            exp("matches", "^v[0-9]+$".into()).evaluate(&ProbeValue::String("v12".into())),
            Ok(true)
        );
        assert_eq!(
            exp("matches", "^v[0-9]+$".into()).evaluate(&ProbeValue::String("v12x".into())),
            Ok(false)
        );
    }

    #[test]
    fn validation_refuses_what_cannot_be_evaluated() {
        assert!(
            exp("at_least", num(2.0))
                .check_against(ValueType::Boolean)
                .is_err()
        );
        assert!(
            exp("at_least", "two".into())
                .check_against(ValueType::Number)
                .is_err()
        );
        assert!(
            exp("at_least", "latest".into())
                .check_against(ValueType::Version)
                .is_err()
        );
        assert!(
            exp("matches", "(".into())
                .check_against(ValueType::String)
                .is_err()
        );
        assert!(
            exp("contains", num(1.0))
                .check_against(ValueType::String)
                .is_err()
        );
        assert!(
            exp("at_least", "1.4".into())
                .check_against(ValueType::Version)
                .is_ok()
        );
        assert!(
            exp("contains", num(1.0))
                .check_against(ValueType::List)
                .is_ok()
        );
    }

    proptest::proptest! {
        /// Numeric comparisons agree with f64 ordering, and at_least/at_most are
        /// complementary except at equality.
        #[test]
        fn numeric_ops_agree_with_f64(a in -1e9f64..1e9, b in -1e9f64..1e9) {
            let observed = ProbeValue::Number(a);
            let ge = exp("at_least", num(b)).evaluate(&observed).unwrap();
            let le = exp("at_most", num(b)).evaluate(&observed).unwrap();
            let eq = exp("equals", num(b)).evaluate(&observed).unwrap();
            proptest::prop_assert_eq!(ge, a >= b);
            proptest::prop_assert_eq!(le, a <= b);
            proptest::prop_assert_eq!(eq, ge && le);
        }

        /// Versions order like their numeric triples.
        #[test]
        fn version_ops_agree_with_triples(a in (0u64..50, 0u64..50, 0u64..50), b in (0u64..50, 0u64..50, 0u64..50)) {
            let observed = ProbeValue::from_text(ValueType::Version, &format!("{}.{}.{}", a.0, a.1, a.2)).unwrap();
            let ge = exp("at_least", format!("{}.{}.{}", b.0, b.1, b.2).as_str().into()).evaluate(&observed).unwrap();
            proptest::prop_assert_eq!(ge, a >= b);
        }
    }
}
