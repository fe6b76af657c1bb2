//! Signed decisions: a statement verifies only for its own plan hash, plan id,
//! policy, trusted key and time window.

use ed25519_dalek::SigningKey;
use interlock_core::canon::Digest;
use interlock_core::decision::{
    APPROVAL_PAYLOAD_TYPE, ApprovalStatement, DecisionError, Envelope, Expectation, KeyId, Terms,
    TrustedKeys, pae, sign_decision, verify_decision,
};
use interlock_core::{Decision, Policy};

const NOW: i64 = 1_795_000_000;
const AUDIENCE: &str = "gateway-a.example/log";

fn terms<'a>(subject: &'a str, decision: Decision, reason: &'a str) -> Terms<'a> {
    Terms {
        audience: AUDIENCE,
        subject,
        subject_hash: plan_hash(),
        decision,
        reason,
        issued_at: NOW - 60,
        not_before: NOW - 60,
        expires_at: NOW + 3600,
        nonce: [7; 16],
        policy_digest: Policy::default().digest(),
    }
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn plan_hash() -> Digest {
    Digest::of_bytes(b"a plan body")
}

fn signed(signer: &SigningKey) -> Envelope {
    sign_decision(signer, &terms("plan-1", Decision::Approve, "looks right"))
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
        audience: AUDIENCE,
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
            &Terms {
                issued_at: nb,
                not_before: nb,
                expires_at: exp,
                ..terms("p", Decision::Reject, reason)
            },
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

/// Issue 15, item 2: a statement made for one gateway is refused by another that
/// trusts the same approver key.
#[test]
fn regression_statement_for_another_gateway_is_refused() {
    let k = key(1);
    let mut e = expect();
    e.audience = "gateway-b.example/log";
    assert!(matches!(
        verify_decision(&signed(&k), &trusted(&[&k]), &e),
        Err(DecisionError::WrongAudience { .. })
    ));
}

/// Issue 15, item 2: a v1 statement (no audience) still reads, for receipts made
/// before v2, but is never accepted as a decision.
#[test]
fn regression_v1_statement_without_audience_is_not_accepted() {
    let k = key(1);
    let (mut statement, _) =
        sign_decision(&k, &terms("plan-1", Decision::Approve, "ok")).expect("signs");
    statement.schema_version = "interlock.approval/v1".into();
    statement.audience = None;
    statement.issued_at = None;
    let payload = interlock_core::canon::canonical_bytes(&statement.to_value());
    let back = ApprovalStatement::from_value(&interlock_core::canon::parse_json(&payload).unwrap())
        .expect("a v1 statement still reads");
    assert_eq!(back.audience, None);
    let sig = ed25519_dalek::Signer::sign(&k, &pae(APPROVAL_PAYLOAD_TYPE, &payload));
    let env = Envelope {
        payload_type: APPROVAL_PAYLOAD_TYPE.into(),
        payload,
        key_id: KeyId::of(&k.verifying_key()),
        signature: sig.to_bytes(),
    };
    assert!(matches!(
        verify_decision(&env, &trusted(&[&k]), &expect()),
        Err(DecisionError::NoAudience)
    ));
}

#[test]
fn a_v2_statement_names_its_audience_and_issue_time() {
    let (statement, env) =
        sign_decision(&key(1), &terms("plan-1", Decision::Approve, "ok")).expect("signs");
    assert_eq!(statement.audience.as_deref(), Some(AUDIENCE));
    assert_eq!(statement.issued_at, Some(NOW - 60));
    let text = String::from_utf8(env.payload).unwrap();
    assert!(
        text.contains(r#""audience":"gateway-a.example/log""#),
        "{text}"
    );
    assert!(
        text.contains(r#""schema_version":"interlock.approval/v2""#),
        "{text}"
    );
}

#[test]
fn key_ids_parse_and_print_alike() {
    let id = KeyId::of(&key(3).verifying_key());
    assert_eq!(id.to_string().parse::<KeyId>().unwrap(), id);
    assert!("ed25519:ABC".parse::<KeyId>().is_err());
    assert_eq!(id.fingerprint().len(), 19);
}

/// Issue 39 item 6: a statement dated weeks ahead verified (only
/// `issued_at < expires_at` was checked) and made every later decision
/// about its subject stale until then — a veto frozen out. Now a statement
/// issued more than the allowed skew ahead of the verifier's clock is
/// refused; within the skew (two machines' clocks) it still verifies.
#[test]
fn regression_issue_39_a_statement_issued_in_the_future_cannot_freeze_later_decisions() {
    use interlock_core::decision::MAX_ISSUED_AT_SKEW_SECS;
    let k = key(1);
    let ahead = |secs: i64| {
        let mut t = terms("plan-1", Decision::Approve, "dated ahead");
        t.issued_at = NOW + secs;
        t.expires_at = NOW + 29 * 86_400 + 3_600;
        sign_decision(&k, &t).unwrap().1
    };
    let err = verify_decision(&ahead(29 * 86_400), &trusted(&[&k]), &expect()).unwrap_err();
    assert!(
        matches!(err, DecisionError::IssuedInTheFuture { issued_at, now }
            if issued_at == NOW + 29 * 86_400 && now == NOW),
        "{err}"
    );
    assert!(err.to_string().contains("clock"), "{err}");
    let err = verify_decision(
        &ahead(MAX_ISSUED_AT_SKEW_SECS + 1),
        &trusted(&[&k]),
        &expect(),
    )
    .unwrap_err();
    assert!(
        matches!(err, DecisionError::IssuedInTheFuture { .. }),
        "{err}"
    );
    verify_decision(&ahead(MAX_ISSUED_AT_SKEW_SECS), &trusted(&[&k]), &expect())
        .expect("a clock a few minutes fast still signs");
}
