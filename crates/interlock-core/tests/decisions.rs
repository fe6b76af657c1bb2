//! Signed decisions: a statement verifies only for its own plan hash, plan id,
//! policy, trusted key and time window.

use ed25519_dalek::SigningKey;
use interlock_core::canon::Digest;
use interlock_core::decision::{
    APPROVAL_PAYLOAD_TYPE, DecisionError, Envelope, Expectation, KeyId, TrustedKeys, pae,
    sign_decision, verify_decision,
};
use interlock_core::{Decision, Policy};

const NOW: i64 = 1_795_000_000;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn plan_hash() -> Digest {
    Digest::of_bytes(b"a plan body")
}

fn signed(signer: &SigningKey) -> Envelope {
    sign_decision(
        signer,
        "plan-1",
        plan_hash(),
        Decision::Approve,
        "looks right",
        NOW - 60,
        NOW + 3600,
        [7; 16],
        Policy::default().digest(),
    )
    .expect("signing works")
    .1
}

fn trusted(keys: &[&SigningKey]) -> TrustedKeys {
    let mut t = TrustedKeys::new();
    for k in keys {
        t.add(k.verifying_key());
    }
    t
}

fn expect() -> Expectation<'static> {
    Expectation {
        plan_id: "plan-1",
        plan_hash: plan_hash(),
        policy_digest: Policy::default().digest(),
        now: NOW,
    }
}

#[test]
fn a_good_statement_verifies_and_round_trips_through_dsse_json() {
    let k = key(1);
    let env = signed(&k);
    let json = env.to_json();
    assert_eq!(json["payloadType"], APPROVAL_PAYLOAD_TYPE);
    let back = Envelope::from_json(&json).unwrap();
    assert_eq!(back, env);
    let st = verify_decision(&back, &trusted(&[&k]), &expect()).unwrap();
    assert_eq!(st.decision, Decision::Approve);
    assert_eq!(st.approver_key_id, KeyId::of(&k.verifying_key()));
    assert_eq!(st.nonce, [7; 16]);
}

#[test]
fn the_signature_covers_the_dsse_pae_of_the_canonical_payload() {
    let k = key(1);
    let env = signed(&k);
    let sig = ed25519_dalek::Signature::from_bytes(&env.signature);
    k.verifying_key()
        .verify_strict(&pae(APPROVAL_PAYLOAD_TYPE, &env.payload), &sig)
        .expect("an independent DSSE verifier would accept it");
    assert!(env.payload.starts_with(br#"{"approver_key_id":"ed25519:"#));
}

#[test]
fn a_different_plan_hash_is_refused() {
    let k = key(1);
    let mut e = expect();
    e.plan_hash = Digest::of_bytes(b"the body after an edit");
    assert!(matches!(
        verify_decision(&signed(&k), &trusted(&[&k]), &e),
        Err(DecisionError::PlanHashMismatch { .. })
    ));
}

#[test]
fn a_different_plan_id_or_policy_is_refused() {
    let k = key(1);
    let mut e = expect();
    e.plan_id = "plan-2";
    assert!(matches!(
        verify_decision(&signed(&k), &trusted(&[&k]), &e),
        Err(DecisionError::PlanIdMismatch { .. })
    ));
    let mut e = expect();
    e.policy_digest = Digest::of_bytes(b"another policy");
    assert!(matches!(
        verify_decision(&signed(&k), &trusted(&[&k]), &e),
        Err(DecisionError::PolicyMismatch { .. })
    ));
}

#[test]
fn an_untrusted_key_or_a_forged_signature_is_refused() {
    let (k, other) = (key(1), key(2));
    assert!(matches!(
        verify_decision(&signed(&k), &trusted(&[&other]), &expect()),
        Err(DecisionError::UnknownKey(_))
    ));
    // Signed by `other`, but claiming to be `k`'s.
    let mut env = signed(&other);
    env.key_id = KeyId::of(&k.verifying_key());
    assert!(matches!(
        verify_decision(&env, &trusted(&[&k, &other]), &expect()),
        Err(DecisionError::BadSignature(_))
    ));
}

#[test]
fn any_tampered_byte_is_refused() {
    let k = key(1);
    let env = signed(&k);
    for i in 0..env.payload.len() {
        let mut t = env.clone();
        t.payload[i] ^= 0x01;
        assert!(
            verify_decision(&t, &trusted(&[&k]), &expect()).is_err(),
            "byte {i}"
        );
    }
    let mut t = env.clone();
    t.signature[10] ^= 0x80;
    assert!(matches!(
        verify_decision(&t, &trusted(&[&k]), &expect()),
        Err(DecisionError::BadSignature(_))
    ));
    let mut t = env;
    t.payload_type = "application/json".into();
    assert!(matches!(
        verify_decision(&t, &trusted(&[&k]), &expect()),
        Err(DecisionError::WrongPayloadType(_))
    ));
}

#[test]
fn the_time_window_is_enforced() {
    let k = key(1);
    let env = signed(&k);
    let mut e = expect();
    e.now = NOW - 61;
    assert!(matches!(
        verify_decision(&env, &trusted(&[&k]), &e),
        Err(DecisionError::NotYetValid { .. })
    ));
    e.now = NOW + 3600;
    assert!(matches!(
        verify_decision(&env, &trusted(&[&k]), &e),
        Err(DecisionError::Expired { .. })
    ));
    e.now = NOW + 3599;
    verify_decision(&env, &trusted(&[&k]), &e).expect("inside the window");
}

#[test]
fn bad_windows_and_empty_reasons_cannot_be_signed() {
    let k = key(1);
    let sign = |nb, exp, reason: &str| {
        sign_decision(
            &k,
            "p",
            plan_hash(),
            Decision::Reject,
            reason,
            nb,
            exp,
            [0; 16],
            plan_hash(),
        )
    };
    assert!(matches!(
        sign(10, 10, "r"),
        Err(DecisionError::BadWindow(_))
    ));
    assert!(matches!(
        sign(0, 31 * 24 * 3600, "r"),
        Err(DecisionError::BadWindow(_))
    ));
    assert!(matches!(
        sign(0, 10, "  "),
        Err(DecisionError::Malformed(_))
    ));
}

#[test]
fn key_ids_parse_and_print_alike() {
    let id = KeyId::of(&key(3).verifying_key());
    assert_eq!(id.to_string().parse::<KeyId>().unwrap(), id);
    assert!("ed25519:ABC".parse::<KeyId>().is_err());
    assert_eq!(id.fingerprint().len(), 19);
}
