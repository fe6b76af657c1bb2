//! Real bundles, and the tampering matrix: every case fails with a named reason,
//! for statement leaves (what the log writes) and for the signed leaves of
//! older logs, which must keep verifying; for v2 bundles in both their forms
//! (a contiguous range recomputed over its leaves, and receipts whose proofs
//! share one node table) and for v1 bundles (a proof inline per receipt).
mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use common::{IDENTITY, Log, approver_entry, key, statement_leaf, vkey};
use interlock_canon::{Map, Value, canonical_bytes, parse_json};
use interlock_core::decision::{KeyId, pae};
use interlock_receipts::{
    Bundle, LeafSeal, PAYLOAD_TYPE, ReceiptError, VerifyOptions, VerifyReport, derive_subjects,
    open_leaf, open_leaf_unverified,
};
use std::sync::OnceLock;

/// `interlock_receipts::verify_bundle`, and (with `INTERLOCK_BUNDLE_FIXTURES`
/// set to a directory) every bundle this matrix verifies written there with
/// the report, so the browser's verifier (`ui/src/lib/bundle.ts`) is tested on
/// the same tampered bundles (`scripts/bundle-fixtures.sh`).
fn verify_bundle(bytes: &[u8], opts: &VerifyOptions) -> VerifyReport {
    let report = interlock_receipts::verify_bundle(bytes, opts);
    if let Some(dir) = std::env::var_os("INTERLOCK_BUNDLE_FIXTURES") {
        common::write_fixture(std::path::Path::new(&dir), bytes, opts, &report);
    }
    report
}

fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::new(50, 7))
}

/// The same log written as an older log was: signed leaves.
fn signed_log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::signed(50, 7))
}

/// Every receipt of `log` with a proof of its own, the v2 way (the shared
/// node table), as a filtered export of everything would be: each receipt is
/// vouched for alone, so each failure names its receipt.
fn proofs_bundle(log: &Log) -> Bundle {
    let all: Vec<u64> = (0..log.tree.len()).collect();
    log.bundle(&all, Some(log.tree.len() / 2), None)
}

