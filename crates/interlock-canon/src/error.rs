//! Intake errors. Every error carries a [`Location`] so that a person fixing a
//! rejected plan can go straight to the offending line or member, and every
//! message fits on one line so it can be logged and shown in a UI verbatim.

use std::fmt;

/// A rejected document: where, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {kind}")]
pub struct IntakeError {
    /// Where in the document the problem is.
    pub location: Location,
    /// What the problem is.
    pub kind: IntakeErrorKind,
}

impl IntakeError {
    /// Builds an error from its parts.
    pub fn new(location: Location, kind: IntakeErrorKind) -> Self {
        IntakeError { location, kind }
    }
}

/// Where an [`IntakeError`] occurred. Lines and columns are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A position in the source text (YAML, or JSON without a path).
    Line {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// A JSON path such as `$.stages[0].id` (used when no source position is
    /// known, e.g. for [`crate::from_serde_json`]).
    Path(String),
    /// A JSON path together with the source position, as the JSON reader
    /// knows both: displayed as `at $.a.b (line 2, column 7)`.
    PathLine {
        /// JSON path such as `$.stages[0].id`.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// The document as a whole (e.g. an empty stream).
    Document,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { line, column } => write!(f, "line {line}, column {column}"),
            Location::Path(p) => write!(f, "at {p}"),
            Location::PathLine { path, line, column } => {
                write!(f, "at {path} (line {line}, column {column})")
            }
            Location::Document => f.write_str("document"),
        }
    }
}

/// Why a document was rejected. Each message is a single line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntakeErrorKind {
    /// Malformed JSON or YAML; the text comes from the underlying parser.
    #[error("syntax error: {0}")]
    Syntax(String),
    /// The same key twice in one object; keys are compared exactly.
    #[error("duplicate key {0:?}")]
    DuplicateKey(String),
    /// A plain YAML key that resolves to a number, boolean or null (e.g. `1:`);
    /// quote it to make it a string. Rejected so that `1` and `"1"` can never
    /// collide silently.
    #[error("mapping key is not a string (quote it)")]
    NonStringKey,
    /// A YAML mapping or sequence used as a key (`? [a]`).
    #[error("complex mapping key (a mapping or sequence used as a key)")]
    ComplexKey,
    /// A YAML 1.1 merge key `<<`, which YAML 1.2 parsers disagree on.
    #[error("merge key `<<` is not allowed")]
    MergeKey,
    /// A YAML anchor (`&a`).
    #[error("anchors (`&name`) are not allowed")]
    Anchor,
    /// A YAML alias (`*a`).
    #[error("aliases (`*name`) are not allowed")]
    Alias,
    /// A YAML tag (`!!str`, `!foo`, `!`).
    #[error("tag {0:?} is not allowed")]
    Tag(String),
    /// More than one YAML document in the stream.
    #[error("multiple documents in one stream")]
    MultipleDocuments,
    /// NaN or an infinity, written as such or overflowing a double (`1e400`).
    #[error("NaN and infinite numbers are not allowed")]
    NonFinite,
    /// An integer beyond ±(2^53 − 1); carries the literal as written.
    #[error("integer {0} is out of range (beyond ±(2^53-1))")]
    IntegerOutOfRange(String),
    /// A `\uD800`–`\uDFFF` escape not part of a surrogate pair.
    #[error("lone surrogate escape in string")]
    LoneSurrogate,
    /// The input is not valid UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// Arrays/objects nested deeper than [`crate::MAX_DEPTH`].
    #[error("nesting deeper than {limit} levels")]
    TooDeep {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// No document at all (empty input, or only whitespace/comments).
    #[error("empty document")]
    Empty,
}

/// Rejects invalid UTF-8 up front, naming the line and column of the first bad
/// byte: both parsers work on `&str`/chars and would otherwise report the
/// problem late or vaguely.
pub(crate) fn check_utf8(bytes: &[u8]) -> Result<&str, IntakeError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        // `good` is valid UTF-8 by construction.
        let good = std::str::from_utf8(good).unwrap_or_default();
        let line = good.matches('\n').count() + 1;
        let column = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        IntakeError::new(
            Location::Line { line, column },
            IntakeErrorKind::InvalidUtf8,
        )
    })
}

/// Collapses a parser message to one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
