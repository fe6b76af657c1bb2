//! A reviewer's decision made at this machine: "sign with the keychain key,
//! then let the engine or trust decide". Each function reads the subject's
//! current hash, refuses when it is not the one the person was shown
//! ([`HostError::Changed`], nothing signed), signs a [`Countersign`] over it,
//! and hands the statement to the one place that decides about that subject
//! (the engine for plans; `interlock_trust` for servers, tools and envelopes;
//! a team gateway's reviewer API for [`decide_remote`]).

use interlock_core::DsseEnvelope;
use interlock_core::canon::Digest;
use interlock_core::decision::{Terms, sign_decision};
use interlock_engine::{DecisionOutcome, Engine};
use interlock_gateway::GatewayConfig;
use interlock_gateway::client::{ReviewerClient, Subject};
use interlock_keychain::KeychainKey;
use interlock_store::ServerRecord;
use interlock_trust::EventBus;
use interlock_trust::pins::{PinError, decide_server, server_subject};
use interlock_trust::tool_decision;

use crate::{Decision, HostError, nonce};

/// What the person at this machine says, and with which key: every decision
/// made here is this, signed over exactly the hash they were shown, then
/// handed to the engine or trust to decide.
#[derive(Clone, Copy)]
pub struct Countersign<'a> {
    pub key: &'a KeychainKey,
    pub decision: Decision,
    pub reason: &'a str,
    /// How long the signed statement may be presented.
    pub valid_for_secs: i64,
}

impl<'a> Countersign<'a> {
    /// An approval by `key`.
    pub fn approve(key: &'a KeychainKey, reason: &'a str, valid_for_secs: i64) -> Self {
        Countersign {
            key,
            decision: Decision::Approve,
            reason,
            valid_for_secs,
        }
    }

    /// Refuses a decision other than approval for a subject that has none
    /// (leaving it undecided is refusing it); nothing is signed.
    pub(crate) fn approval_only(&self, subject: &str) -> Result<(), HostError> {
        match self.decision {
            Decision::Approve => Ok(()),
            Decision::Reject => Err(HostError::ApprovalOnly(subject.to_owned())),
        }
    }

    /// The same words and key for another subject, valid `valid_for_secs`.
    pub(crate) fn valid_for(self, valid_for_secs: i64) -> Self {
        Countersign {
            valid_for_secs,
            ..self
        }
    }
}

/// Signs `said` about `subject` at exactly `hash`, for this engine's log
/// (its audience) under the policy in force.
pub(crate) fn sign(
    engine: &Engine,
    said: &Countersign<'_>,
    subject: &str,
    hash: Digest,
) -> Result<DsseEnvelope, HostError> {
    let now = engine.now();
    let (_, envelope) = sign_decision(
        said.key,
        &Terms {
            audience: engine.log().origin(),
            subject,
            subject_hash: hash,
            decision: said.decision,
            reason: said.reason,
            issued_at: now,
            not_before: now,
            expires_at: now + said.valid_for_secs,
            nonce: nonce(),
            policy_digest: engine.policy().digest(),
        },
    )?;
    Ok(envelope)
}

/// Decides a plan with the keychain key, signing exactly `expected_hash` (the
/// hash the reviewer saw — a notification's, a window's). If the plan's current
/// hash is another, nothing is signed: [`HostError::Changed`].
pub async fn decide_plan(
    engine: &Engine,
    plan_id: &str,
    expected_hash: Option<&str>,
    said: &Countersign<'_>,
) -> Result<DecisionOutcome, HostError> {
    let plan = engine.plan(plan_id).await?;
    if let Some(expected) = expected_hash
        && expected != plan.plan_hash
    {
        return Err(HostError::Changed(format!(
            "plan `{plan_id}` changed since it was shown ({expected} → {}); review it again",
            plan.plan_hash
        )));
    }
    let hash = plan.plan_hash.parse().map_err(|_| {
        interlock_store::StoreError::Malformed(format!("plan `{plan_id}` has a malformed hash"))
    })?;
    let envelope = sign(engine, said, plan_id, hash)?;
    Ok(engine.decide(&envelope).await?)
}

/// How long before "now" a statement to another machine's gateway becomes
/// valid: an allowance for the two clocks (the browser's signing uses the same).
const REMOTE_NOT_BEFORE_SLACK_SECS: i64 = 30;

