//! The plan: an envelope that describes it and a hashed body of ordered stages.
//!
//! Only the body is hashed and bound by approvals: it is everything that decides
//! what runs. The envelope says who proposed it and when; the approval statement
//! binds the `plan_id` separately. See `docs/SCHEMA.md` for every field.

use crate::canon::{self, Digest, Map, Value};
use crate::expect::{ExpectOp, Expectation};
use crate::extension::SchemaExtension;
use crate::schema::{ObjectReader, SchemaError, child_path, index_path};
use crate::target::{ObjectTarget, TargetKind, read_target};

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
    /// The halted plan this one rolls back (issue 23 item 1): part of the hashed
    /// body, so the reviewer approves "undo *that* execution", not just the stages.
    pub rollback_of: Option<RollbackOf>,
}

impl std::fmt::Display for Rollback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rollback::Described(text) => f.write_str(text),
            Rollback::Compensate(undo) => {
                write!(f, "compensate: {} → {}", undo.action, undo.target)
            }
            Rollback::Irreversible { justification } => write!(f, "irreversible: {justification}"),
        }
    }
}

/// `body.rollback_of`: the halted plan, revision and body a rollback plan undoes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RollbackOf {
    pub plan_id: String,
    pub revision: i64,
    pub plan_hash: Digest,
}

/// How a stage is undone. Never run by itself: on a halted plan the committed
/// stages' compensations become a new plan that is reviewed like any other.
#[derive(Clone, Debug, PartialEq)]
pub enum Rollback {
    /// A remedy described for a human (the original form: a string).
    Described(String),
    /// A compensating stage, validated like any stage (known action, typed params,
    /// its own preconditions). Its `id` is its stage's; it has no rollback itself.
    Compensate(Box<Stage>),
    /// The stage cannot be undone, and the proposer says why.
    Irreversible { justification: String },
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub id: String,
    pub action: String,
    /// What the action acts on: a string target as written, or an object target's
    /// `id` — what adapters act on either way.
    pub target: String,
    /// An object target's kind and fields (`None` for a string target).
    pub target_object: Option<ObjectTarget>,
    pub params: Map,
    /// Probed against live state before dispatch; unmet or unprobeable halts.
    pub preconditions: Vec<Check>,
    /// Probed after dispatch; a failure halts the plan.
    pub verify: Vec<Check>,
    /// How to undo the stage; never run automatically.
    pub rollback: Option<Rollback>,
}

/// A typed probe of live state.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub probe: String,
    /// What to probe (a string, or an object target's `id`); defaults to the
    /// stage's target.
    pub target: Option<String>,
    /// An object target's kind and fields, when the check names one.
    pub target_object: Option<ObjectTarget>,
    pub params: Map,
    pub description: Option<String>,
    /// What the probe's typed value must be (issue 23 item 2).
    pub expect: Option<Expectation>,
}

/// What a plan document is read against: the deployment's body fields and its
/// declared target kinds.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlanSchema<'a> {
    pub extensions: &'a [SchemaExtension],
    pub target_kinds: &'a [TargetKind],
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
        Plan::read(
            doc,
            PlanSchema {
                extensions,
                target_kinds: &[],
            },
        )
    }

    /// Reads a plan document against a deployment's schema (its body fields and
    /// target kinds), collecting every schema problem.
    pub fn read(doc: &Value, schema: PlanSchema<'_>) -> Result<Plan, Vec<SchemaError>> {
        let mut errors = Vec::new();
        let plan = read_plan(doc, schema, &mut errors);
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

    /// This check as it is probed for `stage`: without a target of its own it
    /// probes the stage's — string *and* object target, so a prober that needs the
    /// target's kind and fields (an MCP-bound probe) gets them.
    pub fn for_stage(&self, stage: &Stage) -> Check {
        let mut check = self.clone();
        if check.target.is_none() {
            check.target = Some(stage.target.clone());
            check.target_object = stage.target_object.clone();
        }
        check
    }
}

