//! The admin API (issue 20 item 3): `/api/v1/admin/…`, for managing API keys
//! and their settings — role, shadow mode, rate per minute, monthly quota,
//! response caps (bytes, array items) and the response policy — with admin
//! tokens of their own.
//!
//! Admin tokens (`ila_…`) are not API keys: they authenticate nowhere else
//! (not `/mcp`, not the reviewer API), and API keys do not authenticate here.
//! Each has one [`AdminScope`]; what a scope may do is the typed table
//! [`allows`]. Only the token's SHA-256 is stored; every request looks the
//! token up afresh (no cache), so a revoked or rotated-away token stops at
//! once. The first owner token is minted from the local admin socket
//! (`interlock admin token create NAME --scope owner`, file-permission
//! protected) or, with no gateway running, by the CLI with the keychain.
//!
//! Every admin action is a log leaf (`admin.action`: what, by which token —
//! name, scope, hash —, on which key or token, and the values set; never a
//! key or token itself), committed in one transaction with its change.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use interlock_canon::{Map, Value as CValue};
use interlock_store::{
    AdminChange, AdminScope, AdminTokenRecord, ApiKeyKind, ApiKeyRecord, KeySettings, StateChange,
};
use serde_json::{Value, json};

use crate::extract::{ApiError, Body, Param};
use crate::gateway::Gateway;
use interlock_trust::events::EventType;

/// The prefix of admin tokens (API keys are `ilk_`).
pub const TOKEN_PREFIX: &str = "ila_";

/// What an admin request does; each route needs one or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Permission {
    /// List keys and their settings.
    ReadKeys,
    /// Create an agent key.
    CreateAgentKey,
    /// Create a reviewer key (it reads everything and submits decisions).
    CreateReviewerKey,
    /// Change an agent key's role (among the agent roles), and any key's
    /// rate per minute and monthly quota.
    EditLimits,
    /// Change a reviewer key's role — full, review-only or metrics-only —
    /// which decides what it reads and whether it submits decisions, so it
    /// is the owner's as creating a reviewer key is (issue 39 item 3).
    EditReviewerRole,
    /// Change a key's response caps and response policy.
    EditSafety,
    /// Turn a key's shadow mode on or off. Shadow forwards what would be
    /// held or stopped: it switches enforcement off for the key without any
    /// approver's signature, so it is the owner's alone, with a reason that
    /// is logged (issue 39 item 4).
    SetShadow,
    /// Rotate a key (a new key, the old one revoked).
    RotateKey,
    /// Revoke a key.
    RevokeKey,
    /// List admin tokens.
    ReadTokens,
    /// Create and revoke admin tokens.
    ManageTokens,
}

/// The table: which scope may do what. An owner does everything; an
/// operator runs agents' keys and their limits; a security reviewer sets
/// what keeps responses safe and can revoke in an incident; an auditor
/// reads. Only an owner mints admin tokens, so no scope can raise itself.
pub fn allows(scope: AdminScope, p: Permission) -> bool {
    use Permission as P;
    match scope {
        AdminScope::Owner => true,
        AdminScope::Operator => matches!(
            p,
            P::ReadKeys | P::CreateAgentKey | P::EditLimits | P::RotateKey | P::RevokeKey
        ),
        AdminScope::SecurityReviewer => {
            matches!(p, P::ReadKeys | P::EditSafety | P::RevokeKey)
        }
        AdminScope::Auditor => matches!(p, P::ReadKeys | P::ReadTokens),
    }
}

const ALL_PERMISSIONS: [Permission; 11] = [
    Permission::ReadKeys,
    Permission::CreateAgentKey,
    Permission::CreateReviewerKey,
    Permission::EditLimits,
    Permission::EditReviewerRole,
    Permission::EditSafety,
    Permission::SetShadow,
    Permission::RotateKey,
    Permission::RevokeKey,
    Permission::ReadTokens,
    Permission::ManageTokens,
];

/// A new admin token: `ila_` + 32 random bytes, URL-safe base64.
pub fn generate_token() -> String {
    let key = crate::keys::generate_key();
    format!("{TOKEN_PREFIX}{}", &key[crate::keys::KEY_PREFIX.len()..])
}

