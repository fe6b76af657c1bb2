//! Issue 45 item 5: a log keeps only its tiles' roots (one per 256 entries)
//! and its last entries' hashes in memory, opens from the stored roots,
//! proves any entry from at most two tiles read back, and checks every row
//! it reads against what the signed log commits to.

mod common;

use common::*;
use interlock_log::{AuditProblem, ExportFilter, Log, LogError, audit, export, export_tlog_proof};
use interlock_merkle::{Hash, NoteVerifier, Tree, root};
use interlock_receipts::{VerifyOptions, verify_bundle, verify_tlog_proof};
use interlock_store::Store;

/// Three complete tiles and 232 entries of a fourth.
const N: u64 = 1000;

/// Writes [`N`] entries in batches of 100 and closes the log; returns their
/// leaf hashes.
async fn thousand(dir: &std::path::Path) -> Vec<Hash> {
    let store = open_store(dir).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    let mut hashes = Vec::new();
    for b in 0..N / 100 {
        let batch = (0..100).map(|i| plan_entry(b * 100 + i)).collect();
        hashes.extend(
            log.append_many(batch)
                .await
                .unwrap()
                .iter()
                .map(|a| a.leaf_hash),
        );
    }
    // A proof while the log is open: tile 1's leaves are read back.
    let whole = Tree::from_leaves(&hashes);
    assert_eq!(
        log.inclusion_proof(300, N).await.unwrap(),
        whole.inclusion_proof(300, N).unwrap()
    );
    log.close().await;
    store.close().await;
    hashes
}

async fn tile_rows(dir: &std::path::Path) -> Vec<(i64, Vec<u8>)> {
    let mut c = raw(dir).await;
    sqlx::query_as("SELECT idx, root FROM log_tiles ORDER BY idx")
        .fetch_all(&mut c)
        .await
        .unwrap()
}

fn tile_root(hashes: &[Hash], tile: usize) -> Vec<u8> {
    root(&hashes[tile * 256..(tile + 1) * 256]).to_vec()
}

async fn reopen(dir: &std::path::Path) -> (Store, Log) {
    let store = open_store(dir).await.unwrap();
    let log = Log::open(store.clone(), signer(), ORIGIN).await.unwrap();
    (store, log)
}

/// Proofs of entries in every tile, at the whole size and earlier ones,
/// against the tree of every leaf.
async fn proves_like_the_whole_tree(log: &Log, hashes: &[Hash]) {
    let whole = Tree::from_leaves(hashes);
    assert_eq!(log.size(), N);
    assert_eq!(log.root(), whole.root());
    for index in [0, 255, 256, 511, 700, 767, 768, 999] {
        assert_eq!(
            log.inclusion_proof(index, N).await.unwrap(),
            whole.inclusion_proof(index, N).unwrap(),
            "inclusion of {index}"
        );
    }
    assert_eq!(
        log.inclusion_proof(10, 600).await.unwrap(),
        whole.inclusion_proof(10, 600).unwrap()
    );
    for old in [1, 300, 512, 900] {
        assert_eq!(
            log.consistency_proof(old, N).await.unwrap(),
            whole.consistency_proof(old, N).unwrap(),
            "consistency from {old}"
        );
    }
}

#[tokio::test]
async fn a_log_of_many_tiles_reopens_from_their_roots_and_proves_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let hashes = thousand(dir.path()).await;
    let rows = tile_rows(dir.path()).await;
    assert_eq!(rows.len(), 3, "one row per complete tile");
    for (t, (idx, r)) in rows.iter().enumerate() {
        assert_eq!((*idx, r), (t as i64, &tile_root(&hashes, t)));
    }
    let (store, log) = reopen(dir.path()).await;
    proves_like_the_whole_tree(&log, &hashes).await;
    let entry = log.verified_entry(300).await.unwrap();
    let plan = entry.as_object().and_then(|o| o.get("plan_id"));
    assert_eq!(plan.and_then(|p| p.as_str()), Some("p0"));
    log.close().await;
    assert!(audit(&store, None).await.unwrap().is_ok());
}

#[tokio::test]
async fn regression_issue_45_a_wrong_tile_root_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let hashes = thousand(dir.path()).await;
    let mut c = raw(dir.path()).await;
    sqlx::query("UPDATE log_tiles SET root = $1 WHERE idx = 1")
        .bind(vec![7u8; 32])
        .execute(&mut c)
        .await
        .unwrap();
    drop(c);
    // The audit names the row.
    let store = open_store(dir.path()).await.unwrap();
    let r = audit(&store, None).await.unwrap();
    assert_eq!(r.problems, [AuditProblem::WrongTileRoot { tile: 1 }], "{r}");
    assert!(r.to_string().contains("entries 256..511"), "{r}");
    store.close().await;
    // The roots do not reproduce the signed root; the leaves do.
    let (store, log) = reopen(dir.path()).await;
    proves_like_the_whole_tree(&log, &hashes).await;
    log.close().await;
    assert!(audit(&store, None).await.unwrap().is_ok());
    store.close().await;
    let rows = tile_rows(dir.path()).await;
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1].1, tile_root(&hashes, 1), "stored again, right");
}

