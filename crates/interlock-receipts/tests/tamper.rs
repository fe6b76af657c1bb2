//! Real bundles, and the tampering matrix: every case fails with a named reason.
mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use common::{IDENTITY, Log, approver_entry, key, vkey};
use interlock_canon::{Map, Value, canonical_bytes, parse_json};
use interlock_core::decision::{KeyId, pae};
use interlock_receipts::{
    Bundle, PAYLOAD_TYPE, ReceiptError, VerifyOptions, VerifyReport, derive_subjects, open_leaf,
    open_leaf_unverified, verify_bundle,
};
use std::sync::OnceLock;

fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::new(50, 7))
}

fn verify(b: &Bundle) -> VerifyReport {
    verify_bundle(&b.to_bytes(), &VerifyOptions::default())
}

fn has(report: &VerifyReport, pred: impl Fn(&ReceiptError) -> bool) -> bool {
    report.errors().any(pred)
}

#[track_caller]
fn expect_fail(report: &VerifyReport, pred: impl Fn(&ReceiptError) -> bool) {
    assert!(!report.is_ok(), "tampering passed verification:\n{report}");
    assert!(has(report, pred), "not named as expected:\n{report}");
}

/// Replaces one base64 character at `offset` after `marker` in a leaf.
fn flip_in_leaf(leaf: &mut [u8], marker: &str, offset: usize) {
    let at = leaf
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())
        .unwrap()
        + marker.len()
        + offset;
    leaf[at] = if leaf[at] == b'A' { b'B' } else { b'A' };
}

#[test]
fn a_real_bundle_verifies_and_round_trips() {
    let log = log();
    let b = log.full_bundle();
    let bytes = b.to_bytes();
    // Written as canonical JCS.
    assert_eq!(canonical_bytes(&parse_json(&bytes).unwrap()), bytes);
    assert_eq!(Bundle::parse(&bytes).unwrap(), b);
    let report = verify_bundle(&bytes, &VerifyOptions::default());
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.receipts.len(), 50);
    assert_eq!(report.tree_size, Some(50));
    let text = report.to_string();
    assert!(
        text.contains("#0 approver.registered [approver-key:ed25519:"),
        "{text}"
    );
    assert!(
        text.contains("#7 plan.decision [plan:p1, approval]: ok"),
        "{text}"
    );
    assert!(
        text.ends_with("50 receipts, 0 failed, 0 bundle problems: OK\n"),
        "{text}"
    );
    // Pinned to the right key, and single-threaded: same result.
    let pinned = VerifyOptions {
        pinned_log_key: Some(log.vkey()),
        threads: 1,
    };
    assert!(verify_bundle(&bytes, &pinned).is_ok());
    // Kinds present.
    for kind in [
        "approver.registered",
        "plan.decision",
        "plan.proposed",
        "plan.transition",
        "stage.probe",
        "stage.dispatch",
    ] {
        assert!(report.receipts.iter().any(|r| r.kind == kind), "{kind}");
    }
    // Bundle bytes per receipt.
    assert!(
        bytes.len() / 50 < 2048,
        "{} bytes per receipt",
        bytes.len() / 50
    );
}

#[test]
fn open_leaf_reads_and_checks() {
    let log = log();
    let leaf = &log.leaves[7];
    let opened = open_leaf(leaf, &log.key.verifying_key()).unwrap();
    assert_eq!(opened.seq, 7);
    assert_eq!(opened.kind, "plan.decision");
    assert_eq!(opened.key_id, KeyId::of(&log.key.verifying_key()));
    assert_eq!(opened.time, 1_760_000_007);
    assert!(opened.predicate.contains_key("statement"));
    assert_eq!(
        open_leaf(leaf, &key(9).verifying_key()).unwrap_err(),
        ReceiptError::WrongLogKey {
            signer: KeyId::of(&log.key.verifying_key()),
            log: KeyId::of(&key(9).verifying_key())
        }
    );
    assert!(open_leaf_unverified(leaf).is_ok());
    // Not canonical: one space added.
    let mut spaced = leaf.clone();
    spaced.insert(1, b' ');
    assert_eq!(
        open_leaf_unverified(&spaced).unwrap_err(),
        ReceiptError::NonCanonicalLeaf
    );
    // Subjects: the plan subject carries the plan hash's hex.
    let subjects = derive_subjects(&opened.predicate);
    assert_eq!(subjects.len(), 2);
    let first = subjects[0].as_object().unwrap();
    assert_eq!(first["name"], Value::String("plan:p1".into()));
}

