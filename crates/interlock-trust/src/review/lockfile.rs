//! `interlock.lock`: the approved surface of each server, its hash, and the
//! approver's signed statement, committed beside the configuration so that a
//! pull request which changes a server is reviewed against what was approved.
//!
//! Why this format: it must be read by people in a diff and by machines
//! strictly. It is JSON with sorted keys and two-space indentation (one tool
//! per block), and it is *read* through the strict canonical intake — so
//! reindenting or reordering keys changes nothing, while any change of
//! meaning shows as a hash that no longer matches or a statement that no
//! longer verifies. The surface is carried as whatever
//! [`Surface::to_value`] gives (tools, instructions, and any part the pinned
//! surface gains later), and must round-trip through the gateway's own
//! decoding exactly: no field is carried that the hash does not cover.

use std::collections::BTreeMap;

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::decision::{ApprovalStatement, Expectation, verify_decision};
use interlock_core::{Decision, DecisionError, DsseEnvelope, TrustedKeys};
use interlock_engine::{Engine, EngineError};
use interlock_store::StoreError;
use interlock_surface::{Surface, surface_hash};

use crate::pins::{decode_surface, server_subject};

/// The `format` member every lockfile starts with.
pub const LOCK_FORMAT: &str = "interlock.lock/v1";

/// Why a lockfile could not be written, read or trusted.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("the lockfile is not strict JSON: {0}")]
    Parse(String),
    #[error("the lockfile is malformed at {path}: {message}")]
    Shape { path: String, message: String },
    #[error(
        "server `{server}`: the surface in the lockfile hashes to {computed}, but the lockfile records {recorded} (edited by hand?)"
    )]
    HashMismatch {
        server: String,
        recorded: String,
        computed: String,
    },
    #[error("server `{server}`: the approval statement does not verify: {source}")]
    Statement {
        server: String,
        #[source]
        source: DecisionError,
    },
    #[error("server `{server}`: the statement is a {decision} decision, not an approval")]
    NotAnApproval { server: String, decision: String },
    #[error("server `{server}`: `approval.{field}` does not match the signed statement")]
    Mismatch { server: String, field: &'static str },
    #[error(
        "server `{server}` has no approved surface to lock (it is {status}; approve it with `interlock servers approve`)"
    )]
    NotApproved { server: String, status: String },
    #[error(
        "server `{server}`: no signed approval of its baseline {hash} in the log (a baseline changed by a per-tool decision is locked after the server's surface is approved again)"
    )]
    NoStatement { server: String, hash: String },
    #[error("no server named `{0}`")]
    NoSuchServer(String),
    #[error(
        "server `{server}`: the lockfile's approval of {locked} is superseded here: {now} (lock it again with `interlock lock`)"
    )]
    Superseded {
        server: String,
        locked: String,
        now: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// One server's entry.
#[derive(Clone, Debug, PartialEq)]
pub struct LockedServer {
    /// The surface, as the gateway decodes a stored baseline.
    pub surface: Surface,
    /// [`surface_hash`] of it.
    pub surface_hash: Digest,
    /// The approver's signed statement (DSSE) about `server:<name>` at that hash.
    pub statement: DsseEnvelope,
    /// Who the approver was (the identity the key was registered with).
    pub approved_by: String,
    /// The statement's reason (repeated for readers; must equal the signed one).
    pub reason: String,
}

/// A whole lockfile: servers by name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Lockfile {
    pub servers: BTreeMap<String, LockedServer>,
}

fn shape(path: impl Into<String>, message: impl Into<String>) -> LockError {
    LockError::Shape {
        path: path.into(),
        message: message.into(),
    }
}

fn object<'a>(v: &'a Value, path: &str, keys: &[&str]) -> Result<&'a Map, LockError> {
    let m = v
        .as_object()
        .ok_or_else(|| shape(path, format!("expected an object, found {}", v.kind())))?;
    if let Some(k) = m.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(shape(format!("{path}.{k}"), "unknown member"));
    }
    Ok(m)
}

fn text<'a>(m: &'a Map, path: &str, key: &str) -> Result<&'a str, LockError> {
    m.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| shape(format!("{path}.{key}"), "expected a string"))
}

impl Lockfile {
    /// The lockfile's text: sorted keys, two-space indentation, one tool per
    /// block, a final newline. The same lockfile always gives the same bytes.
    pub fn to_text(&self) -> String {
        let mut servers = serde_json::Map::new();
        for (name, s) in &self.servers {
            servers.insert(
                name.clone(),
                serde_json::json!({
                    "approval": {
                        "approved_by": s.approved_by,
                        "key_id": s.statement.key_id.to_string(),
                        "reason": s.reason,
                        "statement": s.statement.to_json(),
                    },
                    "surface": canon::to_serde_json(&s.surface.to_value()),
                    "surface_hash": s.surface_hash.to_string(),
                }),
            );
        }
        let doc = serde_json::json!({ "format": LOCK_FORMAT, "servers": servers });
        let mut out = serde_json::to_string_pretty(&sorted(doc)).expect("JSON serializes");
        out.push('\n');
        out
    }

