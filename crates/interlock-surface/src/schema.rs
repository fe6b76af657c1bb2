//! Comparison of two JSON Schemas (a tool's `inputSchema`): which changes let
//! more inputs through (widened), which fewer (narrowed), and which neither.
//!
//! Widened: a property added (optional or required: either is new surface),
//! a `required` entry removed, `additionalProperties` false → true/absent/schema,
//! a `type` broadened (absent = any; `integer` ⊂ `number`), `enum` values added,
//! `const`/`pattern`/`format` removed, an upper bound (`maxLength`, `maximum`,
//! `exclusiveMaximum`, `maxItems`, `maxProperties`) raised or removed, a lower
//! bound lowered or removed, an `anyOf`/`oneOf` branch added. Narrowed: the reverse.
//! Any other difference (descriptions, titles, defaults, a `type` swapped for
//! an unrelated one, …) is [`Direction::Changed`], so every difference is named.

use std::fmt;

use interlock_canon::{Map, Value};

/// Which way a change moves the set of accepted inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// More inputs accepted.
    Widened,
    /// Fewer inputs accepted.
    Narrowed,
    /// Neither, or not decidable.
    Changed,
}

/// Which keyword a schema change is about, so that severity can follow what
/// the change lets a call do rather than how much text moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// `type`. `related`: the types overlap in meaning (`integer` ⊂ `number`,
    /// or only `null` joined/left); an unrelated swap (`string` → `object`)
    /// changes what the parameter is.
    Type {
        /// Whether the old and new types are related.
        related: bool,
    },
    /// A property added.
    PropertyAdded {
        /// The property's name.
        name: String,
        /// Listed in `required`.
        required: bool,
        /// Its name or description names a secret or personal data
        /// ([`crate::cues::is_sensitive_data`]).
        sensitive: bool,
        /// Its name says it steers what the tool reaches: a path, URL,
        /// command, recipient ([`crate::cues::is_capability_input`]).
        capability: bool,
    },
    /// A property removed.
    PropertyRemoved,
    /// A `required` entry added or removed.
    Required,
    /// `additionalProperties`.
    AdditionalProperties,
    /// `enum` values added or removed.
    Enum,
    /// `const`, `pattern` or `format`.
    Constraint,
    /// A numeric bound (`maxLength`, `minimum`, …).
    Bound,
    /// `items`.
    Items,
    /// `anyOf` / `oneOf` branches.
    Branches,
    /// `default`: what the tool does when the caller says nothing.
    Default,
    /// Text read by a model (`description`, `title`, `examples`, `$comment`).
    Text,
    /// Any other keyword, or a rewrite with no classified effect.
    Other,
}

/// One schema change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaChange {
    /// JSON Pointer of the (sub)schema, `""` for the root.
    pub path: String,
    /// Which way.
    pub direction: Direction,
    /// Which keyword.
    pub kind: ChangeKind,
    /// What, for a reviewer: `property "x" added`, `maxLength 100 → removed`, …
    pub what: String,
}

impl fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.what)
        } else {
            write!(f, "{}: {}", self.path, self.what)
        }
    }
}

/// Every difference between `old` and `new` (`None` = absent schema).
pub fn compare(old: Option<&Value>, new: Option<&Value>) -> Vec<SchemaChange> {
    let mut out = Vec::new();
    match (old, new) {
        (None, None) => {}
        (Some(o), Some(n)) => compare_at("", o, n, &mut out),
        (None, Some(_)) => push(
            &mut out,
            "",
            Direction::Narrowed,
            ChangeKind::Other,
            "schema added".into(),
        ),
        (Some(_), None) => push(
            &mut out,
            "",
            Direction::Widened,
            ChangeKind::Other,
            "schema removed".into(),
        ),
    }
    out
}