#[test]
fn one_byte_of_a_statement_payload() {
    let mut b = log().full_bundle();
    flip_in_leaf(&mut b.receipts[10].leaf, "\"payload\":\"", 40);
    let r = verify(&b);
    expect_fail(&r, |e| *e == ReceiptError::BadLogSignature);
    assert_eq!(r.failed().count(), 1);
    assert_eq!(r.failed().next().unwrap().index, 10);
}

#[test]
fn one_byte_of_a_signature() {
    let mut b = log().full_bundle();
    flip_in_leaf(&mut b.receipts[11].leaf, "\"sig\":\"", 10);
    expect_fail(&verify(&b), |e| *e == ReceiptError::BadLogSignature);
}

#[test]
fn a_dropped_receipt_with_a_range() {
    let mut b = log().full_bundle();
    b.receipts.remove(20);
    expect_fail(&verify(&b), |e| {
        matches!(
            e,
            ReceiptError::Dropped {
                index: 20,
                from: 0,
                to: 49
            }
        )
    });
    // The range must be exactly the receipts' span.
    let mut b = log().full_bundle();
    b.range.as_mut().unwrap().to = 48;
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::OutsideRange { index: 49, .. })
    });
}

#[test]
fn two_receipts_reordered() {
    let mut b = log().full_bundle();
    b.receipts.swap(3, 4);
    expect_fail(&verify(&b), |e| {
        matches!(
            e,
            ReceiptError::Reordered {
                previous: 4,
                index: 3
            }
        )
    });
    let mut b = log().full_bundle();
    let dup = b.receipts[5].clone();
    b.receipts.insert(5, dup);
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::Duplicate { index: 5 })
    });
}

#[test]
fn renumbered_receipt() {
    let log = log();
    let mut b = log.full_bundle();
    // Receipt 49's leaf presented as index 50 with a proof that would fit.
    let last = b.receipts.last_mut().unwrap();
    last.index = 48;
    b.receipts.remove(48);
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::SeqMismatch { index: 48, seq: 49 })
    });
}

#[test]
fn a_swapped_approver_key() {
    let mut b = log().full_bundle();
    b.trust.approver_keys[0] = approver_entry(&key(3).verifying_key(), IDENTITY);
    let r = verify(&b);
    expect_fail(&r, |e| {
        matches!(e, ReceiptError::UnbackedApproverKey { .. })
    });
    // And every approval is now by an untrusted key.
    assert!(has(&r, |e| matches!(e, ReceiptError::UntrustedApprover(_))));
}

#[test]
fn an_added_approver_key() {
    let mut b = log().full_bundle();
    b.trust.approver_keys.push(approver_entry(
        &key(4).verifying_key(),
        "mallory@example.com",
    ));
    let r = verify(&b);
    expect_fail(
        &r,
        |e| matches!(e, ReceiptError::UnbackedApproverKey { identity, .. } if identity == "mallory@example.com"),
    );
    assert_eq!(r.failed().count(), 0);
    // The right key under another identity is not backed either.
    let mut b = log().full_bundle();
    b.trust.approver_keys[0].identity = "bob@example.com".into();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::UnbackedApproverKey { .. })
    });
}

#[test]
fn a_swapped_log_key() {
    let log = log();
    let mut b = log.full_bundle();
    b.trust.log_key = vkey(&log.origin, &key(9).verifying_key());
    let r = verify(&b);
    expect_fail(&r, |e| matches!(e, ReceiptError::BadCheckpoint(_)));
    assert_eq!(r.failed().count(), 50, "every signature fails");
    assert!(
        r.failed()
            .all(|l| matches!(l.result, Err(ReceiptError::WrongLogKey { .. })))
    );

    // A whole log forged under another key is self-consistent: only the pin catches it.
    let forged = Log::with_keys(10, 7, key(9), key(2), &log.origin);
    let all: Vec<u64> = (0..10).collect();
    let fb = forged.bundle(&all, Some(5), None).to_bytes();
    assert!(verify_bundle(&fb, &VerifyOptions::default()).is_ok());
    let pinned = VerifyOptions {
        pinned_log_key: Some(log.vkey()),
        ..VerifyOptions::default()
    };
    let r = verify_bundle(&fb, &pinned);
    expect_fail(&r, |e| matches!(e, ReceiptError::NotPinned { .. }));
    assert!(
        r.to_string()
            .contains("the bundle's log key is not the pinned one")
    );
}

