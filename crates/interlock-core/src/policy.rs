//! A deployment's policy: which actions and probes exist, what is forbidden, which
//! secrets to look for, the deployment's own plan fields and invariants, and how many
//! approvers each risk level needs.
//!
//! A policy file is YAML or JSON read through the same strict intake as plans. Its
//! digest — over the *effective* policy, built-ins included — is bound into every
//! approval, so an approval given under one policy cannot be used under another.

use std::fmt;
use std::sync::Arc;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;

use crate::canon::{self, Digest, Value};
use crate::expect::ValueType;
use crate::plan::{Plan, PlanSchema};
use crate::registry::{
    ActionSpec, McpBinding, ParamSpec, ParamType, ProbeSpec, Registry, UnknownAction,
};
use crate::risk_level::RiskLevel;
use crate::schema::{ObjectReader, SchemaError, index_path};
use crate::secrets::{EntropyRule, SecretPattern, SecretScanner};
use crate::target::TargetKind;
use crate::violation::Violation;

pub use crate::extension::SchemaExtension;

/// A deployment's own rule over a schema-valid plan. It must be pure: the same plan
/// and policy always give the same violations.
pub trait CustomInvariant: Send + Sync {
    /// A stable name, e.g. `prod-needs-ticket`; it is part of the policy digest.
    fn name(&self) -> &str;
    /// What this plan breaks; empty when it keeps the rule. Use [`Violation::custom`].
    fn check(&self, plan: &Plan, policy: &Policy) -> Vec<Violation>;
}

impl<'a> PlanSchema<'a> {
    /// What `policy` declares.
    pub fn of(policy: &'a Policy) -> PlanSchema<'a> {
        PlanSchema {
            extensions: &policy.extensions,
            target_kinds: &policy.target_kinds,
        }
    }
}

pub const POLICY_SCHEMA_VERSION: &str = "interlock.policy/v1";

/// The most a policy may set `standing_max_lifetime_secs` to: one year.
pub const MAX_STANDING_LIFETIME_SECS: i64 = 366 * 24 * 3600;

/// The longest a standing approval may stand unless the policy says otherwise
/// (`standing_max_lifetime_secs`): seven days. A standing approval skips review
/// for a whole class of calls, so it must lapse and be granted again by a
/// person rather than stand forever.
pub const DEFAULT_STANDING_MAX_LIFETIME_SECS: i64 = 7 * 24 * 3600;

/// Forbidden actions and targets, as globs (`*` stays within a path segment, `**`
/// crosses them).
#[derive(Clone, Debug)]
pub struct Forbidden {
    actions: Vec<String>,
    targets: Vec<String>,
    action_set: GlobSet,
    target_set: GlobSet,
    /// Object targets forbidden by kind and id glob (issue 23 item 3).
    objects: Vec<(String, String)>,
    object_sets: Vec<(String, GlobSet)>,
}

impl Forbidden {
    pub fn new(actions: Vec<String>, targets: Vec<String>) -> Result<Forbidden, String> {
        Ok(Forbidden {
            action_set: glob_set(&actions, false)?,
            target_set: glob_set(&targets, true)?,
            actions,
            targets,
            objects: Vec::new(),
            object_sets: Vec::new(),
        })
    }

    /// Adds forbidden object targets: `(kind, id glob)` pairs.
    pub fn with_objects(mut self, objects: Vec<(String, String)>) -> Result<Forbidden, String> {
        self.object_sets = objects
            .iter()
            .map(|(kind, id)| Ok((kind.clone(), glob_set(std::slice::from_ref(id), true)?)))
            .collect::<Result<_, String>>()?;
        self.objects = objects;
        Ok(self)
    }

    /// The first `(kind, id glob)` that forbids an object target of `kind` with `id`.
    pub fn object(&self, kind: &str, id: &str) -> Option<(&str, &str)> {
        self.object_sets
            .iter()
            .zip(&self.objects)
            .find(|((k, set), _)| k == kind && set.is_match(id))
            .map(|(_, (k, g))| (k.as_str(), g.as_str()))
    }

    /// The first forbidding glob that matches `action`.
    pub fn action(&self, action: &str) -> Option<&str> {
        first_match(&self.action_set, &self.actions, action)
    }

