//! Exporting receipts: a self-contained bundle an auditor verifies offline,
//! or one receipt as a C2SP tlog-proof file.
//!
//! Every selected leaf goes in as stored, tied to the latest signed checkpoint
//! (`interlock_receipts::bundle`, v2): an export without a content filter is
//! one contiguous range of indices (all of them, or `--from`/`--to`), which the
//! verifier recomputes with a range proof of `O(log n)` hashes and no proof per
//! receipt; a filtered export's receipts — and registrations beside an index
//! range — carry inclusion proofs, written once each into the bundle's shared
//! node table. The checkpoint a previous export ended at goes in too, with a
//! consistency proof to the latest, so successive bundles prove the log only
//! grew. The trust section carries the log key and every approver key the
//! log registered.

use interlock_core::KeyId;
use interlock_merkle::{Checkpoint, SignedNote, TlogProof};
use interlock_receipts::{
    ApproverKey, Bundle, BundleBuilder, open_leaf_unverified, receipt_tlog_proof,
};
use interlock_store::{ReceiptFilter, Store};

use crate::error::LogError;
use crate::log::{META_ORIGIN, META_VKEY};
use crate::tiles::{TileCache, stored_tree, with_tiles};

/// The meta key remembering the checkpoint the last export ended at.
pub const META_LAST_EXPORT: &str = "receipts.last_export";

/// Which receipts to export. Without a content filter (`since`, `until`,
/// `plan_id`, `server`) the export is the contiguous range of indices
/// `from_index..=to_index` (default: every receipt), vouched for by a range
/// proof, so a dropped receipt is detectable.
#[derive(Clone, Debug, Default)]
pub struct ExportFilter {
    /// Unix seconds, inclusive.
    pub since: Option<i64>,
    /// Unix seconds, exclusive.
    pub until: Option<i64>,
    /// Only receipts about this plan.
    pub plan_id: Option<String>,
    /// Only receipts about this upstream server.
    pub server: Option<String>,
    /// Only receipts of this agent (API key name).
    pub agent: Option<String>,
    /// Only receipts about this tool.
    pub tool: Option<String>,
    /// Only receipts of this type (`tool.call`, `plan.approved`, ...).
    pub kind: Option<String>,
    /// Also carry the approved surfaces the exported receipts name
    /// (`surface_hash`, `baseline_hash`), so the bundle shows the exact tool
    /// definitions a reviewer approved (issue 16 item 7).
    pub with_surfaces: bool,
    /// Only receipts at or after this log index.
    pub from_index: Option<u64>,
    /// Only receipts at or before this log index.
    pub to_index: Option<u64>,
}

impl ExportFilter {
    /// No filter on what a receipt says: the selection is a contiguous range.
    fn is_contiguous(&self) -> bool {
        !self.receipt_filter().filters_content()
    }

    /// The same selection, as the store's receipt index answers it (the
    /// receipts view's filters: one meaning for both).
    pub fn receipt_filter(&self) -> ReceiptFilter {
        ReceiptFilter {
            since: self.since,
            until: self.until,
            from_index: self.from_index,
            to_index: self.to_index,
            plan_id: self.plan_id.clone(),
            server: self.server.clone(),
            agent: self.agent.clone(),
            tool: self.tool.clone(),
            kind: self.kind.clone(),
        }
    }
}

/// Rows read at once by an export.
const EXPORT_PAGE: u64 = 8192;

