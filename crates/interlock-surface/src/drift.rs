//! [`diff`]: what changed between an approved baseline surface and an
//! observed one, field by field, each change classified and rated.

use std::collections::BTreeMap;
use std::fmt;

use interlock_canon::{Digest, Map, Value};

use crate::content::{Content, ContentKind, ContentRef};
use crate::cues::TextCues;
use crate::policy::Severity;
use crate::scan::{self, Finding, Scanner};
use crate::schema::{self, ChangeKind, Direction, SchemaChange};
use crate::surface::{Surface, Tool};

/// One of the four MCP tool-annotation hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hint {
    /// `readOnlyHint`, default false.
    ReadOnly,
    /// `destructiveHint`, default true.
    Destructive,
    /// `idempotentHint`, default false.
    Idempotent,
    /// `openWorldHint`, default true.
    OpenWorld,
}

impl Hint {
    /// All four.
    pub const ALL: [Hint; 4] = [
        Hint::ReadOnly,
        Hint::Destructive,
        Hint::Idempotent,
        Hint::OpenWorld,
    ];

    /// The annotation key.
    pub fn key(self) -> &'static str {
        match self {
            Hint::ReadOnly => "readOnlyHint",
            Hint::Destructive => "destructiveHint",
            Hint::Idempotent => "idempotentHint",
            Hint::OpenWorld => "openWorldHint",
        }
    }

    /// The MCP spec's value when the annotation is absent.
    pub fn default_value(self) -> bool {
        matches!(self, Hint::Destructive | Hint::OpenWorld)
    }

    /// The effective value in an `annotations` object (absent or non-boolean
    /// → the default).
    pub fn effective(self, annotations: Option<&Value>) -> bool {
        annotations
            .and_then(|a| a.get(self.key()))
            .and_then(Value::as_bool)
            .unwrap_or(self.default_value())
    }
}