#[tokio::test]
async fn regression_issue_45_a_changed_leaf_under_a_tile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hashes = thousand(dir.path()).await;
    let mut c = raw(dir.path()).await;
    let set = |sql: &'static str, value: Vec<u8>| sqlx::query(sql).bind(value);
    for q in [
        // Tile 1: both its stored leaf hashes and a leaf row's hash edited.
        set(
            "UPDATE log_tile_leaves SET leaf_hashes = $1 WHERE idx = 1",
            vec![9u8; 8192],
        ),
        set(
            "UPDATE log_leaves SET leaf_hash = $1 WHERE idx = 301",
            vec![9u8; 32],
        ),
        // Tile 0: only its stored leaf hashes (its rows are intact).
        set(
            "UPDATE log_tile_leaves SET leaf_hashes = $1 WHERE idx = 0",
            vec![8u8; 8192],
        ),
    ] {
        q.execute(&mut c).await.unwrap();
    }
    drop(c);
    // Tile 2: a leaf row gone, and its stored leaf hashes with it.
    exec(dir.path(), "DELETE FROM log_leaves WHERE idx = 600").await;
    exec(dir.path(), "DELETE FROM log_tile_leaves WHERE idx = 2").await;
    // All of it lies under stored tiles: the log opens on the signed roots,
    // and refuses to answer from any of it when it reads it.
    let (store, log) = reopen(dir.path()).await;
    for (index, tile) in [(300, 1), (600, 2)] {
        let err = log.inclusion_proof(index, N).await.unwrap_err();
        assert!(
            matches!(err, LogError::TileMismatch { tile: t } if t == tile),
            "{err}"
        );
    }
    let err = log.verified_entry(301).await.unwrap_err();
    assert!(matches!(err, LogError::TileMismatch { tile: 1 }), "{err}");
    assert!(err.to_string().contains("entries 256..512"), "{err}");
    // Tile 0's leaf hashes come from its rows instead; tiles 3 on are whole.
    let whole = Tree::from_leaves(&hashes);
    assert_eq!(
        log.inclusion_proof(10, N).await.unwrap(),
        whole.inclusion_proof(10, N).unwrap()
    );
    assert!(log.inclusion_proof(800, N).await.is_ok());
    log.close().await;
    assert!(!audit(&store, None).await.unwrap().is_ok());
}

#[tokio::test]
async fn regression_issue_45_an_edited_entry_under_a_tile_is_refused_when_read() {
    let dir = tempfile::tempdir().unwrap();
    thousand(dir.path()).await;
    exec(
        dir.path(),
        "UPDATE log_leaves SET data = CAST('{}' AS BLOB) WHERE idx = 300",
    )
    .await;
    let (_store, log) = reopen(dir.path()).await;
    let err = log.verified_entry(300).await.unwrap_err();
    assert!(
        matches!(err, LogError::MalformedEntry { index: 300, .. }),
        "{err}"
    );
    assert!(log.verified_entry(299).await.is_ok());
    log.close().await;
}

#[tokio::test]
async fn exports_of_a_log_of_many_tiles_verify_offline() {
    let dir = tempfile::tempdir().unwrap();
    thousand(dir.path()).await;
    let store = open_store(dir.path()).await.unwrap();
    let pinned = VerifyOptions {
        pinned_log_key: Some(
            NoteVerifier::new(ORIGIN, key().verifying_key())
                .unwrap()
                .to_vkey(),
        ),
        ..VerifyOptions::default()
    };
    // A range inside tiles 1 and 2: its proof needs both.
    let range = ExportFilter {
        from_index: Some(300),
        to_index: Some(700),
        ..ExportFilter::default()
    };
    let r = verify_bundle(&export(&store, &range).await.unwrap().to_bytes(), &pinned);
    assert!(r.is_ok(), "{r}");
    // A filtered export: an inclusion proof per receipt, from every tile.
    let p1 = ExportFilter {
        plan_id: Some("p1".into()),
        ..ExportFilter::default()
    };
    let b = export(&store, &p1).await.unwrap();
    assert_eq!(b.receipts.len(), 333);
    let r = verify_bundle(&b.to_bytes(), &pinned);
    assert!(r.is_ok(), "{r}");
    let p = export_tlog_proof(&store, 555).await.unwrap();
    let vkey = pinned.pinned_log_key.clone().unwrap();
    let r = verify_tlog_proof(&p.to_string(), &vkey, None);
    assert!(r.is_ok(), "{r}");
}