    /// Reads a lockfile strictly (duplicate keys, unknown members, a surface
    /// that does not round-trip or does not hash to its recorded hash are
    /// refused). Statements are checked by [`Lockfile::verify`].
    pub fn parse(bytes: &[u8]) -> Result<Lockfile, LockError> {
        let doc = canon::parse_json(bytes).map_err(|e| LockError::Parse(e.to_string()))?;
        let root = object(&doc, "$", &["format", "servers"])?;
        let format = text(root, "$", "format")?;
        if format != LOCK_FORMAT {
            return Err(shape(
                "$.format",
                format!("unknown format {format:?} (expected {LOCK_FORMAT:?})"),
            ));
        }
        let servers = root
            .get("servers")
            .ok_or_else(|| shape("$.servers", "missing"))?;
        let servers = servers
            .as_object()
            .ok_or_else(|| shape("$.servers", "expected an object"))?;
        let mut out = BTreeMap::new();
        for (name, entry) in servers {
            let path = format!("$.servers.{name}");
            let m = object(entry, &path, &["approval", "surface", "surface_hash"])?;
            let value = m
                .get("surface")
                .ok_or_else(|| shape(format!("{path}.surface"), "missing"))?;
            let bytes = canon::canonical_bytes(value);
            let surface = decode_surface(name, Some(&bytes))
                .map_err(|e| shape(format!("{path}.surface"), e.to_string()))?
                .ok_or_else(|| shape(format!("{path}.surface"), "missing"))?;
            if unordered(&surface.to_value()) != unordered(value) {
                return Err(shape(
                    format!("{path}.surface"),
                    "not a surface as the gateway stores one (a member it would not keep, or a missing one)",
                ));
            }
            let recorded = text(m, &path, "surface_hash")?;
            let computed = surface_hash(&surface);
            if recorded != computed.to_string() {
                return Err(LockError::HashMismatch {
                    server: name.clone(),
                    recorded: recorded.to_owned(),
                    computed: computed.to_string(),
                });
            }
            let apath = format!("{path}.approval");
            let approval = object(
                m.get("approval")
                    .ok_or_else(|| shape(apath.clone(), "missing"))?,
                &apath,
                &["approved_by", "key_id", "reason", "statement"],
            )?;
            let statement = approval
                .get("statement")
                .ok_or_else(|| shape(format!("{apath}.statement"), "missing"))?;
            let statement =
                DsseEnvelope::from_json(&canon::to_serde_json(statement)).map_err(|e| {
                    LockError::Statement {
                        server: name.clone(),
                        source: e,
                    }
                })?;
            if text(approval, &apath, "key_id")? != statement.key_id.to_string() {
                return Err(LockError::Mismatch {
                    server: name.clone(),
                    field: "key_id",
                });
            }
            out.insert(
                name.clone(),
                LockedServer {
                    surface,
                    surface_hash: computed,
                    statement,
                    approved_by: text(approval, &apath, "approved_by")?.to_owned(),
                    reason: text(approval, &apath, "reason")?.to_owned(),
                },
            );
        }
        Ok(Lockfile { servers: out })
    }

    /// Checks every statement: a strict Ed25519 signature (`verify_strict`)
    /// by one of `trusted`, over the canonical statement, approving exactly
    /// `server:<name>` at the recorded surface hash, with the reason the
    /// lockfile shows. It is checked as at the moment it was issued (its
    /// own audience, policy and validity window): a lockfile records an
    /// approval; it is not an instruction a gateway applies.
    pub fn verify(&self, trusted: &TrustedKeys) -> Result<(), LockError> {
        for (name, s) in &self.servers {
            let err = |source| LockError::Statement {
                server: name.clone(),
                source,
            };
            let claimed = ApprovalStatement::claimed_by(&s.statement).map_err(err)?;
            let audience = claimed
                .audience
                .clone()
                .ok_or_else(|| err(DecisionError::NoAudience))?;
            let subject = server_subject(name);
            let statement = verify_decision(
                &s.statement,
                trusted,
                &Expectation {
                    audience: &audience,
                    plan_id: &subject,
                    plan_hash: s.surface_hash,
                    policy_digest: claimed.policy_digest,
                    now: claimed.not_before,
                },
            )
            .map_err(err)?;
            if statement.decision != Decision::Approve {
                return Err(LockError::NotAnApproval {
                    server: name.clone(),
                    decision: statement.decision.name().to_owned(),
                });
            }
            if statement.reason != s.reason {
                return Err(LockError::Mismatch {
                    server: name.clone(),
                    field: "reason",
                });
            }
        }
        Ok(())
    }

    /// Checks each statement against the later decisions `engine`'s store
    /// holds (issue 39 item 14): a signature stays valid after its approval
    /// is superseded — the server rejected since, or another surface
    /// approved — so a lockfile must also agree with the gateway it speaks
    /// for. A server the store does not know (a fresh data directory) has no
    /// later decision to check.
    pub async fn check_not_superseded(&self, engine: &Engine) -> Result<(), LockError> {
        use interlock_store::ServerStatus;
        for (name, s) in &self.servers {
            let Some(record) = engine.store().server(name).await? else {
                continue;
            };
            let locked = s.surface_hash.to_string();
            let now = match (record.status, record.baseline_hash.as_deref()) {
                (ServerStatus::Rejected, _) => Some("it was rejected".to_owned()),
                (_, Some(h)) if h != locked => Some(format!("the approved surface is {h}")),
                _ => None,
            };
            if let Some(now) = now {
                return Err(LockError::Superseded {
                    server: name.clone(),
                    locked,
                    now,
                });
            }
        }
        Ok(())
    }