/// What changed.
#[derive(Clone, Debug, PartialEq)]
pub enum DriftKind {
    /// A tool not in the baseline.
    ToolAdded {
        /// It may destroy (not read-only, `destructiveHint` true or absent).
        destructive: bool,
        /// It may reach the outside world (`openWorldHint` true or absent).
        open_world: bool,
        /// Injection / exfiltration findings anywhere in its definition.
        suspicious: Vec<Finding>,
    },
    /// A baseline tool no longer listed.
    ToolRemoved,
    /// A tool listed under a new name, all else but `name`/`title` identical:
    /// the old name is gone and the new one is a new tool to agents (rated
    /// like [`DriftKind::ToolAdded`]).
    ToolRenamed {
        /// Baseline name.
        from: String,
        /// Observed name.
        to: String,
        /// As for [`DriftKind::ToolAdded`].
        destructive: bool,
        /// As for [`DriftKind::ToolAdded`].
        open_world: bool,
    },
    /// `description` changed.
    DescriptionChanged {
        /// Sentences of the new description absent from the old.
        added_text: String,
        /// Injection / exfiltration findings new to the description.
        suspicious: Vec<Finding>,
        /// Instructions, links, capabilities gained; safety language lost.
        cues: TextCues,
    },
    /// The input schema accepts more.
    InputSchemaWidened {
        /// The widening changes.
        changes: Vec<SchemaChange>,
    },
    /// The input schema accepts less.
    InputSchemaNarrowed {
        /// The narrowing changes.
        changes: Vec<SchemaChange>,
    },
    /// The input schema changed neither way (descriptions, defaults, …).
    InputSchemaChanged {
        /// The changes.
        changes: Vec<SchemaChange>,
        /// Findings new to the schema's strings (parameter descriptions are
        /// read by the model as much as the tool's description is).
        suspicious: Vec<Finding>,
        /// Cues of the schema's descriptions and titles (see [`TextCues`]).
        cues: TextCues,
    },
    /// An annotation hint's effective value (spec defaults for absent) changed.
    AnnotationFlipped {
        /// Which hint.
        hint: Hint,
        /// Baseline effective value.
        from: bool,
        /// Observed effective value.
        to: bool,
    },
    /// Another annotation member changed, or a hint was spelled out/dropped
    /// without changing its effective value.
    AnnotationChanged {
        /// The member.
        key: String,
        /// Baseline value.
        from: Option<Value>,
        /// Observed value.
        to: Option<Value>,
    },
    /// `outputSchema` changed.
    OutputSchemaChanged {
        /// The changes.
        changes: Vec<SchemaChange>,
    },
    /// `title` changed.
    TitleChanged {
        /// Baseline title.
        from: Option<Value>,
        /// Observed title.
        to: Option<Value>,
    },
    /// `_meta` changed.
    MetaChanged,
    /// A field outside the known ones changed (or `annotations` stopped being an object).
    OtherFieldChanged {
        /// The field.
        field: String,
    },
    /// How the server is started changed (issue 38): its command,
    /// arguments, environment names, working directory or sandbox. Always
    /// quarantines the server, whatever the policy: what runs is no longer
    /// what was approved.
    LaunchChanged {
        /// The pinned launch (`None`: pinned before launches were).
        from: Option<Value>,
        /// The launch now.
        to: Option<Value>,
    },
    /// The server's instructions changed.
    InstructionsChanged {
        /// Sentences of the new instructions absent from the old.
        added_text: String,
        /// Injection / exfiltration findings new to the instructions.
        suspicious: Vec<Finding>,
        /// Instructions, links, capabilities gained; safety language lost.
        cues: TextCues,
    },
    /// A prompt, resource or resource template not in the baseline: new text
    /// the model reads, held like a new tool.
    ContentAdded {
        /// Which entry.
        entry: ContentRef,
        /// Injection / exfiltration findings anywhere in it.
        suspicious: Vec<Finding>,
    },
    /// A baseline prompt, resource or template no longer listed.
    ContentRemoved {
        /// Which entry.
        entry: ContentRef,
    },
    /// A pinned entry changed: rated like a tool description by what its
    /// prose (description, title, prompt arguments' descriptions) gained.
    ContentChanged {
        /// Which entry.
        entry: ContentRef,
        /// The members that changed (`description`, `arguments`, …).
        fields: Vec<String>,
        /// Sentences of the new prose absent from the old.
        added_text: String,
        /// Injection / exfiltration findings new to it (any string of it).
        suspicious: Vec<Finding>,
        /// Instructions, links, capabilities gained; safety language lost.
        cues: TextCues,
    },
    /// A field other than `description` and `inputSchema` (output schema,
    /// title, annotations, `_meta`, an unknown field) gained injection,
    /// exfiltration or concealment wording: the model may read any of it.
    SuspiciousText {
        /// The field.
        field: String,
        /// The findings new to it.
        suspicious: Vec<Finding>,
    },
}

/// The members of a launch that differ (`command`, `args`, `sandbox`, …).
pub fn launch_fields_changed(from: Option<&Value>, to: Option<&Value>) -> Vec<String> {
    let empty = interlock_canon::Map::new();
    let members = |v: Option<&Value>| match v {
        Some(Value::Object(m)) => m.clone(),
        _ => empty.clone(),
    };
    let (a, b) = (members(from), members(to));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// One classified change. `tool` is the observed tool name (the baseline
/// name for a removed tool), `None` for server-level drift.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// The tool concerned.
    pub tool: Option<String>,
    /// What changed.
    pub kind: DriftKind,
}

impl Drift {
    fn on(tool: &str, kind: DriftKind) -> Drift {
        Drift {
            tool: Some(tool.to_owned()),
            kind,
        }
    }

