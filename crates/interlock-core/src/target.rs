//! Object targets (issue 23 item 3): `target: {kind, id, …}`, checked against the
//! schema the policy declares for its kind.
//!
//! A string target says *where* ("/srv/app/config.toml"); an object target also says
//! *what kind of thing* it is and carries the fields an adapter needs
//! (`{kind: service, id: checkout, namespace: shop}`). The kind decides the schema:
//! each declared kind lists its fields as [`SchemaExtension`]s (the same typed field
//! a deployment adds to the body, here at stage level), so a reviewer never sees a
//! target whose shape the deployment did not declare. The `id` is what adapters act
//! on and what forbidden globs match.

use crate::canon::{Map, Value};
use crate::extension::SchemaExtension;
use crate::schema::{SchemaError, child_path};

/// A stage's or check's object target, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectTarget {
    pub kind: String,
    pub id: String,
    /// The kind's other fields, by name, as written.
    pub fields: Map,
}

/// A target kind a policy declares: its name and its fields.
#[derive(Clone, Debug)]
pub struct TargetKind {
    pub kind: String,
    pub description: String,
    /// The fields besides `kind` and `id`; any other field is rejected.
    pub fields: Vec<SchemaExtension>,
}

/// Reads an object target at `path` (built only for an error: every stage and
/// check of a plan may have one, and validation runs on every propose), checked
/// against its declared kind.
pub(crate) fn read_target(
    value: &Value,
    path: &dyn Fn() -> String,
    kinds: &[TargetKind],
    errors: &mut Vec<SchemaError>,
) -> Option<ObjectTarget> {
    let Value::Object(map) = value else {
        errors.push(SchemaError {
            path: path(),
            message: format!("must be an object, found {}", value.kind()),
        });
        return None;
    };
    let err = |errors: &mut Vec<SchemaError>, key: &str, message: String| {
        errors.push(SchemaError {
            path: child_path(&path(), key),
            message,
        })
    };
    let text = |errors: &mut Vec<SchemaError>, key: &str| match map.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::String(_)) => {
            err(errors, key, format!("`{key}` must not be empty"));
            None
        }
        Some(other) => {
            err(
                errors,
                key,
                format!("`{key}` must be a string, found {}", other.kind()),
            );
            None
        }
        None => {
            err(errors, key, format!("missing required field `{key}`"));
            None
        }
    };
    let kind = text(errors, "kind");
    let id = text(errors, "id");
    let kind = kind?;
    let Some(spec) = kinds.iter().find(|k| k.kind == kind) else {
        let message = if kinds.is_empty() {
            format!(
                "target kind `{kind}` is not declared: this policy declares no target kinds, so targets must be strings"
            )
        } else {
            format!(
                "target kind `{kind}` is not declared by the policy (one of {})",
                kinds
                    .iter()
                    .map(|k| format!("`{}`", k.kind))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        err(errors, "kind", message);
        return None;
    };
    let mut fields = Map::new();
    let mut ok = true;
    for field in &spec.fields {
        match map.get(&field.name) {
            Some(v) => {
                if let Err(message) = field.check(v) {
                    err(errors, &field.name, message);
                    ok = false;
                }
                fields.insert(field.name.clone(), v.clone());
            }
            None if field.required => {
                err(
                    errors,
                    &field.name,
                    format!(
                        "missing required field `{}` (of target kind `{kind}`)",
                        field.name
                    ),
                );
                ok = false;
            }
            None => {}
        }
    }
    for key in map.keys() {
        if key != "kind" && key != "id" && !spec.fields.iter().any(|f| &f.name == key) {
            err(errors, key, format!("unknown field `{key}`"));
            ok = false;
        }
    }
    ok.then_some(())?;
    Some(ObjectTarget {
        kind,
        id: id?,
        fields,
    })
}
