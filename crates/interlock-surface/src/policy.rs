//! From a drift's severity to what the gateway does about it.
//!
//! - [`Action::Monitor`]: record the drift, keep serving.
//! - [`Action::Hold`]: the changed tool (or surface) waits for a reviewer
//!   before it is served as changed.
//! - [`Action::Quarantine`]: hidden from `tools/list` and refused at
//!   `tools/call` until a reviewer re-approves, for the drift's [`Scope`].

use std::fmt;

use crate::drift::{Drift, DriftKind};

/// How much a drift matters: what the change lets the tool do, not the size
/// of the text diff. By the default [`DriftPolicy`], Info and Low are
/// reported and still served, Medium and High are held, Critical quarantines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Cosmetic (title, `_meta`, non-hint annotations).
    Info,
    /// Reported, still served: a rewording with no new instruction, link or
    /// capability; a tool removed; a change that only narrows; a new optional
    /// parameter carrying no secret and steering no path, URL or command.
    Low,
    /// Held: a new instruction, link or capability in text the model reads;
    /// safety language removed; a `default` changed; a type swapped for an
    /// unrelated one; a widening; an output field carrying secrets or
    /// personal data; a safety claim gained; a new tool that neither destroys
    /// nor reaches the open world.
    Medium,
    /// Held, the riskiest: annotations flipped toward more power
    /// (`readOnlyHint` true→false, `destructiveHint` false→true,
    /// `openWorldHint` false→true); a new (or renamed) tool that may destroy
    /// or reach the open world.
    High,
    /// Quarantined: injection, exfiltration or concealment wording anywhere
    /// in the surface.
    Critical,
}

impl Severity {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the gateway does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Record and keep serving.
    Monitor,
    /// Wait for a reviewer.
    Hold,
    /// Hide and refuse until re-approved.
    Quarantine,
}

impl Action {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Action::Monitor => "monitor",
            Action::Hold => "hold",
            Action::Quarantine => "quarantine",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an action applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The whole server (instructions drift, or anything Critical: a server
    /// that poisons one tool is not trusted with the others).
    Server,
    /// One tool, by its observed name (baseline name for a removed tool).
    Tool(String),
    /// One pinned prompt, resource or resource template.
    Content(crate::content::ContentRef),
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Server => f.write_str("server"),
            Scope::Tool(t) => write!(f, "tool {t:?}"),
            Scope::Content(c) => write!(f, "{c}"),
        }
    }
}

impl Drift {
    /// What the drift's action applies to.
    pub fn scope(&self) -> Scope {
        if matches!(self.kind, DriftKind::InstructionsChanged { .. })
            || self.severity() == Severity::Critical
        {
            return Scope::Server;
        }
        match (&self.tool, self.content()) {
            (Some(t), _) => Scope::Tool(t.clone()),
            (None, Some(c)) => Scope::Content(c.clone()),
            (None, None) => Scope::Server,
        }
    }
}

/// Severity → action: below `monitor_below` → Monitor; at or above
/// `quarantine_at` → Quarantine; between → Hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriftPolicy {
    /// Severities below this are only monitored.
    pub monitor_below: Severity,
    /// Severities at or above this are quarantined.
    pub quarantine_at: Severity,
}

impl Default for DriftPolicy {
    /// Info/Low → Monitor, Medium/High → Hold, Critical → Quarantine.
    fn default() -> Self {
        DriftPolicy {
            monitor_below: Severity::Medium,
            quarantine_at: Severity::Critical,
        }
    }
}

impl DriftPolicy {
    /// The action for one severity.
    pub fn action_for(&self, s: Severity) -> Action {
        if s >= self.quarantine_at {
            Action::Quarantine
        } else if s < self.monitor_below {
            Action::Monitor
        } else {
            Action::Hold
        }
    }

    /// The action for one drift. A changed launch quarantines whatever the
    /// thresholds say: no policy serves a program nobody approved.
    pub fn action(&self, d: &Drift) -> Action {
        if matches!(d.kind, crate::drift::DriftKind::LaunchChanged { .. }) {
            return Action::Quarantine;
        }
        self.action_for(d.severity())
    }

    /// The strongest action over `drifts` for the server as a whole (`None`
    /// if no drift has server scope), and per tool for the others, ordered:
    /// `(server, [(tool, action)])`. Tools under a server-wide action still
    /// appear with their own.
    pub fn assess(&self, drifts: &[Drift]) -> (Option<Action>, Vec<(String, Action)>) {
        let mut server = None;
        let mut tools: std::collections::BTreeMap<String, Action> = Default::default();
        for d in drifts {
            let a = self.action(d);
            match d.scope() {
                Scope::Server => server = server.max(Some(a)),
                Scope::Tool(t) => {
                    let e = tools.entry(t).or_insert(a);
                    *e = (*e).max(a);
                }
                // Content has its own answer: [`DriftPolicy::assess_content`].
                Scope::Content(_) => {}
            }
        }
        (server, tools.into_iter().collect())
    }

    /// The strongest action per pinned prompt, resource or template over
    /// `drifts` (those with content scope; a Critical one has server scope
    /// and is in [`DriftPolicy::assess`]'s answer instead), ordered.
    pub fn assess_content(&self, drifts: &[Drift]) -> Vec<(crate::content::ContentRef, Action)> {
        let mut out: std::collections::BTreeMap<crate::content::ContentRef, Action> =
            Default::default();
        for d in drifts {
            if let Scope::Content(c) = d.scope() {
                let a = self.action(d);
                let e = out.entry(c).or_insert(a);
                *e = (*e).max(a);
            }
        }
        out.into_iter().collect()
    }
}
