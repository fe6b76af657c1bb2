//! Exporting receipts: a self-contained bundle an auditor verifies offline.
//!
//! Every selected leaf goes in as stored (its signed receipt) with an inclusion
//! proof against the latest signed checkpoint. The checkpoint a previous export
//! ended at goes in too, with a consistency proof to the latest, so successive
//! bundles prove the log only grew. The trust section carries the log key and
//! every approver key the log registered.

use interlock_core::KeyId;
use interlock_merkle::{Checkpoint, SignedNote, Tree};
use interlock_receipts::{ApproverKey, Bundle, BundleBuilder, open_leaf_unverified};
use interlock_store::Store;

use crate::error::LogError;
use crate::log::{META_ORIGIN, META_VKEY};

/// The meta key remembering the checkpoint the last export ended at.
pub const META_LAST_EXPORT: &str = "receipts.last_export";

/// Which receipts to export. Empty filter = every receipt (and the bundle then
/// claims the whole range, so a dropped receipt is detectable).
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
    /// Also carry the approved surfaces the exported receipts name
    /// (`surface_hash`, `baseline_hash`), so the bundle shows the exact tool
    /// definitions a reviewer approved (issue 16 item 7).
    pub with_surfaces: bool,
}

impl ExportFilter {
    fn is_empty(&self) -> bool {
        self.since.is_none()
            && self.until.is_none()
            && self.plan_id.is_none()
            && self.server.is_none()
    }
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
    let tree = Tree::from_leaves(&store.leaf_hashes().await?);
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
    let mut builder = BundleBuilder::new(origin, vkey, approver_keys, latest.note.clone());
    if let Some(prev) = previous_export(store).await?
        && prev.1 < size
    {
        let proof = tree
            .consistency_proof(prev.1, size)
            .map_err(|e| LogError::Export(e.to_string()))?;
        builder = builder.earlier_checkpoint(prev.0, proof);
    }
    let mut named_surfaces = std::collections::BTreeSet::new();
    for row in store.leaves(0..size).await? {
        let opened = open_leaf_unverified(&row.data).map_err(|e| LogError::MalformedEntry {
            index: row.idx,
            reason: e.to_string(),
        })?;
        let p = &opened.predicate;
        let field = |k: &str| p.get(k).and_then(|v| v.as_str());
        let keep = filter.since.is_none_or(|t| opened.time >= t)
            && filter.until.is_none_or(|t| opened.time < t)
            && filter.plan_id.as_deref().is_none_or(|id| field("plan_id") == Some(id))
            && filter.server.as_deref().is_none_or(|s| field("server") == Some(s))
            // Key registrations back the trust section: always included.
            || opened.kind == "approver.registered";
        if keep {
            if filter.with_surfaces {
                for k in ["surface_hash", "baseline_hash"] {
                    if let Some(h) = field(k).filter(|h| !h.is_empty()) {
                        named_surfaces.insert(h.to_owned());
                    }
                }
            }
            let proof = tree
                .inclusion_proof(row.idx, size)
                .map_err(|e| LogError::Export(e.to_string()))?;
            builder = builder.receipt(row.idx, row.data, proof);
        }
    }
    if filter.is_empty() && size > 0 {
        builder = builder.range(0, size - 1);
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
