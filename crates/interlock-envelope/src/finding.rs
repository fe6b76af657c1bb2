//! What falls outside an envelope, typed, with the sentence a reviewer and
//! the agent read.

use interlock_inspect::DataClass;

/// When a finding is known, and so what the gateway can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// From the arguments, before the call is forwarded: the call is held.
    Call,
    /// From the result, after the tool ran: the result is withheld.
    Result,
}

/// What kind of thing is outside the envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// An argument names a host no approved call named.
    NewArgumentHost,
    /// An argument names a path root no approved call named.
    NewArgumentRoot,
    /// A result carries a PII or secret kind it never carried.
    NewDataClass,
    /// A result names a host no result named.
    NewResultHost,
    /// A result names a path root no result named.
    NewResultRoot,
    /// A result is larger than the learned bound.
    ResultTooLarge,
    /// `structuredContent` has a top-level member never seen.
    NewStructuredKey,
    /// A `structuredContent` member has a type it never had.
    StructuredTypeChanged,
    /// `structuredContent` does not validate against the approved `outputSchema`.
    OutputSchemaViolation,
    /// Errors are far more frequent than while the envelope was learned.
    ErrorRateRose,
}

impl FindingKind {
    pub const ALL: [FindingKind; 10] = [
        FindingKind::NewArgumentHost,
        FindingKind::NewArgumentRoot,
        FindingKind::NewDataClass,
        FindingKind::NewResultHost,
        FindingKind::NewResultRoot,
        FindingKind::ResultTooLarge,
        FindingKind::NewStructuredKey,
        FindingKind::StructuredTypeChanged,
        FindingKind::OutputSchemaViolation,
        FindingKind::ErrorRateRose,
    ];

    /// Stable name (log records, `docs/schemas/envelope-finding.schema.json`).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::NewArgumentHost => "new_argument_host",
            FindingKind::NewArgumentRoot => "new_argument_root",
            FindingKind::NewDataClass => "new_data_class",
            FindingKind::NewResultHost => "new_result_host",
            FindingKind::NewResultRoot => "new_result_root",
            FindingKind::ResultTooLarge => "result_too_large",
            FindingKind::NewStructuredKey => "new_structured_key",
            FindingKind::StructuredTypeChanged => "structured_type_changed",
            FindingKind::OutputSchemaViolation => "output_schema_violation",
            FindingKind::ErrorRateRose => "error_rate_rose",
        }
    }

    /// The kind named `s` (the inverse of [`FindingKind::as_str`]).
    pub fn parse(s: &str) -> Option<FindingKind> {
        FindingKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn stage(self) -> Stage {
        match self {
            FindingKind::NewArgumentHost | FindingKind::NewArgumentRoot => Stage::Call,
            _ => Stage::Result,
        }
    }

    /// Whether the finding stops anything when the policy holds: an error
    /// rate is a trend across calls, reported on the call that shows it but
    /// never a reason to withhold that call's (error) answer.
    pub fn enforced(self) -> bool {
        self != FindingKind::ErrorRateRose
    }
}

/// One thing outside the envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeFinding {
    pub kind: FindingKind,
    /// What is new: the host, the root, the data class's name, the member,
    /// the size, the schema error. Never the result's own text (a data class
    /// is named, not quoted).
    pub subject: String,
}

impl EnvelopeFinding {
    pub fn new(kind: FindingKind, subject: &str) -> EnvelopeFinding {
        EnvelopeFinding {
            kind,
            subject: subject.to_owned(),
        }
    }

    /// The sentence a reviewer and the agent read.
    pub fn explanation(&self) -> String {
        let s = &self.subject;
        match self.kind {
            FindingKind::NewArgumentHost => {
                format!("first call to a host outside the approved set: {s}")
            }
            FindingKind::NewArgumentRoot => {
                format!("first call to a path outside the approved roots: {s}")
            }
            FindingKind::NewDataClass => match DataClass::parse(s) {
                Some(c) => format!("this tool never returned {} before", c.noun()),
                None => format!("this tool never returned {s} before"),
            },
            FindingKind::NewResultHost => {
                format!("this tool's results never named the host {s} before")
            }
            FindingKind::NewResultRoot => {
                format!("this tool's results never named a path under {s} before")
            }
            FindingKind::ResultTooLarge => {
                format!("the result is larger than this tool ever answered: {s}")
            }
            FindingKind::NewStructuredKey => {
                format!("structuredContent has a member this tool never returned: {s}")
            }
            FindingKind::StructuredTypeChanged => {
                format!("a structuredContent member has a type it never had: {s}")
            }
            FindingKind::OutputSchemaViolation => {
                format!(
                    "structuredContent does not validate against the approved outputSchema: {s}"
                )
            }
            FindingKind::ErrorRateRose => {
                format!("this tool fails far more often than while it was learned: {s}")
            }
        }
    }
}

/// The last calls' outcomes after learning, to see an error rate rise.
#[derive(Clone, Debug, Default)]
pub struct RecentErrors {
    outcomes: std::collections::VecDeque<bool>,
}

impl RecentErrors {
    /// How many calls the window holds.
    pub const WINDOW: usize = 20;
    /// The fewest calls in the window before a rate is judged.
    pub const MIN_CALLS: usize = 10;

    /// Records one call (`true`: it answered an error) and says whether the
    /// window's error rate is now well above the learned one: at least half
    /// the window's calls, and at least twice the learned rate plus 0.2.
    pub fn record(&mut self, is_error: bool, learned_rate: f64) -> Option<EnvelopeFinding> {
        if self.outcomes.len() == Self::WINDOW {
            self.outcomes.pop_front();
        }
        self.outcomes.push_back(is_error);
        let n = self.outcomes.len();
        let errors = self.outcomes.iter().filter(|e| **e).count();
        let rate = errors as f64 / n as f64;
        (is_error && n >= Self::MIN_CALLS && rate >= 0.5 && rate >= 2.0 * learned_rate + 0.2).then(
            || {
                EnvelopeFinding::new(
                    FindingKind::ErrorRateRose,
                    &format!(
                        "{errors} of the last {n} calls failed (learned rate {:.0}%)",
                        learned_rate * 100.0
                    ),
                )
            },
        )
    }
}
