//! The value model shared by JSON and YAML intake: exactly the I-JSON data
//! model (RFC 7493), so that whatever is accepted has one and only one RFC 8785
//! serialization and survives a round trip through any conforming JSON parser.

use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::error::{IntakeError, IntakeErrorKind, Location};
use crate::{MAX_DEPTH, MAX_SAFE_INTEGER};

/// An object. A `BTreeMap` because key order never matters for the hash
/// (JCS sorts by UTF-16 code units on output) and equality must ignore it.
pub type Map = std::collections::BTreeMap<String, Value>;

/// A parsed document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null` (YAML: `null`, `Null`, `NULL`, `~` or empty).
    Null,
    /// `true`/`false` (YAML: also `True`, `TRUE`, …; never `yes`/`on`).
    Bool(bool),
    /// A finite double.
    Number(Number),
    /// A Unicode string, kept exactly as written (no normalization).
    String(String),
    /// An array / sequence.
    Array(Vec<Value>),
    /// An object / mapping with string keys.
    Object(Map),
}

/// An I-JSON number: a finite IEEE-754 double; -0 is normalized to 0 at
/// construction.
///
/// Why a double and not an integer/float split: RFC 8785 serializes every
/// number as ECMAScript does, so `1`, `1.0` and `1e0` are the same value and
/// must hash the same. Every finite double is a `Number`, whatever its
/// magnitude (`1e16`, `-4.25e+20`, `1.5e300`): another JCS implementation
/// accepts and hashes them, so refusing them would make our hashes
/// unreproducible (issue 15 item 20). Only *integer literals* are range-checked
/// at intake, see [`number_from_int_literal`].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Number(f64);

/// Why a finite double is not a [`Number`].
pub(crate) enum NumberRejection {
    NonFinite,
}

impl Number {
    pub(crate) fn check_f64(f: f64) -> Result<Number, NumberRejection> {
        if !f.is_finite() {
            return Err(NumberRejection::NonFinite);
        }
        // `+ 0.0` turns -0.0 into 0.0 and leaves everything else alone.
        Ok(Number(f + 0.0))
    }

    /// `None` for NaN and infinities; -0.0 becomes 0.0.
    pub fn from_f64(f: f64) -> Option<Number> {
        Number::check_f64(f).ok()
    }

    /// `None` beyond ±[`MAX_SAFE_INTEGER`].
    pub fn from_i64(i: i64) -> Option<Number> {
        if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i) {
            Some(Number(i as f64))
        } else {
            None
        }
    }

    /// The double.
    pub fn as_f64(self) -> f64 {
        self.0
    }

    /// `Some` if integral and within ±[`MAX_SAFE_INTEGER`].
    pub fn as_i64(self) -> Option<i64> {
        let f = self.0;
        if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 {
            Some(f as i64)
        } else {
            None
        }
    }
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<Number> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// An object member; `None` if absent or if this is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }
    /// The JSON type name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Value::Number(n)
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Array(v)
    }
}
impl Value {
    /// An integer clamped into ±[`MAX_SAFE_INTEGER`]: what a log leaf
    /// records for a count, a time or a score, which are far inside the
    /// range — anything beyond it is clamped rather than refused, so a
    /// verdict is never lost to its own arithmetic.
    pub fn clamped_int(i: i64) -> Value {
        let safe = i.clamp(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER);
        Value::Number(Number::from_i64(safe).expect("within ±MAX_SAFE_INTEGER"))
    }
}
impl TryFrom<i64> for Value {
    type Error = i64;
    /// Fails (returning the input) beyond ±[`MAX_SAFE_INTEGER`].
    fn try_from(i: i64) -> Result<Self, i64> {
        Number::from_i64(i).map(Value::Number).ok_or(i)
    }
}
impl TryFrom<f64> for Value {
    type Error = f64;
    /// Fails (returning the input) where [`Number::from_f64`] does.
    fn try_from(f: f64) -> Result<Self, f64> {
        Number::from_f64(f).map(Value::Number).ok_or(f)
    }
}