    /// How much it matters (see [`Severity`]): what the change lets the
    /// tool do, not how much text moved. Low is reported and still served;
    /// Medium and High are held; Critical quarantines (by the default
    /// [`crate::DriftPolicy`]).
    pub fn severity(&self) -> Severity {
        use DriftKind::*;
        match &self.kind {
            ToolAdded {
                destructive,
                open_world,
                suspicious,
            } => {
                if suspicious.iter().any(|f| f.kind.quarantines()) {
                    Severity::Critical
                } else {
                    new_tool(*destructive, *open_world)
                }
            }
            ToolRenamed {
                destructive,
                open_world,
                ..
            } => new_tool(*destructive, *open_world),
            ToolRemoved | ContentRemoved { .. } => Severity::Low,
            ContentAdded { suspicious, .. } => {
                if suspicious.iter().any(|f| f.kind.quarantines()) {
                    Severity::Critical
                } else {
                    Severity::Medium
                }
            }
            ContentChanged {
                suspicious, cues, ..
            } => text_severity(suspicious, cues),
            DescriptionChanged {
                suspicious, cues, ..
            }
            | InstructionsChanged {
                suspicious, cues, ..
            } => text_severity(suspicious, cues),
            InputSchemaWidened { changes } => {
                if changes.iter().all(harmless_widening) {
                    Severity::Low
                } else {
                    Severity::Medium
                }
            }
            InputSchemaNarrowed { .. } => Severity::Low,
            InputSchemaChanged {
                changes,
                suspicious,
                cues,
            } => {
                let meaning = changes.iter().any(|c| {
                    matches!(
                        c.kind,
                        ChangeKind::Default | ChangeKind::Type { related: false }
                    )
                });
                text_severity(suspicious, cues).max(if meaning {
                    Severity::Medium
                } else {
                    Severity::Low
                })
            }
            AnnotationFlipped { hint, from, to } => match (hint, from, to) {
                // Toward more power: a safety claim dropped, a reach claimed.
                (Hint::ReadOnly, true, false)
                | (Hint::Destructive, false, true)
                | (Hint::OpenWorld, false, true) => Severity::High,
                // Safety claims gained: the gateway's risk and clients'
                // confirmations trust them, so a reviewer sees them first.
                (Hint::ReadOnly, false, true)
                | (Hint::Destructive, true, false)
                | (Hint::OpenWorld, true, false) => Severity::Medium,
                _ => Severity::Low,
            },
            OutputSchemaChanged { changes } => {
                if changes.iter().any(|c| {
                    matches!(
                        c.kind,
                        ChangeKind::PropertyAdded {
                            sensitive: true,
                            ..
                        }
                    )
                }) {
                    Severity::Medium
                } else {
                    Severity::Low
                }
            }
            SuspiciousText { .. } | LaunchChanged { .. } => Severity::Critical,
            OtherFieldChanged { .. } => Severity::Low,
            AnnotationChanged { .. } | TitleChanged { .. } | MetaChanged => Severity::Info,
        }
    }

    /// The prompt, resource or template concerned, for content drift.
    pub fn content(&self) -> Option<&ContentRef> {
        match &self.kind {
            DriftKind::ContentAdded { entry, .. }
            | DriftKind::ContentRemoved { entry }
            | DriftKind::ContentChanged { entry, .. } => Some(entry),
            _ => None,
        }
    }

    /// The suspicious findings this drift carries, if any.
    pub fn findings(&self) -> &[Finding] {
        match &self.kind {
            DriftKind::DescriptionChanged { suspicious, .. }
            | DriftKind::InstructionsChanged { suspicious, .. }
            | DriftKind::InputSchemaChanged { suspicious, .. }
            | DriftKind::ToolAdded { suspicious, .. }
            | DriftKind::ContentAdded { suspicious, .. }
            | DriftKind::ContentChanged { suspicious, .. }
            | DriftKind::SuspiciousText { suspicious, .. } => suspicious,
            _ => &[],
        }
    }
}

/// A new tool is held; one that may destroy or reach the open world is the
/// riskiest thing a reviewer holds.
fn new_tool(destructive: bool, open_world: bool) -> Severity {
    if destructive || open_world {
        Severity::High
    } else {
        Severity::Medium
    }
}