    /// The first forbidding glob that matches `target`.
    pub fn target(&self, target: &str) -> Option<&str> {
        first_match(&self.target_set, &self.targets, target)
    }
}

fn glob_set(globs: &[String], literal_separator: bool) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob: Glob = GlobBuilder::new(g)
            .literal_separator(literal_separator)
            .build()
            .map_err(|e| format!("invalid glob `{g}`: {e}"))?;
        b.add(glob);
    }
    b.build().map_err(|e| e.to_string())
}

fn first_match<'a>(set: &GlobSet, globs: &'a [String], s: &str) -> Option<&'a str> {
    set.matches(s).into_iter().min().map(|i| globs[i].as_str())
}

/// The whole policy.
#[derive(Clone)]
pub struct Policy {
    pub registry: Registry,
    pub forbidden: Forbidden,
    pub secrets: SecretScanner,
    pub extensions: Vec<SchemaExtension>,
    /// The object-target kinds plans may use, each with its schema.
    pub target_kinds: Vec<TargetKind>,
    /// Distinct approvers required per risk level (index = `RiskLevel as usize`).
    pub quorum: [u32; 4],
    /// The longest a standing approval may stand, in seconds from its grant
    /// (a grant whose `expires_at` is later is refused).
    pub standing_max_lifetime_secs: i64,
    pub custom_invariants: Vec<Arc<dyn CustomInvariant>>,
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field("digest", &self.digest())
            .finish_non_exhaustive()
    }
}

impl Default for Policy {
    /// Built-in actions, probes and secret patterns; nothing forbidden; one approver.
    fn default() -> Self {
        Policy {
            registry: Registry::builtin(),
            forbidden: Forbidden::new(Vec::new(), Vec::new()).expect("empty globs build"),
            secrets: SecretScanner::builtin(),
            extensions: Vec::new(),
            target_kinds: Vec::new(),
            quorum: [1; 4],
            standing_max_lifetime_secs: DEFAULT_STANDING_MAX_LIFETIME_SECS,
            custom_invariants: Vec::new(),
        }
    }
}

impl Policy {
    /// Adds a deployment's own invariant.
    pub fn with_invariant(mut self, invariant: Arc<dyn CustomInvariant>) -> Policy {
        self.custom_invariants.push(invariant);
        self
    }

    /// Approvers needed for a plan of this risk.
    pub fn approvals_required(&self, risk: RiskLevel) -> u32 {
        self.quorum[risk as usize]
    }

    /// Reads a policy document (already through strict intake). Every problem is
    /// reported with its path.
    pub fn from_value(doc: &Value) -> Result<Policy, Vec<SchemaError>> {
        let mut errors = Vec::new();
        let policy = read_policy(doc, &mut errors);
        match policy {
            Some(p) if errors.is_empty() => Ok(p),
            _ => Err(errors),
        }
    }

