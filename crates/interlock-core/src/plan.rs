//! The plan: an envelope that describes it and a hashed body of ordered stages.
//!
//! Only the body is hashed and bound by approvals: it is everything that decides
//! what runs. The envelope says who proposed it and when; the approval statement
//! binds the `plan_id` separately. See `docs/SCHEMA.md` for every field.

use crate::canon::{self, Digest, Map, Value};
use crate::policy::SchemaExtension;
use crate::schema::{ObjectReader, SchemaError, child_path, index_path};

/// The only plan schema version this core understands.
pub const PLAN_SCHEMA_VERSION: &str = "interlock.plan/v1";

/// Bounds that keep a plan reviewable by a human and cheap to validate.
pub const MAX_STAGES: usize = 256;
pub const MAX_CHECKS_PER_STAGE: usize = 64;
pub const MAX_ID_LEN: usize = 128;

/// A plan as proposed: envelope fields plus the typed body and the exact body value.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub schema_version: String,
    pub plan_id: String,
    pub title: String,
    pub proposer: String,
    /// RFC 3339 UTC timestamp, as the proposer wrote it.
    pub created_at: String,
    pub description: Option<String>,
    /// The hash the proposer claims for the body; when present it must recompute.
    pub claimed_hash: Option<Digest>,
    pub body: PlanBody,
    /// The body exactly as received: this, canonicalized, is what gets hashed.
    pub body_value: Value,
}

/// The hashed part of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanBody {
    pub stages: Vec<Stage>,
    /// The deployment's own fields ([`SchemaExtension`]s), by name.
    pub extensions: Map,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub id: String,
    pub action: String,
    pub target: String,
    pub params: Map,
    /// Probed against live state before dispatch; unmet or unprobeable halts.
    pub preconditions: Vec<Check>,
    /// Probed after dispatch; a failure halts the plan.
    pub verify: Vec<Check>,
    /// A described remedy for a human; never run automatically.
    pub rollback: Option<String>,
}

/// A typed probe of live state.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub probe: String,
    /// What to probe; defaults to the stage's target.
    pub target: Option<String>,
    pub params: Map,
    pub description: Option<String>,
}

impl Plan {
    /// The plan hash: `sha256:` + hex of SHA-256 over the JCS bytes of the body.
    pub fn hash(&self) -> Digest {
        canon::digest(&self.body_value)
    }

    /// Reads a plan document, collecting every schema problem. `extensions` are the
    /// deployment's declared body fields; any other unknown field is an error.
    pub fn from_value(
        doc: &Value,
        extensions: &[SchemaExtension],
    ) -> Result<Plan, Vec<SchemaError>> {
        let mut errors = Vec::new();
        let plan = read_plan(doc, extensions, &mut errors);
        match plan {
            Some(plan) if errors.is_empty() => Ok(plan),
            _ => Err(errors),
        }
    }

    /// The stage with this id.
    pub fn stage(&self, id: &str) -> Option<&Stage> {
        self.body.stages.iter().find(|s| s.id == id)
    }
}

impl Check {
    /// The target this check probes: its own, or its stage's.
    pub fn target_or<'a>(&'a self, stage: &'a Stage) -> &'a str {
        self.target.as_deref().unwrap_or(&stage.target)
    }
}

fn read_plan(
    doc: &Value,
    extensions: &[SchemaExtension],
    errors: &mut Vec<SchemaError>,
) -> Option<Plan> {
    let mut r = ObjectReader::new(doc, "$", errors)?;
    let schema_version = r.string("schema_version", errors);
    if let Some(v) = &schema_version
        && v != PLAN_SCHEMA_VERSION
    {
        errors.push(r.error(
            "schema_version",
            format!("unsupported schema_version `{v}` (expected `{PLAN_SCHEMA_VERSION}`)"),
        ));
    }
    let plan_id = r.string("plan_id", errors);
    if let Some(id) = &plan_id
        && !is_identifier(id, MAX_ID_LEN, true)
    {
        errors.push(r.error(
            "plan_id",
            "`plan_id` must be 1–128 characters of A–Z, a–z, 0–9, `.`, `_`, `-`, starting with a letter or digit".into(),
        ));
    }
    let title = r.string("title", errors);
    let proposer = r.string("proposer", errors);
    let created_at = r.string("created_at", errors);
    if let Some(t) = &created_at
        && !is_rfc3339_utc(t)
    {
        errors.push(r.error(
            "created_at",
            format!("`created_at` must be an RFC 3339 UTC timestamp like 2026-01-31T12:00:00Z, found `{t}`"),
        ));
    }
    let description = r.opt_string("description", errors).flatten();
    let claimed_hash = match r.get("plan_hash") {
        None => None,
        Some(Value::String(s)) => match s.parse::<Digest>() {
            Ok(d) => Some(d),
            Err(_) => {
                errors.push(r.error(
                    "plan_hash",
                    "`plan_hash` must be `sha256:` followed by 64 lowercase hex digits".into(),
                ));
                None
            }
        },
        Some(other) => {
            errors.push(r.error(
                "plan_hash",
                format!("`plan_hash` must be a string, found {}", other.kind()),
            ));
            None
        }
    };
    let body_value = r.get("body");
    r.finish(errors, |_| false);
    let Some(body_value) = body_value else {
        errors.push(SchemaError {
            path: "$.body".into(),
            message: "missing required field `body`".into(),
        });
        return None;
    };
    let body = read_body(body_value, extensions, errors);
    Some(Plan {
        schema_version: schema_version?,
        plan_id: plan_id?,
        title: title?,
        proposer: proposer?,
        created_at: created_at?,
        description,
        claimed_hash,
        body: body?,
        body_value: body_value.clone(),
    })
}

