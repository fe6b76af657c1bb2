//! The auditor's claims over this store's log (issue 16 item 9): the pure
//! reading is `interlock_receipts::claims`; this feeds it every leaf of one
//! snapshot, so appends meanwhile are simply not seen.

use interlock_receipts::claims::{DriftWindowClaim, drift_window_claim};
use interlock_receipts::open_leaf_unverified;
use interlock_store::Store;

use crate::LogError;

/// Leaves read per query.
const PAGE: u64 = 8192;

/// Whether any tool ran after its drift was detected and before a reviewer
/// decided, over every leaf of the log. Verify the log first
/// ([`crate::audit`]): this reads what is there, it does not check it.
pub async fn drift_window_claim_of(store: &Store) -> Result<DriftWindowClaim, LogError> {
    let mut snap = store.snapshot().await?;
    let end = snap.log_size().await?;
    let mut opened = Vec::with_capacity(usize::try_from(end).unwrap_or(0));
    let mut lo = 0;
    while lo < end {
        let hi = lo.saturating_add(PAGE).min(end);
        for row in snap.leaves(lo..hi).await? {
            // A leaf that cannot be opened is the audit's to report; here it
            // is simply not evidence of anything.
            if let Ok(leaf) = open_leaf_unverified(&row.data) {
                opened.push((row.idx, leaf));
            }
        }
        lo = hi;
    }
    Ok(drift_window_claim(
        opened
            .iter()
            .map(|(i, l)| (*i, l.kind.as_str(), &l.predicate)),
    ))
}