#[test]
fn an_older_checkpoint_passed_off_as_the_latest() {
    let mut b = log().full_bundle();
    let e = &mut b.earlier_checkpoints[0];
    std::mem::swap(&mut e.note, &mut b.checkpoint);
    expect_fail(&verify(&b), |e| {
        matches!(
            e,
            ReceiptError::OlderPassedOffAsNewer {
                size: 50,
                latest: 25,
                ..
            }
        )
    });
    // An earlier checkpoint that is not a prefix of the latest.
    let log = log();
    let mut b = log.full_bundle();
    b.earlier_checkpoints[0].consistency_proof = log.tree.consistency_proof(24, 50).unwrap();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::Inconsistent { .. })
    });
}

#[test]
fn a_wrong_inclusion_proof() {
    let log = log();
    let mut b = log.full_bundle();
    b.receipts[30].inclusion_proof = log.tree.inclusion_proof(31, 50).unwrap();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::BadInclusion { index: 30, .. })
    });
    let mut b = log.full_bundle();
    b.receipts[30].inclusion_proof[0][0] ^= 1;
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::BadInclusion { index: 30, .. })
    });
}

#[test]
fn a_receipt_from_a_different_log() {
    let other = Log::with_keys(50, 7, key(7), key(2), "other.test/log");
    let mut b = log().full_bundle();
    b.receipts[12].leaf = other.leaves[12].clone();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::WrongLogKey { .. })
    });
}

#[test]
fn a_subject_swapped_under_the_log_key() {
    // Even a statement the log key signed is refused if its subjects are not its facts.
    let log = log();
    let opened = open_leaf_unverified(&log.leaves[4]).unwrap();
    let mut st = opened.statement.as_object().unwrap().clone();
    let mut subjects = st["subject"].as_array().unwrap().to_vec();
    let mut first = subjects[0].as_object().unwrap().clone();
    first.insert("name".into(), Value::String("plan:someone-else".into()));
    subjects[0] = Value::Object(first);
    st.insert("subject".into(), Value::Array(subjects));
    let payload = canonical_bytes(&Value::Object(st));
    let sig = ed25519_dalek::Signer::sign(&log.key, &pae(PAYLOAD_TYPE, &payload));
    let mut s = Map::new();
    s.insert("keyid".into(), Value::String(opened.key_id.to_string()));
    s.insert("sig".into(), Value::String(B64.encode(sig.to_bytes())));
    let mut e = Map::new();
    e.insert("payloadType".into(), Value::String(PAYLOAD_TYPE.into()));
    e.insert("payload".into(), Value::String(B64.encode(&payload)));
    e.insert("signatures".into(), Value::Array(vec![Value::Object(s)]));
    let leaf = canonical_bytes(&Value::Object(e));
    assert_eq!(
        open_leaf(&leaf, &log.key.verifying_key()).unwrap_err(),
        ReceiptError::SubjectMismatch
    );
}

#[test]
fn strict_intake() {
    let bytes = log().full_bundle().to_bytes();
    let text = String::from_utf8(bytes).unwrap();
    let unknown = text.replacen("{\"bundle_version\"", "{\"extra\":1,\"bundle_version\"", 1);
    assert!(Bundle::parse(unknown.as_bytes()).is_err());
    let r = verify_bundle(unknown.as_bytes(), &VerifyOptions::default());
    expect_fail(&r, |e| matches!(e, ReceiptError::MalformedBundle(_)));
    let version = text.replacen("interlock.receipts/v1", "interlock.receipts/v0", 1);
    expect_fail(
        &verify_bundle(version.as_bytes(), &VerifyOptions::default()),
        |e| matches!(e, ReceiptError::UnsupportedVersion(_)),
    );
}
