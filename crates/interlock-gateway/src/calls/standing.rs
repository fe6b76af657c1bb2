//! Standing approvals: "role R may call tool T with arguments of shape S until
//! time E", signed by a reviewer, so the same safe call is not held again and
//! again. Every use is still logged; a standing approval is revocable; it never
//! covers a call whose arguments inspection flags as an attack.
//!
//! The shape is a JSON object from argument name to either a literal (the
//! argument must equal it) or `"*"` (any value). An argument not named in the
//! shape does not match.

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::{Decision, DsseEnvelope};
use interlock_engine::Engine;
use interlock_store::{StandingRecord, StoreError};

use crate::events::{EventBus, EventType, GatewayEvent, SubjectKind};
use crate::pins::{PinError, to_canon};

/// Statements about a standing approval name `standing:<id>`.
pub const STANDING_SUBJECT_PREFIX: &str = "standing:";

/// The document a reviewer signs (its hash is the statement's `plan_hash`).
pub fn document(role: &str, tool: &str, shape: &Value, expires_at: i64) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    m.insert("tool".into(), tool.into());
    m.insert("shape".into(), shape.clone());
    m.insert(
        "expires_at".into(),
        Value::Number(
            canon::Number::from_i64(expires_at)
                .unwrap_or_else(|| canon::Number::from_i64(0).expect("0")),
        ),
    );
    Value::Object(m)
}

/// The id of a document: `st-` + 16 hex digits of its hash.
pub fn id_of(hash: &Digest) -> String {
    format!("st-{}", &hex::encode(hash.as_bytes())[..16])
}

pub fn subject(id: &str) -> String {
    format!("{STANDING_SUBJECT_PREFIX}{id}")
}

/// Whether `args` fit `shape`.
pub fn matches(shape: &Value, args: &Value) -> bool {
    let (Some(shape), Some(args)) = (shape.as_object(), args.as_object()) else {
        return false;
    };
    args.iter().all(|(k, v)| match shape.get(k) {
        None => false,
        Some(Value::String(s)) if s == "*" => true,
        Some(expected) => canon::canonical_bytes(expected) == canon::canonical_bytes(v),
    })
}

fn field<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    doc.as_object()?.get(key)
}

/// Verifies a reviewer's signed approval of `doc` and stores it.
pub async fn grant(
    engine: &Engine,
    events: &EventBus,
    doc: &Value,
    envelope: &DsseEnvelope,
) -> Result<StandingRecord, PinError> {
    let bad = |m: &str| PinError::BadSurface {
        name: "standing approval".into(),
        message: m.to_owned(),
    };
    let role = field(doc, "role")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`role` (a string) is required"))?;
    let tool = field(doc, "tool")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`tool` (a string) is required"))?;
    field(doc, "shape")
        .filter(|s| s.as_object().is_some())
        .ok_or_else(|| bad("`shape` (an object) is required"))?;
    let expires_at = field(doc, "expires_at")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        .ok_or_else(|| bad("`expires_at` (unix seconds) is required"))?;
    if doc.as_object().map_or(0, |m| m.len()) != 4 {
        return Err(bad("only role, tool, shape and expires_at"));
    }
    if expires_at <= engine.now() {
        return Err(bad("it has already expired"));
    }
    let hash = canon::digest(doc);
    let id = id_of(&hash);
    let verified = engine
        .accept_subject_decision(envelope, &subject(&id), hash)
        .await?;
    if verified.statement.decision != Decision::Approve {
        return Err(bad("a standing approval must be an approve decision"));
    }
    let record = StandingRecord {
        id: id.clone(),
        role: role.to_owned(),
        tool: tool.to_owned(),
        document: canon::canonical_bytes(doc),
        document_hash: hash.to_string(),
        expires_at,
        approver_key_id: verified.statement.approver_key_id.to_string(),
        envelope: serde_json::to_vec(&envelope.to_json()).expect("JSON"),
        created_at: engine.now(),
        revoked_at: None,
    };
    engine.store().add_standing(&record).await?;
    let mut m = Map::new();
    m.insert("id".into(), id.as_str().into());
    m.insert("document".into(), doc.clone());
    m.insert("approver".into(), verified.identity.as_str().into());
    m.insert("reason".into(), verified.statement.reason.as_str().into());
    m.insert("envelope".into(), to_canon(&envelope.to_json()));
    let index = engine
        .record(EventType::StandingGranted.as_str(), m)
        .await?
        .index;
    events.send(GatewayEvent {
        kind: EventType::StandingGranted,
        subject_kind: SubjectKind::Standing,
        subject: id,
        title: format!("Role `{role}` may call `{tool}` without review"),
        risk: "info".into(),
        plan_hash: None,
        observed_hash: None,
        revision: None,
        log_index: Some(index),
    });
    Ok(record)
}

/// Revokes a standing approval: logged (who, why) and announced. Revoking only
/// takes a permission away, so it needs no signed statement — a reviewer (or the
/// CLI on the gateway's machine) can stop a class of calls at once. Returns
/// whether an active one was revoked.
pub async fn revoke(
    engine: &Engine,
    events: &EventBus,
    id: &str,
    by: &str,
    reason: &str,
) -> Result<bool, PinError> {
    let done = engine.store().revoke_standing(id).await?;
    if done {
        let mut m = Map::new();
        m.insert("id".into(), id.into());
        m.insert("by".into(), by.into());
        m.insert("reason".into(), reason.into());
        let index = engine
            .record(EventType::StandingRevoked.as_str(), m)
            .await?
            .index;
        events.send(GatewayEvent {
            kind: EventType::StandingRevoked,
            subject_kind: SubjectKind::Standing,
            subject: id.to_owned(),
            title: format!("Standing approval {id} revoked ({by})"),
            risk: "info".into(),
            plan_hash: None,
            observed_hash: None,
            revision: None,
            log_index: Some(index),
        });
    }
    Ok(done)
}

/// The active standing approval covering this call, if any.
pub async fn find(
    engine: &Engine,
    role: &str,
    tool: &str,
    args: &Value,
) -> Result<Option<StandingRecord>, StoreError> {
    Ok(engine
        .store()
        .standing(Some(engine.now()))
        .await?
        .into_iter()
        .filter(|s| s.role == role && s.tool == tool)
        .find(|s| {
            canon::parse_json(&s.document)
                .ok()
                .and_then(|d| field(&d, "shape").cloned())
                .is_some_and(|shape| matches(&shape, args))
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_match_literals_and_wildcards_only() {
        let v = |s: &str| canon::parse_json(s.as_bytes()).unwrap();
        let shape = v(r#"{"path":"/srv/report.txt","lines":"*"}"#);
        assert!(matches(
            &shape,
            &v(r#"{"path":"/srv/report.txt","lines":10}"#)
        ));
        assert!(matches(&shape, &v(r#"{"path":"/srv/report.txt"}"#)));
        assert!(!matches(&shape, &v(r#"{"path":"/etc/passwd"}"#)));
        assert!(!matches(
            &shape,
            &v(r#"{"path":"/srv/report.txt","mode":"w"}"#)
        ));
    }
}