/// Decides a plan or a server's surface on a gateway running elsewhere (a
/// team's `interlock serve`), signing with the keychain key exactly
/// `expected_hash` — the hash the reviewer was shown — under the policy digest
/// that gateway reports. If the subject's current hash is another, nothing is
/// signed ([`HostError::Changed`]); if it changes between this read and the
/// gateway's check, the gateway refuses the statement (`changed`), also
/// [`HostError::Changed`]. The statement names `pin`'s audience, and nothing
/// is signed when the gateway reports another ([`HostError::WrongAudience`],
/// issue 39 item 7). Returns the gateway's answer.
pub async fn decide_remote(
    client: &ReviewerClient,
    pin: &crate::team_audience::AudiencePin,
    kind: Subject,
    id: &str,
    expected_hash: &str,
    said: &Countersign<'_>,
) -> Result<serde_json::Value, HostError> {
    let shown = client.subject(kind, id).await?;
    let (current, subject) = match kind {
        Subject::Plan => (shown["plan"]["plan_hash"].as_str(), id.to_owned()),
        Subject::Server => (
            shown["server"]["observed_hash"].as_str(),
            server_subject(id),
        ),
    };
    let malformed = |what: &str| {
        HostError::Remote(interlock_gateway::client::ClientError::Malformed(format!(
            "`{id}` has no valid {what}"
        )))
    };
    let current = current.ok_or_else(|| malformed("hash"))?;
    if current != expected_hash {
        return Err(HostError::Changed(format!(
            "`{id}` changed since it was shown ({expected_hash} → {current}); review it again"
        )));
    }
    let hash: Digest = current.parse().map_err(|_| malformed("hash"))?;
    let policy: Digest = shown["policy_digest"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| malformed("policy digest"))?;
    let reported = shown["audience"]
        .as_str()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| malformed("audience (log origin)"))?;
    let pinned = pin.ensure(client).await?;
    if reported != pinned {
        return Err(HostError::WrongAudience {
            url: client.origin(),
            pinned,
            reported: reported.to_owned(),
        });
    }
    let audience = pinned.as_str();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (_, envelope) = sign_decision(
        said.key,
        &Terms {
            audience,
            subject: &subject,
            subject_hash: hash,
            decision: said.decision,
            reason: said.reason,
            issued_at: now,
            not_before: now - REMOTE_NOT_BEFORE_SLACK_SECS,
            expires_at: now + said.valid_for_secs,
            nonce: nonce(),
            policy_digest: policy,
        },
    )?;
    match client.submit(kind, id, &envelope.to_json()).await {
        Err(e) if e.code() == Some("changed") => Err(HostError::Changed(e.to_string())),
        other => Ok(other?),
    }
}

/// Decides a server's observed surface with the keychain key, signing exactly
/// `expected_hash` when given (else the current observed hash).
pub async fn decide_server_surface(
    engine: &Engine,
    events: &EventBus,
    name: &str,
    expected_hash: Option<&str>,
    said: &Countersign<'_>,
) -> Result<ServerRecord, HostError> {
    let record = engine
        .store()
        .server(name)
        .await?
        .ok_or_else(|| PinError::NoSuchServer(name.to_owned()))?;
    let observed = record
        .observed_hash
        .clone()
        .ok_or_else(|| PinError::NothingObserved {
            name: name.to_owned(),
        })?;
    if let Some(expected) = expected_hash
        && expected != observed
    {
        return Err(HostError::Changed(format!(
            "server `{name}` changed since it was shown ({expected} → {observed}); review it again"
        )));
    }
    let hash = observed.parse().map_err(|_| {
        interlock_store::StoreError::Malformed(format!("server `{name}` has a malformed hash"))
    })?;
    let envelope = sign(engine, said, &server_subject(name), hash)?;
    Ok(decide_server(engine, &envelope, events).await?)
}

/// What `servers approve --from-lock` did with one locked server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromLock {
    /// Its observed surface is the locked one: approved (a new statement,
    /// signed by this machine's key for this gateway).
    Trusted,
    /// Its baseline already is the locked surface.
    AlreadyTrusted,
    /// It lists another surface now: nothing was signed for it.
    Differs { observed: String },
    /// This gateway has not seen it (not configured, or not yet connected).
    NotSeen,
}