/// The index ranges an export reads, in order: its contiguous range, if
/// any, and each chosen receipt outside it (adjacent ones joined).
fn spans(
    range: Option<(u64, u64)>,
    chosen: &std::collections::HashSet<u64>,
    size: u64,
) -> Vec<std::ops::Range<u64>> {
    let mut starts: Vec<std::ops::Range<u64>> = chosen
        .iter()
        .filter(|i| **i < size && !range.is_some_and(|(from, to)| from <= **i && **i <= to))
        .map(|i| *i..i + 1)
        .collect();
    if let Some((from, to)) = range {
        starts.push(from..to + 1);
    }
    starts.sort_by_key(|r| r.start);
    let mut out: Vec<std::ops::Range<u64>> = Vec::new();
    for r in starts {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Builds the bundle for `filter` from `store`, and remembers its checkpoint as
/// the starting point of the next export's consistency proof.
pub async fn export(store: &Store, filter: &ExportFilter) -> Result<Bundle, LogError> {
    let origin = store.get_meta(META_ORIGIN).await?.ok_or_else(|| {
        LogError::Export("the log has no origin yet (nothing was ever appended)".into())
    })?;
    let vkey = store
        .get_meta(META_VKEY)
        .await?
        .ok_or_else(|| LogError::Export("the log has no verifier key recorded".into()))?;
    let latest = store
        .latest_checkpoint()
        .await?
        .ok_or_else(|| LogError::Export("the log has no signed checkpoint yet".into()))?;
    let tiles = std::sync::Mutex::new(TileCache::default());
    let tree = stored_tree(store, &tiles, latest.size, latest.root).await?;
    if tree.len() < latest.size {
        return Err(LogError::Export(format!(
            "the log holds {} entries but its latest checkpoint covers {}",
            tree.len(),
            latest.size
        )));
    }
    let size = latest.size;
    let approver_keys = store
        .approver_keys(true)
        .await?
        .into_iter()
        .filter_map(|k| {
            let key = ed25519_dalek::VerifyingKey::from_bytes(&k.public_key).ok()?;
            Some(ApproverKey {
                key_id: KeyId::of(&key),
                public_key: k.public_key,
                identity: k.identity,
            })
        })
        .collect();
    let mut builder =
        BundleBuilder::new(origin, vkey, approver_keys, cosigned(store, &latest).await?);
    if let Some(prev) = previous_export(store).await?
        && prev.1 < size
    {
        let proof = with_tiles(store, &tiles, &tree, |t, c| {
            t.consistency_proof(prev.1, size, c)
        })
        .await?;
        builder = builder.earlier_checkpoint(prev.0, proof);
    }
    if size == 0 {
        return Err(LogError::Export(
            "the latest checkpoint covers no entry".into(),
        ));
    }
    let (lo, hi) = (
        filter.from_index.unwrap_or(0),
        filter.to_index.unwrap_or(size - 1),
    );
    if lo > hi || lo >= size {
        return Err(LogError::Export(format!(
            "no entry in {lo}..={hi}: the latest checkpoint covers 0..={}",
            size - 1
        )));
    }
    let hi = hi.min(size - 1);
    let range = filter.is_contiguous().then_some((lo, hi));
    if let Some((from, to)) = range {
        let proof = with_tiles(store, &tiles, &tree, |t, c| {
            t.range_proof(from, to + 1, size, c)
        })
        .await?;
        builder = builder.range(from, to, proof);
    }
    // A filtered export's selection is the store's (SQL over the receipt
    // index, caught up first), so it means what the receipts view shows. Key
    // registrations back the trust section: always included.
    crate::receipts::index_receipts(store).await?;
    let registrations = ReceiptFilter {
        kind: Some("approver.registered".into()),
        to_index: Some(size - 1),
        ..ReceiptFilter::default()
    };
    let mut chosen: std::collections::HashSet<u64> = store
        .receipt_indices(&registrations)
        .await?
        .into_iter()
        .collect();
    if range.is_none() {
        let mut rf = filter.receipt_filter();
        rf.from_index = Some(lo);
        rf.to_index = Some(hi);
        chosen.extend(store.receipt_indices(&rf).await?);
    }
    let mut named_surfaces = std::collections::BTreeSet::new();
    // Only the rows the bundle carries are read (issue 45 item 5: a day's
    // export of a 10M-entry log read every entry): the range, page by page,
    // and each chosen receipt outside it.
    for span in spans(range, &chosen, size) {
        let mut at = span.start;
        while at < span.end {
            let page_end = span.end.min(at.saturating_add(EXPORT_PAGE));
            let rows = store.leaves(at..page_end).await?;
            at = page_end;
            for row in rows {
                let in_range = range.is_some_and(|(from, to)| from <= row.idx && row.idx <= to);
                // An unfiltered export without surfaces opens no leaf: the range is
                // the selection.
                if in_range && !filter.with_surfaces {
                    builder = builder.range_receipt(row.idx, row.data);
                    continue;
                }
                if !in_range && !chosen.contains(&row.idx) {
                    continue;
                }
                let opened =
                    open_leaf_unverified(&row.data).map_err(|e| LogError::MalformedEntry {
                        index: row.idx,
                        reason: e.to_string(),
                    })?;
                let p = &opened.predicate;
                let field = |k: &str| p.get(k).and_then(|v| v.as_str());
                if filter.with_surfaces {
                    for k in ["surface_hash", "baseline_hash"] {
                        if let Some(h) = field(k).filter(|h| !h.is_empty()) {
                            named_surfaces.insert(h.to_owned());
                        }
                    }
                }
                if in_range {
                    builder = builder.range_receipt(row.idx, row.data);
                } else {
                    let proof = with_tiles(store, &tiles, &tree, |t, c| {
                        t.inclusion_proof(row.idx, size, c)
                    })
                    .await?;
                    builder = builder.receipt(row.idx, row.data, proof);
                }
            }
        }
    }
    // Only surfaces a reviewer approved are kept by hash; a drift leaf's
    // observed `surface_hash` that nobody approved has nothing to carry.
    for hash in named_surfaces {
        if let Some(s) = store.approved_surface(&hash).await? {
            builder = builder.surface(s.hash, s.surface);
        }
    }
    let bundle = builder
        .build()
        .map_err(|e| LogError::Export(e.to_string()))?;
    store.set_meta(META_LAST_EXPORT, &latest.note).await?;
    Ok(bundle)
}

/// One receipt as a C2SP tlog-proof (`interlock_receipts::tlog`): the leaf at
/// `index` in the `extra` line, its inclusion proof and the latest signed
/// checkpoint. Does not move the next bundle's consistency starting point.
pub async fn export_tlog_proof(store: &Store, index: u64) -> Result<TlogProof, LogError> {
    let latest = store
        .latest_checkpoint()
        .await?
        .ok_or_else(|| LogError::Export("the log has no signed checkpoint yet".into()))?;
    if index >= latest.size {
        return Err(LogError::Export(format!(
            "entry {index} is not covered by the latest signed checkpoint (size {})",
            latest.size
        )));
    }
    let row = store
        .leaf(index)
        .await?
        .ok_or_else(|| LogError::Export(format!("no entry at index {index}")))?;
    let tiles = std::sync::Mutex::new(TileCache::default());
    let tree = stored_tree(store, &tiles, latest.size, latest.root).await?;
    let proof = with_tiles(store, &tiles, &tree, |t, c| {
        t.inclusion_proof(index, latest.size, c)
    })
    .await?;
    let note = cosigned(store, &latest).await?;
    Ok(receipt_tlog_proof(index, row.data, proof, note))
}

/// The checkpoint (note, size) the previous export ended at, if any.
async fn previous_export(store: &Store) -> Result<Option<(String, u64)>, LogError> {
    let Some(note) = store.get_meta(META_LAST_EXPORT).await? else {
        return Ok(None);
    };
    let size = SignedNote::parse(&note)
        .ok()
        .and_then(|n| Checkpoint::parse(&n.text).ok())
        .map(|cp| cp.size);
    Ok(size.map(|s| (note, s)))
}

/// The checkpoint `cp` with the cosignature lines its witnesses returned
/// (issue 43), so a bundle carries them: an auditor can then require that k
/// witnesses saw this very tree head (`interlock receipts verify --witness`).
async fn cosigned(store: &Store, cp: &interlock_store::CheckpointRow) -> Result<String, LogError> {
    let mut note = cp.note.clone();
    for c in store.cosignatures(cp.size).await? {
        note.push_str(&c.line);
    }
    Ok(note)
}