/// Text the model reads: injection wording quarantines; a new instruction,
/// link or capability, or safety language dropped, is held; a rewording is
/// only reported.
fn text_severity(suspicious: &[Finding], cues: &TextCues) -> Severity {
    if suspicious.iter().any(|f| f.kind.quarantines()) {
        Severity::Critical
    } else if !suspicious.is_empty() || !cues.is_empty() {
        Severity::Medium
    } else {
        Severity::Low
    }
}

/// A widening a reviewer need not hold: a new parameter that carries no
/// secret and steers no path, URL or command, or a type that means the same
/// (`integer` → `number`, `null` allowed).
fn harmless_widening(c: &SchemaChange) -> bool {
    matches!(
        c.kind,
        ChangeKind::PropertyAdded {
            sensitive: false,
            capability: false,
            ..
        } | ChangeKind::Type { related: true }
    )
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(v) => short(&interlock_canon::canonical_string(v), 60),
    }
}

/// Hidden characters written as `<U+XXXX>` so one line shows what it holds.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if crate::scan::is_hidden(c) || c.is_control() {
                format!("<U+{:04X}>", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn short(s: &str, n: usize) -> String {
    let one_line: String = visible(&s.split_whitespace().collect::<Vec<_>>().join(" "));
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

fn list<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DriftKind::*;
        write!(f, "[{}] ", self.severity())?;
        match (&self.tool, self.content()) {
            (Some(t), _) => write!(f, "tool {t:?}: ")?,
            (None, Some(entry)) => write!(f, "{entry}: ")?,
            (None, None) => f.write_str("server: ")?,
        }
        let text_change = |f: &mut fmt::Formatter<'_>,
                           what: &str,
                           added: &str,
                           sus: &[Finding],
                           cues: &TextCues| {
            write!(f, "{what} changed")?;
            if !added.is_empty() {
                write!(f, ", added {:?}", short(added, 80))?;
            }
            if !cues.is_empty() {
                write!(f, "; {}", visible(&cues.to_string()))?;
            }
            if !sus.is_empty() {
                write!(f, "; SUSPICIOUS: {}", list(sus))?;
            }
            Ok(())
        };
        match &self.kind {
            ToolAdded {
                destructive,
                open_world,
                suspicious,
            } => {
                f.write_str("tool added")?;
                power(f, *destructive, *open_world)?;
                if !suspicious.is_empty() {
                    write!(f, "; SUSPICIOUS: {}", list(suspicious))?;
                }
                Ok(())
            }
            ToolRemoved => f.write_str("tool removed"),
            ContentAdded { entry, suspicious } => {
                write!(f, "{} added", entry.kind)?;
                if !suspicious.is_empty() {
                    write!(f, "; SUSPICIOUS: {}", list(suspicious))?;
                }
                Ok(())
            }
            ContentRemoved { entry } => write!(f, "{} removed", entry.kind),
            ContentChanged {
                fields,
                added_text,
                suspicious,
                cues,
                ..
            } => text_change(f, &fields.join(", "), added_text, suspicious, cues),
            ToolRenamed {
                from,
                to,
                destructive,
                open_world,
            } => {
                write!(f, "renamed from {from:?} to {to:?} (a new tool to agents)")?;
                power(f, *destructive, *open_world)
            }
            DescriptionChanged {
                added_text,
                suspicious,
                cues,
            } => text_change(f, "description", added_text, suspicious, cues),
            InstructionsChanged {
                added_text,
                suspicious,
                cues,
            } => text_change(f, "instructions", added_text, suspicious, cues),
            LaunchChanged { from, to } => {
                let fields = launch_fields_changed(from.as_ref(), to.as_ref());
                if from.is_none() {
                    write!(f, "launch pinned for the first time (not yet approved)")
                } else {
                    write!(f, "launch changed: {}", fields.join(", "))
                }
            }
            SuspiciousText { field, suspicious } => {
                write!(f, "{field} changed; SUSPICIOUS: {}", list(suspicious))
            }
            InputSchemaWidened { changes } => write!(f, "input schema widened: {}", list(changes)),
            InputSchemaNarrowed { changes } => {
                write!(f, "input schema narrowed: {}", list(changes))
            }
            InputSchemaChanged {
                changes,
                suspicious,
                cues,
            } => {
                write!(f, "input schema changed: {}", list(changes))?;
                if !cues.is_empty() {
                    write!(f, "; {}", visible(&cues.to_string()))?;
                }
                if !suspicious.is_empty() {
                    write!(f, "; SUSPICIOUS: {}", list(suspicious))?;
                }
                Ok(())
            }
            AnnotationFlipped { hint, from, to } => {
                write!(f, "annotation {} flipped {from} → {to}", hint.key())
            }
            AnnotationChanged { key, from, to } => {
                write!(
                    f,
                    "annotation {key} {} → {}",
                    show(from.as_ref()),
                    show(to.as_ref())
                )
            }
            OutputSchemaChanged { changes } => {
                write!(f, "output schema changed: {}", list(changes))
            }
            TitleChanged { from, to } => {
                write!(f, "title {} → {}", show(from.as_ref()), show(to.as_ref()))
            }
            MetaChanged => f.write_str("_meta changed"),
            OtherFieldChanged { field } => write!(f, "field {field:?} changed"),
        }
    }
}

