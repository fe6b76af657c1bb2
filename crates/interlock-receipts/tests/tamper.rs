//! Real bundles, and the tampering matrix: every case fails with a named reason,
//! for statement leaves (what the log writes) and for the signed leaves of
//! older logs, which must keep verifying.
mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use common::{IDENTITY, Log, approver_entry, key, statement_leaf, vkey};
use interlock_canon::{Map, Value, canonical_bytes, parse_json};
use interlock_core::decision::{KeyId, pae};
use interlock_receipts::{
    Bundle, LeafSeal, PAYLOAD_TYPE, ReceiptError, VerifyOptions, VerifyReport, derive_subjects,
    open_leaf, open_leaf_unverified, verify_bundle,
};
use std::sync::OnceLock;

fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::new(50, 7))
}

/// The same log written as an older log was: signed leaves.
fn signed_log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::signed(50, 7))
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
    for log in [log(), signed_log()] {
        a_real_bundle_of(log);
    }
}

/// A log written in both formats (an older log that was upgraded: signed
/// leaves, then statement leaves) verifies as one.
#[test]
fn a_log_upgraded_mid_way_verifies() {
    let (old, new) = (signed_log(), log());
    let mut mixed = Log::new(0, 7);
    mixed.leaves = old.leaves[..20]
        .iter()
        .chain(&new.leaves[20..])
        .cloned()
        .collect();
    let hashes: Vec<_> = mixed
        .leaves
        .iter()
        .map(|l| interlock_merkle::leaf_hash(l))
        .collect();
    mixed.tree = interlock_merkle::Tree::from_leaves(&hashes);
    let report = verify(&mixed.full_bundle());
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.receipts.len(), 50);
}

fn a_real_bundle_of(log: &Log) {
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
fn open_leaf_reads_and_checks_a_statement_leaf() {
    let log = log();
    let leaf = &log.leaves[7];
    let opened = open_leaf(leaf, &log.key.verifying_key()).unwrap();
    assert_eq!(opened.seq, 7);
    assert_eq!(opened.kind, "plan.decision");
    // No signature of its own: the tree vouches for it, whatever the key.
    assert_eq!(opened.seal, LeafSeal::Tree);
    assert_eq!(open_leaf(leaf, &key(9).verifying_key()).unwrap(), opened);
    assert_eq!(opened.payload, *leaf);
    // Not canonical: one space added.
    let mut spaced = leaf.clone();
    spaced.insert(1, b' ');
    assert!(open_leaf_unverified(&spaced).is_err());
    // A statement whose subjects are not its facts.
    let mut st = opened.statement.as_object().unwrap().clone();
    st.insert("subject".into(), Value::Array(vec![]));
    assert!(open_leaf_unverified(&canonical_bytes(&Value::Object(st))).is_err());
}

#[test]
fn open_leaf_reads_and_checks_a_signed_leaf() {
    let log = signed_log();
    let leaf = &log.leaves[7];
    let opened = open_leaf(leaf, &log.key.verifying_key()).unwrap();
    assert_eq!(opened.seq, 7);
    assert_eq!(opened.kind, "plan.decision");
    assert!(
        matches!(opened.seal, LeafSeal::Signed { key_id, .. } if key_id == KeyId::of(&log.key.verifying_key()))
    );
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
    let mut b = signed_log().full_bundle();
    flip_in_leaf(&mut b.receipts[10].leaf, "\"payload\":\"", 40);
    let r = verify(&b);
    expect_fail(&r, |e| *e == ReceiptError::BadLogSignature);
    assert_eq!(r.failed().count(), 1);
    assert_eq!(r.failed().next().unwrap().index, 10);
}

/// A statement leaf edited the careful way — a fact changed and the statement
/// rebuilt, subjects and all, so it is well-formed and canonical — is not the
/// leaf the tree commits to.
#[test]
fn an_edited_statement_leaf_with_its_subjects_rebuilt() {
    let log = log();
    let mut b = log.full_bundle();
    let mut p = open_leaf_unverified(&b.receipts[10].leaf)
        .unwrap()
        .predicate;
    p.insert("stage".into(), Value::String("drop-tables".into()));
    b.receipts[10].leaf = statement_leaf(p);
    assert!(open_leaf_unverified(&b.receipts[10].leaf).is_ok());
    let r = verify(&b);
    expect_fail(&r, |e| {
        matches!(e, ReceiptError::BadInclusion { index: 10, .. })
    });
    assert_eq!(r.failed().count(), 1);
    // One digit changed inside it is caught too.
    let mut b = log.full_bundle();
    let leaf = &mut b.receipts[12].leaf;
    let at = leaf.windows(7).position(|w| w == b"\"time\":").unwrap() + 10;
    leaf[at] = if leaf[at] == b'1' { b'2' } else { b'1' };
    let r = verify(&b);
    assert!(!r.is_ok());
    assert_eq!(r.failed().count(), 1, "{r}");
    assert_eq!(r.failed().next().unwrap().index, 12);
}

#[test]
fn one_byte_of_a_signature() {
    let mut b = signed_log().full_bundle();
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
    // Statement leaves: nothing vouches for any receipt without the checkpoint.
    assert_eq!(r.failed().count(), 50, "every receipt fails");
    assert!(
        r.failed()
            .all(|l| matches!(l.result, Err(ReceiptError::NoCheckpoint)))
    );
    // Signed leaves: every signature fails as well.
    let mut b = signed_log().full_bundle();
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
    // Another log's decision 14 (another approver signed it).
    let other = Log::with_keys(50, 7, key(7), key(3), "other.test/log");
    let mut b = log().full_bundle();
    assert_ne!(b.receipts[14].leaf, other.leaves[14]);
    b.receipts[14].leaf = other.leaves[14].clone();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::BadInclusion { index: 14, .. })
    });
    let other = Log::with_format(
        50,
        7,
        key(7),
        key(2),
        "other.test/log",
        common::Format::Signed,
    );
    let mut b = signed_log().full_bundle();
    b.receipts[12].leaf = other.leaves[12].clone();
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::WrongLogKey { .. })
    });
}

#[test]
fn a_subject_swapped_under_the_log_key() {
    // Even a statement the log key signed is refused if its subjects are not its facts.
    let log = signed_log();
    let opened = open_leaf_unverified(&log.leaves[4]).unwrap();
    let LeafSeal::Signed { key_id, .. } = opened.seal else {
        panic!("a signed leaf")
    };
    let mut st = opened.statement.as_object().unwrap().clone();
    let mut subjects = st["subject"].as_array().unwrap().to_vec();
    let mut first = subjects[0].as_object().unwrap().clone();
    first.insert("name".into(), Value::String("plan:someone-else".into()));
    subjects[0] = Value::Object(first);
    st.insert("subject".into(), Value::Array(subjects));
    let payload = canonical_bytes(&Value::Object(st));
    let sig = ed25519_dalek::Signer::sign(&log.key, &pae(PAYLOAD_TYPE, &payload));
    let mut s = Map::new();
    s.insert("keyid".into(), Value::String(key_id.to_string()));
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
