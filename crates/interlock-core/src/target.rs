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
use crate::policy::SchemaExtension;
use crate::schema::{ObjectReader, SchemaError, child_path};

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

/// Reads an object target at `path`, checked against its declared kind.
pub(crate) fn read_target(
    value: &Value,
    path: &str,
    kinds: &[TargetKind],
    errors: &mut Vec<SchemaError>,
) -> Option<ObjectTarget> {
    let mut r = ObjectReader::new(value, path, errors)?;
    let kind = r.string("kind", errors);
    let id = r.string("id", errors);
    let Some(kind) = kind else {
        r.finish(errors, |_| true);
        return None;
    };
    let Some(spec) = kinds.iter().find(|k| k.kind == kind) else {
        errors.push(r.error(
            "kind",
            if kinds.is_empty() {
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
            },
        ));
        r.finish(errors, |_| true);
        return None;
    };
    let mut fields = Map::new();
    let mut ok = true;
    for field in &spec.fields {
        match r.get(&field.name) {
            Some(v) => {
                if let Err(message) = field.check(v) {
                    errors.push(SchemaError {
                        path: child_path(path, &field.name),
                        message,
                    });
                    ok = false;
                }
                fields.insert(field.name.clone(), v.clone());
            }
            None if field.required => {
                errors.push(SchemaError {
                    path: child_path(path, &field.name),
                    message: format!(
                        "missing required field `{}` (of target kind `{kind}`)",
                        field.name
                    ),
                });
                ok = false;
            }
            None => {}
        }
    }
    r.finish(errors, |_| false);
    ok.then_some(())?;
    Some(ObjectTarget {
        kind,
        id: id?,
        fields,
    })
}
