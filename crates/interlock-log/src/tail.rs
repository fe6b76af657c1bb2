//! [`LeafTail`]: every leaf the log holds from some index on, in index order,
//! without reading back what this process just wrote.
//!
//! A gateway reads each new leaf once more after committing it: to count it
//! for `/metrics` and to index it for the receipts view (issue 17's profile:
//! reading the leaves back through the store, and its query worker, cost
//! about a seventh of a sequential call's CPU). The bytes were in memory a
//! moment before, so the log keeps the leaves it commits in a bounded buffer
//! ([`Recent`]) while a tail exists, and a tail takes them from there.
//!
//! What the buffer does not hold is read from the store, so a tail never
//! skips a leaf: leaves other writers appended (adopted, never buffered),
//! leaves from before the tail's start, and leaves the buffer dropped
//! because the tail fell behind. Publishing a batch costs the committing
//! task a push under a lock and wakes nobody: tails read on their own clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use interlock_store::{LeafRow, StoreError};

use crate::error::LogError;
use crate::log::Shared;

/// Leaves kept for tails (about 1.5 KiB each for a tool call's): a tail that
/// reads every half second keeps up with ~16,000 appends a second before it
/// has to read from the store.
pub const RECENT_LEAVES: usize = 8192;

/// Leaves one [`LeafTail::read_new`] returns at most, so a tail starting far
/// back (a log written before its index existed) works through it in
/// bounded steps.
pub const TAIL_CHUNK: u64 = 2048;

/// The leaves this log committed most recently, in index order (not always
/// contiguous: other writers' leaves are adopted by hash only), kept only
/// while some [`LeafTail`] is open.
#[derive(Default)]
pub(crate) struct Recent {
    leaves: std::sync::Mutex<VecDeque<LeafRow>>,
    tails: AtomicUsize,
}

impl Recent {
    /// Whether a committed batch should be kept (someone tails the log).
    pub(crate) fn wanted(&self) -> bool {
        self.tails.load(Ordering::Acquire) > 0
    }

    /// Keeps a committed batch (called in commit order, so indices rise).
    pub(crate) fn push(&self, batch: impl IntoIterator<Item = LeafRow>) {
        let mut leaves = self.lock();
        leaves.extend(batch);
        let excess = leaves.len().saturating_sub(RECENT_LEAVES);
        leaves.drain(..excess);
    }

    /// Copies of the kept leaves from index `from` on while they are
    /// contiguous and below `to`.
    fn contiguous(&self, from: u64, to: u64) -> Vec<LeafRow> {
        let leaves = self.lock();
        let start = leaves.partition_point(|l| l.idx < from);
        let wanted = to.saturating_sub(from).min(TAIL_CHUNK);
        leaves
            .range(start..)
            .zip(from..from + wanted)
            .take_while(|(leaf, idx)| leaf.idx == *idx)
            .map(|(leaf, _)| leaf.clone())
            .collect()
    }

    /// The lowest kept index above `from`, if any: where the store read for a
    /// gap can stop.
    fn next_kept_after(&self, from: u64) -> Option<u64> {
        let leaves = self.lock();
        let at = leaves.partition_point(|l| l.idx <= from);
        leaves.get(at).map(|l| l.idx)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<LeafRow>> {
        self.leaves
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Reads every leaf of a [`Log`] from an index on, each once, in order.
/// Made by [`Log::tail`](crate::Log::tail). It holds the log's state, not a
/// [`Log`](crate::Log) handle, so it never keeps the writer open.
pub struct LeafTail {
    shared: Arc<Shared>,
    next: u64,
    from_store: u64,
}

impl LeafTail {
    pub(crate) fn new(shared: Arc<Shared>, from: u64) -> LeafTail {
        shared.recent.tails.fetch_add(1, Ordering::AcqRel);
        LeafTail {
            shared,
            next: from,
            from_store: 0,
        }
    }

    /// The index of the next leaf [`Self::read_new`] returns.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// How many of the leaves returned so far were read from the store
    /// rather than taken from memory (for tests and diagnostics).
    pub fn read_from_store(&self) -> u64 {
        self.from_store
    }

    /// The leaves committed since the last call (at most [`TAIL_CHUNK`]),
    /// contiguous from [`Self::position`]; empty when there is nothing new.
    /// Each comes from the log's memory when this process committed it
    /// recently, from the store otherwise.
    pub async fn read_new(&mut self) -> Result<Vec<LeafRow>, LogError> {
        let size = self.shared.size();
        let recent = &self.shared.recent;
        let mut out: Vec<LeafRow> = Vec::new();
        while self.next < size && (out.len() as u64) < TAIL_CHUNK {
            let room = TAIL_CHUNK - out.len() as u64;
            let to = size.min(self.next.saturating_add(room));
            let kept = recent.contiguous(self.next, to);
            if !kept.is_empty() {
                self.next += kept.len() as u64;
                out.extend(kept);
                continue;
            }
            // Not in memory: read up to the next kept leaf (or the end).
            let upto = recent.next_kept_after(self.next).map_or(to, |k| k.min(to));
            let rows = match self.shared.store.leaves(self.next..upto).await {
                Ok(rows) => rows,
                // What was taken already is returned (its position is past
                // it: dropping it would skip it for good); the next call
                // meets the failure again.
                Err(_) if !out.is_empty() => return Ok(out),
                Err(e) => return Err(e.into()),
            };
            let contiguous = rows
                .iter()
                .zip(self.next..)
                .take_while(|(row, idx)| row.idx == *idx)
                .count();
            if contiguous == 0 {
                if !out.is_empty() {
                    return Ok(out);
                }
                return Err(LogError::Store(StoreError::Malformed(format!(
                    "log leaf {} is missing from the store",
                    self.next
                ))));
            }
            self.next += contiguous as u64;
            self.from_store += contiguous as u64;
            out.extend(rows.into_iter().take(contiguous));
        }
        Ok(out)
    }
}

impl Drop for LeafTail {
    fn drop(&mut self) {
        let recent = &self.shared.recent;
        if recent.tails.fetch_sub(1, Ordering::AcqRel) == 1 {
            recent.lock().clear();
        }
    }
}
