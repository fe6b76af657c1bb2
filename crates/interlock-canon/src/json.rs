//! Strict RFC 8259 JSON intake, streaming via `struson` so that nesting depth,
//! duplicate members and number literals are checked as they are read, with
//! the JSON path and line of each problem at hand.

use std::io::Read;

use struson::reader::json_path::JsonPathPiece;
use struson::reader::{
    JsonReader, JsonReaderPosition, JsonStreamReader, ReaderError, ReaderSettings, SyntaxErrorKind,
    ValueType,
};

use crate::MAX_DEPTH;
use crate::error::{IntakeError, IntakeErrorKind, Location, check_utf8, one_line};
use crate::value::{Map, Value, number_from_f64, number_from_int_literal, push_member};

/// Parses one JSON text (RFC 8259: no comments, no trailing commas, exactly
/// one top-level value, surrounding whitespace allowed) into the value model.
///
/// Rejects duplicate member names, integer literals beyond ±(2^53 − 1),
/// numbers that overflow a double, lone surrogate escapes, invalid UTF-8 and
/// nesting deeper than [`MAX_DEPTH`]. Strings are kept exactly as written.
pub fn parse_json(bytes: &[u8]) -> Result<Value, IntakeError> {
    check_utf8(bytes)?;
    if bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return Err(IntakeError::new(Location::Document, IntakeErrorKind::Empty));
    }
    let settings = ReaderSettings {
        allow_comments: false,
        allow_trailing_comma: false,
        allow_multiple_top_level: false,
        track_path: true,
        max_nesting_depth: Some(MAX_DEPTH as u32),
        // We check numbers ourselves: struson's restriction would also reject
        // valid finite doubles such as `1e-100`.
        restrict_number_values: false,
    };
    let mut reader = JsonStreamReader::new_custom(bytes, settings);
    let value = read_value(&mut reader)?;
    reader.consume_trailing_whitespace().map_err(reader_error)?;
    Ok(value)
}

/// The value of `bytes` if they are exactly its RFC 8785 (JCS) form, else
/// `None` — for callers that require canonical bytes (stored log leaves) and
/// read many of them: the offline verifier reads every leaf of a bundle.
///
/// `serde_json`'s reader is several times faster than the streaming reader of
/// [`parse_json`], but not strict on its own. Here it feeds the value model
/// directly ([`FastValue`]) under the model's rules — integer literals as
/// [`number_from_int_literal`] reads them, finite doubles, no duplicate
/// member, [`MAX_DEPTH`] — and the bytes must then be exactly the JCS form of
/// the value read (which also refuses any float `serde_json` rounds
/// differently, white space, escapes JCS does not write, unsorted members).
/// JCS output of a value of the model is what [`parse_json`] reads back to
/// the same value, so `Some(v)` implies `parse_json(bytes) == Ok(v)`; `None`
/// says nothing more — call [`parse_json`] for the error.
pub fn parse_canonical_json(bytes: &[u8]) -> Option<Value> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = FastValue { depth: 0 }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    (crate::jcs::canonical_bytes(&v) == bytes).then_some(v)
}

/// A value read by `serde_json` straight into the model, under its rules
/// (see [`parse_canonical_json`]); `depth` is how many containers enclose it.
struct FastValue {
    depth: usize,
}

impl FastValue {
    fn int<E: serde::de::Error>(negative: bool, magnitude: u64) -> Result<Value, E> {
        let digits = magnitude.to_string();
        let literal = if negative {
            format!("-{digits}")
        } else {
            digits.clone()
        };
        number_from_int_literal(negative, &digits, 10, &literal)
            .map(Value::Number)
            .map_err(|k| E::custom(k.to_string()))
    }

    fn container<E: serde::de::Error>(&self) -> Result<FastValue, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom("too deep"));
        }
        Ok(FastValue {
            depth: self.depth + 1,
        })
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for FastValue {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FastValue {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Value, E> {
        FastValue::int(false, u)
    }
    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Value, E> {
        FastValue::int(i < 0, i.unsigned_abs())
    }
    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Value, E> {
        number_from_f64(f)
            .map(Value::Number)
            .map_err(|k| E::custom(k.to_string()))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.container()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(FastValue { depth: inner.depth })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.container()?;
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(FastValue { depth: inner.depth })?;
            if out.insert(k, v).is_some() {
                return Err(serde::de::Error::custom("duplicate member"));
            }
        }
        Ok(Value::Object(out))
    }
}