/// The per-receipt forms: v2 with the node table, and v1.
fn per_receipt_bundles(log: &Log) -> [Bundle; 2] {
    [proofs_bundle(log), log.full_bundle_v1()]
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
        for b in [log.full_bundle(), proofs_bundle(log), log.full_bundle_v1()] {
            a_real_bundle_of(log, b);
        }
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

fn a_real_bundle_of(log: &Log, b: Bundle) {
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
        ..VerifyOptions::default()
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

/// The audit opens each leaf once and checks its seal from what it read
/// (`OpenedLeaf::check_seal`): the same verdicts as `open_leaf`.
#[test]
fn a_seal_checked_from_the_opened_leaf_agrees_with_open_leaf() {
    let (statement, signed) = (log(), signed_log());
    let right = |l: &Log| l.key.verifying_key();
    let wrong = key(9).verifying_key();
    for (leaf, log_key) in [
        (&statement.leaves[7], right(statement)),
        (&statement.leaves[7], wrong),
        (&signed.leaves[7], right(signed)),
        (&signed.leaves[7], wrong),
    ] {
        let opened = open_leaf_unverified(leaf).unwrap();
        assert_eq!(
            opened.check_seal(&log_key),
            open_leaf(leaf, &log_key).map(drop)
        );
    }
    // A signature over other bytes: refused both ways.
    let mut forged = open_leaf_unverified(&signed.leaves[7]).unwrap();
    forged.payload = open_leaf_unverified(&signed.leaves[8]).unwrap().payload;
    assert_eq!(
        forged.check_seal(&right(signed)),
        Err(ReceiptError::BadLogSignature)
    );
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
    for mut b in per_receipt_bundles(signed_log()) {
        flip_in_leaf(&mut b.receipts[10].leaf, "\"payload\":\"", 40);
        let r = verify(&b);
        expect_fail(&r, |e| *e == ReceiptError::BadLogSignature);
        assert_eq!(r.failed().count(), 1);
        assert_eq!(r.failed().next().unwrap().index, 10);
    }
}

/// A statement leaf edited the careful way — a fact changed and the statement
/// rebuilt, subjects and all, so it is well-formed and canonical — is not the
/// leaf the tree commits to.
#[test]
fn an_edited_statement_leaf_with_its_subjects_rebuilt() {
    for b in per_receipt_bundles(log()) {
        an_edited_statement_leaf_in(b);
    }
}

fn an_edited_statement_leaf_in(original: Bundle) {
    let mut b = original.clone();
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
    let mut b = original;
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
    for mut b in [signed_log().full_bundle(), signed_log().full_bundle_v1()] {
        flip_in_leaf(&mut b.receipts[11].leaf, "\"sig\":\"", 10);
        expect_fail(&verify(&b), |e| *e == ReceiptError::BadLogSignature);
    }
}

#[test]
fn a_dropped_receipt_with_a_range() {
    for mut b in [log().full_bundle(), log().full_bundle_v1()] {
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
    }
    // A v1 range must be exactly the receipts' span.
    let mut b = log().full_bundle_v1();
    b.range.as_mut().unwrap().to = 48;
    expect_fail(&verify(&b), |e| {
        matches!(e, ReceiptError::OutsideRange { index: 49, .. })
    });
    // A v2 range shrunk under its last receipt leaves that receipt unproven,
    // and the range proof no longer fits.
    let mut b = log().full_bundle();
    b.range.as_mut().unwrap().to = 48;
    let r = verify(&b);
    expect_fail(&r, |e| {
        matches!(e, ReceiptError::MissingProof { index: 49 })
    });
    assert!(has(&r, |e| matches!(e, ReceiptError::RangeMismatch { .. })));
}

#[test]
fn two_receipts_reordered() {
    for b in [
        log().full_bundle(),
        proofs_bundle(log()),
        log().full_bundle_v1(),
    ] {
        let mut swapped = b.clone();
        swapped.receipts.swap(3, 4);
        expect_fail(&verify(&swapped), |e| {
            matches!(
                e,
                ReceiptError::Reordered {
                    previous: 4,
                    index: 3
                }
            )
        });
        let mut doubled = b;
        let dup = doubled.receipts[5].clone();
        doubled.receipts.insert(5, dup);
        expect_fail(&verify(&doubled), |e| {
            matches!(e, ReceiptError::Duplicate { index: 5 })
        });
    }
}

#[test]
fn renumbered_receipt() {
    let log = log();
    for mut b in [log.full_bundle(), proofs_bundle(log), log.full_bundle_v1()] {
        // Receipt 49's leaf presented as index 48.
        let last = b.receipts.last_mut().unwrap();
        last.index = 48;
        b.receipts.remove(48);
        expect_fail(&verify(&b), |e| {
            matches!(e, ReceiptError::SeqMismatch { index: 48, seq: 49 })
        });
    }
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
    for b in per_receipt_bundles(log) {
        let mut other = b.clone();
        other.receipts[30].inclusion_proof = Some(log.tree.inclusion_proof(31, 50).unwrap());
        expect_fail(&verify(&other), |e| {
            matches!(e, ReceiptError::BadInclusion { index: 30, .. })
        });
        let mut flipped = b;
        flipped.receipts[30].inclusion_proof.as_mut().unwrap()[0][0] ^= 1;
        expect_fail(&verify(&flipped), |e| {
            matches!(e, ReceiptError::BadInclusion { index: 30, .. })
        });
    }
}

#[test]
fn a_receipt_from_a_different_log() {
    // Another log's decision 14 (another approver signed it).
    let other = Log::with_keys(50, 7, key(7), key(3), "other.test/log");
    for mut b in per_receipt_bundles(log()) {
        assert_ne!(b.receipts[14].leaf, other.leaves[14]);
        b.receipts[14].leaf = other.leaves[14].clone();
        expect_fail(&verify(&b), |e| {
            matches!(e, ReceiptError::BadInclusion { index: 14, .. })
        });
    }
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
    let version = text.replacen("interlock.receipts/v2", "interlock.receipts/v0", 1);
    expect_fail(
        &verify_bundle(version.as_bytes(), &VerifyOptions::default()),
        |e| matches!(e, ReceiptError::UnsupportedVersion(_)),
    );
    // Each version has exactly its own fields.
    let as_v1 = text.replacen("interlock.receipts/v2", "interlock.receipts/v1", 1);
    expect_fail(
        &verify_bundle(as_v1.as_bytes(), &VerifyOptions::default()),
        |e| matches!(e, ReceiptError::MalformedBundle(_)),
    );
    let v1 = String::from_utf8(log().full_bundle_v1().to_bytes()).unwrap();
    let as_v2 = v1.replacen("interlock.receipts/v1", "interlock.receipts/v2", 1);
    expect_fail(
        &verify_bundle(as_v2.as_bytes(), &VerifyOptions::default()),
        |e| matches!(e, ReceiptError::MalformedBundle(_)),
    );
    let with_nodes = v1.replacen(",\"origin\":", ",\"nodes\":[],\"origin\":", 1);
    expect_fail(
        &verify_bundle(with_nodes.as_bytes(), &VerifyOptions::default()),
        |e| matches!(e, ReceiptError::MalformedBundle(_)),
    );
}

// ------------------------------------------------ v2: the contiguous range

/// Every receipt of the range fails when the range does not recompute the
/// signed root: the range vouches for its receipts together, so it cannot
/// say which one was edited, but it never passes one.
#[track_caller]
fn expect_range_rejected(r: &VerifyReport) {
    expect_fail(r, |e| matches!(e, ReceiptError::RangeMismatch { .. }));
    let (from, to) = r
        .problems
        .iter()
        .find_map(|e| match e {
            ReceiptError::RangeMismatch { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .unwrap();
    assert!(
        r.receipts
            .iter()
            .filter(|l| from <= l.index && l.index <= to)
            .all(|l| l.result.is_err()),
        "a receipt of a broken range passed:\n{r}"
    );
}

/// A leaf edited the careful way (a fact changed, subjects rebuilt, still
/// canonical) inside an unfiltered export: no per-leaf proof to fail, so the
/// recomputed root must.
#[test]
fn regression_an_edited_leaf_in_a_contiguous_bundle() {
    for log in [log(), signed_log()] {
        let mut b = log.full_bundle();
        assert!(b.receipts.iter().all(|r| r.inclusion_proof.is_none()));
        let leaf = &mut b.receipts[10].leaf;
        if log.leaves[0].starts_with(b"{\"payload\"") {
            // An older log's signed leaf: its signature fails too.
            flip_in_leaf(leaf, "\"payload\":\"", 40);
        } else {
            let at = leaf.windows(7).position(|w| w == b"\"time\":").unwrap() + 10;
            leaf[at] = if leaf[at] == b'1' { b'2' } else { b'1' };
        }
        let r = verify(&b);
        expect_range_rejected(&r);
        assert!(r.failed().any(|l| matches!(
            l.result,
            Err(ReceiptError::RangeNotVouched { from: 0, to: 49 })
        )));
    }
    let log = log();
    let mut b = log.full_bundle();
    let mut p = open_leaf_unverified(&b.receipts[10].leaf)
        .unwrap()
        .predicate;
    p.insert("stage".into(), Value::String("drop-tables".into()));
    b.receipts[10].leaf = statement_leaf(p);
    expect_range_rejected(&verify(&b));
}

#[test]
fn regression_a_dropped_leaf_in_a_contiguous_bundle() {
    let mut b = log().full_bundle();
    b.receipts.remove(20);
    let r = verify(&b);
    expect_range_rejected(&r);
    assert!(has(&r, |e| matches!(
        e,
        ReceiptError::Dropped { index: 20, .. }
    )));
    // Dropped and the rest renumbered to close the gap: every later statement
    // names its own index, and the root does not recompute.
    let mut b = log().full_bundle();
    b.receipts.remove(20);
    for r in &mut b.receipts[20..] {
        r.index -= 1;
    }
    b.range.as_mut().unwrap().to = 48;
    let r = verify(&b);
    expect_range_rejected(&r);
    assert!(has(&r, |e| matches!(
        e,
        ReceiptError::SeqMismatch { index: 20, seq: 21 }
    )));
}

#[test]
fn regression_reordered_leaves_in_a_contiguous_bundle() {
    // The leaves swapped under their indices: each statement names the other.
    let mut b = log().full_bundle();
    let (l3, l4) = (b.receipts[3].leaf.clone(), b.receipts[4].leaf.clone());
    b.receipts[3].leaf = l4;
    b.receipts[4].leaf = l3;
    let r = verify(&b);
    expect_range_rejected(&r);
    assert!(has(&r, |e| matches!(
        e,
        ReceiptError::SeqMismatch { index: 3, seq: 4 }
    )));
    // Two receipts swapped whole.
    let mut b = log().full_bundle();
    b.receipts.swap(30, 31);
    let r = verify(&b);
    expect_range_rejected(&r);
    assert!(has(&r, |e| matches!(
        e,
        ReceiptError::Reordered {
            previous: 31,
            index: 30
        }
    )));
}

#[test]
fn regression_a_swapped_checkpoint_under_a_contiguous_bundle() {
    let log = log();
    // Another tree of the same size, signed by the same key under the same
    // origin (a forked log): its checkpoint verifies, the range does not.
    let fork = Log::with_keys(50, 5, key(1), key(2), &log.origin);
    assert_ne!(fork.tree.root(), log.tree.root());
    let mut b = log.full_bundle();
    b.checkpoint = fork.checkpoint(50);
    b.earlier_checkpoints.clear();
    let r = verify(&b);
    expect_range_rejected(&r);
    // The log's own earlier checkpoint passed off as the latest: the range
    // reaches past it.
    let mut b = log.full_bundle();
    b.checkpoint = log.checkpoint(40);
    b.earlier_checkpoints.clear();
    let r = verify(&b);
    expect_fail(&r, |e| {
        matches!(
            e,
            ReceiptError::RangeBeyondCheckpoint {
                to: 49,
                size: 40,
                ..
            }
        )
    });
    assert!(r.receipts.iter().all(|l| l.result.is_err()), "{r}");
}

/// An index range that does not start at 0 carries its frontier (and, if it
/// ends before the checkpoint, the right edge), and registrations outside it
/// with proofs from the node table.
#[test]
fn an_index_range_with_its_frontier_verifies_and_its_proof_is_checked() {
    let log = log();
    let mut indices = vec![0u64];
    indices.extend(13..=37);
    let b = log.bundle(&indices, None, Some((13, 37)));
    assert_eq!(
        b.range_proof.len(),
        interlock_merkle::range_proof_len(13, 38, 50).unwrap()
    );
    assert!(b.receipts[0].inclusion_proof.is_some());
    let bytes = b.to_bytes();
    assert_eq!(Bundle::parse(&bytes).unwrap(), b);
    let r = verify_bundle(&bytes, &VerifyOptions::default());
    assert!(r.is_ok(), "{r}");
    assert_eq!(r.receipts.len(), 26);
    // One bit of the range proof.
    for i in 0..b.range_proof.len() {
        let mut bad = b.clone();
        bad.range_proof[i][5] ^= 4;
        expect_range_rejected(&verify(&bad));
    }
    // A range proof with a node missing.
    let mut short = b.clone();
    short.range_proof.pop();
    expect_range_rejected(&verify(&short));
    // A receipt of the range smuggled in with a proof of its own, and one
    // outside it without.
    let text = String::from_utf8(bytes).unwrap();
    let r15 = text.find("{\"index\":15,\"leaf\":").unwrap();
    let end = r15 + text[r15..].find("},{\"index\":16").unwrap();
    let proof_of_0 = text.find("\"proof\":[0").unwrap();
    let refs = &text[proof_of_0..proof_of_0 + text[proof_of_0..].find(']').unwrap() + 1];
    let inside = format!("{},{refs}{}", &text[..end], &text[end..]);
    let r = verify_bundle(inside.as_bytes(), &VerifyOptions::default());
    expect_fail(&r, |e| {
        matches!(e, ReceiptError::ProofInsideRange { index: 15 })
    });
    let outside = text.replacen(&format!(",{refs}"), "", 1);
    let r = verify_bundle(outside.as_bytes(), &VerifyOptions::default());
    expect_fail(&r, |e| matches!(e, ReceiptError::MissingProof { index: 0 }));
}

// ------------------------------------------------ v2: the shared node table

/// A filtered export: receipts far apart, whose audit paths share upper nodes.
fn filtered(log: &Log) -> Bundle {
    log.bundle(&[0, 3, 7, 12, 30, 31, 45, 49], Some(20), None)
}

#[test]
fn a_filtered_bundle_shares_its_proof_nodes() {
    let log = log();
    let b = filtered(log);
    let (table, refs) = b.node_table();
    let inline: usize = b
        .receipts
        .iter()
        .map(|r| r.inclusion_proof.as_ref().unwrap().len())
        .sum();
    assert!(
        table.len() < inline,
        "{} nodes for {inline} path entries",
        table.len()
    );
    // Each receipt's references are its own audit path.
    for (r, refs) in b.receipts.iter().zip(&refs) {
        let path: Vec<_> = refs
            .as_ref()
            .unwrap()
            .iter()
            .map(|&i| table[i as usize])
            .collect();
        assert_eq!(&path, r.inclusion_proof.as_ref().unwrap());
    }
    let r = verify(&b);
    assert!(r.is_ok(), "{r}");
    // Smaller than the same receipts with inline proofs.
    let v1 = log.bundle_v1(&[0, 3, 7, 12, 30, 31, 45, 49], Some(20), None);
    assert!(b.to_bytes().len() < v1.to_bytes().len());
    assert!(verify(&v1).is_ok());
}

/// One node of the table, shared by several receipts, edited: every receipt
/// whose path goes through it fails, each by name, and no other.
#[test]
fn regression_a_shared_node_edited_in_a_filtered_bundle() {
    let b = filtered(log());
    let (table, refs) = b.node_table();
    let users = |n: u64| {
        b.receipts
            .iter()
            .zip(&refs)
            .filter(|(_, r)| r.as_ref().unwrap().contains(&n))
            .map(|(r, _)| r.index)
            .collect::<Vec<_>>()
    };
    let shared = (0..table.len() as u64)
        .find(|&n| users(n).len() >= 3)
        .expect("a node on three paths");
    let text = String::from_utf8(b.to_bytes()).unwrap();
    let old = B64.encode(table[shared as usize]);
    let mut edited = table[shared as usize];
    edited[0] ^= 1;
    let tampered = text.replacen(&old, &B64.encode(edited), 1);
    assert_ne!(tampered, text);
    let r = verify_bundle(tampered.as_bytes(), &VerifyOptions::default());
    assert!(!r.is_ok());
    let failed: Vec<u64> = r.failed().map(|l| l.index).collect();
    assert_eq!(failed, users(shared), "{r}");
    assert!(
        r.failed()
            .all(|l| matches!(l.result, Err(ReceiptError::BadInclusion { .. })))
    );
}

#[test]
fn regression_node_table_references_are_checked() {
    let text = String::from_utf8(filtered(log()).to_bytes()).unwrap();
    // A reference beyond the table.
    let at = text.find("\"proof\":[").unwrap() + "\"proof\":[".len();
    let beyond = format!("{}9999,{}", &text[..at], &text[at..]);
    let r = verify_bundle(beyond.as_bytes(), &VerifyOptions::default());
    expect_fail(&r, |e| {
        matches!(
            e,
            ReceiptError::BadNodeReference {
                reference: 9999,
                ..
            }
        )
    });
    // A node no receipt uses, at the table's end (so no reference moves).
    let nodes = filtered(log()).node_table().0.len();
    let unused = text.replacen(
        "],\"origin\":",
        &format!(",\"{}\"],\"origin\":", B64.encode([7u8; 32])),
        1,
    );
    let r = verify_bundle(unused.as_bytes(), &VerifyOptions::default());
    expect_fail(
        &r,
        |e| matches!(e, ReceiptError::UnreferencedNode { position } if *position == nodes),
    );
    assert_eq!(r.failed().count(), 0, "{r}");
}

// ------------------------------------------------ one receipt: a tlog-proof

fn tlog_proof_of(log: &Log, index: u64) -> String {
    let size = log.tree.len();
    interlock_receipts::receipt_tlog_proof(
        index,
        log.leaves[index as usize].clone(),
        log.tree.inclusion_proof(index, size).unwrap(),
        log.checkpoint(size),
    )
    .to_string()
}

#[test]
fn a_tlog_proof_verifies_for_its_receipt_only() {
    use interlock_receipts::verify_tlog_proof;
    for log in [log(), signed_log()] {
        let text = tlog_proof_of(log, 12);
        assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "));
        let r = verify_tlog_proof(&text, &log.vkey(), None);
        assert!(r.is_ok(), "{r}");
        assert_eq!((r.line.index, r.tree_size), (12, Some(50)));
        assert!(!r.approval_unchecked);
        // The leaf given out of band, the same: fine; another: refused.
        let leaf = &log.leaves[12];
        assert!(verify_tlog_proof(&text, &log.vkey(), Some(leaf)).is_ok());
        let other = verify_tlog_proof(&text, &log.vkey(), Some(&log.leaves[13]));
        assert!(matches!(other.line.result, Err(ReceiptError::TlogProof(_))));
        // Another log key: the checkpoint does not verify.
        let r = verify_tlog_proof(&text, &vkey(&log.origin, &key(9).verifying_key()), None);
        assert!(
            matches!(r.line.result, Err(ReceiptError::BadCheckpoint(_))),
            "{r}"
        );
    }
    // An approval: in the log, but its approver's signature is not checked here.
    let r = verify_tlog_proof(&tlog_proof_of(log(), 7), &log().vkey(), None);
    assert!(r.is_ok() && r.approval_unchecked, "{r}");
    assert!(r.to_string().contains("was not checked"));
}

#[test]
fn regression_a_tlog_proof_with_a_wrong_index_or_an_edited_proof() {
    use interlock_receipts::verify_tlog_proof;
    let log = log();
    let text = tlog_proof_of(log, 12);
    // Another index on the same proof and leaf.
    let moved = text.replacen("\nindex 12\n", "\nindex 13\n", 1);
    let r = verify_tlog_proof(&moved, &log.vkey(), None);
    assert!(
        matches!(
            r.line.result,
            Err(ReceiptError::BadInclusion { index: 13, .. })
        ),
        "{r}"
    );
    // Receipt 13's correct proof under receipt 12's leaf: the leaf says 12.
    let proof13 = tlog_proof_of(log, 13);
    let extra12 = text.lines().nth(1).unwrap();
    let extra13 = proof13.lines().nth(1).unwrap();
    let r = verify_tlog_proof(&proof13.replacen(extra13, extra12, 1), &log.vkey(), None);
    assert!(!r.is_ok(), "{r}");
    // One bit of one proof hash.
    let lines: Vec<&str> = text.lines().collect();
    let mut h = B64.decode(lines[3]).unwrap();
    h[9] ^= 0x20;
    let edited = text.replacen(lines[3], &B64.encode(h), 1);
    let r = verify_tlog_proof(&edited, &log.vkey(), None);
    assert!(
        matches!(
            r.line.result,
            Err(ReceiptError::BadInclusion { index: 12, .. })
        ),
        "{r}"
    );
    // A proof hash dropped.
    let dropped = text.replacen(&format!("{}\n", lines[3]), "", 1);
    assert!(!verify_tlog_proof(&dropped, &log.vkey(), None).is_ok());
    // The leaf in `extra` edited the careful way.
    let mut p = open_leaf_unverified(&log.leaves[12]).unwrap().predicate;
    p.insert("stage".into(), Value::String("drop-tables".into()));
    let forged = text.replacen(
        &B64.encode(&log.leaves[12]),
        &B64.encode(statement_leaf(p)),
        1,
    );
    let r = verify_tlog_proof(&forged, &log.vkey(), None);
    assert!(
        matches!(r.line.result, Err(ReceiptError::BadInclusion { .. })),
        "{r}"
    );
}

/// A range claimed far wider than the receipts it holds (up to 2^53 − 1) is
/// refused at once, its gap counted rather than walked index by index.
#[test]
fn regression_a_huge_claimed_range_is_refused_without_walking_it() {
    for mut b in [log().full_bundle(), log().full_bundle_v1()] {
        let to = interlock_canon::MAX_SAFE_INTEGER as u64;
        b.range.as_mut().unwrap().to = to;
        let started = std::time::Instant::now();
        let r = verify(&b);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{r}");
        expect_fail(
            &r,
            |e| matches!(e, ReceiptError::DroppedMore { count, .. } if *count == to - 49 - 20),
        );
        let named: Vec<u64> = r
            .problems
            .iter()
            .filter_map(|e| match e {
                ReceiptError::Dropped { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(named, (50..70).collect::<Vec<_>>());
    }
    // Gaps in the middle are named in order, and counted.
    let mut b = log().full_bundle_v1();
    b.receipts.retain(|r| r.index % 2 == 0 || r.index < 30);
    let r = verify(&b);
    let named: Vec<u64> = r
        .problems
        .iter()
        .filter_map(|e| match e {
            ReceiptError::Dropped { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(named, (31..50).step_by(2).collect::<Vec<_>>());
    assert!(!has(&r, |e| matches!(e, ReceiptError::DroppedMore { .. })));
}

/// With `INTERLOCK_BUNDLE_FIXTURES` set: a 10,000-receipt bundle (a
/// contiguous range, as an unfiltered export is) for timing the browser's
/// verifier (ui/tests/e2e); it must verify here first.
#[test]
fn a_10000_receipt_bundle_for_the_browser() {
    let Some(dir) = std::env::var_os("INTERLOCK_BUNDLE_FIXTURES") else {
        return;
    };
    let big = Log::new(10_000, 7).full_bundle();
    let bytes = big.to_bytes();
    let report = interlock_receipts::verify_bundle(&bytes, &VerifyOptions::default());
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.receipts.len(), 10_000);
    let out = std::path::Path::new(&dir).join("large");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("bundle-10000.json"), &bytes).unwrap();
}

/// The bundles the browser's verifier is tested on (`ui/tests/unit/fixtures/
/// bundles`, written from this matrix by `scripts/bundle-fixtures.sh`) still
/// get, from this verifier, the verdicts and names recorded with them: when
/// this fails, the verifier changed and the fixtures (and perhaps
/// `ui/src/lib/bundle.ts`) must follow.
#[test]
fn the_browsers_fixtures_match_this_verifier() {
    if std::env::var_os("INTERLOCK_BUNDLE_FIXTURES").is_some() {
        // They are being rewritten by this run.
        return;
    }
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            std::path::PathBuf::from,
        )
        .join("../../ui/tests/unit/fixtures/bundles");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let fixture: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let opts = VerifyOptions {
            pinned_log_key: fixture["pinned_log_key"].as_str().map(str::to_owned),
            ..VerifyOptions::default()
        };
        let report = interlock_receipts::verify_bundle(
            fixture["bundle"].as_str().unwrap().as_bytes(),
            &opts,
        );
        let e = &fixture["expected"];
        let name = path.display();
        assert_eq!(e["ok"], report.is_ok(), "{name}");
        let problems: Vec<String> = report.problems.iter().map(common::error_name).collect();
        assert_eq!(e["problems"], serde_json::json!(problems), "{name}");
        let lines: Vec<serde_json::Value> = report
            .receipts
            .iter()
            .map(|r| {
                serde_json::json!({
                    "index": r.index, "kind": r.kind, "subjects": r.subjects,
                    "ok": r.result.is_ok(),
                    "error": r.result.as_ref().err().map(common::error_name),
                })
            })
            .collect();
        assert_eq!(e["receipts"], serde_json::json!(lines), "{name}");
        n += 1;
    }
    assert!(n > 50, "only {n} fixtures in {}", dir.display());
}

/// Issue 39 item 9: `receipts verify` checked the approver signature a
/// `plan.decision` embeds, and no other: a server approval, a tool block, a
/// standing grant, a removal or an envelope widening whose embedded statement
/// was forged, signed by another key, or about another subject verified
/// clean. Each is now checked: a trusted approver key, a strict signature,
/// the subject and hash the leaf names, the decision its kind records.
#[test]
fn regression_issue_39_every_signed_subject_is_checked_not_only_plans() {
    use common::{leaf_of, signed_statement};
    use interlock_canon::Digest;
    use interlock_core::decision::Decision;
    let approver = key(2);
    let text = |v: &str| Value::String(v.into());
    let surface = Digest::of_bytes(b"surface");
    let tool = Digest::of_bytes(b"tool");
    let removal = Digest::of_bytes(b"removal");
    let widened = Digest::of_bytes(b"widened");
    let standing = Digest::of_bytes(b"standing");
    let server_approved =
        |by: &ed25519_dalek::SigningKey, subject: &str, hash: Digest, d: Decision| {
            leaf_of(
                1,
                "server.approved",
                vec![
                    ("server", text("files")),
                    ("surface_hash", text(&surface.to_string())),
                    ("envelope", signed_statement(by, subject, hash, d)),
                ],
            )
        };
    let honest = vec![
        server_approved(&approver, "server:files", surface, Decision::Approve),
        leaf_of(
            2,
            "tool.blocked",
            vec![
                ("server", text("files")),
                ("tool", text("delete")),
                ("definition_hash", text(&tool.to_string())),
                (
                    "envelope",
                    signed_statement(&approver, "tool:files/delete", tool, Decision::Reject),
                ),
            ],
        ),
        leaf_of(
            3,
            "standing.granted",
            vec![
                ("id", text("st-1")),
                (
                    "envelope",
                    signed_statement(&approver, "standing:st-1", standing, Decision::Approve),
                ),
            ],
        ),
        leaf_of(
            4,
            "server.removed",
            vec![
                ("server", text("files")),
                ("removal_hash", text(&removal.to_string())),
                (
                    "envelope",
                    signed_statement(
                        &approver,
                        "server-removal:files",
                        removal,
                        Decision::Approve,
                    ),
                ),
            ],
        ),
        leaf_of(
            5,
            "tool.envelope_widened",
            vec![
                ("server", text("files")),
                ("tool", text("read")),
                ("envelope_hash", text(&widened.to_string())),
                (
                    "statement",
                    signed_statement(&approver, "envelope:files/read", widened, Decision::Approve),
                ),
            ],
        ),
    ];
    let r = verify(&Log::of_predicates(honest.clone()).full_bundle());
    assert!(r.errors().next().is_none(), "{r:?}");

    let with_first = |leaf: Map| {
        let mut leaves = honest.clone();
        leaves[0] = leaf;
        verify(&Log::of_predicates(leaves).full_bundle())
    };
    // Signed by a key the bundle does not trust.
    let r = with_first(server_approved(
        &key(3),
        "server:files",
        surface,
        Decision::Approve,
    ));
    expect_fail(&r, |e| matches!(e, ReceiptError::UntrustedApprover(_)));
    // About another server, or another surface.
    let r = with_first(server_approved(
        &approver,
        "server:other",
        surface,
        Decision::Approve,
    ));
    expect_fail(&r, |e| {
        matches!(
            e,
            ReceiptError::ApprovalMismatch {
                what: "subject",
                ..
            }
        )
    });
    let r = with_first(server_approved(
        &approver,
        "server:files",
        Digest::of_bytes(b"another surface"),
        Decision::Approve,
    ));
    expect_fail(&r, |e| {
        matches!(
            e,
            ReceiptError::ApprovalMismatch {
                what: "subject hash",
                ..
            }
        )
    });
    // A rejection logged as an approval.
    let r = with_first(server_approved(
        &approver,
        "server:files",
        surface,
        Decision::Reject,
    ));
    expect_fail(&r, |e| {
        matches!(
            e,
            ReceiptError::ApprovalMismatch {
                what: "decision",
                ..
            }
        )
    });
    // No statement at all.
    let r = with_first(leaf_of(
        1,
        "server.approved",
        vec![("server", text("files"))],
    ));
    expect_fail(&r, |e| matches!(e, ReceiptError::ApprovalMissing));
}
