//! [`LeafTail`]: every leaf from an index on, each once and in order — from
//! memory for what this `Log` committed, from the store for the rest (leaves
//! from before the tail, other writers' leaves, what the buffer dropped).

mod common;

use common::*;
use interlock_log::{LeafTail, Log, RECENT_LEAVES, TAIL_CHUNK};
use interlock_store::LeafRow;

/// Reads the tail until it has nothing new.
async fn drain(tail: &mut LeafTail) -> Vec<LeafRow> {
    let mut all = Vec::new();
    loop {
        let rows = tail.read_new().await.unwrap();
        assert!(rows.len() as u64 <= TAIL_CHUNK);
        if rows.is_empty() {
            return all;
        }
        all.extend(rows);
    }
}

/// A log on a new database in `dir`.
async fn new_log(dir: &std::path::Path) -> Log {
    let store = open_store(dir).await.unwrap();
    Log::open(store, signer(), ORIGIN).await.unwrap()
}

/// What the tail returned is exactly what the store holds for that range.
async fn assert_as_stored(log: &Log, from: u64, rows: &[LeafRow]) {
    let stored = log.store().leaves(from..log.size()).await.unwrap();
    assert_eq!(rows.len(), stored.len(), "every leaf from {from} on, once");
    for (got, want) in rows.iter().zip(&stored) {
        assert_eq!(got, want, "leaf {}", want.idx);
    }
}

#[tokio::test]
async fn a_tail_takes_this_logs_new_leaves_from_memory_and_older_ones_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let log = new_log(dir.path()).await;
    for i in 0..5 {
        log.append(event(i)).await.unwrap();
    }
    // From the start: the five existing leaves are not in memory (no tail
    // was open when they were committed), so they come from the store.
    let mut tail = log.tail(0);
    let first = drain(&mut tail).await;
    assert_eq!(first.len(), 5);
    assert_eq!(tail.read_from_store(), 5);
    // New ones, one by one and in a batch, come from memory.
    for i in 5..8 {
        log.append(event(i)).await.unwrap();
    }
    log.append_many((8..20).map(event).collect()).await.unwrap();
    let next = drain(&mut tail).await;
    assert_eq!(next.len(), 15);
    assert_eq!(tail.read_from_store(), 5, "nothing new read back");
    assert_eq!(tail.position(), 20);
    let mut all = first;
    all.extend(next);
    assert_as_stored(&log, 0, &all).await;
    log.close().await;
}

#[tokio::test]
async fn a_tail_that_falls_behind_the_buffer_reads_the_rest_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let log = new_log(dir.path()).await;
    let mut tail = log.tail(0);
    let total = RECENT_LEAVES as u64 + 1500;
    let mut n = 0;
    while n < total {
        let batch = (n..(n + 1000).min(total)).map(event).collect::<Vec<_>>();
        n += batch.len() as u64;
        log.append_many(batch).await.unwrap();
    }
    let all = drain(&mut tail).await;
    assert_eq!(all.len() as u64, total);
    assert_eq!(
        tail.read_from_store(),
        total - RECENT_LEAVES as u64,
        "only what the buffer dropped is read back"
    );
    assert_as_stored(&log, 0, &all).await;
    log.close().await;
}

/// Another writer's leaves are adopted by hash, never kept in memory: the
/// tail reads them from the store, between this log's own, with no gap.
#[tokio::test]
async fn a_tail_reads_another_writers_leaves_in_order_between_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let a = new_log(dir.path()).await;
    // Its own store: another writer, as another process would be.
    let b = new_log(dir.path()).await;
    let mut tail = a.tail(0);
    a.append(event(0)).await.unwrap();
    b.refresh().await.unwrap();
    b.append_many((1..4).map(event).collect()).await.unwrap();
    // A's next append finds its index taken, adopts B's three and follows.
    a.append(event(4)).await.unwrap();
    assert_eq!(a.size(), 5);
    let all = drain(&mut tail).await;
    assert_eq!(
        all.iter().map(|r| r.idx).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(tail.read_from_store(), 3, "B's three, from the store");
    assert_as_stored(&a, 0, &all).await;
    a.close().await;
    b.close().await;
}

/// With no tail open, committed leaves are not kept (memory is only spent
/// for a reader), and a tail opened later reads them from the store.
#[tokio::test]
async fn leaves_are_kept_only_while_a_tail_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let log = new_log(dir.path()).await;
    let tail = log.tail(0);
    log.append(event(0)).await.unwrap();
    drop(tail);
    log.append(event(1)).await.unwrap();
    let mut later = log.tail(0);
    let all = drain(&mut later).await;
    assert_eq!(all.len(), 2);
    assert_eq!(later.read_from_store(), 2);
    log.close().await;
}

/// Regression: a store read that fails after leaves were taken from memory
/// returns those leaves (the tail's position is already past them) and
/// reports the failure on the next call, so no leaf is skipped.
#[tokio::test]
async fn regression_a_failing_store_read_keeps_what_came_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let a = new_log(dir.path()).await;
    let b = new_log(dir.path()).await;
    let mut tail = a.tail(0);
    a.append(event(0)).await.unwrap();
    b.refresh().await.unwrap();
    b.append_many((1..4).map(event).collect()).await.unwrap();
    a.append(event(4)).await.unwrap();
    // B's three must come from the store, which is now closed.
    a.store().close().await;
    let first = tail.read_new().await.unwrap();
    assert_eq!(first.iter().map(|r| r.idx).collect::<Vec<_>>(), [0]);
    assert_eq!(tail.position(), 1);
    assert!(
        tail.read_new().await.is_err(),
        "the failure is reported next"
    );
    assert_eq!(tail.position(), 1, "and nothing is skipped");
    b.close().await;
}
