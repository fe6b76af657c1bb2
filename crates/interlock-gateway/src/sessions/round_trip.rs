//! Held calls of stateless clients (protocol 2026-07-28, issue 18 item 3):
//! the multi round-trip pattern (SEP-2322). A held call not decided within
//! `calls.hold_secs` answers `resultType: "input_required"` with only a
//! `requestState`; the client retries the same call with it, and the gateway
//! goes on waiting for *that* held plan — no new plan, no model turn, no
//! client timeout — until a reviewer decides. The SDKs retry a state-only
//! answer by themselves (the Python SDK 2.x: 50–250 ms backoff, 10 rounds by
//! default, so `hold_secs` × 10 of waiting).
//!
//! The state travels through the client, so it is sealed: HMAC-SHA-256 under
//! a key this process draws at start, over the held plan's id, the agent
//! key's hash, the tool and the arguments' digest, and an expiry. A state that
//! fails any check is refused (an error, never a fresh hold); one from before
//! a restart fails its MAC and is refused the same way (the agent calls
//! again, and is held again). A state without this module's prefix is not
//! the gateway's: it is an upstream's own round trip, and passes through.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::hmac;
use serde::{Deserialize, Serialize};

/// Marks the gateway's own states.
const PREFIX: &str = "interlock.held.v1.";
/// How long a state is accepted: a day (a held call waits no longer).
const STATE_TTL_SECS: i64 = 24 * 3600;

/// What a sealed state binds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HeldState {
    /// The held plan's id.
    pub plan: String,
    /// The agent key's hash: no other key may present it.
    pub key: String,
    /// The exposed tool and the arguments' digest: no other call may.
    pub tool: String,
    pub args: String,
    /// Unix seconds after which it is refused.
    pub expires: i64,
}

/// The process's sealing key.
pub(crate) struct Sealer(hmac::Key);

impl Default for Sealer {
    fn default() -> Self {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k).expect("OS randomness");
        Sealer(hmac::Key::new(hmac::HMAC_SHA256, &k))
    }
}

/// What a presented `requestState` is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Presented {
    /// Not the gateway's (an upstream's own round trip): pass it through.
    NotOurs,
    /// The gateway's, checked: resume waiting for this plan.
    Held(HeldState),
    /// The gateway's prefix but not a state it sealed for this call.
    Refused(&'static str),
}

impl Sealer {
    /// The `requestState` for a held call, valid for a day from `now`.
    pub(crate) fn seal(&self, state: &HeldState) -> String {
        let body = B64.encode(serde_json::to_vec(state).expect("JSON"));
        let tag = hmac::sign(&self.0, body.as_bytes());
        format!("{PREFIX}{body}.{}", B64.encode(tag.as_ref()))
    }

    /// Checks a presented state against the call it came with.
    pub(crate) fn open(
        &self,
        presented: &str,
        key_hash: &str,
        tool: &str,
        args_digest: &str,
        now: i64,
    ) -> Presented {
        let Some(rest) = presented.strip_prefix(PREFIX) else {
            return Presented::NotOurs;
        };
        let Some((body, tag)) = rest.split_once('.') else {
            return Presented::Refused("malformed");
        };
        let Ok(tag) = B64.decode(tag) else {
            return Presented::Refused("malformed");
        };
        if hmac::verify(&self.0, body.as_bytes(), &tag).is_err() {
            return Presented::Refused("not sealed by this gateway (or sealed before a restart)");
        }
        let Some(state) = B64
            .decode(body)
            .ok()
            .and_then(|b| serde_json::from_slice::<HeldState>(&b).ok())
        else {
            return Presented::Refused("malformed");
        };
        if state.key != key_hash {
            return Presented::Refused("sealed for another agent key");
        }
        if state.tool != tool || state.args != args_digest {
            return Presented::Refused("sealed for another call");
        }
        if now > state.expires {
            return Presented::Refused("expired");
        }
        Presented::Held(state)
    }
}

/// A new state for a held call's plan.
pub(crate) fn state_for(plan: &str, key: &str, tool: &str, args: &str, now: i64) -> HeldState {
    HeldState {
        plan: plan.to_owned(),
        key: key.to_owned(),
        tool: tool.to_owned(),
        args: args.to_owned(),
        expires: now + STATE_TTL_SECS,
    }
}

/// The `InputRequiredResult` of a held call still waiting: its state only
/// (the client retries; nothing is asked of its user — nothing on the
/// agent's side can approve).
pub(crate) fn input_required(sealed: &str, plan_id: &str) -> serde_json::Value {
    serde_json::json!({
        "resultType": "input_required",
        "requestState": sealed,
        "_meta": {"io.interlock/held": {"plan_id": plan_id,
            "message": "held for human review; retry with this requestState to keep waiting"}},
    })
}

/// A request's `requestState`, if any.
pub(crate) fn presented_state(
    members: &indexmap::IndexMap<String, Box<serde_json::value::RawValue>>,
) -> Option<String> {
    members
        .get("requestState")
        .and_then(|s| serde_json::from_str::<String>(s.get()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(s: &Sealer, text: &str) -> Presented {
        s.open(text, "k1", "srv__tool", "sha256:aa", 100)
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_key_call_and_time() {
        let s = Sealer::default();
        let st = state_for("call-1", "k1", "srv__tool", "sha256:aa", 50);
        let sealed = s.seal(&st);
        assert_eq!(opened(&s, &sealed), Presented::Held(st.clone()));
        assert_eq!(
            s.open(&sealed, "k2", "srv__tool", "sha256:aa", 100),
            Presented::Refused("sealed for another agent key")
        );
        assert_eq!(
            s.open(&sealed, "k1", "srv__other", "sha256:aa", 100),
            Presented::Refused("sealed for another call")
        );
        assert_eq!(
            s.open(&sealed, "k1", "srv__tool", "sha256:bb", 100),
            Presented::Refused("sealed for another call")
        );
        assert_eq!(
            s.open(
                &sealed,
                "k1",
                "srv__tool",
                "sha256:aa",
                50 + STATE_TTL_SECS + 1
            ),
            Presented::Refused("expired")
        );
    }

    #[test]
    fn regression_a_forged_or_foreign_state_is_refused_and_an_upstreams_passes() {
        let s = Sealer::default();
        let st = state_for("call-1", "k1", "srv__tool", "sha256:aa", 50);
        let sealed = s.seal(&st);
        // Another plan id under the same tag: the MAC fails.
        let (body, tag) = sealed[PREFIX.len()..].split_once('.').unwrap();
        let mut other = st.clone();
        other.plan = "call-2".into();
        let forged_body = B64.encode(serde_json::to_vec(&other).unwrap());
        assert_ne!(forged_body, body);
        let forged = format!("{PREFIX}{forged_body}.{tag}");
        assert!(matches!(opened(&s, &forged), Presented::Refused(_)));
        // Sealed by another process (a restart): refused.
        assert!(matches!(
            opened(&Sealer::default(), &sealed),
            Presented::Refused(_)
        ));
        assert!(matches!(
            opened(&s, &format!("{PREFIX}garbage")),
            Presented::Refused(_)
        ));
        assert_eq!(opened(&s, "an-upstream's-own-state"), Presented::NotOurs);
    }
}