    /// The lockfile of the approved servers in `engine`'s store (`only`
    /// those, if given; otherwise every server with an approved baseline,
    /// the rest named in the second value), each with the signed statement
    /// of its baseline's approval, found in the log.
    pub async fn from_engine(
        engine: &Engine,
        only: &[String],
    ) -> Result<(Lockfile, Vec<String>), LockError> {
        let store = engine.store();
        let records = store.servers().await?;
        for name in only {
            if !records.iter().any(|r| &r.name == name) {
                return Err(LockError::NoSuchServer(name.clone()));
            }
        }
        let mut wanted: BTreeMap<String, String> = BTreeMap::new();
        let mut skipped = Vec::new();
        let mut surfaces = BTreeMap::new();
        for r in records {
            if !only.is_empty() && !only.contains(&r.name) {
                continue;
            }
            let (Some(hash), Some(_)) = (&r.baseline_hash, &r.baseline) else {
                if only.is_empty() {
                    skipped.push(r.name.clone());
                    continue;
                }
                return Err(LockError::NotApproved {
                    server: r.name.clone(),
                    status: r.status.as_str().to_lowercase(),
                });
            };
            let surface = decode_surface(&r.name, r.baseline.as_deref())
                .map_err(|e| StoreError::Malformed(e.to_string()))?
                .expect("a baseline is stored");
            wanted.insert(r.name.clone(), hash.clone());
            surfaces.insert(r.name.clone(), surface);
        }
        // The latest approval of each baseline, newest leaf first.
        let log = engine.log();
        let mut found: BTreeMap<String, (DsseEnvelope, String, String)> = BTreeMap::new();
        let mut index = log.size();
        while index > 0 && found.len() < wanted.len() {
            index -= 1;
            let entry = log.entry(index).await.map_err(EngineError::from)?;
            let Some(p) = entry.as_object() else { continue };
            let field = |k: &str| p.get(k).and_then(Value::as_str);
            if field("type") != Some("server.approved") {
                continue;
            }
            let Some(server) = field("server") else {
                continue;
            };
            if found.contains_key(server)
                || wanted.get(server).map(String::as_str) != field("surface_hash")
            {
                continue;
            }
            let Some(envelope) = p.get("envelope") else {
                continue;
            };
            let envelope =
                DsseEnvelope::from_json(&canon::to_serde_json(envelope)).map_err(|e| {
                    LockError::Statement {
                        server: server.to_owned(),
                        source: e,
                    }
                })?;
            found.insert(
                server.to_owned(),
                (
                    envelope,
                    field("approver").unwrap_or_default().to_owned(),
                    field("reason").unwrap_or_default().to_owned(),
                ),
            );
        }
        let mut lock = Lockfile::default();
        for (name, surface) in surfaces {
            let Some((statement, approved_by, reason)) = found.remove(&name) else {
                return Err(LockError::NoStatement {
                    hash: wanted[&name].clone(),
                    server: name,
                });
            };
            lock.servers.insert(
                name,
                LockedServer {
                    surface_hash: surface_hash(&surface),
                    surface,
                    statement,
                    approved_by,
                    reason,
                },
            );
        }
        Ok((lock, skipped))
    }
}

/// Where in the lockfile's text `server` (and, within it, `tool`) is
/// declared: a 1-based line for SARIF locations and messages. The first line
/// when it is not found (a lockfile reformatted beyond recognition still
/// points somewhere).
pub fn locate(text: &str, server: &str, tool: Option<&str>) -> usize {
    let server_key = format!("{}:", serde_json::to_string(server).expect("a string"));
    let mut lines = text.lines().enumerate();
    let Some((at, _)) = lines.find(|(_, l)| l.trim_start().starts_with(&server_key)) else {
        return 1;
    };
    let Some(tool) = tool else { return at + 1 };
    let tool_name = format!(
        "\"name\": {}",
        serde_json::to_string(tool).expect("a string")
    );
    text.lines()
        .enumerate()
        .skip(at)
        .find(|(_, l)| l.contains(&tool_name))
        .map_or(at + 1, |(i, _)| i + 1)
}

/// `v` with each top-level array's elements in canonical-byte order: the
/// order of tools (or of any listed part) in a lockfile is not meaning, as
/// it is not in a listing.
fn unordered(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Array(a) => {
                            let mut a = a.clone();
                            a.sort_by_cached_key(canon::canonical_bytes);
                            Value::Array(a)
                        }
                        other => other.clone(),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `v` with every object's members in sorted order, whatever map type
/// serde_json was built with.
fn sorted(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            let mut pairs: Vec<_> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.into_iter().map(sorted).collect())
        }
        other => other,
    }
}