/// Mints an admin token (the admin socket, the CLI with the keychain, or an
/// owner over the API): its leaf names who asked (`by`). The token is
/// returned once.
pub async fn issue_token(
    engine: &interlock_engine::Engine,
    name: &str,
    scope: AdminScope,
    by: Value,
) -> Result<(String, String), interlock_engine::EngineError> {
    if name.trim().is_empty() || name.len() > 128 {
        return Err(interlock_engine::EngineError::Store(
            interlock_store::StoreError::InvalidInput("a token's name is 1 to 128 bytes".into()),
        ));
    }
    let token = generate_token();
    let token_hash = crate::keys::key_hash(&token);
    let mut fields = Map::new();
    fields.insert("action".into(), "token.created".into());
    fields.insert("by".into(), canon(&by));
    fields.insert("token_hash".into(), token_hash.as_str().into());
    fields.insert("name".into(), name.into());
    fields.insert("scope".into(), scope.as_str().into());
    engine
        .record_with_change(
            EventType::AdminAction.as_str(),
            fields,
            StateChange::Admin(AdminChange::AddToken {
                token_hash: token_hash.clone(),
                name: name.to_owned(),
                scope,
                now: engine.now(),
            }),
        )
        .await?;
    Ok((token, token_hash))
}

fn canon(v: &Value) -> CValue {
    interlock_canon::from_serde_json(v).unwrap_or(CValue::Null)
}

fn err(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::new(status, code, message.into())
}

/// The active admin token presented, or 401.
async fn admin(gw: &Gateway, headers: &HeaderMap) -> Result<AdminTokenRecord, ApiError> {
    let presented = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let unauthorized = || {
        err(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "an active admin token (ila_…) is required; API keys do not reach the admin API",
        )
    };
    let Some(token) = presented.filter(|t| t.starts_with(TOKEN_PREFIX) && t.len() <= 128) else {
        return Err(unauthorized());
    };
    gw.engine()
        .store()
        .admin_token(&crate::keys::key_hash(token))
        .await?
        .filter(|t| t.revoked_at.is_none())
        .ok_or_else(unauthorized)
}

/// The active admin token presented, if its scope has every permission in
/// `needs`; else 401 / 403 naming what is missing.
async fn permitted(
    gw: &Gateway,
    headers: &HeaderMap,
    needs: &[Permission],
) -> Result<AdminTokenRecord, ApiError> {
    let token = admin(gw, headers).await?;
    if let Some(p) = needs.iter().find(|p| !allows(token.scope, **p)) {
        return Err(err(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("the {} scope may not {p:?}", token.scope.as_str()),
        ));
    }
    Ok(token)
}

fn by(t: &AdminTokenRecord) -> Value {
    json!({"name": t.name, "scope": t.scope.as_str(), "token_hash": t.token_hash})
}

/// Records `action` with `fields` and applies `change` in its transaction;
/// 404/409 when the change finds its row not as expected.
async fn commit(
    gw: &Gateway,
    action: &str,
    who: &AdminTokenRecord,
    fields: Value,
    change: AdminChange,
) -> Result<u64, ApiError> {
    let mut m = Map::new();
    m.insert("action".into(), action.into());
    m.insert("by".into(), canon(&by(who)));
    if let Value::Object(o) = fields {
        for (k, v) in o {
            m.insert(k, canon(&v));
        }
    }
    match gw
        .engine()
        .record_with_change(
            EventType::AdminAction.as_str(),
            m,
            StateChange::Admin(change),
        )
        .await
    {
        Ok(a) => Ok(a.index),
        Err(interlock_engine::EngineError::Log(interlock_log::LogError::ChangeRefused(what))) => {
            Err(err(StatusCode::CONFLICT, "not_active", what))
        }
        Err(e) => Err(e.into()),
    }
}

fn settings_json(s: &KeySettings) -> Value {
    json!({
        "rate_per_minute": s.rate_per_minute,
        "monthly_quota": s.monthly_quota,
        "max_response_bytes": s.max_response_bytes,
        "max_array_items": s.max_array_items,
        "response_policy": s.response_policy.as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()),
        "alert_sinks": s.alert_sinks.as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()),
        "alert_min_severity": s.alert_min_severity,
        "llm_limits": s.llm_limits.as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()),
        "llm_policy": s.llm_policy.as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()),
    })
}

