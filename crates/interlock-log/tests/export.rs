//! Exports from a real log file: the contiguous range of an unfiltered or
//! index-range export, the shared node table of a filtered one, and one
//! receipt as a C2SP tlog-proof — each verified offline as an auditor would.

mod common;

use common::*;
use interlock_log::{ExportFilter, Log, export, export_tlog_proof};
use interlock_merkle::{NoteVerifier, range_proof_len};
use interlock_receipts::{BundleVersion, VerifyOptions, verify_bundle, verify_tlog_proof};
use interlock_store::Store;

/// 40 entries about three plans, one checkpoint over all of them.
async fn plans_log(dir: &std::path::Path) -> Store {
    let store = open_store(dir).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    let entries = (0..40u64).map(plan_entry).collect();
    log.append_many(entries).await.unwrap();
    log.seal().await.unwrap();
    log.close().await;
    store
}

fn pinned() -> VerifyOptions {
    VerifyOptions {
        pinned_log_key: Some(
            NoteVerifier::new(ORIGIN, key().verifying_key())
                .unwrap()
                .to_vkey(),
        ),
        ..VerifyOptions::default()
    }
}

#[tokio::test]
async fn an_unfiltered_export_is_one_range_without_proofs() {
    let dir = tempfile::tempdir().unwrap();
    let store = plans_log(dir.path()).await;
    let b = export(&store, &ExportFilter::default()).await.unwrap();
    assert_eq!(b.version, BundleVersion::V2);
    assert_eq!(b.range.map(|r| (r.from, r.to)), Some((0, 39)));
    assert!(b.range_proof.is_empty());
    assert_eq!(b.receipts.len(), 40);
    assert!(b.receipts.iter().all(|r| r.inclusion_proof.is_none()));
    let r = verify_bundle(&b.to_bytes(), &pinned());
    assert!(r.is_ok(), "{r}");
    // The next export carries this one's checkpoint; with the log grown
    // since, a consistency proof to the new one.
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    log.append(event(40)).await.unwrap();
    log.seal().await.unwrap();
    log.close().await;
    let next = export(&store, &ExportFilter::default()).await.unwrap();
    assert_eq!(next.earlier_checkpoints.len(), 1);
    assert!(verify_bundle(&next.to_bytes(), &pinned()).is_ok());
}

#[tokio::test]
async fn an_index_range_carries_its_frontier_and_right_edge() {
    let dir = tempfile::tempdir().unwrap();
    let store = plans_log(dir.path()).await;
    let filter = ExportFilter {
        from_index: Some(10),
        to_index: Some(29),
        ..ExportFilter::default()
    };
    let b = export(&store, &filter).await.unwrap();
    assert_eq!(b.range.map(|r| (r.from, r.to)), Some((10, 29)));
    assert_eq!(b.range_proof.len(), range_proof_len(10, 30, 40).unwrap());
    assert_eq!(b.receipts.len(), 20);
    let r = verify_bundle(&b.to_bytes(), &pinned());
    assert!(r.is_ok(), "{r}");
    // An end beyond the log is clipped to it; a start beyond it is refused.
    let tail = ExportFilter {
        from_index: Some(35),
        to_index: Some(1000),
        ..ExportFilter::default()
    };
    let b = export(&store, &tail).await.unwrap();
    assert_eq!(b.range.map(|r| (r.from, r.to)), Some((35, 39)));
    assert!(verify_bundle(&b.to_bytes(), &pinned()).is_ok());
    let beyond = ExportFilter {
        from_index: Some(40),
        ..ExportFilter::default()
    };
    assert!(export(&store, &beyond).await.is_err());
}

#[tokio::test]
async fn a_filtered_export_shares_proof_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let store = plans_log(dir.path()).await;
    let filter = ExportFilter {
        plan_id: Some("p1".into()),
        ..ExportFilter::default()
    };
    let b = export(&store, &filter).await.unwrap();
    assert!(b.range.is_none());
    assert_eq!(b.receipts.len(), 13);
    assert!(b.receipts.iter().all(|r| r.inclusion_proof.is_some()));
    let (table, _) = b.node_table();
    let inline: usize = b
        .receipts
        .iter()
        .map(|r| r.inclusion_proof.as_ref().unwrap().len())
        .sum();
    assert!(table.len() < inline, "{} of {inline}", table.len());
    let r = verify_bundle(&b.to_bytes(), &pinned());
    assert!(r.is_ok(), "{r}");
    assert!(r.receipts.iter().all(|l| l.subjects == "plan:p1"), "{r}");
}

#[tokio::test]
async fn one_receipt_as_a_tlog_proof() {
    let dir = tempfile::tempdir().unwrap();
    let store = plans_log(dir.path()).await;
    let vkey = NoteVerifier::new(ORIGIN, key().verifying_key())
        .unwrap()
        .to_vkey();
    let p = export_tlog_proof(&store, 17).await.unwrap();
    let r = verify_tlog_proof(&p.to_string(), &vkey, None);
    assert!(r.is_ok(), "{r}");
    assert_eq!((r.line.index, r.tree_size), (17, Some(40)));
    assert_eq!(r.line.kind, "plan.transition");
    // Not yet covered by a checkpoint (or not in the log at all): refused.
    assert!(export_tlog_proof(&store, 40).await.is_err());
}