fn power(f: &mut fmt::Formatter<'_>, destructive: bool, open_world: bool) -> fmt::Result {
    match (destructive, open_world) {
        (true, true) => f.write_str(" (destructive, open-world)"),
        (true, false) => f.write_str(" (destructive)"),
        (false, true) => f.write_str(" (open-world)"),
        (false, false) => Ok(()),
    }
}

/// Whether a tool may destroy, and whether it may reach the open world, by
/// its annotations with the spec's defaults (destructive only matters when
/// it is not read-only).
fn power_of(t: &Tool) -> (bool, bool) {
    let a = t.field("annotations");
    (
        !Hint::ReadOnly.effective(a) && Hint::Destructive.effective(a),
        Hint::OpenWorld.effective(a),
    )
}

/// [`diff_with`] and the default [`Scanner`] (no known hosts beyond those
/// already in the baseline text).
pub fn diff(baseline: &Surface, observed: &Surface) -> Vec<Drift> {
    diff_with(baseline, observed, &Scanner::default())
}

/// Every drift from `baseline` to `observed`: instructions first, then tools
/// by name. Empty exactly when the two surfaces hash the same.
pub fn diff_with(baseline: &Surface, observed: &Surface, scanner: &Scanner) -> Vec<Drift> {
    let mut out = Vec::new();
    let (old, new) = (
        baseline
            .instructions
            .as_deref()
            .map(crate::text::collapse_whitespace),
        observed
            .instructions
            .as_deref()
            .map(crate::text::collapse_whitespace),
    );
    if baseline.launch() != observed.launch() {
        out.push(Drift {
            tool: None,
            kind: DriftKind::LaunchChanged {
                from: baseline.launch().cloned(),
                to: observed.launch().cloned(),
            },
        });
    }
    if old != new {
        let old = old.as_deref().unwrap_or("");
        let new = new.as_deref().unwrap_or("");
        out.push(Drift {
            tool: None,
            kind: DriftKind::InstructionsChanged {
                added_text: scan::added_text(old, new),
                suspicious: scanner.new_findings(old, new),
                cues: TextCues::between(old, new),
            },
        });
    }
    // One merge pass over the two name-sorted maps.
    let (mut removed, mut added, mut changed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bi, mut oi) = (
        baseline.tools().values().peekable(),
        observed.tools().values().peekable(),
    );
    loop {
        match (bi.peek(), oi.peek()) {
            (None, None) => break,
            (Some(_), None) => removed.extend(bi.by_ref()),
            (None, Some(_)) => added.extend(oi.by_ref()),
            (Some(x), Some(y)) => match x.name().cmp(y.name()) {
                std::cmp::Ordering::Less => removed.push(bi.next().expect("peeked")),
                std::cmp::Ordering::Greater => added.push(oi.next().expect("peeked")),
                std::cmp::Ordering::Equal => {
                    let (x, y) = (bi.next().expect("peeked"), oi.next().expect("peeked"));
                    if x.hash() != y.hash() {
                        changed.push((x, y));
                    }
                }
            },
        }
    }

    // Renames: pair a removed and an added tool with the same content but name/title.
    let key = |t: &Tool| -> Digest {
        let mut m: Map = t.normalized().clone();
        m.remove("name");
        m.remove("title");
        interlock_canon::digest(&Value::Object(m))
    };
    let mut removed_by_key: BTreeMap<Digest, Vec<&Tool>> = BTreeMap::new();
    for t in &removed {
        removed_by_key.entry(key(t)).or_default().push(t);
    }
    let mut renamed_from: Vec<&str> = Vec::new();
    let mut per_tool: BTreeMap<&str, Vec<Drift>> = BTreeMap::new();
    for t in &added {
        let from = removed_by_key
            .get_mut(&key(t))
            .and_then(|v| (!v.is_empty()).then(|| v.remove(0)));
        let drifts = per_tool.entry(t.name()).or_default();
        let (destructive, open_world) = power_of(t);
        match from {
            Some(old) => {
                renamed_from.push(old.name());
                drifts.push(Drift::on(
                    t.name(),
                    DriftKind::ToolRenamed {
                        from: old.name().into(),
                        to: t.name().into(),
                        destructive,
                        open_world,
                    },
                ));
                if old.field("title") != t.field("title") {
                    drifts.push(Drift::on(
                        t.name(),
                        DriftKind::TitleChanged {
                            from: old.field("title").cloned(),
                            to: t.field("title").cloned(),
                        },
                    ));
                }
            }
            None => {
                let mut text = String::new();
                strings(Some(&Value::Object(t.normalized().clone())), &mut text);
                drifts.push(Drift::on(
                    t.name(),
                    DriftKind::ToolAdded {
                        destructive,
                        open_world,
                        suspicious: scanner.scan(&text),
                    },
                ))
            }
        }
    }
    for t in &removed {
        if !renamed_from.contains(&t.name()) {
            per_tool
                .entry(t.name())
                .or_default()
                .push(Drift::on(t.name(), DriftKind::ToolRemoved));
        }
    }
    for (old, new) in changed {
        per_tool
            .entry(new.name())
            .or_default()
            .extend(diff_tool(old, new, scanner));
    }
    out.extend(per_tool.into_values().flatten());
    diff_content(baseline, observed, scanner, &mut out);
    out
}