/// Bootstraps a gateway from a reviewed lockfile (issue 22 item 1): every
/// statement in it must verify (`verify_strict`, by an approver key this
/// gateway trusts, approving exactly the locked hash) before anything is
/// trusted — one bad statement refuses the whole file. Then each server whose
/// observed surface still is the locked one is approved with the keychain
/// key, compare-and-swap on that hash; the others are left as they are.
pub async fn approve_from_lock(
    engine: &Engine,
    events: &EventBus,
    key: &KeychainKey,
    lock: &interlock_trust::review::lockfile::Lockfile,
    valid_for_secs: i64,
) -> Result<Vec<(String, FromLock)>, HostError> {
    let (trusted, _) = engine.trusted_approvers().await?;
    lock.verify(&trusted)?;
    let mut out = Vec::new();
    for (name, locked) in &lock.servers {
        let hash = locked.surface_hash.to_string();
        let outcome = match engine.store().server(name).await? {
            None => FromLock::NotSeen,
            Some(r)
                if r.status == interlock_store::ServerStatus::Trusted
                    && r.baseline_hash.as_deref() == Some(hash.as_str())
                    && r.observed_hash.as_deref() == Some(hash.as_str()) =>
            {
                FromLock::AlreadyTrusted
            }
            Some(r) if r.observed_hash.as_deref() == Some(hash.as_str()) => {
                let reason = format!(
                    "from a reviewed lockfile: approved by {} ({})",
                    locked.approved_by, locked.reason
                );
                let said = Countersign::approve(key, &reason, valid_for_secs);
                match decide_server_surface(engine, events, name, Some(&hash), &said).await {
                    Ok(_) => FromLock::Trusted,
                    // It listed another surface meanwhile.
                    Err(HostError::Changed(_)) => FromLock::Differs {
                        observed: "(changed while approving)".into(),
                    },
                    Err(e) => return Err(e),
                }
            }
            Some(r) => FromLock::Differs {
                observed: r.observed_hash.unwrap_or_else(|| "(nothing listed)".into()),
            },
        };
        out.push((name.clone(), outcome));
    }
    Ok(out)
}

/// Decides one tool of a server with the keychain key (approve its observed
/// definition into the baseline, or reject = block it), signing exactly
/// `expected_hash` when given (else the tool's current definition hash).
pub async fn decide_tool_definition(
    engine: &Engine,
    events: &EventBus,
    config: &GatewayConfig,
    server: &str,
    tool: &str,
    expected_hash: Option<&str>,
    said: &Countersign<'_>,
) -> Result<ServerRecord, HostError> {
    let record = engine
        .store()
        .server(server)
        .await?
        .ok_or_else(|| PinError::NoSuchServer(server.to_owned()))?;
    let hash = tool_decision::observed_tool_hash(&record, tool)?;
    if let Some(expected) = expected_hash
        && expected != hash.to_string()
    {
        return Err(HostError::Changed(format!(
            "tool `{tool}` of `{server}` changed since it was shown ({expected} → {hash}); review it again"
        )));
    }
    let envelope = sign(
        engine,
        said,
        &tool_decision::tool_subject(server, tool),
        hash,
    )?;
    let drift = config.drift.policy()?;
    Ok(tool_decision::decide_tool(engine, &drift, &envelope, events).await?)
}

/// Widens a tool's behavioural envelope by the findings log entry `leaf`
/// recorded (a held call or a withheld result), signing *exactly* the widened
/// envelope's hash the reviewer was shown (`expected_hash`; refused if
/// widening it now gives another) with the keychain key. A widening is only
/// approved (leaving the envelope as it is refuses it).
pub async fn decide_envelope_widening(
    engine: &Engine,
    server: &str,
    tool: &str,
    leaf: u64,
    expected_hash: Option<&str>,
    said: &Countersign<'_>,
) -> Result<interlock_trust::envelopes::Widening, HostError> {
    use interlock_trust::envelopes;
    let w = envelopes::widening(engine, server, tool, leaf).await?;
    said.approval_only(&w.subject())?;
    let now = w.widened_hash.to_string();
    if let Some(expected) = expected_hash
        && expected != now
    {
        return Err(HostError::Changed(format!(
            "the envelope of {server}/{tool} changed since it was shown ({expected} → {now}); review it again"
        )));
    }
    let statement = sign(engine, said, &w.subject(), w.widened_hash)?;
    Ok(envelopes::decide_widening(engine, &statement, leaf).await?)
}