impl Serialize for Number {
    /// Integral values within ±(2^53 − 1) as `i64` (so plain `serde_json`
    /// prints `1`, not `1.0`), others as `f64`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.as_i64() {
            Some(i) => s.serialize_i64(i),
            None => s.serialize_f64(self.0),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(v) => s.serialize_str(v),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Converts a `serde_json` value with the same rules as [`crate::parse_json`]
/// (integers beyond ±(2^53 − 1) and too-deep nesting are rejected). Errors
/// carry the JSON path. Duplicate keys cannot be detected here: `serde_json`
/// has already dropped them.
pub fn from_serde_json(v: &serde_json::Value) -> Result<Value, IntakeError> {
    let mut path = Vec::new();
    convert(v, &mut path)
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn path_string(path: &[Seg<'_>]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            Seg::Key(k) => push_member(&mut s, k),
            Seg::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
    s
}

/// Appends `.name`, or `["name"]` (JSON-escaped, so the path stays on one
/// line) when the name is not a plain identifier.
pub(crate) fn push_member(s: &mut String, k: &str) {
    let ident = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ident {
        s.push('.');
        s.push_str(k);
    } else {
        s.push('[');
        s.push_str(&serde_json::to_string(k).unwrap_or_default());
        s.push(']');
    }
}

fn convert<'a>(v: &'a serde_json::Value, path: &mut Vec<Seg<'a>>) -> Result<Value, IntakeError> {
    let err = |path: &[Seg<'_>], kind| IntakeError::new(Location::Path(path_string(path)), kind);
    Ok(match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Number(n) => {
            let num = if n.is_i64() || n.is_u64() {
                // An integer literal: the same rule as the parsers'.
                let literal = n.to_string();
                let (negative, digits) = match literal.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, literal.as_str()),
                };
                number_from_int_literal(negative, digits, 10, &literal).map_err(|k| err(path, k))?
            } else {
                let f = n
                    .as_f64()
                    .ok_or_else(|| err(path, IntakeErrorKind::NonFinite))?;
                number_from_f64(f).map_err(|k| err(path, k))?
            };
            Value::Number(num)
        }
        serde_json::Value::Array(a) => {
            if path.len() >= MAX_DEPTH {
                return Err(err(path, IntakeErrorKind::TooDeep { limit: MAX_DEPTH }));
            }
            let mut out = Vec::with_capacity(a.len());
            for (i, item) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                out.push(convert(item, path)?);
                path.pop();
            }
            Value::Array(out)
        }
        serde_json::Value::Object(o) => {
            if path.len() >= MAX_DEPTH {
                return Err(err(path, IntakeErrorKind::TooDeep { limit: MAX_DEPTH }));
            }
            let mut out = Map::new();
            for (k, item) in o {
                path.push(Seg::Key(k));
                out.insert(k.clone(), convert(item, path)?);
                path.pop();
            }
            Value::Object(out)
        }
    })
}

/// The `serde_json` equivalent (integral numbers become integers).
pub fn to_serde_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => serde_json::Value::Number(i.into()),
            None => serde_json::Number::from_f64(n.as_f64())
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
        },
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(a) => serde_json::Value::Array(a.iter().map(to_serde_json).collect()),
        Value::Object(m) => serde_json::Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), to_serde_json(v)))
                .collect(),
        ),
    }
}

// ---- number literals, shared by the JSON and YAML readers ----

/// A double from a fraction/exponent literal (already parsed to `f`).
pub(crate) fn number_from_f64(f: f64) -> Result<Number, IntakeErrorKind> {
    Number::check_f64(f).map_err(|r| match r {
        NumberRejection::NonFinite => IntakeErrorKind::NonFinite,
    })
}

/// An integer literal: optional sign, then digits in `radix`. Checked on the
/// literal itself (not after conversion to a double, which would round
/// `9007199254740993` down into range).
///
/// Beyond ±(2^53 − 1) an integer literal is refused — parsers that read it
/// as an integer and those that read it as a double would disagree on its
/// value and on its canonical form — with one exception: a decimal literal
/// that is byte for byte the RFC 8785 (ECMAScript) rendering of the double it
/// denotes, such as `10000000000000000` (what JCS writes for `1e16`). Both
/// kinds of parser canonicalize such a literal to itself, so hashes agree, and
/// accepting it keeps the model closed: the canonical bytes of every
/// [`Value`] (plans, statements and log leaves are stored as canonical bytes
/// and read back with [`crate::parse_json`]) parse back to it.
pub(crate) fn number_from_int_literal(
    negative: bool,
    digits: &str,
    radix: u32,
    literal: &str,
) -> Result<Number, IntakeErrorKind> {
    let out_of_range = || IntakeErrorKind::IntegerOutOfRange(literal.to_owned());
    if let Some(n) = canonical_big_integer(negative, digits, radix, literal) {
        return Ok(n);
    }
    let digits = digits.trim_start_matches('0');
    // 30 digits of any radix ≤ 16 fit in a u128, and anything longer is far
    // beyond 2^53 anyway; the cap keeps the parse from overflowing.
    if digits.len() > 30 {
        return Err(out_of_range());
    }
    let magnitude = if digits.is_empty() {
        0
    } else {
        u128::from_str_radix(digits, radix).map_err(|_| out_of_range())?
    };
    if magnitude > MAX_SAFE_INTEGER as u128 {
        return Err(out_of_range());
    }
    let i = magnitude as i64;
    Number::from_i64(if negative { -i } else { i }).ok_or_else(out_of_range)
}

/// The double a decimal integer literal beyond ±(2^53 − 1) denotes, if the
/// literal is exactly its ECMAScript rendering (see [`number_from_int_literal`]).
fn canonical_big_integer(
    negative: bool,
    digits: &str,
    radix: u32,
    literal: &str,
) -> Option<Number> {
    // ECMAScript writes integral doubles from 10^21 on with an exponent, so a
    // canonical integer literal has at most 21 digits; shorter ones are safe.
    if radix != 10 || digits.len() < 16 || digits.len() > 21 {
        return None;
    }
    let text = if negative {
        format!("-{digits}")
    } else {
        digits.to_owned()
    };
    let f: f64 = text.parse().ok()?;
    if f.abs() <= MAX_SAFE_INTEGER as f64 {
        return None;
    }
    let mut buf = ryu_js::Buffer::new();
    (buf.format_finite(f) == literal).then_some(Number(f))
}