fn key_json(k: &ApiKeyRecord, s: &KeySettings) -> Value {
    json!({
        "id": k.key_hash,
        "kind": k.kind.as_str(),
        "name": k.name,
        "role": k.role,
        "shadow": k.shadow,
        "created_at": k.created_at,
        "revoked_at": k.revoked_at,
        "settings": settings_json(s),
    })
}

/// The fields of a key's settings a request may set, and which permission
/// each needs.
const LIMIT_FIELDS: [&str; 3] = ["rate_per_minute", "monthly_quota", "llm_limits"];
const SAFETY_FIELDS: [&str; 6] = [
    "max_response_bytes",
    "max_array_items",
    "response_policy",
    "alert_sinks",
    "alert_min_severity",
    "llm_policy",
];

/// A key's limits on the LLM proxy (`null`: none), as canonical JSON text;
/// each model it names must be one a provider serves, so a typo is an
/// error here rather than a key refused every model.
fn llm_limits(gw: &Gateway, v: &Value) -> Result<Option<String>, ApiError> {
    let bad = |e: interlock_llm::key::SettingsError| err(StatusCode::BAD_REQUEST, "invalid", e.0);
    if v.is_null() {
        return Ok(None);
    }
    let limits = interlock_llm::key::KeyLimits::from_json(v).map_err(bad)?;
    let config = &gw.config().llm;
    for m in limits.models.iter().flatten() {
        if config.provider_for(m).is_none() {
            let served: Vec<&str> = config
                .providers
                .values()
                .flat_map(|p| p.models.iter().map(String::as_str))
                .collect();
            return Err(err(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!(
                    "llm_limits.models: no provider in [llm] serves {m:?} (served: {})",
                    if served.is_empty() {
                        "none".to_owned()
                    } else {
                        served.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(Some(limits.to_json().to_string()))
}

/// A key's prompt policy on the LLM proxy (`null`: the gateway's alone), as
/// canonical JSON text.
fn llm_policy(v: &Value) -> Result<Option<String>, ApiError> {
    if v.is_null() {
        return Ok(None);
    }
    interlock_llm::key::KeyPolicy::from_json(v)
        .map(|p| Some(p.to_json().to_string()))
        .map_err(|e| err(StatusCode::BAD_REQUEST, "invalid", e.0))
}

/// A key's alert sinks: `null` or `[]` clears; else the names of sinks
/// gateway.toml configures (each once), as canonical JSON text.
fn alert_sinks(gw: &Gateway, v: &Value) -> Result<Option<String>, ApiError> {
    let bad = |m: String| {
        err(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("alert_sinks: {m}"),
        )
    };
    if v.is_null() {
        return Ok(None);
    }
    let names = v
        .as_array()
        .ok_or_else(|| bad("an array of sink names, or null".into()))?;
    let configured = &gw.config().alerts.sinks;
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        let n = n
            .as_str()
            .ok_or_else(|| bad("sink names are strings".into()))?;
        if !configured.iter().any(|s| s.name == n) {
            return Err(bad(format!(
                "no sink is named {n:?}; gateway.toml configures: {}",
                configured
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok((!out.is_empty()).then(|| json!(out).to_string()))
}

/// A key's minimum alert severity: `null` clears.
fn alert_min_severity(v: &Value) -> Result<Option<String>, ApiError> {
    if v.is_null() {
        return Ok(None);
    }
    serde_json::from_value::<interlock_alerts::Severity>(v.clone())
        .ok()
        .map(|s| Some(s.as_str().to_owned()))
        .ok_or_else(|| {
            err(
                StatusCode::BAD_REQUEST,
                "invalid",
                "alert_min_severity: info, low, medium, high or critical, or null",
            )
        })
}

/// The response policy's members and their actions (`allow`, `redact`,
/// `block`, as `[calls]`), canonical JSON text.
fn response_policy(v: &Value) -> Result<Option<String>, ApiError> {
    if v.is_null() {
        return Ok(None);
    }
    let bad = |m: String| {
        err(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("response_policy: {m}"),
        )
    };
    let o = v
        .as_object()
        .ok_or_else(|| bad("an object {pii, secrets, injection}".into()))?;
    let mut out = serde_json::Map::new();
    for (k, a) in o {
        if !["pii", "secrets", "injection"].contains(&k.as_str()) {
            return Err(bad(format!(
                "unknown member {k:?} (pii, secrets, injection)"
            )));
        }
        let s = a.as_str().ok_or_else(|| bad(format!("{k}: a string")))?;
        s.parse::<interlock_inspect::Action>()
            .map_err(|e| bad(format!("{k}: {e}")))?;
        out.insert(k.clone(), Value::from(s));
    }
    Ok(Some(Value::Object(out).to_string()))
}

/// A limit: absent keeps, `null` clears, a positive integer sets.
fn limit(body: &Value, field: &str, current: Option<i64>) -> Result<Option<i64>, ApiError> {
    match body.get(field) {
        None => Ok(current),
        Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .filter(|n| *n > 0 && *n <= 1_000_000_000_000)
            .map(Some)
            .ok_or_else(|| {
                err(
                    StatusCode::BAD_REQUEST,
                    "invalid",
                    format!("{field}: a positive integer, or null for no limit"),
                )
            }),
    }
}

/// The reason a shadow change must give (checked after the permission, so
/// a scope that may not is told only that): required when `body` turns
/// shadow mode from `was` to `now`; 1 to 1000 bytes. `None` when shadow does
/// not change.
fn shadow_reason(body: &Value, was: bool, now: bool) -> Result<Option<String>, ApiError> {
    if was == now {
        return Ok(None);
    }
    match body.get("reason").and_then(Value::as_str).map(str::trim) {
        Some(r) if !r.is_empty() && r.len() <= 1000 => Ok(Some(r.to_owned())),
        _ => Err(err(
            StatusCode::BAD_REQUEST,
            "invalid",
            "turning shadow mode on or off switches enforcement for the key: give a `reason` (1 to 1000 bytes); it is logged",
        )),
    }
}

/// Applies `body`'s settings onto a key of `kind`; the permissions that takes.
fn apply_body(
    gw: &Gateway,
    kind: ApiKeyKind,
    body: &Value,
    role: &mut String,
    shadow: &mut bool,
    s: &mut KeySettings,
) -> Result<Vec<Permission>, ApiError> {
    let o = body.as_object().ok_or_else(|| {
        err(
            StatusCode::BAD_REQUEST,
            "invalid",
            "the body is a JSON object",
        )
    })?;
    let mut needs = Vec::new();
    for k in o.keys() {
        let p = match k.as_str() {
            "role" => match kind {
                ApiKeyKind::Agent => Permission::EditLimits,
                ApiKeyKind::Reviewer => Permission::EditReviewerRole,
            },
            f if LIMIT_FIELDS.contains(&f) => Permission::EditLimits,
            "shadow" => Permission::SetShadow,
            f if SAFETY_FIELDS.contains(&f) => Permission::EditSafety,
            "kind" | "name" | "reason" => continue,
            other => {
                return Err(err(
                    StatusCode::BAD_REQUEST,
                    "invalid",
                    format!("unknown field {other:?}"),
                ));
            }
        };
        if !needs.contains(&p) {
            needs.push(p);
        }
    }
    if let Some(r) = o.get("role") {
        let r = r
            .as_str()
            .ok_or_else(|| err(StatusCode::BAD_REQUEST, "invalid", "role: a string"))?;
        // A reviewer key's role is one of the reviewer roles, an agent
        // key's one of the config's: an agent role on a reviewer key made it
        // a full reviewer key (issue 39 item 3).
        let known: Vec<&str> = match kind {
            ApiKeyKind::Agent => gw.roles().names().collect(),
            ApiKeyKind::Reviewer => crate::roles::REVIEWER_ROLES.to_vec(),
        };
        if !known.contains(&r) {
            return Err(err(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!(
                    "unknown role {r:?} for {} key; the roles are: {}",
                    match kind {
                        ApiKeyKind::Agent => "an agent",
                        ApiKeyKind::Reviewer => "a reviewer",
                    },
                    known.join(", ")
                ),
            ));
        }
        r.clone_into(role);
    }
    if let Some(v) = o.get("shadow") {
        *shadow = v
            .as_bool()
            .ok_or_else(|| err(StatusCode::BAD_REQUEST, "invalid", "shadow: true or false"))?;
    }
    s.rate_per_minute = limit(body, "rate_per_minute", s.rate_per_minute)?;
    s.monthly_quota = limit(body, "monthly_quota", s.monthly_quota)?;
    s.max_response_bytes = limit(body, "max_response_bytes", s.max_response_bytes)?;
    s.max_array_items = limit(body, "max_array_items", s.max_array_items)?;
    if let Some(p) = o.get("response_policy") {
        s.response_policy = response_policy(p)?;
    }
    if let Some(v) = o.get("alert_sinks") {
        s.alert_sinks = alert_sinks(gw, v)?;
    }
    if let Some(v) = o.get("alert_min_severity") {
        s.alert_min_severity = alert_min_severity(v)?;
    }
    if let Some(v) = o.get("llm_limits") {
        s.llm_limits = llm_limits(gw, v)?;
    }
    if let Some(v) = o.get("llm_policy") {
        s.llm_policy = llm_policy(v)?;
    }
    Ok(needs)
}

/// `GET /api/v1/admin/whoami`: the token's name, scope and permissions.
pub async fn whoami(
    State(gw): State<Gateway>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let t = admin(&gw, &headers).await?;
    let perms: Vec<String> = ALL_PERMISSIONS
        .iter()
        .filter(|p| allows(t.scope, **p))
        .map(|p| format!("{p:?}"))
        .collect();
    Ok(Json(
        json!({"name": t.name, "scope": t.scope.as_str(), "permissions": perms}),
    ))
}

/// `GET /api/v1/admin/keys`: every API key (never the key) with its settings.
pub async fn keys(State(gw): State<Gateway>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    permitted(&gw, &headers, &[Permission::ReadKeys]).await?;
    let store = gw.engine().store();
    let mut out = Vec::new();
    for kind in [ApiKeyKind::Agent, ApiKeyKind::Reviewer] {
        for k in store.api_keys(kind).await? {
            let s = store.key_settings(&k.key_hash).await?;
            out.push(key_json(&k, &s));
        }
    }
    Ok(Json(json!({"keys": out})))
}

async fn active_key(gw: &Gateway, id: &str) -> Result<ApiKeyRecord, ApiError> {
    let k = gw
        .engine()
        .store()
        .api_key(id)
        .await?
        .ok_or_else(|| err(StatusCode::NOT_FOUND, "not_found", format!("no key {id:?}")))?;
    if k.revoked_at.is_some() {
        return Err(err(
            StatusCode::CONFLICT,
            "not_active",
            format!("key {id} is revoked"),
        ));
    }
    Ok(k)
}

/// `POST /api/v1/admin/keys`: `{kind, name, role?, shadow?, …settings}` — a
/// new key, printed once.
pub async fn create_key(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Body(body): Body<Value>,
) -> Result<Json<Value>, ApiError> {
    let kind = match body.get("kind").and_then(Value::as_str).unwrap_or("agent") {
        "agent" => ApiKeyKind::Agent,
        "reviewer" => ApiKeyKind::Reviewer,
        other => {
            return Err(err(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("kind: agent or reviewer, not {other:?}"),
            ));
        }
    };
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty() && n.len() <= 128)
        .ok_or_else(|| err(StatusCode::BAD_REQUEST, "invalid", "name: 1 to 128 bytes"))?
        .to_owned();
    let mut role = match kind {
        ApiKeyKind::Agent => crate::roles::DEFAULT_ROLE.to_owned(),
        ApiKeyKind::Reviewer => crate::roles::FULL_REVIEWER_ROLE.to_owned(),
    };
    let (mut shadow, mut settings) = (false, KeySettings::default());
    let mut needs = apply_body(&gw, kind, &body, &mut role, &mut shadow, &mut settings)?;
    // The fields set at creation are part of creating it: a scope that may
    // create a key may give it a role and limits, but not what keeps its
    // responses safe unless it may edit that too.
    needs.retain(|p| *p != Permission::EditLimits);
    needs.push(match kind {
        ApiKeyKind::Agent => Permission::CreateAgentKey,
        ApiKeyKind::Reviewer => Permission::CreateReviewerKey,
    });
    let who = permitted(&gw, &headers, &needs).await?;
    let reason = shadow_reason(&body, false, shadow)?;
    if let Some(taken) = crate::keys::name_taken(gw.engine(), kind, &name).await? {
        return Err(err(
            StatusCode::CONFLICT,
            taken.code(),
            taken.message(kind, &name),
        ));
    }
    let key = crate::keys::generate_key();
    let key_hash = crate::keys::key_hash(&key);
    let index = commit(
        &gw,
        "key.created",
        &who,
        json!({"key_hash": key_hash, "kind": kind.as_str(), "name": name, "role": role,
               "shadow": shadow, "reason": reason, "settings": settings_json(&settings)}),
        AdminChange::AddKey {
            key_hash: key_hash.clone(),
            kind,
            name: name.clone(),
            role: role.clone(),
            shadow,
            settings,
            now: gw.engine().now(),
        },
    )
    .await?;
    Ok(Json(
        json!({"key": key, "id": key_hash, "name": name, "role": role, "leaf": index}),
    ))
}

/// `PATCH /api/v1/admin/keys/{id}`: role, shadow and settings (absent:
/// kept; `null`: no limit).
pub async fn update_key(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
    Body(body): Body<Value>,
) -> Result<Json<Value>, ApiError> {
    if body.get("kind").is_some() || body.get("name").is_some() {
        return Err(err(
            StatusCode::BAD_REQUEST,
            "invalid",
            "a key's kind and name cannot change (create another key)",
        ));
    }
    // Who may, first: nothing about the key is told to a token that may not.
    let who = admin(&gw, &headers).await?;
    let k = active_key(&gw, &id).await?;
    let mut settings = gw.engine().store().key_settings(&id).await?;
    let (mut role, mut shadow) = (k.role.clone(), k.shadow);
    let needs = apply_body(&gw, k.kind, &body, &mut role, &mut shadow, &mut settings)?;
    if needs.is_empty() {
        return Err(err(StatusCode::BAD_REQUEST, "invalid", "nothing to change"));
    }
    let who = match needs.iter().find(|p| !allows(who.scope, **p)) {
        Some(p) => {
            return Err(err(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("the {} scope may not {p:?}", who.scope.as_str()),
            ));
        }
        None => who,
    };
    shadow_reason(&body, k.shadow, shadow)?;
    let index = commit(
        &gw,
        "key.updated",
        &who,
        json!({"key_hash": id, "name": k.name, "role": role, "shadow": shadow,
               "settings": settings_json(&settings), "fields": body}),
        AdminChange::UpdateKey {
            key_hash: id.clone(),
            role,
            shadow,
            settings: settings.clone(),
            now: gw.engine().now(),
        },
    )
    .await?;
    gw.forget_key(&id);
    let k = active_key(&gw, &id).await?;
    let mut v = key_json(&k, &settings);
    v["leaf"] = json!(index);
    Ok(Json(v))
}

/// `POST /api/v1/admin/keys/{id}/rotate`: a new key with the same name,
/// role, shadow flag, settings and usage; the old one revoked at once.
pub async fn rotate_key(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> Result<Json<Value>, ApiError> {
    let who = permitted(&gw, &headers, &[Permission::RotateKey]).await?;
    let k = active_key(&gw, &id).await?;
    if k.kind == ApiKeyKind::Reviewer && !allows(who.scope, Permission::CreateReviewerKey) {
        return Err(err(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("the {} scope may not CreateReviewerKey", who.scope.as_str()),
        ));
    }
    let key = crate::keys::generate_key();
    let new_hash = crate::keys::key_hash(&key);
    let index = commit(
        &gw,
        "key.rotated",
        &who,
        json!({"key_hash": id, "new_key_hash": new_hash, "name": k.name}),
        AdminChange::RotateKey {
            old_hash: id.clone(),
            new_hash: new_hash.clone(),
            now: gw.engine().now(),
        },
    )
    .await?;
    gw.forget_key(&id);
    Ok(Json(
        json!({"key": key, "id": new_hash, "revoked": id, "leaf": index}),
    ))
}

/// `POST /api/v1/admin/keys/{id}/revoke`.
pub async fn revoke_key(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> Result<Json<Value>, ApiError> {
    let who = permitted(&gw, &headers, &[Permission::RevokeKey]).await?;
    let k = active_key(&gw, &id).await?;
    let index = commit(
        &gw,
        "key.revoked",
        &who,
        json!({"key_hash": id, "name": k.name, "kind": k.kind.as_str()}),
        AdminChange::RevokeKey {
            key_hash: id.clone(),
            now: gw.engine().now(),
        },
    )
    .await?;
    gw.forget_key(&id);
    Ok(Json(json!({"id": id, "revoked": true, "leaf": index})))
}

/// `GET /api/v1/admin/tokens`: every admin token (never the token).
pub async fn tokens(
    State(gw): State<Gateway>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    permitted(&gw, &headers, &[Permission::ReadTokens]).await?;
    let list: Vec<Value> = gw
        .engine()
        .store()
        .admin_tokens()
        .await?
        .iter()
        .map(|t| {
            json!({"id": t.token_hash, "name": t.name, "scope": t.scope.as_str(),
                   "created_at": t.created_at, "revoked_at": t.revoked_at})
        })
        .collect();
    Ok(Json(json!({"tokens": list})))
}

/// `POST /api/v1/admin/tokens`: `{name, scope}` — owners only; printed once.
pub async fn create_token(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Body(body): Body<Value>,
) -> Result<Json<Value>, ApiError> {
    let who = permitted(&gw, &headers, &[Permission::ManageTokens]).await?;
    let scope = body
        .get("scope")
        .and_then(Value::as_str)
        .and_then(AdminScope::parse)
        .ok_or_else(|| {
            err(
                StatusCode::BAD_REQUEST,
                "invalid",
                "scope: owner, operator, security_reviewer or auditor",
            )
        })?;
    let name = body.get("name").and_then(Value::as_str).unwrap_or_default();
    let (token, hash) = issue_token(gw.engine(), name, scope, by(&who))
        .await
        .map_err(|e| match e {
            interlock_engine::EngineError::Store(interlock_store::StoreError::InvalidInput(m)) => {
                err(StatusCode::BAD_REQUEST, "invalid", m)
            }
            e => e.into(),
        })?;
    Ok(Json(
        json!({"token": token, "id": hash, "name": name, "scope": scope.as_str()}),
    ))
}

/// `POST /api/v1/admin/tokens/{id}/revoke`: owners only (one may revoke
/// itself).
pub async fn revoke_token(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(id): Param<String>,
) -> Result<Json<Value>, ApiError> {
    let who = permitted(&gw, &headers, &[Permission::ManageTokens]).await?;
    let index = commit(
        &gw,
        "token.revoked",
        &who,
        json!({"token_hash": id}),
        AdminChange::RevokeToken {
            token_hash: id.clone(),
            now: gw.engine().now(),
        },
    )
    .await?;
    Ok(Json(json!({"id": id, "revoked": true, "leaf": index})))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table, as the docs state it: only owners mint tokens or reviewer
    /// keys; auditors only read; no scope but owner holds ManageTokens, so
    /// none can raise itself.
    #[test]
    fn the_scope_table_is_least_privilege() {
        for p in ALL_PERMISSIONS {
            assert!(allows(AdminScope::Owner, p), "{p:?}");
        }
        for s in [
            AdminScope::Operator,
            AdminScope::SecurityReviewer,
            AdminScope::Auditor,
        ] {
            assert!(!allows(s, Permission::ManageTokens), "{s:?}");
            assert!(!allows(s, Permission::CreateReviewerKey), "{s:?}");
            assert!(allows(s, Permission::ReadKeys), "{s:?}");
        }
        let writes = [
            Permission::CreateAgentKey,
            Permission::EditLimits,
            Permission::EditSafety,
            Permission::RotateKey,
            Permission::RevokeKey,
        ];
        for p in writes {
            assert!(!allows(AdminScope::Auditor, p), "{p:?}");
        }
        assert!(!allows(AdminScope::Operator, Permission::EditSafety));
        for s in [AdminScope::Operator, AdminScope::SecurityReviewer] {
            assert!(!allows(s, Permission::EditReviewerRole), "{s:?}");
            assert!(!allows(s, Permission::SetShadow), "{s:?}");
        }
        assert!(!allows(
            AdminScope::SecurityReviewer,
            Permission::EditLimits
        ));
        assert!(generate_token().starts_with(TOKEN_PREFIX));
    }
}
