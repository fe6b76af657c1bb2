//! Strict YAML 1.2 and JSON intake into one value model, then RFC 8785 (JCS)
//! canonical bytes and SHA-256 digests.
//!
//! Why this crate exists: a plan's hash is what a human countersigns, so two
//! parties must derive the *same* bytes from the *same* document no matter
//! which parser, language or input syntax they use. Everything that different
//! parsers disagree on (YAML 1.1 `yes`/`on` booleans, duplicate keys, merge
//! keys, anchors, tags, big integers, NaN, lone surrogates, …) is rejected at
//! intake instead of being silently resolved one way or another.
//!
//! Modules, one job each:
//! - [`value`]: the value model ([`Value`], [`Number`]) and its serde bridges.
//! - [`json`]: strict RFC 8259 intake (streaming, via `struson`).
//! - [`yaml`]: strict YAML 1.2 core-schema intake (event stream, via `saphyr-parser`).
//! - [`jcs`]: RFC 8785 canonical bytes and hashing.
//! - [`digest`]: the [`Digest`] type (`sha256:<hex>`).
//! - [`error`]: [`IntakeError`] with a line or JSON-path location.
#![forbid(unsafe_code)]

pub mod digest;
pub mod error;
pub mod jcs;
pub mod json;
pub mod value;
pub mod yaml;

pub use digest::{Digest, DigestParseError};
pub use error::{IntakeError, IntakeErrorKind, Location};
pub use jcs::{canonical_bytes, canonical_string, digest, write_canonical};
pub use json::{parse_canonical_json, parse_json};
pub use value::{Map, Number, Value, from_serde_json, to_serde_json};
pub use yaml::parse_yaml;

/// Maximum nesting depth of arrays and objects (sequences and mappings), the
/// same for JSON and YAML. A document nested exactly this deep is accepted;
/// one level more is [`IntakeErrorKind::TooDeep`]. The limit keeps every
/// recursive walk over a [`Value`] (serialization, comparison, drop) far from
/// the stack limit; real plans nest well under ten levels.
pub const MAX_DEPTH: usize = 64;

/// The largest integer an IEEE-754 double represents exactly together with all
/// its neighbours (2^53 − 1). Integers beyond it are read differently by
/// parsers that use `i64` and those that use `f64`, so they are rejected.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The syntax of a document handed to [`parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// RFC 8259 JSON.
    Json,
    /// YAML 1.2, core schema, single document.
    Yaml,
}

/// Parses `bytes` in the given format into the value model.
pub fn parse(bytes: &[u8], format: Format) -> Result<Value, IntakeError> {
    match format {
        Format::Json => parse_json(bytes),
        Format::Yaml => parse_yaml(bytes),
    }
}
