//! The tally: every leaf the log holds, decoded once, counted for `/metrics`
//! and indexed for the receipts view (the store's `receipt_facts`).
//!
//! Both used to read each new leaf back from the store and decode it, each
//! on its own (issue 17's profile: with the store's query worker, about a
//! seventh of a sequential call's CPU). Now one task reads the leaves
//! through a [`LeafTail`](interlock_log::LeafTail) — from memory for what this process committed,
//! from the store for the rest — decodes each once, and writes the facts in
//! batches. Nothing of this is on a call's path: the task runs on its own
//! clock and wakes no one when a call commits.
//!
//! The receipts index stays gap-free: the tail starts where the index ends
//! (so a log written before the index existed is indexed from its start),
//! facts are written in index order, and a batch the store refused is kept
//! and written again; a leaf indexed twice (the receipts API catching up at
//! the same moment, another process) is kept once by the store.

use std::time::{Duration, Instant};

use interlock_log::{TAIL_CHUNK, facts_of_summary};
use interlock_receipts::{open_leaf_unverified, summarize};
use interlock_store::ReceiptFacts;

use crate::gateway::Gateway;

/// How often the tail is read: how stale `/metrics` may be.
const READ_EVERY: Duration = Duration::from_millis(500);

/// How often indexed facts are written (a receipts page catches up by
/// itself on whatever arrived since: `receipts_api`).
const WRITE_EVERY: Duration = Duration::from_millis(2500);

/// Facts buffered past this are written at once.
const WRITE_AT: usize = TAIL_CHUNK as usize;

/// Facts kept while the store refuses them; past this the buffer is dropped
/// and the tail restarts where the index ends (read back from the store).
const KEEP_AT_MOST: usize = 64 * 1024;

/// Reads, counts and indexes leaves until the gateway shuts down.
pub(crate) async fn tally(gw: Gateway) {
    let log = gw.engine().log().clone();
    let store = gw.engine().store().clone();
    let mut shutdown = gw.0.shutdown.subscribe();
    // `/metrics` counts what happened since this gateway started.
    let mut counted_up_to = log.size();
    let mut tail = log.tail(index_end(&gw, counted_up_to).await);
    let mut facts: Vec<ReceiptFacts> = Vec::new();
    let mut written_at = Instant::now();
    let mut failing: Option<String> = None;
    loop {
        gw.metrics().set_leaves(log.size());
        loop {
            let rows = match tail.read_new().await {
                Ok(rows) => {
                    failing = None;
                    rows
                }
                Err(e) => {
                    // Said once per distinct failure, not twice a second.
                    let said = e.to_string();
                    if failing.as_deref() != Some(said.as_str()) {
                        tracing::warn!(error = %said, at = tail.position(), "reading new log leaves failed");
                        failing = Some(said);
                    }
                    break;
                }
            };
            let full = rows.len() as u64 == TAIL_CHUNK;
            for row in rows {
                let summary = open_leaf_unverified(&row.data)
                    .ok()
                    .map(|opened| summarize(&opened));
                if row.idx >= counted_up_to {
                    if let Some(s) = &summary {
                        gw.metrics().count(s);
                    }
                    counted_up_to = row.idx + 1;
                }
                facts.push(facts_of_summary(row.idx, row.appended_at, summary));
            }
            if facts.len() >= WRITE_AT {
                write(&store, &mut facts, &mut written_at).await;
            }
            if !full {
                break;
            }
        }
        if !facts.is_empty() && written_at.elapsed() >= WRITE_EVERY {
            write(&store, &mut facts, &mut written_at).await;
        }
        if facts.len() > KEEP_AT_MOST {
            tracing::warn!(
                kept = facts.len(),
                "the receipts index cannot be written; starting over from where it ends"
            );
            facts.clear();
            tail = log.tail(index_end(&gw, tail.position()).await);
        }
        tokio::select! {
            _ = tokio::time::sleep(READ_EVERY) => {}
            _ = shutdown.changed() => {
                if !facts.is_empty() {
                    write(&store, &mut facts, &mut written_at).await;
                }
                return;
            }
        }
    }
}

/// Where the receipts index ends (its next leaf), or `fallback` when the
/// store cannot say.
async fn index_end(gw: &Gateway, fallback: u64) -> u64 {
    match gw.engine().store().receipt_facts_next().await {
        Ok(next) => next.min(fallback),
        Err(e) => {
            tracing::warn!(error = %e, "reading where the receipts index ends failed");
            fallback
        }
    }
}

/// Writes the buffered facts; on failure keeps them for the next try.
async fn write(store: &interlock_store::Store, facts: &mut Vec<ReceiptFacts>, at: &mut Instant) {
    match store.insert_receipt_facts(facts).await {
        Ok(()) => facts.clear(),
        Err(e) => tracing::warn!(error = %e, pending = facts.len(), "indexing receipts failed"),
    }
    *at = Instant::now();
}
