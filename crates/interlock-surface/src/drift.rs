//! [`diff`]: what changed between an approved baseline surface and an
//! observed one, field by field, each change classified and rated.

use std::collections::BTreeMap;
use std::fmt;

use interlock_canon::{Digest, Map, Value};

use crate::policy::Severity;
use crate::scan::{self, Finding, Scanner};
use crate::schema::{self, Direction, SchemaChange};
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
    ToolAdded,
    /// A baseline tool no longer listed.
    ToolRemoved,
    /// A tool listed under a new name, all else but `name`/`title` identical.
    ToolRenamed {
        /// Baseline name.
        from: String,
        /// Observed name.
        to: String,
    },
    /// `description` changed.
    DescriptionChanged {
        /// Sentences of the new description absent from the old.
        added_text: String,
        /// Injection / exfiltration findings new to the description.
        suspicious: Vec<Finding>,
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
    /// The server's instructions changed.
    InstructionsChanged {
        /// Sentences of the new instructions absent from the old.
        added_text: String,
        /// Injection / exfiltration findings new to the instructions.
        suspicious: Vec<Finding>,
    },
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

    /// How much it matters (see [`Severity`]).
    pub fn severity(&self) -> Severity {
        use DriftKind::*;
        match &self.kind {
            ToolAdded | ToolRenamed { .. } => Severity::Medium,
            ToolRemoved => Severity::Low,
            DescriptionChanged {
                added_text,
                suspicious,
            }
            | InstructionsChanged {
                added_text,
                suspicious,
            } => {
                if !suspicious.is_empty() {
                    Severity::Critical
                } else if added_text.is_empty() {
                    Severity::Low
                } else {
                    Severity::Medium
                }
            }
            InputSchemaWidened { .. } => Severity::Medium,
            InputSchemaNarrowed { .. } => Severity::Low,
            InputSchemaChanged { suspicious, .. } => {
                if suspicious.is_empty() {
                    Severity::Low
                } else {
                    Severity::Critical
                }
            }
            AnnotationFlipped { hint, from, to } => match (hint, from, to) {
                // Safety claims dropped.
                (Hint::ReadOnly, true, false) | (Hint::Destructive, false, true) => Severity::High,
                // Safety claims gained: clients may now skip confirmation.
                (Hint::ReadOnly, false, true) | (Hint::Destructive, true, false) => {
                    Severity::Medium
                }
                (Hint::OpenWorld, false, true) => Severity::Medium,
                _ => Severity::Low,
            },
            OutputSchemaChanged { .. } | OtherFieldChanged { .. } => Severity::Low,
            AnnotationChanged { .. } | TitleChanged { .. } | MetaChanged => Severity::Info,
        }
    }

    /// The suspicious findings this drift carries, if any.
    pub fn findings(&self) -> &[Finding] {
        match &self.kind {
            DriftKind::DescriptionChanged { suspicious, .. }
            | DriftKind::InstructionsChanged { suspicious, .. }
            | DriftKind::InputSchemaChanged { suspicious, .. } => suspicious,
            _ => &[],
        }
    }
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
        match &self.tool {
            Some(t) => write!(f, "tool {t:?}: ")?,
            None => f.write_str("server: ")?,
        }
        let text_change = |f: &mut fmt::Formatter<'_>, what: &str, added: &str, sus: &[Finding]| {
            write!(f, "{what} changed")?;
            if !added.is_empty() {
                write!(f, ", added {:?}", short(added, 80))?;
            }
            if !sus.is_empty() {
                write!(f, "; SUSPICIOUS: {}", list(sus))?;
            }
            Ok(())
        };
        match &self.kind {
            ToolAdded => f.write_str("tool added"),
            ToolRemoved => f.write_str("tool removed"),
            ToolRenamed { from, to } => write!(f, "renamed from {from:?} to {to:?}"),
            DescriptionChanged {
                added_text,
                suspicious,
            } => text_change(f, "description", added_text, suspicious),
            InstructionsChanged {
                added_text,
                suspicious,
            } => text_change(f, "instructions", added_text, suspicious),
            InputSchemaWidened { changes } => write!(f, "input schema widened: {}", list(changes)),
            InputSchemaNarrowed { changes } => {
                write!(f, "input schema narrowed: {}", list(changes))
            }
            InputSchemaChanged {
                changes,
                suspicious,
            } => {
                write!(f, "input schema changed: {}", list(changes))?;
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

/// [`diff_with`] and the default [`Scanner`] (no known hosts beyond those
/// already in the baseline text).
pub fn diff(baseline: &Surface, observed: &Surface) -> Vec<Drift> {
    diff_with(baseline, observed, &Scanner::default())
}

/// Every drift from `baseline` to `observed`: instructions first, then tools
/// by name. Empty exactly when the two surfaces hash the same.
pub fn diff_with(baseline: &Surface, observed: &Surface, scanner: &Scanner) -> Vec<Drift> {
    let mut out = Vec::new();
    if baseline.instructions != observed.instructions {
        let old = baseline.instructions.as_deref().unwrap_or("");
        let new = observed.instructions.as_deref().unwrap_or("");
        out.push(Drift {
            tool: None,
            kind: DriftKind::InstructionsChanged {
                added_text: scan::added_text(old, new),
                suspicious: scanner.new_findings(old, new),
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
        match from {
            Some(old) => {
                renamed_from.push(old.name());
                drifts.push(Drift::on(
                    t.name(),
                    DriftKind::ToolRenamed {
                        from: old.name().into(),
                        to: t.name().into(),
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
            None => drifts.push(Drift::on(t.name(), DriftKind::ToolAdded)),
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
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            continue;
        }
        match k.as_str() {
            "description" => {
                let (ta, tb) = (as_text(a), as_text(b));
                out.push(Drift::on(
                    name,
                    DriftKind::DescriptionChanged {
                        added_text: scan::added_text(&ta, &tb),
                        suspicious: scanner.new_findings(&ta, &tb),
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
                if !other.is_empty() || !suspicious.is_empty() {
                    out.push(Drift::on(
                        name,
                        DriftKind::InputSchemaChanged {
                            changes: other,
                            suspicious,
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