/// Drifts of the pinned prompts, resources and templates, by kind then key.
fn diff_content(baseline: &Surface, observed: &Surface, scanner: &Scanner, out: &mut Vec<Drift>) {
    let (old, new) = (baseline.contents(), observed.contents());
    let mut refs: Vec<&ContentRef> = old.keys().chain(new.keys()).collect();
    refs.sort();
    refs.dedup();
    for r in refs {
        let kind = match (old.get(r), new.get(r)) {
            (Some(a), Some(b)) if a.hash() == b.hash() => continue,
            (None, None) => continue,
            (Some(_), None) => DriftKind::ContentRemoved { entry: r.clone() },
            (None, Some(b)) => {
                let mut text = String::new();
                strings(Some(&Value::Object(b.normalized().clone())), &mut text);
                DriftKind::ContentAdded {
                    entry: r.clone(),
                    suspicious: scanner.scan(&text),
                }
            }
            (Some(a), Some(b)) => {
                let (mut sa, mut sb) = (String::new(), String::new());
                strings(Some(&Value::Object(a.normalized().clone())), &mut sa);
                strings(Some(&Value::Object(b.normalized().clone())), &mut sb);
                let (pa, pb) = (content_prose(a), content_prose(b));
                let mut fields: Vec<String> = a
                    .normalized()
                    .keys()
                    .chain(b.normalized().keys())
                    .filter(|k| a.field(k) != b.field(k))
                    .cloned()
                    .collect();
                fields.sort();
                fields.dedup();
                DriftKind::ContentChanged {
                    entry: r.clone(),
                    fields,
                    added_text: scan::added_text(&pa, &pb),
                    suspicious: scanner.new_findings(&sa, &sb),
                    cues: TextCues::between_with(&pa, &pb, &pa),
                }
            }
        };
        out.push(Drift { tool: None, kind });
    }
}