fn push(
    out: &mut Vec<SchemaChange>,
    path: &str,
    direction: Direction,
    kind: ChangeKind,
    what: String,
) {
    out.push(SchemaChange {
        path: path.to_owned(),
        direction,
        kind,
        what,
    });
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(v) => {
            let s = interlock_canon::canonical_string(v);
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(60).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

const HANDLED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "pattern",
    "format",
    "items",
    "anyOf",
    "oneOf",
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
];
const UPPER: &[&str] = &[
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
];
const LOWER: &[&str] = &[
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
];

fn compare_at(path: &str, old: &Value, new: &Value, out: &mut Vec<SchemaChange>) {
    if old == new {
        return;
    }
    let (o, n) = match (old, new) {
        (Value::Object(o), Value::Object(n)) => (o, n),
        (_, Value::Bool(true)) | (Value::Bool(false), _) => {
            return push(
                out,
                path,
                Direction::Widened,
                ChangeKind::Other,
                format!("{} → {}", show(Some(old)), show(Some(new))),
            );
        }
        (Value::Bool(true), _) | (_, Value::Bool(false)) => {
            return push(
                out,
                path,
                Direction::Narrowed,
                ChangeKind::Other,
                format!("{} → {}", show(Some(old)), show(Some(new))),
            );
        }
        _ => {
            return push(
                out,
                path,
                Direction::Changed,
                ChangeKind::Other,
                format!("{} → {}", show(Some(old)), show(Some(new))),
            );
        }
    };
    let before = out.len();
    types(path, o.get("type"), n.get("type"), out);
    properties(path, o, n, out);
    required(path, o, n, out);
    additional(
        path,
        o.get("additionalProperties"),
        n.get("additionalProperties"),
        out,
    );
    enums(path, o.get("enum"), n.get("enum"), out);
    for k in ["const", "pattern", "format"] {
        presence(path, k, o.get(k), n.get(k), out);
    }
    for k in UPPER {
        bound(path, k, o.get(*k), n.get(*k), true, out);
    }
    for k in LOWER {
        bound(path, k, o.get(*k), n.get(*k), false, out);
    }
    match (o.get("items"), n.get("items")) {
        (Some(a @ Value::Object(_)), Some(b @ Value::Object(_))) => {
            compare_at(&format!("{path}/items"), a, b, out)
        }
        (a, b) if a != b => {
            let dir = match (a, b) {
                (Some(_), None) => Direction::Widened,
                (None, Some(_)) => Direction::Narrowed,
                _ => Direction::Changed,
            };
            push(
                out,
                path,
                dir,
                ChangeKind::Items,
                format!("items {} → {}", show(a), show(b)),
            );
        }
        _ => {}
    }
    for k in ["anyOf", "oneOf"] {
        branches(path, k, o.get(k), n.get(k), out);
    }
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        if HANDLED.contains(&k.as_str()) {
            continue;
        }
        let (a, b) = (o.get(k), n.get(k));
        if a != b {
            let kind = match k.as_str() {
                "default" => ChangeKind::Default,
                "description" | "title" | "examples" | "$comment" => ChangeKind::Text,
                _ => ChangeKind::Other,
            };
            push(
                out,
                path,
                Direction::Changed,
                kind,
                format!("{k} {} → {}", show(a), show(b)),
            );
        }
    }
    if out.len() == before {
        // Raw difference with no effect we classify (e.g. absent vs. explicit default).
        push(
            out,
            path,
            Direction::Changed,
            ChangeKind::Other,
            "rewritten without effect on accepted inputs".into(),
        );
    }
}

fn type_set(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => Some(
            a.iter()
                .map(|t| t.as_str().map_or_else(|| show(Some(t)), str::to_owned))
                .collect(),
        ),
        other => Some(vec![show(Some(other))]),
    }
}

fn covers(set: &Option<Vec<String>>, t: &str) -> bool {
    match set {
        None => true,
        Some(s) => s
            .iter()
            .any(|x| x == t || (t == "integer" && x == "number")),
    }
}