fn read_plan(doc: &Value, schema: PlanSchema<'_>, errors: &mut Vec<SchemaError>) -> Option<Plan> {
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
    let body = read_body(body_value, schema, errors);
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
    schema: PlanSchema<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<PlanBody> {
    let mut r = ObjectReader::new(value, "$.body", errors)?;
    let stages_value = r.get("stages");
    let rollback_of = match r.get("rollback_of") {
        None => Some(None),
        Some(v) => read_rollback_of(v, errors).map(Some),
    };
    let mut ext_values = Map::new();
    for ext in schema.extensions {
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
        match read_stage(s, &index_path("$.body.stages", i), schema, errors) {
            Some(stage) => out.push(stage),
            None => ok = false,
        }
    }
    ok.then_some(PlanBody {
        stages: out,
        extensions: ext_values,
        rollback_of: rollback_of?,
    })
}

fn read_rollback_of(value: &Value, errors: &mut Vec<SchemaError>) -> Option<RollbackOf> {
    let mut r = ObjectReader::new(value, "$.body.rollback_of", errors)?;
    let plan_id = r.string("plan_id", errors);
    let revision = match r.get("revision") {
        Some(v) => match v.as_number().and_then(|n| n.as_i64()) {
            Some(n) if n >= 1 => Some(n),
            _ => {
                errors.push(r.error("revision", "`revision` must be an integer ≥ 1".into()));
                None
            }
        },
        None => {
            errors.push(r.error("revision", "missing required field `revision`".into()));
            None
        }
    };
    let plan_hash = r.string("plan_hash", errors).and_then(|s| match s.parse() {
        Ok(d) => Some(d),
        Err(_) => {
            errors.push(r.error(
                "plan_hash",
                "`plan_hash` must be `sha256:` followed by 64 lowercase hex digits".into(),
            ));
            None
        }
    });
    r.finish(errors, |_| false);
    Some(RollbackOf {
        plan_id: plan_id?,
        revision: revision?,
        plan_hash: plan_hash?,
    })
}

fn read_stage(
    value: &Value,
    path: &str,
    schema: PlanSchema<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<Stage> {
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
    let target = read_required_target(&mut r, schema, errors);
    let params = r.opt_object("params", errors);
    let preconditions = read_checks(&mut r, "preconditions", schema, errors);
    let verify = read_checks(&mut r, "verify", schema, errors);
    let rollback_path = r.path_of("rollback");
    let rollback = match r.get("rollback") {
        None => Some(None),
        Some(v) => read_rollback(v, &rollback_path, id.as_deref(), schema, errors).map(Some),
    };
    r.finish(errors, |_| false);
    let (target, target_object) = target?;
    Some(Stage {
        id: id?,
        action: action?,
        target,
        target_object,
        params: params?,
        preconditions: preconditions?,
        verify: verify?,
        rollback: rollback?,
    })
}

/// A stage's `target`: a non-empty string, or an object target of a declared kind.
fn read_required_target<'a>(
    r: &mut ObjectReader<'a>,
    schema: PlanSchema<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<(String, Option<ObjectTarget>)> {
    match r.get("target") {
        Some(v @ Value::Object(_)) => {
            let path = || r.path_of("target");
            read_target(v, &path, schema.target_kinds, errors).map(|o| (o.id.clone(), Some(o)))
        }
        _ => r.string("target", errors).map(|t| (t, None)),
    }
}

/// `rollback`: a string (described), `{irreversible: true, justification}`, or a
/// compensating stage `{action, target, params, preconditions, verify}`.
fn read_rollback(
    value: &Value,
    path: &str,
    stage_id: Option<&str>,
    schema: PlanSchema<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<Rollback> {
    match value {
        Value::String(s) if !s.trim().is_empty() => return Some(Rollback::Described(s.clone())),
        Value::String(_) => {
            errors.push(SchemaError {
                path: path.to_owned(),
                message: "`rollback` must not be empty".into(),
            });
            return None;
        }
        Value::Object(m) if m.contains_key("irreversible") => {
            let mut r = ObjectReader::new(value, path, errors)?;
            let irreversible = r.get("irreversible");
            let justification = r.string("justification", errors);
            r.finish(errors, |_| false);
            if irreversible != Some(&Value::Bool(true)) {
                errors.push(SchemaError {
                    path: child_path(path, "irreversible"),
                    message: "`irreversible` must be `true` (omit it and give a compensating stage otherwise)".into(),
                });
                return None;
            }
            return Some(Rollback::Irreversible {
                justification: justification?,
            });
        }
        Value::Object(_) => {}
        other => {
            errors.push(SchemaError {
                path: path.to_owned(),
                message: format!(
                    "`rollback` must be a string, a compensating stage or `{{irreversible: true, justification}}`, found {}",
                    other.kind()
                ),
            });
            return None;
        }
    }
    let mut r = ObjectReader::new(value, path, errors)?;
    let action = r.string("action", errors);
    let target = read_required_target(&mut r, schema, errors);
    let params = r.opt_object("params", errors);
    let preconditions = read_checks(&mut r, "preconditions", schema, errors);
    let verify = read_checks(&mut r, "verify", schema, errors);
    r.finish(errors, |_| false);
    let (target, target_object) = target?;
    Some(Rollback::Compensate(Box::new(Stage {
        id: stage_id?.to_owned(),
        action: action?,
        target,
        target_object,
        params: params?,
        preconditions: preconditions?,
        verify: verify?,
        rollback: None,
    })))
}

fn read_checks<'a>(
    r: &mut ObjectReader<'a>,
    key: &'a str,
    schema: PlanSchema<'_>,
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
        match read_check(item, &index_path(&path, i), schema, errors) {
            Some(c) => out.push(c),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn read_check(
    value: &Value,
    path: &str,
    schema: PlanSchema<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<Check> {
    let mut r = ObjectReader::new(value, path, errors)?;
    let probe = r.string("probe", errors);
    let target = match r.get("target") {
        Some(v @ Value::Object(_)) => {
            let path = || r.path_of("target");
            read_target(v, &path, schema.target_kinds, errors)
                .map(|o| (Some(o.id.clone()), Some(o)))
        }
        _ => r.opt_string("target", errors).map(|t| (t, None)),
    };
    let params = r.opt_object("params", errors);
    let description = r.opt_string("description", errors);
    let expect = match r.get("expect") {
        None => Some(None),
        Some(v) => read_expect(v, &|| r.path_of("expect"), errors).map(Some),
    };
    r.finish(errors, |_| false);
    let (target, target_object) = target?;
    Some(Check {
        probe: probe?,
        target,
        target_object,
        params: params?,
        description: description?,
        expect: expect?,
    })
}

/// `expect {op, value}`; its path is built only for an error (every check of a
/// plan that uses typed probes has one).
fn read_expect(
    value: &Value,
    path: &dyn Fn() -> String,
    errors: &mut Vec<SchemaError>,
) -> Option<Expectation> {
    let err = |errors: &mut Vec<SchemaError>, key: Option<&str>, message: String| {
        let p = path();
        errors.push(SchemaError {
            path: key.map_or(p.clone(), |k| child_path(&p, k)),
            message,
        })
    };
    let Value::Object(map) = value else {
        err(
            errors,
            None,
            format!("must be an object, found {}", value.kind()),
        );
        return None;
    };
    let op = match map.get("op") {
        Some(Value::String(op)) => match ExpectOp::from_name(op) {
            Some(op) => Some(op),
            None => {
                err(
                    errors,
                    Some("op"),
                    format!(
                        "unknown `op` `{op}` (one of equals, not_equals, at_least, at_most, contains, matches)"
                    ),
                );
                None
            }
        },
        Some(other) => {
            err(
                errors,
                Some("op"),
                format!("`op` must be a string, found {}", other.kind()),
            );
            None
        }
        None => {
            err(errors, Some("op"), "missing required field `op`".into());
            None
        }
    };
    let value = map.get("value");
    if value.is_none() {
        err(
            errors,
            Some("value"),
            "missing required field `value`".into(),
        );
    }
    for key in map.keys().filter(|k| *k != "op" && *k != "value") {
        err(errors, Some(key), format!("unknown field `{key}`"));
    }
    Some(Expectation {
        op: op?,
        value: value?.clone(),
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
