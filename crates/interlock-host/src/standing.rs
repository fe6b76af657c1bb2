//! Standing approvals signed at this machine: a held call approved for a
//! scope wider than once (its plan, then the grant trust offers for it), and
//! a grant asked for by name (`interlock standing grant`). Each is "sign with
//! the keychain key, then let trust decide"; what a grant may cover is
//! `interlock_trust::{standing, scopes}`'s alone.

use interlock_core::canon;
use interlock_engine::{DecisionOutcome, Engine};
use interlock_gateway::Gateway;
use interlock_store::StandingRecord;
use interlock_trust::EventBus;
use interlock_trust::scopes::{self, HeldCall, Scope};
use interlock_trust::standing;

use crate::HostError;
use crate::decide::{Countersign, decide_plan, sign};

/// What a standing approval asked for by name grants: role `role` may call
/// the exposed tool `tool` at its approved definition with arguments of
/// `shape` until `expires_at`.
pub struct StandingTerms<'a> {
    pub role: &'a str,
    pub tool: &'a str,
    pub shape: &'a canon::Value,
    pub expires_at: i64,
}

/// Approves a held call with the keychain key for `scope` (issue 18): the
/// held plan at exactly `expected_hash`, and for a scope wider than once the
/// standing approval trust offers for it, signed too. The plan is approved
/// first (a plan that changed since it was shown signs nothing); the grant
/// follows, so a grant never stands for a call nobody approved. `said` must
/// approve (a held call is rejected as a plan, once).
pub async fn approve_held_call(
    gateway: &Gateway,
    plan_id: &str,
    expected_hash: &str,
    scope: Scope,
    said: &Countersign<'_>,
) -> Result<(DecisionOutcome, Option<StandingRecord>), HostError> {
    said.approval_only(plan_id)?;
    let engine = gateway.engine();
    // Read the offer before approving: once the plan is approved it is no
    // longer on offer.
    let prefixes = gateway.tool_prefixes();
    let held = HeldCall {
        engine,
        prefixes: &prefixes,
        plan_id,
        memo: gateway.held_memo(plan_id),
    };
    let offer = scopes::offer(&held, scope).await?.ok_or_else(|| {
        HostError::ScopeNotOffered(format!(
            "`{plan_id}` cannot be approved {}: that scope is not on offer for it (its session is unknown, its tool is not at its approved definition, or its agent's key is gone)",
            scope.label().to_lowercase()
        ))
    })?;
    let outcome = decide_plan(engine, plan_id, Some(expected_hash), said).await?;
    let Some(grant) = offer.grant else {
        return Ok((outcome, None));
    };
    let grant_said = said.valid_for(statement_window(engine, grant.expires_at));
    let envelope = sign(engine, &grant_said, &grant.subject, grant.document_hash)?;
    let record = standing::grant(engine, gateway.events(), &grant.document, &envelope).await?;
    Ok((outcome, Some(record)))
}

/// Whether a held call's desktop notification may offer a scope wider than
/// once (`scopes::grantable_from_notification`).
pub fn held_call_grantable(gateway: &Gateway, plan_id: &str) -> bool {
    scopes::grantable_from_notification(gateway.held_memo(plan_id).as_ref())
}

/// Grants a standing approval signed with the keychain key, bound to the
/// tool's approved definition (refused when it has none). `prefixes` are the
/// configured servers' tool-name prefixes.
/// `said` approves; its window is the grant's own (see [`statement_window`]).
pub async fn grant_standing(
    engine: &Engine,
    events: &EventBus,
    prefixes: &std::collections::BTreeMap<String, String>,
    terms: &StandingTerms<'_>,
    said: &Countersign<'_>,
) -> Result<StandingRecord, HostError> {
    let tool_hash = standing::approved_tool_hash(engine, prefixes, terms.tool).await?;
    let doc = standing::document(
        terms.role,
        terms.tool,
        &tool_hash,
        terms.shape,
        terms.expires_at,
        &standing::Narrowing::default(),
    );
    let hash = canon::digest(&doc);
    let subject = standing::subject(&standing::id_of(&hash));
    said.approval_only(&subject)?;
    let said = said.valid_for(statement_window(engine, terms.expires_at));
    let envelope = sign(engine, &said, &subject, hash)?;
    Ok(standing::grant(engine, events, &doc, &envelope).await?)
}

/// A grant's statement is valid until the standing approval itself ends,
/// within the approval window's limits.
fn statement_window(engine: &Engine, expires_at: i64) -> i64 {
    (expires_at - engine.now()).clamp(60, interlock_core::decision::MAX_APPROVAL_WINDOW_SECS)
}