fn types(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<SchemaChange>) {
    if old == new {
        return;
    }
    let (a, b) = (type_set(old), type_set(new));
    let new_covers_old = match &a {
        None => b.is_none(),
        Some(a) => a.iter().all(|t| covers(&b, t)),
    };
    let old_covers_new = match &b {
        None => a.is_none(),
        Some(b) => b.iter().all(|t| covers(&a, t)),
    };
    let dir = match (new_covers_old, old_covers_new) {
        (true, false) => Direction::Widened,
        (false, true) => Direction::Narrowed,
        _ => Direction::Changed,
    };
    let what = match dir {
        Direction::Widened => "type broadened",
        Direction::Narrowed => "type restricted",
        Direction::Changed => "type changed",
    };
    let related = related_types(&a, &b);
    push(
        out,
        path,
        dir,
        ChangeKind::Type { related },
        format!("{what}: {} → {}", show(old), show(new)),
    );
}

/// Two type sets are related when they differ only by `null` or by
/// `integer` standing for `number`: the parameter still means the same thing.
fn related_types(a: &Option<Vec<String>>, b: &Option<Vec<String>>) -> bool {
    let core = |s: &Option<Vec<String>>| -> Option<Vec<String>> {
        let mut v: Vec<String> = s
            .as_ref()?
            .iter()
            .filter(|t| t.as_str() != "null")
            .map(|t| {
                if t == "integer" {
                    "number".to_owned()
                } else {
                    t.clone()
                }
            })
            .collect();
        v.sort();
        v.dedup();
        Some(v)
    };
    core(a) == core(b)
}

fn properties(path: &str, o: &Map, n: &Map, out: &mut Vec<SchemaChange>) {
    let empty = Map::new();
    let po = o.get("properties").and_then(Value::as_object);
    let pn = n.get("properties").and_then(Value::as_object);
    if po.is_none() && pn.is_none() {
        if o.get("properties") != n.get("properties") {
            push(
                out,
                path,
                Direction::Changed,
                ChangeKind::Other,
                format!(
                    "properties {} → {}",
                    show(o.get("properties")),
                    show(n.get("properties"))
                ),
            );
        }
        return;
    }
    let (po, pn) = (po.unwrap_or(&empty), pn.unwrap_or(&empty));
    for (k, v) in pn {
        match po.get(k) {
            None => {
                let req = is_required(n, k);
                let sensitive = crate::cues::is_sensitive_data(k, v);
                let capability = crate::cues::is_capability_input(k);
                push(
                    out,
                    path,
                    Direction::Widened,
                    ChangeKind::PropertyAdded {
                        name: k.clone(),
                        required: req,
                        sensitive,
                        capability,
                    },
                    format!(
                        "{} property {k:?} added",
                        if req { "required" } else { "optional" }
                    ),
                );
            }
            Some(old) => compare_at(&format!("{path}/properties/{}", escape(k)), old, v, out),
        }
    }
    for k in po.keys() {
        if !pn.contains_key(k) {
            push(
                out,
                path,
                Direction::Narrowed,
                ChangeKind::PropertyRemoved,
                format!("property {k:?} removed"),
            );
        }
    }
}

fn is_required(schema: &Map, key: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(key)))
}

fn required(path: &str, o: &Map, n: &Map, out: &mut Vec<SchemaChange>) {
    let list = |m: &Map| -> Vec<Value> {
        m.get("required")
            .and_then(Value::as_array)
            .map(<[Value]>::to_vec)
            .unwrap_or_default()
    };
    let (a, b) = (list(o), list(n));
    for r in a.iter().filter(|r| !b.contains(r)) {
        push(
            out,
            path,
            Direction::Widened,
            ChangeKind::Required,
            format!("required {} removed", show(Some(r))),
        );
    }
    for r in b.iter().filter(|r| !a.contains(r)) {
        push(
            out,
            path,
            Direction::Narrowed,
            ChangeKind::Required,
            format!("required {} added", show(Some(r))),
        );
    }
}