fn read_body(
    value: &Value,
    extensions: &[SchemaExtension],
    errors: &mut Vec<SchemaError>,
) -> Option<PlanBody> {
    let mut r = ObjectReader::new(value, "$.body", errors)?;
    let stages_value = r.get("stages");
    let mut ext_values = Map::new();
    for ext in extensions {
        let path = r.path_of(&ext.name);
        match r.get(&ext.name) {
            Some(v) => {
                if let Err(message) = ext.check(v) {
                    errors.push(SchemaError { path, message });
                }
                ext_values.insert(ext.name.clone(), v.clone());
            }
            None if ext.required => errors.push(SchemaError {
                path,
                message: format!(
                    "missing required field `{}` (a schema extension of this deployment)",
                    ext.name
                ),
            }),
            None => {}
        }
    }
    r.finish(errors, |_| false);
    let stages = match stages_value {
        None => {
            errors.push(SchemaError {
                path: "$.body.stages".into(),
                message: "missing required field `stages`".into(),
            });
            return None;
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            errors.push(SchemaError {
                path: "$.body.stages".into(),
                message: format!("`stages` must be an array, found {}", other.kind()),
            });
            return None;
        }
    };
    if stages.is_empty() {
        errors.push(SchemaError {
            path: "$.body.stages".into(),
            message: "a plan needs at least one stage".into(),
        });
    }
    if stages.len() > MAX_STAGES {
        errors.push(SchemaError {
            path: "$.body.stages".into(),
            message: format!(
                "a plan has at most {MAX_STAGES} stages, found {}",
                stages.len()
            ),
        });
        return None;
    }
    let mut out = Vec::with_capacity(stages.len());
    let mut ok = true;
    for (i, s) in stages.iter().enumerate() {
        match read_stage(s, &index_path("$.body.stages", i), errors) {
            Some(stage) => out.push(stage),
            None => ok = false,
        }
    }
    ok.then_some(PlanBody {
        stages: out,
        extensions: ext_values,
    })
}

fn read_stage(value: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<Stage> {
    let mut r = ObjectReader::new(value, path, errors)?;
    let id = r.string("id", errors);
    if let Some(id) = &id
        && !is_identifier(id, 64, false)
    {
        errors.push(r.error(
            "id",
            "a stage `id` must be 1–64 characters of a–z, 0–9, `_`, `-`, starting with a letter or digit".into(),
        ));
    }
    let action = r.string("action", errors);
    let target = r.string("target", errors);
    let params = r.opt_object("params", errors);
    let preconditions = read_checks(&mut r, "preconditions", errors);
    let verify = read_checks(&mut r, "verify", errors);
    let rollback = r.opt_string("rollback", errors);
    r.finish(errors, |_| false);
    Some(Stage {
        id: id?,
        action: action?,
        target: target?,
        params: params?,
        preconditions: preconditions?,
        verify: verify?,
        rollback: rollback?,
    })
}

fn read_checks<'a>(
    r: &mut ObjectReader<'a>,
    key: &'a str,
    errors: &mut Vec<SchemaError>,
) -> Option<Vec<Check>> {
    let path = r.path_of(key);
    let items = r.opt_array(key, errors)?;
    if items.len() > MAX_CHECKS_PER_STAGE {
        errors.push(SchemaError {
            path,
            message: format!(
                "at most {MAX_CHECKS_PER_STAGE} checks per list, found {}",
                items.len()
            ),
        });
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match read_check(item, &index_path(&path, i), errors) {
            Some(c) => out.push(c),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn read_check(value: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<Check> {
    let mut r = ObjectReader::new(value, path, errors)?;
    let probe = r.string("probe", errors);
    let target = r.opt_string("target", errors);
    let params = r.opt_object("params", errors);
    let description = r.opt_string("description", errors);
    r.finish(errors, |_| false);
    Some(Check {
        probe: probe?,
        target: target?,
        params: params?,
        description: description?,
    })
}

/// Letters, digits, `_`, `-` (and `.` and upper case when `loose`), starting with a
/// letter or digit: safe in paths, URLs, logs and file names.
fn is_identifier(s: &str, max: usize, loose: bool) -> bool {
    let ok_char = |c: char| {
        c.is_ascii_digit()
            || c.is_ascii_lowercase()
            || c == '_'
            || c == '-'
            || (loose && (c.is_ascii_uppercase() || c == '.'))
    };
    !s.is_empty()
        && s.len() <= max
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().all(ok_char)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with plausible field ranges.
pub fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 || *b.last().unwrap_or(&0) != b'Z' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(u32::MAX);
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let tail = &b[19..b.len() - 1];
    let fraction_ok = tail.is_empty()
        || (tail[0] == b'.' && tail.len() > 1 && tail[1..].iter().all(u8::is_ascii_digit));
    shape
        && fraction_ok
        && (1..=12).contains(&num(5..7))
        && (1..=31).contains(&num(8..10))
        && num(11..13) <= 23
        && num(14..16) <= 59
        && num(17..19) <= 60
}

/// JSON path of a stage's field, for violations found after parsing.
pub fn stage_path(index: usize, field: Option<&str>) -> String {
    let base = index_path("$.body.stages", index);
    match field {
        Some(f) => child_path(&base, f),
        None => base,
    }
}