/// What a model reads of an entry as guidance: its description and title,
/// and (for a prompt) each argument's.
fn content_prose(c: &Content) -> String {
    let mut out = String::new();
    for key in ["title", "description"] {
        if let Some(Value::String(s)) = c.field(key) {
            out.push_str(s);
            out.push('\n');
        }
    }
    if c.kind() == ContentKind::Prompt
        && let Some(Value::Array(args)) = c.field("arguments")
    {
        for a in args {
            for key in ["title", "description"] {
                if let Some(Value::String(s)) = a.get(key) {
                    out.push_str(s);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Strings anywhere in a value, newline-joined (what a model may read of a schema).
fn strings(v: Option<&Value>, out: &mut String) {
    match v {
        Some(Value::String(s)) => {
            out.push_str(s);
            out.push('\n');
        }
        Some(Value::Array(a)) => a.iter().for_each(|x| strings(Some(x), out)),
        Some(Value::Object(m)) => m.iter().for_each(|(k, x)| {
            out.push_str(k);
            out.push('\n');
            // Schema identifiers and references are URIs no model is asked to follow.
            if !matches!(k.as_str(), "$schema" | "$id" | "$ref") {
                strings(Some(x), out);
            }
        }),
        _ => {}
    }
}

/// The prose of a schema a model reads as guidance: `description`, `title`
/// and `$comment` strings at any depth, outside data keywords.
fn prose(v: Option<&Value>, out: &mut String) {
    match v {
        Some(Value::Array(a)) => a.iter().for_each(|x| prose(Some(x), out)),
        Some(Value::Object(m)) => m.iter().for_each(|(k, x)| match (k.as_str(), x) {
            ("description" | "title" | "$comment", Value::String(s)) => {
                out.push_str(s);
                out.push('\n');
            }
            ("const" | "default" | "enum" | "examples", _) => {}
            _ => prose(Some(x), out),
        }),
        _ => {}
    }
}

fn as_text(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => interlock_canon::canonical_string(other),
    }
}

/// Drifts between two versions of the same-named tool whose hashes differ.
fn diff_tool(old: &Tool, new: &Tool, scanner: &Scanner) -> Vec<Drift> {
    let name = new.name();
    let mut out = Vec::new();
    let (o, n) = (old.normalized(), new.normalized());
    // The tool's approved prose: what it was approved as able to do.
    let mut approved = as_text(o.get("description"));
    approved.push('\n');
    prose(o.get("inputSchema"), &mut approved);
    prose(o.get("outputSchema"), &mut approved);
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            continue;
        }
        if !matches!(k.as_str(), "description" | "inputSchema") {
            // Injection wording anywhere in the surface quarantines.
            let (mut sa, mut sb) = (String::new(), String::new());
            strings(a, &mut sa);
            strings(b, &mut sb);
            let suspicious: Vec<Finding> = scanner
                .new_findings(&sa, &sb)
                .into_iter()
                .filter(|f| f.kind.quarantines())
                .collect();
            if !suspicious.is_empty() {
                out.push(Drift::on(
                    name,
                    DriftKind::SuspiciousText {
                        field: k.clone(),
                        suspicious,
                    },
                ));
            }
        }
        match k.as_str() {
            "description" => {
                let (ta, tb) = (as_text(a), as_text(b));
                out.push(Drift::on(
                    name,
                    DriftKind::DescriptionChanged {
                        added_text: scan::added_text(&ta, &tb),
                        suspicious: scanner.new_findings(&ta, &tb),
                        cues: TextCues::between_with(&ta, &tb, &approved),
                    },
                ));
            }
            "title" => out.push(Drift::on(
                name,
                DriftKind::TitleChanged {
                    from: a.cloned(),
                    to: b.cloned(),
                },
            )),
            "_meta" => out.push(Drift::on(name, DriftKind::MetaChanged)),
            "outputSchema" => out.push(Drift::on(
                name,
                DriftKind::OutputSchemaChanged {
                    changes: schema::compare(a, b),
                },
            )),
            "inputSchema" => {
                let changes = schema::compare(a, b);
                let pick = |d: Direction| {
                    changes
                        .iter()
                        .filter(|c| c.direction == d)
                        .cloned()
                        .collect::<Vec<_>>()
                };
                let (widened, narrowed, other) = (
                    pick(Direction::Widened),
                    pick(Direction::Narrowed),
                    pick(Direction::Changed),
                );
                let (mut sa, mut sb) = (String::new(), String::new());
                strings(a, &mut sa);
                strings(b, &mut sb);
                let suspicious = scanner.new_findings(&sa, &sb);
                let (mut pa, mut pb) = (String::new(), String::new());
                prose(a, &mut pa);
                prose(b, &mut pb);
                let cues = TextCues::between_with(&pa, &pb, &approved);
                if !widened.is_empty() {
                    out.push(Drift::on(
                        name,
                        DriftKind::InputSchemaWidened { changes: widened },
                    ));
                }
                if !narrowed.is_empty() {
                    out.push(Drift::on(
                        name,
                        DriftKind::InputSchemaNarrowed { changes: narrowed },
                    ));
                }
                if !other.is_empty() || !suspicious.is_empty() || !cues.is_empty() {
                    out.push(Drift::on(
                        name,
                        DriftKind::InputSchemaChanged {
                            changes: other,
                            suspicious,
                            cues,
                        },
                    ));
                }
            }
            "annotations" => annotations(name, a, b, &mut out),
            _ => out.push(Drift::on(
                name,
                DriftKind::OtherFieldChanged { field: k.clone() },
            )),
        }
    }
    out
}

fn annotations(name: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Drift>) {
    let before = out.len();
    let empty = Map::new();
    fn obj<'a>(v: Option<&'a Value>, empty: &'a Map) -> Option<&'a Map> {
        match v {
            None => Some(empty),
            Some(v) => v.as_object(),
        }
    }
    for hint in Hint::ALL {
        let (from, to) = (hint.effective(a), hint.effective(b));
        if from != to {
            out.push(Drift::on(
                name,
                DriftKind::AnnotationFlipped { hint, from, to },
            ));
        }
    }
    match (obj(a, &empty), obj(b, &empty)) {
        (Some(ma), Some(mb)) => {
            let mut keys: Vec<&String> = ma.keys().chain(mb.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (x, y) = (ma.get(k), mb.get(k));
                let flipped = Hint::ALL
                    .iter()
                    .any(|h| h.key() == k && h.effective(a) != h.effective(b));
                if x != y && !flipped {
                    out.push(Drift::on(
                        name,
                        DriftKind::AnnotationChanged {
                            key: k.clone(),
                            from: x.cloned(),
                            to: y.cloned(),
                        },
                    ));
                }
            }
        }
        _ => {
            if out.len() == before {
                out.push(Drift::on(
                    name,
                    DriftKind::OtherFieldChanged {
                        field: "annotations".into(),
                    },
                ));
            }
        }
    }
}