    /// The effective policy as a value: what the digest covers.
    pub fn to_value(&self) -> Value {
        let params = |ps: &Option<Vec<ParamSpec>>| match ps {
            None => Value::Null,
            Some(ps) => Value::Array(
                ps.iter()
                    .map(|p| {
                        obj([
                            ("name", p.name.as_str().into()),
                            ("type", p.ty.name().into()),
                            ("required", p.required.into()),
                        ])
                    })
                    .collect(),
            ),
        };
        // Issue 23's fields are written only when set, so the digest of every policy
        // that does not use them stays what it was (approvals made under it hold).
        let binding = |v: &mut Value, b: &Option<McpBinding>| {
            if let (Some(b), Value::Object(m)) = (b, v) {
                m.insert(
                    "mcp".into(),
                    obj([
                        ("server", b.server.as_str().into()),
                        ("tool", b.tool.as_str().into()),
                    ]),
                );
            }
        };
        let actions = self
            .registry
            .actions()
            .map(|a| {
                let mut v = obj([
                    ("name", a.name.as_str().into()),
                    ("mutating", a.mutating.into()),
                    ("risk", a.risk.name().into()),
                    ("description", a.description.as_str().into()),
                    ("params", params(&a.params)),
                ]);
                binding(&mut v, &a.mcp);
                v
            })
            .collect();
        let probes = self
            .registry
            .probes()
            .map(|p| {
                let mut v = obj([
                    ("name", p.name.as_str().into()),
                    ("description", p.description.as_str().into()),
                    ("params", params(&p.params)),
                ]);
                binding(&mut v, &p.mcp);
                if let (Some(t), Value::Object(m)) = (p.returns, &mut v) {
                    m.insert("returns".into(), t.name().into());
                }
                v
            })
            .collect();
        let strings = |v: &[String]| Value::Array(v.iter().map(|s| s.as_str().into()).collect());
        let secrets = obj([
            (
                "patterns",
                Value::Array(
                    self.secrets
                        .patterns()
                        .iter()
                        .map(|p| {
                            obj([
                                ("name", p.name.as_str().into()),
                                ("regex", p.regex.as_str().into()),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "entropy",
                match self.secrets.entropy() {
                    None => Value::Bool(false),
                    Some(r) => obj([
                        ("min_length", number(r.min_length as f64)),
                        ("bits_per_char", number(r.bits_per_char)),
                    ]),
                },
            ),
        ]);
        let extension = |e: &SchemaExtension| {
            obj([
                ("name", e.name.as_str().into()),
                ("type", e.ty.name().into()),
                ("required", e.required.into()),
                ("description", e.description.as_str().into()),
                (
                    "pattern",
                    e.pattern
                        .as_ref()
                        .map_or(Value::Null, |r| r.as_str().into()),
                ),
                ("enum", Value::Array(e.allowed.clone())),
            ])
        };
        let extensions = self.extensions.iter().map(extension).collect();
        let quorum = obj([
            ("low", number(f64::from(self.quorum[0]))),
            ("medium", number(f64::from(self.quorum[1]))),
            ("high", number(f64::from(self.quorum[2]))),
            ("critical", number(f64::from(self.quorum[3]))),
        ]);
        let mut value = obj([
            ("policy_version", POLICY_SCHEMA_VERSION.into()),
            ("actions", Value::Array(actions)),
            ("probes", Value::Array(probes)),
            (
                "forbidden",
                obj([
                    ("actions", strings(&self.forbidden.actions)),
                    ("targets", strings(&self.forbidden.targets)),
                ]),
            ),
            ("secrets", secrets),
            ("extensions", Value::Array(extensions)),
            ("quorum", quorum),
            (
                "custom_invariants",
                Value::Array(
                    self.custom_invariants
                        .iter()
                        .map(|i| i.name().into())
                        .collect(),
                ),
            ),
        ]);
        // Written only when it differs from the default, so the digest of
        // every policy that does not set it stays what it was before the
        // field existed (approvals made under it remain valid).
        if self.standing_max_lifetime_secs != DEFAULT_STANDING_MAX_LIFETIME_SECS
            && let Value::Object(m) = &mut value
        {
            m.insert(
                "standing_max_lifetime_secs".into(),
                number(self.standing_max_lifetime_secs as f64),
            );
        }
        if let Value::Object(m) = &mut value {
            if self.registry.unknown_action != UnknownAction::Reject {
                m.insert(
                    "unknown_action".into(),
                    self.registry.unknown_action.name().into(),
                );
            }
            if !self.target_kinds.is_empty() {
                m.insert(
                    "target_kinds".into(),
                    Value::Array(
                        self.target_kinds
                            .iter()
                            .map(|k| {
                                obj([
                                    ("kind", k.kind.as_str().into()),
                                    ("description", k.description.as_str().into()),
                                    (
                                        "fields",
                                        Value::Array(k.fields.iter().map(extension).collect()),
                                    ),
                                ])
                            })
                            .collect(),
                    ),
                );
            }
            if !self.forbidden.objects.is_empty()
                && let Some(Value::Object(f)) = m.get_mut("forbidden")
            {
                f.insert(
                    "objects".into(),
                    Value::Array(
                        self.forbidden
                            .objects
                            .iter()
                            .map(|(k, id)| {
                                obj([("kind", k.as_str().into()), ("id", id.as_str().into())])
                            })
                            .collect(),
                    ),
                );
            }
        }
        value
    }

    /// The digest bound into approvals: SHA-256 over the JCS of [`Policy::to_value`].
    pub fn digest(&self) -> Digest {
        canon::digest(&self.to_value())
    }
}

fn obj<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn number(f: f64) -> Value {
    Value::Number(canon::Number::from_f64(f).expect("policy numbers are finite"))
}

fn read_policy(doc: &Value, errors: &mut Vec<SchemaError>) -> Option<Policy> {
    let mut r = ObjectReader::new(doc, "$", errors)?;
    let mut policy = Policy::default();
    if let Some(v) = r.string("policy_version", errors)
        && v != POLICY_SCHEMA_VERSION
    {
        errors.push(r.error(
            "policy_version",
            format!("unsupported policy_version `{v}` (expected `{POLICY_SCHEMA_VERSION}`)"),
        ));
    }
    for (i, item) in r.opt_array("actions", errors)?.iter().enumerate() {
        if let Some(a) = read_action(item, &index_path("$.actions", i), errors) {
            policy.registry.add_action(a);
        }
    }
    for (i, item) in r.opt_array("probes", errors)?.iter().enumerate() {
        if let Some(p) = read_probe(item, &index_path("$.probes", i), errors) {
            policy.registry.add_probe(p);
        }
    }
    if let Some(v) = r.get("forbidden") {
        let mut f = ObjectReader::new(v, "$.forbidden", errors)?;
        let actions = read_strings(&mut f, "actions", errors);
        let targets = read_strings(&mut f, "targets", errors);
        let objects = read_forbidden_objects(&mut f, errors);
        f.finish(errors, |_| false);
        match Forbidden::new(actions, targets).and_then(|fb| fb.with_objects(objects)) {
            Ok(fb) => policy.forbidden = fb,
            Err(message) => errors.push(SchemaError {
                path: "$.forbidden".into(),
                message,
            }),
        }
    }
    if let Some(v) = r.get("secrets") {
        read_secrets(v, &mut policy.secrets, errors);
    }
    for (i, item) in r.opt_array("extensions", errors)?.iter().enumerate() {
        if let Some(e) = read_extension(item, &index_path("$.extensions", i), errors) {
            if e.name == "stages"
                || e.name == "rollback_of"
                || policy.extensions.iter().any(|x| x.name == e.name)
            {
                errors.push(SchemaError {
                    path: index_path("$.extensions", i),
                    message: format!("extension field `{}` is already defined", e.name),
                });
            }
            policy.extensions.push(e);
        }
    }
    for (i, item) in r.opt_array("target_kinds", errors)?.iter().enumerate() {
        let path = index_path("$.target_kinds", i);
        if let Some(k) = read_target_kind(item, &path, errors) {
            if policy.target_kinds.iter().any(|x| x.kind == k.kind) {
                errors.push(SchemaError {
                    path,
                    message: format!("target kind `{}` is already declared", k.kind),
                });
            }
            policy.target_kinds.push(k);
        }
    }
    if let Some(s) = r.opt_string("unknown_action", errors)? {
        match UnknownAction::from_name(&s) {
            Some(u) => policy.registry.unknown_action = u,
            None => errors.push(r.error(
                "unknown_action",
                format!("unknown `unknown_action` `{s}` (one of reject, mutating, read)"),
            )),
        }
    }
    if let Some(v) = r.get("quorum") {
        let mut q = ObjectReader::new(v, "$.quorum", errors)?;
        for (i, level) in ["low", "medium", "high", "critical"]
            .into_iter()
            .enumerate()
        {
            match q.get(level) {
                None => {}
                Some(n) => match n.as_number().and_then(|n| n.as_i64()) {
                    Some(n @ 1..=16) => policy.quorum[i] = n as u32,
                    _ => errors
                        .push(q.error(level, format!("`{level}` must be an integer from 1 to 16"))),
                },
            }
        }
        q.finish(errors, |_| false);
    }
    if let Some(v) = r.get("standing_max_lifetime_secs") {
        match v.as_number().and_then(|n| n.as_i64()) {
            Some(n @ 60..=MAX_STANDING_LIFETIME_SECS) => policy.standing_max_lifetime_secs = n,
            _ => errors.push(r.error(
                "standing_max_lifetime_secs",
                format!(
                    "`standing_max_lifetime_secs` must be an integer from 60 to {MAX_STANDING_LIFETIME_SECS} (seconds)"
                ),
            )),
        }
    }
    r.finish(errors, |_| false);
    Some(policy)
}

fn read_strings<'a>(
    r: &mut ObjectReader<'a>,
    key: &'a str,
    errors: &mut Vec<SchemaError>,
) -> Vec<String> {
    let path = r.path_of(key);
    let mut out = Vec::new();
    for (i, v) in r
        .opt_array(key, errors)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        match v {
            Value::String(s) => out.push(s.clone()),
            other => errors.push(SchemaError {
                path: index_path(&path, i),
                message: format!("must be a string, found {}", other.kind()),
            }),
        }
    }
    out
}

fn read_params(
    r: &mut ObjectReader<'_>,
    errors: &mut Vec<SchemaError>,
) -> Option<Option<Vec<ParamSpec>>> {
    let path = r.path_of("params");
    let Some(v) = r.get("params") else {
        return Some(None);
    };
    let Value::Array(items) = v else {
        errors.push(SchemaError {
            path,
            message: format!("`params` must be an array, found {}", v.kind()),
        });
        return None;
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = index_path(&path, i);
        let mut pr = ObjectReader::new(item, &p, errors)?;
        let name = pr.string("name", errors);
        let ty = read_type(&mut pr, errors);
        let required = match pr.get("required") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                errors.push(pr.error("required", "`required` must be a boolean".into()));
                true
            }
        };
        pr.finish(errors, |_| false);
        out.push(ParamSpec {
            name: name?,
            ty: ty?,
            required,
        });
    }
    Some(Some(out))
}

fn read_type(r: &mut ObjectReader<'_>, errors: &mut Vec<SchemaError>) -> Option<ParamType> {
    let t = r.string("type", errors)?;
    let ty = ParamType::from_name(&t);
    if ty.is_none() {
        errors.push(r.error(
            "type",
            format!(
                "unknown type `{t}` (one of string, integer, number, boolean, string-list, object, any)"
            ),
        ));
    }
    ty
}

fn read_action(v: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<ActionSpec> {
    let mut r = ObjectReader::new(v, path, errors)?;
    let name = r.string("name", errors);
    let mutating = match r.get("mutating") {
        Some(Value::Bool(b)) => Some(*b),
        _ => {
            errors.push(r.error(
                "mutating",
                "`mutating` is required and must be a boolean".into(),
            ));
            None
        }
    };
    let risk = match r.opt_string("risk", errors)? {
        None => Some(RiskLevel::Medium),
        Some(s) => {
            let level = RiskLevel::from_name(&s);
            if level.is_none() {
                errors.push(r.error(
                    "risk",
                    format!("unknown risk `{s}` (one of low, medium, high, critical)"),
                ));
            }
            level
        }
    };
    let description = r.opt_string("description", errors)?.unwrap_or_default();
    let params = read_params(&mut r, errors);
    let mcp = read_binding(&mut r, path, errors);
    r.finish(errors, |_| false);
    Some(ActionSpec {
        name: name?,
        mutating: mutating?,
        risk: risk?,
        description,
        params: params?,
        mcp: mcp?,
    })
}

fn read_probe(v: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<ProbeSpec> {
    let mut r = ObjectReader::new(v, path, errors)?;
    let name = r.string("name", errors);
    let description = r.opt_string("description", errors)?.unwrap_or_default();
    let params = read_params(&mut r, errors);
    let returns = match r.opt_string("returns", errors)? {
        None => Some(None),
        Some(t) => {
            match ValueType::from_name(&t) {
                Some(t) => Some(Some(t)),
                None => {
                    errors.push(r.error(
                    "returns",
                    format!("unknown `returns` `{t}` (one of number, string, boolean, version, list)"),
                ));
                    None
                }
            }
        }
    };
    let mcp = read_binding(&mut r, path, errors);
    r.finish(errors, |_| false);
    Some(ProbeSpec {
        name: name?,
        description,
        params: params?,
        returns: returns?,
        mcp: mcp?,
    })
}

/// `mcp: {server, tool}`: the upstream tool that serves an action or probe.
fn read_binding(
    r: &mut ObjectReader<'_>,
    path: &str,
    errors: &mut Vec<SchemaError>,
) -> Option<Option<McpBinding>> {
    let Some(v) = r.get("mcp") else {
        return Some(None);
    };
    let mut b = ObjectReader::new(v, &crate::schema::child_path(path, "mcp"), errors)?;
    let server = b.string("server", errors);
    let tool = b.string("tool", errors);
    b.finish(errors, |_| false);
    Some(Some(McpBinding {
        server: server?,
        tool: tool?,
    }))
}

fn read_forbidden_objects(
    f: &mut ObjectReader<'_>,
    errors: &mut Vec<SchemaError>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, item) in f
        .opt_array("objects", errors)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let path = index_path("$.forbidden.objects", i);
        let Some(mut o) = ObjectReader::new(item, &path, errors) else {
            continue;
        };
        let kind = o.string("kind", errors);
        let id = o.string("id", errors);
        o.finish(errors, |_| false);
        if let (Some(kind), Some(id)) = (kind, id) {
            out.push((kind, id));
        }
    }
    out
}

fn read_target_kind(v: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<TargetKind> {
    let mut r = ObjectReader::new(v, path, errors)?;
    let kind = r.string("kind", errors);
    let description = r.opt_string("description", errors)?.unwrap_or_default();
    let mut fields: Vec<SchemaExtension> = Vec::new();
    for (i, item) in r.opt_array("fields", errors)?.iter().enumerate() {
        let fpath = index_path(&crate::schema::child_path(path, "fields"), i);
        if let Some(e) = read_extension(item, &fpath, errors) {
            if e.name == "kind" || e.name == "id" || fields.iter().any(|x| x.name == e.name) {
                errors.push(SchemaError {
                    path: fpath,
                    message: format!("target field `{}` is already defined", e.name),
                });
            }
            fields.push(e);
        }
    }
    r.finish(errors, |_| false);
    Some(TargetKind {
        kind: kind?,
        description,
        fields,
    })
}

fn read_secrets(v: &Value, scanner: &mut SecretScanner, errors: &mut Vec<SchemaError>) {
    let Some(mut r) = ObjectReader::new(v, "$.secrets", errors) else {
        return;
    };
    let items = r.opt_array("patterns", errors).unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        let path = index_path("$.secrets.patterns", i);
        let Some(mut pr) = ObjectReader::new(item, &path, errors) else {
            continue;
        };
        let name = pr.string("name", errors);
        let regex = pr.string("regex", errors);
        pr.finish(errors, |_| false);
        if let (Some(name), Some(regex)) = (name, regex) {
            match Regex::new(&regex) {
                Ok(regex) => scanner.add_pattern(SecretPattern { name, regex }),
                Err(e) => errors.push(SchemaError {
                    path,
                    message: format!("invalid regex: {e}"),
                }),
            }
        }
    }
    match r.get("entropy") {
        None => {}
        Some(Value::Bool(false)) => scanner.set_entropy(None),
        Some(v) => {
            if let Some(mut er) = ObjectReader::new(v, "$.secrets.entropy", errors) {
                let mut rule = EntropyRule::default();
                if let Some(n) = er.get("min_length") {
                    match n.as_number().and_then(|n| n.as_i64()) {
                        Some(n @ 8..=4096) => rule.min_length = n as usize,
                        _ => errors.push(er.error(
                            "min_length",
                            "`min_length` must be an integer from 8 to 4096".into(),
                        )),
                    }
                }
                if let Some(n) = er.get("bits_per_char") {
                    match n.as_number().map(|n| n.as_f64()) {
                        Some(b) if (1.0..=8.0).contains(&b) => rule.bits_per_char = b,
                        _ => errors.push(er.error(
                            "bits_per_char",
                            "`bits_per_char` must be a number from 1 to 8".into(),
                        )),
                    }
                }
                er.finish(errors, |_| false);
                scanner.set_entropy(Some(rule));
            }
        }
    }
    r.finish(errors, |_| false);
}

fn read_extension(v: &Value, path: &str, errors: &mut Vec<SchemaError>) -> Option<SchemaExtension> {
    let mut r = ObjectReader::new(v, path, errors)?;
    let name = r.string("name", errors);
    let ty = read_type(&mut r, errors);
    let required = match r.get("required") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            errors.push(r.error("required", "`required` must be a boolean".into()));
            false
        }
    };
    let description = r.opt_string("description", errors)?.unwrap_or_default();
    let pattern = match r.opt_string("pattern", errors)? {
        None => None,
        // Anchored so that the whole value must match, not a substring of it.
        Some(p) => match Regex::new(&format!("^(?:{p})$")) {
            Ok(re) => Some(re),
            Err(e) => {
                errors.push(r.error("pattern", format!("invalid regex: {e}")));
                None
            }
        },
    };
    let allowed = r.opt_array("enum", errors)?.to_vec();
    r.finish(errors, |_| false);
    Some(SchemaExtension {
        name: name?,
        ty: ty?,
        required,
        description,
        pattern,
        allowed,
    })
}
