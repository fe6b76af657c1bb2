//! Finding receipts (issue 18): the store's `receipt_facts` index kept up
//! with the log, filtered pages of decoded receipts for the reviewer API, and
//! an export's three files built in one place for the CLI and the API.
//!
//! The facts are read from each leaf here, where leaf formats are known
//! (`interlock_receipts::summarize`), and the store selects by them in SQL.
//! They are caught up lazily, by whoever asks, from the highest indexed leaf
//! on: the log's append path pays nothing for them.

use interlock_receipts::{
    Bundle, ReceiptSummary, VerifyOptions, VerifyReport, csv_summary, html_report,
    open_leaf_unverified, summarize,
};
use interlock_store::{LeafRow, ReceiptFacts, ReceiptFilter, Store};

use crate::error::LogError;
use crate::export::{ExportFilter, export};

/// Leaves read and indexed per transaction while catching up.
const CATCH_UP_CHUNK: u64 = 2048;

/// The facts of leaf `row`: a leaf that does not open is indexed under the
/// kind `unreadable` (so it is still listed, and the audit names why).
pub fn facts_of(row: &LeafRow) -> ReceiptFacts {
    let summary = open_leaf_unverified(&row.data)
        .ok()
        .map(|opened| summarize(&opened));
    facts_of_summary(row.idx, row.appended_at, summary)
}

/// The facts of leaf `idx` from its summary, for a reader that decoded the
/// leaf already (`None`: it does not open; `appended_at` then dates it).
pub fn facts_of_summary(
    idx: u64,
    appended_at: i64,
    summary: Option<ReceiptSummary>,
) -> ReceiptFacts {
    match summary {
        Some(s) => ReceiptFacts {
            idx,
            at: s.time,
            kind: s.kind,
            plan_id: s.plan_id,
            server: s.server,
            agent: s.agent,
            tool: s.tool,
            verdict: s.verdict,
            shadow: s.shadow,
        },
        None => ReceiptFacts {
            idx,
            at: appended_at,
            kind: UNREADABLE.into(),
            ..ReceiptFacts::default()
        },
    }
}

/// The kind a leaf that does not open is indexed under.
pub const UNREADABLE: &str = "unreadable";

/// Indexes every leaf the store's `receipt_facts` does not hold yet; the
/// number indexed. Cheap when caught up (one `MAX` and one `MAX`).
pub async fn index_receipts(store: &Store) -> Result<u64, LogError> {
    let mut next = store.receipt_facts_next().await?;
    let size = store.log_size().await?;
    let mut done = 0;
    while next < size {
        let to = next.saturating_add(CATCH_UP_CHUNK).min(size);
        let rows = store.leaves(next..to).await?;
        let facts: Vec<ReceiptFacts> = rows.iter().map(facts_of).collect();
        store.insert_receipt_facts(&facts).await?;
        done += facts.len() as u64;
        next = to;
    }
    Ok(done)
}

/// One receipt of a page: the stored leaf, decoded.
#[derive(Clone, Debug)]
pub struct ReceiptEntry {
    pub index: u64,
    /// The stored leaf bytes (a statement, or an older log's signed envelope).
    pub leaf: Vec<u8>,
    /// What it says; `None` for a leaf that does not open.
    pub summary: Option<ReceiptSummary>,
    /// The statement's predicate (`None` as above).
    pub predicate: Option<interlock_canon::Value>,
}

/// A page of the receipts `filter` selects, newest first, after catching
/// the index up: at most `limit`, below index `before`.
pub async fn receipts_page(
    store: &Store,
    filter: &ReceiptFilter,
    before: Option<u64>,
    limit: u32,
) -> Result<Vec<ReceiptEntry>, LogError> {
    index_receipts(store).await?;
    let rows = store.receipts_page(filter, before, limit).await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let opened = open_leaf_unverified(&row.data).ok();
            ReceiptEntry {
                index: row.idx,
                summary: opened.as_ref().map(summarize),
                predicate: opened.map(|o| interlock_canon::Value::Object(o.predicate)),
                leaf: row.data,
            }
        })
        .collect())
}