/// Recursion is bounded by `max_nesting_depth`, which struson enforces before
/// we descend.
fn read_value<R: Read>(r: &mut JsonStreamReader<R>) -> Result<Value, IntakeError> {
    Ok(match r.peek().map_err(reader_error)? {
        ValueType::Null => {
            r.next_null().map_err(reader_error)?;
            Value::Null
        }
        ValueType::Boolean => Value::Bool(r.next_bool().map_err(reader_error)?),
        ValueType::String => Value::String(r.next_string().map_err(reader_error)?),
        ValueType::Number => {
            // Before reading, the path names this value (after, an array's
            // index has moved on); after reading, the line is the literal's.
            let before = r.current_position(true);
            let literal = r.next_number_as_str().map_err(reader_error)?;
            match number_from_literal(literal) {
                Ok(n) => Value::Number(n),
                Err(kind) => {
                    let after = r.current_position(false);
                    let at = JsonReaderPosition {
                        path: before.path,
                        ..after
                    };
                    return Err(IntakeError::new(location(&at), kind));
                }
            }
        }
        ValueType::Array => {
            r.begin_array().map_err(reader_error)?;
            let mut items = Vec::new();
            while r.has_next().map_err(reader_error)? {
                items.push(read_value(r)?);
            }
            r.end_array().map_err(reader_error)?;
            Value::Array(items)
        }
        ValueType::Object => {
            r.begin_object().map_err(reader_error)?;
            let mut members = Map::new();
            while r.has_next().map_err(reader_error)? {
                let name = r.next_name_owned().map_err(reader_error)?;
                if members.contains_key(&name) {
                    let at = location(&r.current_position(true));
                    return Err(IntakeError::new(at, IntakeErrorKind::DuplicateKey(name)));
                }
                let value = read_value(r)?;
                members.insert(name, value);
            }
            r.end_object().map_err(reader_error)?;
            Value::Object(members)
        }
    })
}

/// A JSON number literal (already validated by struson against the RFC 8259
/// grammar). Without fraction or exponent it is an integer and is range-checked
/// on the digits; otherwise it is a double.
fn number_from_literal(literal: &str) -> Result<crate::Number, IntakeErrorKind> {
    if literal.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        let f: f64 = literal
            .parse()
            .map_err(|_| IntakeErrorKind::Syntax(format!("malformed number {literal}")))?;
        number_from_f64(f)
    } else {
        let (negative, digits) = match literal.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, literal),
        };
        number_from_int_literal(negative, digits, 10, literal)
    }
}

fn format_path(path: &[JsonPathPiece]) -> String {
    let mut s = String::from("$");
    for piece in path {
        match piece {
            JsonPathPiece::ArrayItem(i) => s.push_str(&format!("[{i}]")),
            JsonPathPiece::ObjectMember(name) => push_member(&mut s, name),
        }
    }
    s
}

fn location(pos: &JsonReaderPosition) -> Location {
    match (&pos.path, &pos.line_pos) {
        (Some(path), Some(lp)) => Location::PathLine {
            path: format_path(path),
            line: lp.line as usize + 1,
            column: lp.column as usize + 1,
        },
        (Some(path), None) => Location::Path(format_path(path)),
        (None, Some(lp)) => Location::Line {
            line: lp.line as usize + 1,
            column: lp.column as usize + 1,
        },
        (None, None) => Location::Document,
    }
}

fn reader_error(e: ReaderError) -> IntakeError {
    match e {
        ReaderError::SyntaxError(e) => {
            let kind = match e.kind {
                SyntaxErrorKind::UnpairedSurrogatePairEscapeSequence => {
                    IntakeErrorKind::LoneSurrogate
                }
                SyntaxErrorKind::IncompleteDocument => {
                    IntakeErrorKind::Syntax("unexpected end of input".to_owned())
                }
                other => IntakeErrorKind::Syntax(syntax_message(&other)),
            };
            IntakeError::new(location(&e.location), kind)
        }
        ReaderError::MaxNestingDepthExceeded { location: l, .. } => {
            IntakeError::new(location(&l), IntakeErrorKind::TooDeep { limit: MAX_DEPTH })
        }
        ReaderError::IoError { error, location: l }
            if error.kind() == std::io::ErrorKind::InvalidData =>
        {
            IntakeError::new(location(&l), IntakeErrorKind::InvalidUtf8)
        }
        other => IntakeError::new(
            Location::Document,
            IntakeErrorKind::Syntax(one_line(&other.to_string())),
        ),
    }
}

fn syntax_message(kind: &SyntaxErrorKind) -> String {
    let s = match kind {
        SyntaxErrorKind::CommentsNotEnabled => "comments are not allowed",
        SyntaxErrorKind::TrailingCommaNotEnabled => "trailing comma",
        SyntaxErrorKind::TrailingData => "data after the top-level value",
        SyntaxErrorKind::InvalidLiteral => "invalid literal",
        SyntaxErrorKind::MalformedNumber => "malformed number",
        SyntaxErrorKind::MissingComma => "missing comma",
        SyntaxErrorKind::MissingColon => "missing colon",
        SyntaxErrorKind::UnexpectedComma => "unexpected comma",
        SyntaxErrorKind::UnexpectedColon => "unexpected colon",
        SyntaxErrorKind::UnexpectedClosingBracket => "unexpected closing bracket",
        SyntaxErrorKind::ExpectingMemberNameOrObjectEnd => "expected a member name or `}`",
        SyntaxErrorKind::NotEscapedControlCharacter => "unescaped control character in string",
        SyntaxErrorKind::UnknownEscapeSequence => "unknown escape sequence",
        SyntaxErrorKind::MalformedEscapeSequence => "malformed escape sequence",
        SyntaxErrorKind::MalformedJson => "malformed JSON",
        other => return one_line(&format!("{other:?}")),
    };
    s.to_owned()
}
