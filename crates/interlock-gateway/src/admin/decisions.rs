//! Decisions the machine's owner makes from a terminal beside a running gateway
//! (issue 46): `interlock servers approve|reject` and `interlock plans
//! approve|reject` in a second terminal, which cannot reach the keychain the
//! gateway runs with (`scripts/run`'s private D-Bus session), ask the gateway
//! here to sign with the approver key in *its* keychain, as `agents add` asks it
//! to issue a key.
//!
//! Why this grants nothing new: whoever reaches the admin socket is the data
//! directory's owner (see [`super::socket`]), who could sign the same decision
//! with the keychain. The decision stays bound to what that person was shown:
//! a request names the hash they saw ([`OwnerDecision::shown_hash`]) and the
//! signer refuses, signing nothing, when the subject's hash is another now. The
//! approver key never leaves the gateway's process; the signing itself is the
//! host's (the gateway crate opens no keychain), behind [`OwnerDecisions`].

use std::future::Future;
use std::pin::Pin;

use interlock_core::decision::Decision;
use serde::{Deserialize, Serialize};

/// What a decision is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionSubject {
    /// A plan's current revision.
    Plan { id: String },
    /// A server's whole observed surface.
    Server { name: String },
    /// One tool's observed definition (approve into the baseline, or block).
    Tool { server: String, tool: String },
}

impl std::fmt::Display for DecisionSubject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecisionSubject::Plan { id } => write!(f, "plan `{id}`"),
            DecisionSubject::Server { name } => write!(f, "server `{name}`"),
            DecisionSubject::Tool { server, tool } => {
                write!(f, "tool `{tool}` of server `{server}`")
            }
        }
    }
}

/// One decision, as the owner typed it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OwnerDecision {
    pub subject: DecisionSubject,
    #[serde(with = "decision_name")]
    pub decision: Decision,
    /// The hash the person was shown. Required for an approval: the gateway
    /// signs exactly it, or nothing. A rejection of a server may omit it
    /// (rejecting whatever it lists is what "reject" means there).
    pub shown_hash: Option<String>,
    pub reason: String,
    /// How long the signed statement may be presented.
    pub valid_for_secs: i64,
}

impl OwnerDecision {
    /// An approval of exactly `shown_hash`, valid `valid_for_secs`.
    pub fn approval(
        subject: DecisionSubject,
        shown_hash: &str,
        reason: &str,
        valid_for_secs: i64,
    ) -> OwnerDecision {
        OwnerDecision {
            subject,
            decision: Decision::Approve,
            shown_hash: Some(shown_hash.to_owned()),
            reason: reason.to_owned(),
            valid_for_secs,
        }
    }

    /// A rejection (of whatever the subject is now), valid an hour.
    pub fn rejection(subject: DecisionSubject, reason: &str) -> OwnerDecision {
        OwnerDecision {
            subject,
            decision: Decision::Reject,
            shown_hash: None,
            reason: reason.to_owned(),
            valid_for_secs: 3600,
        }
    }
}

/// Why a decision was refused before anything was signed.
pub fn check(d: &OwnerDecision) -> Result<(), String> {
    if d.decision == Decision::Approve && d.shown_hash.is_none() {
        return Err(format!(
            "an approval of {} must name the hash that was shown",
            d.subject
        ));
    }
    if d.reason.trim().is_empty() {
        return Err("a decision needs a reason".into());
    }
    if !(1..=366 * 24 * 3600).contains(&d.valid_for_secs) {
        return Err("a statement's validity must be between 1 s and a year".into());
    }
    Ok(())
}

/// The host's signer: signs `d` with the approver key in its keychain and
/// hands the statement to the one place that decides about the subject.
/// Answers what became of the subject, in words, or why it was refused.
pub trait OwnerDecisions: Send + Sync + 'static {
    fn decide(
        &self,
        d: OwnerDecision,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + '_>>;
}

mod decision_name {
    use interlock_core::decision::Decision;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(d.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decision, D::Error> {
        match String::deserialize(d)?.as_str() {
            "approve" => Ok(Decision::Approve),
            "reject" => Ok(Decision::Reject),
            other => Err(serde::de::Error::custom(format!(
                "unknown decision {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(hash: Option<&str>) -> OwnerDecision {
        OwnerDecision {
            subject: DecisionSubject::Server { name: "fs".into() },
            decision: Decision::Approve,
            shown_hash: hash.map(str::to_owned),
            reason: "read the surface".into(),
            valid_for_secs: 3600,
        }
    }

    #[test]
    fn an_approval_without_the_shown_hash_is_refused() {
        assert!(check(&approval(None)).unwrap_err().contains("hash"));
        assert!(check(&approval(Some("sha256:ab"))).is_ok());
    }

    #[test]
    fn a_blank_reason_and_a_forever_statement_are_refused() {
        let mut d = approval(Some("sha256:ab"));
        d.reason = "  ".into();
        assert!(check(&d).is_err());
        let mut d = approval(Some("sha256:ab"));
        d.valid_for_secs = i64::MAX;
        assert!(check(&d).is_err());
    }

    #[test]
    fn it_travels_as_json_with_the_decision_in_words() {
        let d = approval(Some("sha256:ab"));
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["decision"], "approve");
        assert_eq!(v["subject"]["kind"], "server");
        let back: OwnerDecision = serde_json::from_value(v).unwrap();
        assert_eq!(back.subject, d.subject);
        let bad = serde_json::json!({"subject": {"kind": "server", "name": "x"},
            "decision": "maybe", "shown_hash": null, "reason": "r", "valid_for_secs": 1});
        assert!(serde_json::from_value::<OwnerDecision>(bad).is_err());
    }
}