/// An export's three files, as `interlock receipts export` writes them and
/// `POST /api/v1/receipts/export` returns them.
#[derive(Debug)]
pub struct ExportFiles {
    pub bundle: Bundle,
    /// `bundle.json`.
    pub bundle_json: Vec<u8>,
    /// `report.html`.
    pub report_html: String,
    /// `summary.csv`.
    pub summary_csv: String,
    /// Verifying the bundle as just built (with its own key): a failure
    /// means the stored log does not hold together.
    pub report: VerifyReport,
}

/// Builds the bundle for `filter` and its report and summary, verified as an
/// auditor will verify them: the one export path of the CLI and the API.
pub async fn export_files(store: &Store, filter: &ExportFilter) -> Result<ExportFiles, LogError> {
    let bundle = export(store, filter).await?;
    let bundle_json = bundle.to_bytes();
    let report = interlock_receipts::verify_bundle(&bundle_json, &VerifyOptions::default());
    let readings = interlock_receipts::readings(&bundle, &report);
    Ok(ExportFiles {
        report_html: html_report(&report, &readings, &bundle.trust.log_key),
        summary_csv: csv_summary(&report, &readings),
        bundle,
        bundle_json,
        report,
    })
}

/// Receipt `index` as the text of a C2SP tlog-proof file, checked with the
/// log's key as `interlock receipts verify` will check it: a receipt that
/// does not verify is an error, never a file.
pub async fn tlog_proof_file(store: &Store, index: u64) -> Result<String, LogError> {
    let proof = crate::export::export_tlog_proof(store, index).await?;
    let vkey = store
        .get_meta(crate::log::META_VKEY)
        .await?
        .ok_or_else(|| LogError::Export("the log has no verifier key recorded".into()))?;
    let text = proof.to_string();
    let report = interlock_receipts::verify_tlog_proof(&text, &vkey, None);
    if !report.is_ok() {
        return Err(LogError::MalformedEntry {
            index,
            reason: format!("its tlog-proof does not verify against the log key: {report}"),
        });
    }
    Ok(text)
}

/// What the live log holds to check an alert event against (issue 21,
/// `interlock receipts verify-event`): the leaf at the event's index, its
/// inclusion proof in the tree of the event's checkpoint size, the signed
/// checkpoint of that size and the log key the log records.
#[derive(Debug)]
pub struct EventEvidence {
    pub leaf: Vec<u8>,
    pub proof: Vec<interlock_merkle::Hash>,
    /// The signed checkpoint note of exactly `size` leaves.
    pub checkpoint: String,
    /// The log's recorded verifier key (C2SP vkey), if any.
    pub recorded_vkey: Option<String>,
}

/// The evidence for leaf `index` under the checkpoint of `size` leaves. An
/// error names what the log lacks (no such leaf, no checkpoint of that size:
/// the event was not sent by this log, or the log lost it).
pub async fn event_evidence(
    store: &Store,
    index: u64,
    size: u64,
) -> Result<EventEvidence, LogError> {
    let missing = |m: String| LogError::Export(m);
    let checkpoint = store
        .checkpoints()
        .await?
        .into_iter()
        .find(|c| c.size == size)
        .ok_or_else(|| missing(format!("this log signed no checkpoint of size {size}")))?
        .note;
    let leaf = store
        .leaf(index)
        .await?
        .ok_or_else(|| missing(format!("this log has no leaf {index}")))?
        .data;
    let hashes = store.leaf_hashes().await?;
    let within = usize::try_from(size)
        .ok()
        .filter(|s| *s <= hashes.len())
        .ok_or_else(|| missing(format!("this log has fewer than {size} leaves")))?;
    let proof = interlock_merkle::inclusion_proof(&hashes[..within], index)
        .map_err(|e| missing(e.to_string()))?;
    Ok(EventEvidence {
        leaf,
        proof,
        checkpoint,
        recorded_vkey: store.get_meta(crate::log::META_VKEY).await?,
    })
}
