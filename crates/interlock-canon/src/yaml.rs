//! Strict YAML 1.2 intake over `saphyr-parser`'s event stream.
//!
//! Why events and not a YAML DOM: the DOM layer resolves anchors, merges and
//! tags and keeps the last of duplicate keys, i.e. exactly the things we must
//! reject. The event stream shows them all, with positions, and is consumed
//! iteratively (an explicit stack), so hostile nesting cannot overflow ours.
//!
//! Plain scalars are resolved with the YAML 1.2 *core schema* only: `yes`,
//! `on`, `0b1`, `1_000` are strings; `014` is the decimal 14.

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use crate::MAX_DEPTH;
use crate::error::{IntakeError, IntakeErrorKind, Location, check_utf8, one_line};
use crate::value::{Map, Value, number_from_f64, number_from_int_literal};

/// Parses a single YAML 1.2 document into the value model.
///
/// Rejects: invalid UTF-8, empty streams, multiple documents, anchors,
/// aliases, tags (including the non-specific `!`), merge keys (`<<`),
/// non-string keys (plain keys resolving to null/bool/number, and
/// mapping/sequence keys), duplicate keys, `.inf`/`.nan` and overflowing
/// floats, integers beyond ±(2^53 − 1), and nesting deeper than [`MAX_DEPTH`].
pub fn parse_yaml(bytes: &[u8]) -> Result<Value, IntakeError> {
    let text = check_utf8(bytes)?;
    let mut builder = Builder::default();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(scan_error)?;
        builder.event(event, span)?;
    }
    builder
        .root
        .ok_or_else(|| IntakeError::new(Location::Document, IntakeErrorKind::Empty))
}

enum Frame {
    Seq(Vec<Value>),
    /// A mapping and, once read, the key awaiting its value.
    Map(Map, Option<String>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Value>,
    documents: usize,
}

fn at(span: &Span) -> Location {
    Location::Line {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// The tag as written: `!!str`, `!foo`, `!`, or a verbatim/`%TAG` expansion.
fn tag_text(tag: &Tag) -> String {
    match tag.handle.as_str() {
        "tag:yaml.org,2002:" => format!("!!{}", tag.suffix),
        "!" => format!("!{}", tag.suffix),
        h => format!("{h}{}", tag.suffix),
    }
}

fn scan_error(e: ScanError) -> IntakeError {
    let m = e.marker();
    // The scanner looks ahead over flow collections and gives up at 255
    // levels, before our own depth check sees the events.
    let kind = if e.info() == "recursion limit exceeded" {
        IntakeErrorKind::TooDeep { limit: MAX_DEPTH }
    } else if e.info().contains("unknown anchor") {
        // `*x` with no `&x` before it: still, first of all, an alias.
        IntakeErrorKind::Alias
    } else {
        IntakeErrorKind::Syntax(one_line(e.info()))
    };
    IntakeError::new(
        Location::Line {
            line: m.line(),
            column: m.col() + 1,
        },
        kind,
    )
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), IntakeError> {
        let fail = |kind| Err(IntakeError::new(at(&span), kind));
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return fail(IntakeErrorKind::MultipleDocuments);
                }
            }
            Event::Alias(_) => return fail(IntakeErrorKind::Alias),
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    return fail(IntakeErrorKind::Anchor);
                }
                if let Some(tag) = tag {
                    return fail(IntakeErrorKind::Tag(tag_text(&tag)));
                }
                let plain = style == ScalarStyle::Plain;
                if let Some(Frame::Map(map, key @ None)) = self.stack.last_mut() {
                    if plain && text == "<<" {
                        return fail(IntakeErrorKind::MergeKey);
                    }
                    let k = if plain {
                        match resolve_plain(&text) {
                            Ok(Value::String(s)) => s,
                            Ok(_) | Err(_) => return fail(IntakeErrorKind::NonStringKey),
                        }
                    } else {
                        text.into_owned()
                    };
                    if map.contains_key(&k) {
                        return fail(IntakeErrorKind::DuplicateKey(k));
                    }
                    *key = Some(k);
                    return Ok(());
                }
                let value = if plain {
                    match resolve_plain(&text) {
                        Ok(v) => v,
                        Err(kind) => return fail(kind),
                    }
                } else {
                    Value::String(text.into_owned())
                };
                self.push_value(value);
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                if anchor != 0 {
                    return fail(IntakeErrorKind::Anchor);
                }
                if let Some(tag) = tag {
                    return fail(IntakeErrorKind::Tag(tag_text(tag)));
                }
                if let Some(Frame::Map(_, None)) = self.stack.last() {
                    return fail(IntakeErrorKind::ComplexKey);
                }
                if self.stack.len() >= MAX_DEPTH {
                    return fail(IntakeErrorKind::TooDeep { limit: MAX_DEPTH });
                }
                self.stack
                    .push(if matches!(event, Event::SequenceStart(..)) {
                        Frame::Seq(Vec::new())
                    } else {
                        Frame::Map(Map::new(), None)
                    });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let value = match self.stack.pop() {
                    Some(Frame::Seq(items)) => Value::Array(items),
                    Some(Frame::Map(map, _)) => Value::Object(map),
                    None => return fail(IntakeErrorKind::Syntax("unbalanced end".to_owned())),
                };
                self.push_value(value);
            }
        }
        Ok(())
    }

    fn push_value(&mut self, value: Value) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq(items)) => items.push(value),
            Some(Frame::Map(map, key)) => {
                // The parser alternates keys and values, so a key is pending.
                if let Some(k) = key.take() {
                    map.insert(k, value);
                }
            }
        }
    }
}

/// Resolves a plain scalar by the YAML 1.2 core schema (tag resolution rules
/// of §10.3.2), except that non-finite floats are an error.
fn resolve_plain(s: &str) -> Result<Value, IntakeErrorKind> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(s, ".nan" | ".NaN" | ".NAN") {
        return Err(IntakeErrorKind::NonFinite);
    }
    if let Some(oct) = s.strip_prefix("0o")
        && !oct.is_empty()
        && oct.bytes().all(|b| matches!(b, b'0'..=b'7'))
    {
        return number_from_int_literal(false, oct, 8, s).map(Value::Number);
    }
    if let Some(hex) = s.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return number_from_int_literal(false, hex, 16, s).map(Value::Number);
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return number_from_int_literal(s.starts_with('-'), unsigned, 10, s).map(Value::Number);
    }
    if is_core_float(unsigned) {
        // Rust's float grammar is a superset of the core-schema one.
        let f: f64 = s
            .parse()
            .map_err(|_| IntakeErrorKind::Syntax(format!("malformed number {s}")))?;
        return number_from_f64(f).map(Value::Number);
    }
    Ok(Value::String(s.to_owned()))
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` (sign already stripped).
fn is_core_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let int = digits(&mut i);
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac = digits(&mut i);
        if int == 0 && frac == 0 {
            return false;
        }
    } else if int == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Number;

    #[test]
    fn core_schema_floats() {
        for s in ["1.5", ".5", "1.", "1e3", "1.e3", "1.5E-3", "+.5", "-1.0"] {
            assert!(matches!(resolve_plain(s), Ok(Value::Number(_))), "{s}");
        }
        for s in [
            ".", "e3", "1e", "1.5.5", "0b1", "1_000", "0x", "0o8", "+0x1", "yes",
        ] {
            assert!(matches!(resolve_plain(s), Ok(Value::String(_))), "{s}");
        }
        assert_eq!(
            resolve_plain("0o17"),
            Ok(Value::Number(Number::from_i64(15).unwrap()))
        );
    }
}