fn additional(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<SchemaChange>) {
    // absent ≡ true (anything); false = nothing; a schema = some things.
    let rank = |v: Option<&Value>| match v {
        None | Some(Value::Bool(true)) => 2,
        Some(Value::Bool(false)) => 0,
        Some(_) => 1,
    };
    let (a, b) = (rank(old), rank(new));
    let what = || format!("additionalProperties {} → {}", show(old), show(new));
    if b > a {
        push(
            out,
            path,
            Direction::Widened,
            ChangeKind::AdditionalProperties,
            what(),
        );
    } else if b < a {
        push(
            out,
            path,
            Direction::Narrowed,
            ChangeKind::AdditionalProperties,
            what(),
        );
    } else if a == 1
        && let (Some(x), Some(y)) = (old, new)
    {
        compare_at(&format!("{path}/additionalProperties"), x, y, out);
    }
}

fn enums(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<SchemaChange>) {
    if old == new {
        return;
    }
    match (old.and_then(Value::as_array), new.and_then(Value::as_array)) {
        (Some(a), Some(b)) => {
            let added: Vec<String> = b
                .iter()
                .filter(|v| !a.contains(v))
                .map(|v| show(Some(v)))
                .collect();
            let removed: Vec<String> = a
                .iter()
                .filter(|v| !b.contains(v))
                .map(|v| show(Some(v)))
                .collect();
            if !added.is_empty() {
                push(
                    out,
                    path,
                    Direction::Widened,
                    ChangeKind::Enum,
                    format!("enum values added: {}", added.join(", ")),
                );
            }
            if !removed.is_empty() {
                push(
                    out,
                    path,
                    Direction::Narrowed,
                    ChangeKind::Enum,
                    format!("enum values removed: {}", removed.join(", ")),
                );
            }
        }
        _ => presence(path, "enum", old, new, out),
    }
}

/// A constraint keyword: added narrows, removed widens, changed is neither.
fn presence(
    path: &str,
    k: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<SchemaChange>,
) {
    let dir = match (old, new) {
        (a, b) if a == b => return,
        (Some(_), None) => Direction::Widened,
        (None, Some(_)) => Direction::Narrowed,
        _ => Direction::Changed,
    };
    let kind = match k {
        "enum" => ChangeKind::Enum,
        "anyOf" | "oneOf" => ChangeKind::Branches,
        _ => ChangeKind::Constraint,
    };
    push(
        out,
        path,
        dir,
        kind,
        format!("{k} {} → {}", show(old), show(new)),
    );
}

fn bound(
    path: &str,
    k: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    upper: bool,
    out: &mut Vec<SchemaChange>,
) {
    if old == new {
        return;
    }
    let num = |v: Option<&Value>| v.and_then(Value::as_number).map(|n| n.as_f64());
    let dir = match (num(old), num(new)) {
        (Some(_), None) if new.is_none() => Direction::Widened,
        (None, Some(_)) if old.is_none() => Direction::Narrowed,
        (Some(a), Some(b)) => {
            if (b > a) == upper {
                Direction::Widened
            } else {
                Direction::Narrowed
            }
        }
        _ => Direction::Changed,
    };
    push(
        out,
        path,
        dir,
        ChangeKind::Bound,
        format!("{k} {} → {}", show(old), show(new)),
    );
}

fn branches(
    path: &str,
    k: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<SchemaChange>,
) {
    if old == new {
        return;
    }
    match (old.and_then(Value::as_array), new.and_then(Value::as_array)) {
        (Some(a), Some(b)) => {
            let added = b.iter().filter(|v| !a.contains(v)).count();
            let removed = a.iter().filter(|v| !b.contains(v)).count();
            if added > 0 {
                push(
                    out,
                    path,
                    Direction::Widened,
                    ChangeKind::Branches,
                    format!("{k}: {added} branch(es) added"),
                );
            }
            if removed > 0 {
                push(
                    out,
                    path,
                    Direction::Narrowed,
                    ChangeKind::Branches,
                    format!("{k}: {removed} branch(es) removed"),
                );
            }
            if added == 0 && removed == 0 {
                push(
                    out,
                    path,
                    Direction::Changed,
                    ChangeKind::Branches,
                    format!("{k}: branches reordered or repeated"),
                );
            }
        }
        _ => presence(path, k, old, new, out),
    }
}
