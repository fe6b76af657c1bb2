//! Offline verification of a bundle: every check named, one line per receipt.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ed25519_dalek::{Signature, VerifyingKey};
use interlock_canon::{self as canon, Value};
use interlock_core::Decision;
use interlock_core::decision::{APPROVAL_PAYLOAD_TYPE, ApprovalStatement, Envelope, KeyId, pae};
use interlock_merkle::{
    CosignatureVerifier, Hash, NoteVerifier, SignedNote, WitnessVerdict, leaf_hash,
    open_checkpoint, witness_report,
};

use crate::bundle::{
    BundleVersion, IndexRange, RawBundle, RawReceipt, decode_hashes, decode_key_hex, resolve,
};
use crate::error::ReceiptError;
use crate::leaf;

/// What the verifier is told besides the bundle.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The log key (C2SP vkey) the auditor trusts; without it, the bundle's own is used.
    pub pinned_log_key: Option<String>,
    /// Worker threads for the receipts (default: the available parallelism).
    pub threads: usize,
    /// Witnesses the auditor trusts (C2SP cosignature vkeys, type 0x04): the
    /// latest checkpoint's cosignature lines are checked against them, and a
    /// cosignature line by a witness not given fails the bundle.
    pub witnesses: Vec<String>,
    /// How many of `witnesses` must have cosigned the latest checkpoint.
    pub min_witnesses: usize,
}

/// What one witness the auditor gave said about the latest checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessLine {
    pub name: String,
    pub verdict: WitnessVerdict,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            pinned_log_key: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            witnesses: Vec::new(),
            min_witnesses: 0,
        }
    }
}

/// The outcome for one receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptLine {
    /// Position in the bundle's `receipts` array.
    pub position: usize,
    /// The log index the bundle claims for it.
    pub index: u64,
    /// `predicate.type`, or empty if the statement could not be read.
    pub kind: String,
    /// The subjects' names, comma-separated.
    pub subjects: String,
    pub result: Result<(), ReceiptError>,
}

/// The verification report: one line per receipt plus bundle-level problems.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub origin: String,
    /// The latest checkpoint's tree size, if it verified.
    pub tree_size: Option<u64>,
    pub problems: Vec<ReceiptError>,
    pub receipts: Vec<ReceiptLine>,
    /// Approved surfaces the bundle carries that hash to their names and
    /// that a verified receipt names (issue 16 item 7).
    pub surfaces: usize,
    /// Each witness given, and what it said of the latest checkpoint.
    pub witnesses: Vec<WitnessLine>,
    /// Cosignature lines of witnesses that were not given (not checked).
    pub other_cosigners: Vec<String>,
}

impl VerifyReport {
    /// No bundle-level problem and every receipt verified.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.receipts.iter().all(|r| r.result.is_ok())
    }

    /// The receipts that failed.
    pub fn failed(&self) -> impl Iterator<Item = &ReceiptLine> {
        self.receipts.iter().filter(|r| r.result.is_err())
    }

    /// Every failure (bundle problems, then receipts), as errors.
    pub fn errors(&self) -> impl Iterator<Item = &ReceiptError> {
        self.problems
            .iter()
            .chain(self.receipts.iter().filter_map(|r| r.result.as_ref().err()))
    }
}

impl fmt::Display for ReceiptLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.kind.is_empty() {
            "?"
        } else {
            &self.kind
        };
        write!(f, "#{} {kind} [{}]: ", self.index, self.subjects)?;
        match &self.result {
            Ok(()) => f.write_str("ok"),
            Err(e) => write!(f, "FAILED: {e}"),
        }
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "log: {}", self.origin)?;
        match self.tree_size {
            Some(n) => writeln!(f, "latest checkpoint: size {n}")?,
            None => writeln!(f, "latest checkpoint: not verified")?,
        }
        for r in &self.receipts {
            writeln!(f, "{r}")?;
        }
        for w in &self.witnesses {
            match &w.verdict {
                WitnessVerdict::Cosigned { timestamp } => writeln!(
                    f,
                    "witness {}: cosigned at {}",
                    w.name,
                    interlock_core::time::rfc3339(i64::try_from(*timestamp).unwrap_or(i64::MAX))
                )?,
                WitnessVerdict::Absent => writeln!(f, "witness {}: no cosignature", w.name)?,
                WitnessVerdict::Invalid { reason } => {
                    writeln!(f, "witness {}: INVALID: {reason}", w.name)?
                }
            }
        }
        for name in &self.other_cosigners {
            writeln!(
                f,
                "witness {name}: cosigned (its key was not given: not checked)"
            )?;
        }
        for p in &self.problems {
            writeln!(f, "bundle: FAILED: {p}")?;
        }
        if self.surfaces > 0 {
            writeln!(
                f,
                "{} approved surfaces, each matching its hash and named by a verified receipt",
                self.surfaces
            )?;
        }
        let failed = self.failed().count();
        writeln!(
            f,
            "{} receipts, {failed} failed, {} bundle problems: {}",
            self.receipts.len(),
            self.problems.len(),
            if self.is_ok() { "OK" } else { "FAILED" }
        )
    }
}

/// What every receipt check needs, shared by the workers.
struct Context {
    log_key: VerifyingKey,
    log_id: KeyId,
    /// The latest checkpoint's size and root, if it verified.
    latest: Option<(u64, Hash)>,
    approvers: BTreeMap<KeyId, VerifyingKey>,
    version: BundleVersion,
    /// v2: the range whose receipts the range proof vouches for together.
    range: Option<IndexRange>,
    /// v2: the shared node table.
    nodes: Vec<Hash>,
}

/// What checking one receipt yields besides its line.
struct Checked {
    line: ReceiptLine,
    registered: Option<Registered>,
    /// Surface hashes the receipt names.
    named: Vec<String>,
    /// A v2 range receipt's leaf hash, for the range's root.
    range_leaf: Option<Hash>,
}

/// An `approver.registered` fact from a verified receipt.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Registered {
    key_id: String,
    identity: String,
}

/// Verifies a bundle offline; see the crate docs for the checks.
pub fn verify_bundle(bytes: &[u8], opts: &VerifyOptions) -> VerifyReport {
    let mut report = VerifyReport::default();
    let raw = match RawBundle::parse(bytes) {
        Ok(raw) => raw,
        Err(e) => {
            report.problems.push(e);
            return report;
        }
    };
    report.origin = raw.origin.clone();
    let problems = &mut report.problems;

    // The log key, and the pin.
    let verifier = match NoteVerifier::from_vkey(&raw.trust.log_key) {
        Ok(v) => v,
        Err(e) => {
            problems.push(ReceiptError::BadLogKey {
                vkey: raw.trust.log_key.clone(),
                reason: e.to_string(),
            });
            return report;
        }
    };
    if let Some(pinned) = &opts.pinned_log_key {
        match NoteVerifier::from_vkey(pinned) {
            Ok(p) if p.name == verifier.name && p.key == verifier.key => {}
            Ok(_) => problems.push(ReceiptError::NotPinned {
                bundle: raw.trust.log_key.clone(),
                pinned: pinned.clone(),
            }),
            Err(e) => problems.push(ReceiptError::BadPinnedKey {
                vkey: pinned.clone(),
                reason: e.to_string(),
            }),
        }
    }

    // Checkpoints.
    let verifiers = [verifier];
    let latest = match open_checkpoint(&raw.checkpoint, &verifiers) {
        Ok(cp) => {
            if cp.origin != raw.origin {
                problems.push(ReceiptError::OriginMismatch {
                    which: "latest".into(),
                    found: cp.origin.clone(),
                    expected: raw.origin.clone(),
                });
            }
            Some((cp.size, cp.root))
        }
        Err(e) => {
            problems.push(ReceiptError::BadCheckpoint(e.to_string()));
            None
        }
    };
    report.tree_size = latest.map(|l| l.0);
    check_witnesses(&raw.checkpoint, opts, &mut report);
    let problems = &mut report.problems;
    for (position, e) in raw.earlier_checkpoints.iter().enumerate() {
        let cp = match open_checkpoint(&e.note, &verifiers) {
            Ok(cp) => cp,
            Err(err) => {
                problems.push(ReceiptError::BadEarlierCheckpoint {
                    position,
                    reason: err.to_string(),
                });
                continue;
            }
        };
        if cp.origin != raw.origin {
            problems.push(ReceiptError::OriginMismatch {
                which: format!("earlier {position}"),
                found: cp.origin.clone(),
                expected: raw.origin.clone(),
            });
        }
        let Some((size, root)) = latest else { continue };
        if cp.size > size {
            problems.push(ReceiptError::OlderPassedOffAsNewer {
                position,
                size: cp.size,
                latest: size,
            });
            continue;
        }
        let consistent = decode_hashes(&e.consistency_proof).and_then(|proof| {
            interlock_merkle::verify_consistency(cp.size, size, &proof, &cp.root, &root)
                .map_err(|err| ReceiptError::MalformedProof(err.to_string()))
        });
        if let Err(err) = consistent {
            let reason = match err {
                ReceiptError::MalformedProof(r) => r,
                other => other.to_string(),
            };
            problems.push(ReceiptError::Inconsistent {
                position,
                size: cp.size,
                latest: size,
                reason,
            });
        }
    }

    // Trusted approver keys.
    let mut approvers = BTreeMap::new();
    let mut trusted = Vec::new();
    for (position, a) in raw.trust.approver_keys.iter().enumerate() {
        let bad = |reason: &str| ReceiptError::MalformedApproverKey {
            position,
            reason: reason.to_owned(),
        };
        let Ok(key_id) = a.key_id.parse::<KeyId>() else {
            problems.push(bad("key_id is not `ed25519:` and 64 lowercase hex digits"));
            continue;
        };
        let Some(key) =
            decode_key_hex(&a.public_key).and_then(|k| VerifyingKey::from_bytes(&k).ok())
        else {
            problems.push(bad(
                "public_key is not an Ed25519 key in 64 lowercase hex digits",
            ));
            continue;
        };
        if KeyId::of(&key) != key_id {
            problems.push(ReceiptError::ApproverKeyIdMismatch {
                key_id: a.key_id.clone(),
                identity: a.identity.clone(),
            });
            continue;
        }
        if approvers.insert(key_id, key).is_some() {
            problems.push(ReceiptError::DuplicateApproverKey(key_id));
        }
        trusted.push((key_id, a.identity.clone()));
    }

    // The shared node table (v2): decoded once, every node referenced.
    let nodes = raw.node_table().unwrap_or_else(|e| {
        problems.push(e);
        Vec::new()
    });
    if !nodes.is_empty() {
        let mut used = vec![false; nodes.len()];
        for r in raw.receipts.iter().filter_map(|r| r.proof.as_deref()) {
            for &i in r {
                if let Some(u) = usize::try_from(i).ok().and_then(|i| used.get_mut(i)) {
                    *u = true;
                }
            }
        }
        if let Some(position) = used.iter().position(|u| !u) {
            problems.push(ReceiptError::UnreferencedNode { position });
        }
    }

    // Receipts, in parallel.
    let range = raw.range.as_ref().map(|r| IndexRange {
        from: r.from,
        to: r.to,
    });
    let ctx = Context {
        log_key: verifiers[0].key,
        log_id: KeyId::of(&verifiers[0].key),
        latest,
        approvers,
        version: raw.version,
        range: range.filter(|_| raw.version == BundleVersion::V2),
        nodes,
    };
    let threads = opts.threads.max(1);
    let chunk = raw.receipts.len().div_ceil(threads).max(1);
    let outcomes: Vec<Checked> = std::thread::scope(|s| {
        let handles: Vec<_> = raw
            .receipts
            .chunks(chunk)
            .enumerate()
            .map(|(c, rs)| {
                let ctx = &ctx;
                s.spawn(move || {
                    rs.iter()
                        .enumerate()
                        .map(|(i, r)| check_receipt(c * chunk + i, r, ctx))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a verification worker panicked"))
            .collect()
    });
    let mut registered = BTreeSet::new();
    let mut range_leaves = Vec::new();
    for c in &outcomes {
        if let Some(h) = c.range_leaf {
            range_leaves.push((c.line.index, h));
        }
    }
    // A v2 range is vouched for as a whole: its leaves, in order, with its
    // proof, must recompute the signed root. When they do not, no receipt of
    // it is vouched for, and each says so.
    let range_ok = match ctx.range {
        Some(g) => {
            let checked = check_range(g, &raw, &range_leaves, ctx.latest);
            if let Err(e) = &checked {
                report.problems.extend(e.clone());
            }
            checked.is_ok()
        }
        None => true,
    };
    let mut named_surfaces: BTreeSet<String> = BTreeSet::new();
    for mut c in outcomes {
        if !range_ok && c.range_leaf.is_some() && c.line.result.is_ok() {
            let g = ctx.range.expect("range leaves come from a range");
            c.line.result = Err(ReceiptError::RangeNotVouched {
                from: g.from,
                to: g.to,
            });
        }
        if c.line.result.is_ok() {
            registered.extend(c.registered);
            named_surfaces.extend(c.named);
        }
        report.receipts.push(c.line);
    }
    report.surfaces = check_surfaces(&raw, &named_surfaces, &mut report.problems);
    let problems = &mut report.problems;

    // Order, duplicates and the claimed range.
    for w in report.receipts.windows(2) {
        let (previous, index) = (w[0].index, w[1].index);
        if index == previous {
            problems.push(ReceiptError::Duplicate { index });
        } else if index < previous {
            problems.push(ReceiptError::Reordered { previous, index });
        }
    }
    if let Some(r) = &raw.range {
        let (from, to) = (r.from, r.to);
        if from > to {
            problems.push(ReceiptError::BadRange { from, to });
        } else {
            let present: BTreeSet<u64> = report.receipts.iter().map(|l| l.index).collect();
            // A v1 range claims the whole bundle; a v2 bundle may carry
            // receipts with proofs of their own beside its range.
            if raw.version == BundleVersion::V1 {
                for &index in present.iter().filter(|&&i| i < from || i > to) {
                    problems.push(ReceiptError::OutsideRange { index, from, to });
                }
            }
            const NAMED: u64 = 20;
            let mut missing = 0u64;
            let mut expected = from;
            // Gaps are counted, not walked: a claimed range may be as wide
            // as 2^53 with a handful of receipts in it.
            for &i in present.range(from..=to).chain(std::iter::once(&(to + 1))) {
                let named = (NAMED - missing.min(NAMED)).min(i - expected);
                for index in expected..expected + named {
                    problems.push(ReceiptError::Dropped { index, from, to });
                }
                missing += i - expected;
                expected = i + 1;
            }
            if missing > NAMED {
                problems.push(ReceiptError::DroppedMore {
                    count: missing - NAMED,
                    from,
                    to,
                });
            }
        }
    }

    // Every trusted approver key is backed by a registration in the log.
    for (key_id, identity) in trusted {
        let reg = Registered {
            key_id: key_id.to_string(),
            identity,
        };
        if !registered.contains(&reg) {
            problems.push(ReceiptError::UnbackedApproverKey {
                key_id,
                identity: reg.identity,
            });
        }
    }
    report
}

/// The surfaces a bundle carries: each in canonical form, hashing (as the
/// gateway hashes a surface) to the name it is carried under, and named by
/// a verified receipt. Returns how many passed.
fn check_surfaces(
    raw: &RawBundle<'_>,
    named: &BTreeSet<String>,
    problems: &mut Vec<ReceiptError>,
) -> usize {
    let mut ok = 0;
    for sf in &raw.surfaces {
        let bytes = sf.surface.get().as_bytes();
        let checked = crate::bundle::check_surface_form(&sf.hash, bytes).and_then(|()| {
            let v = canon::parse_json(bytes).map_err(|e| ReceiptError::MalformedSurface {
                hash: sf.hash.clone(),
                reason: e.to_string(),
            })?;
            let surface = interlock_surface::Surface::from_stored(&v).map_err(|e| {
                ReceiptError::MalformedSurface {
                    hash: sf.hash.clone(),
                    reason: e.to_string(),
                }
            })?;
            let computed = interlock_surface::surface_hash(&surface).to_string();
            if computed != sf.hash {
                return Err(ReceiptError::SurfaceHashMismatch {
                    hash: sf.hash.clone(),
                    computed,
                });
            }
            if !named.contains(&sf.hash) {
                return Err(ReceiptError::UnanchoredSurface {
                    hash: sf.hash.clone(),
                });
            }
            Ok(())
        });
        match checked {
            Ok(()) => ok += 1,
            Err(e) => problems.push(e),
        }
    }
    ok
}

/// The predicate members that name an approved surface by its hash.
const SURFACE_NAMING_MEMBERS: [&str; 2] = ["surface_hash", "baseline_hash"];

/// A receipt's leaf read as a statement. A signed leaf's own signature is
/// checked; a statement leaf is vouched for by its inclusion alone.
pub(crate) fn read_receipt_leaf(
    leaf_bytes: &[u8],
    log_key: &VerifyingKey,
    log_id: &KeyId,
) -> Result<leaf::Statement, ReceiptError> {
    match leaf::LeafFormat::of(leaf_bytes) {
        leaf::LeafFormat::Statement => leaf::read_statement(leaf_bytes),
        leaf::LeafFormat::Signed => {
            let parts = leaf::read_leaf(leaf_bytes)?;
            leaf::check_signature(&parts, log_key, log_id)?;
            leaf::read_statement(&parts.payload)
        }
    }
}

/// The statement's subjects are its facts, and it is the entry at `index`.
pub(crate) fn check_statement(st: &leaf::Statement, index: u64) -> Result<(), ReceiptError> {
    st.check_subjects()?;
    if st.seq != index {
        return Err(ReceiptError::SeqMismatch { index, seq: st.seq });
    }
    Ok(())
}

/// A v2 range's leaves (`(index, leaf hash)` in bundle order) against the
/// latest checkpoint. Dropped, repeated or reordered receipts are named by the
/// order checks; here they only mean the root cannot be recomputed.
fn check_range(
    g: IndexRange,
    raw: &RawBundle<'_>,
    leaves: &[(u64, Hash)],
    latest: Option<(u64, Hash)>,
) -> Result<(), Vec<ReceiptError>> {
    let (from, to) = (g.from, g.to);
    if from > to {
        // Named by the range checks below.
        return Err(Vec::new());
    }
    let Some((size, root)) = latest else {
        return Err(vec![ReceiptError::NoCheckpoint]);
    };
    if to >= size {
        return Err(vec![ReceiptError::RangeBeyondCheckpoint { from, to, size }]);
    }
    let mismatch = |reason: String| {
        vec![ReceiptError::RangeMismatch {
            from,
            to,
            size,
            reason,
        }]
    };
    let in_order = leaves.len() as u64 == to - from + 1
        && leaves
            .iter()
            .zip(from..)
            .all(|((i, _), expected)| *i == expected);
    if !in_order {
        return Err(mismatch(format!(
            "it holds {} receipts, not the {} of its indices in order",
            leaves.len(),
            to - from + 1
        )));
    }
    let proof = raw
        .range
        .as_ref()
        .and_then(|r| r.proof.as_deref())
        .unwrap_or_default();
    let proof = decode_hashes(proof).map_err(|e| mismatch(format!("range proof: {e}")))?;
    let hashes: Vec<Hash> = leaves.iter().map(|(_, h)| *h).collect();
    interlock_merkle::verify_range(from, size, &hashes, &proof, &root)
        .map_err(|e| mismatch(e.to_string()))
}

fn check_receipt(position: usize, r: &RawReceipt<'_>, ctx: &Context) -> Checked {
    let mut line = ReceiptLine {
        position,
        index: r.index,
        kind: String::new(),
        subjects: String::new(),
        result: Ok(()),
    };
    let mut registered = None;
    let mut named = Vec::new();
    let leaf_bytes = r.leaf.get().as_bytes();
    // A v2 range receipt is vouched for by the range's root, whatever else is
    // wrong with it: its hash goes into the range as it stands.
    let in_range = ctx.range.is_some_and(|g| g.contains(r.index));
    let range_leaf = in_range.then(|| leaf_hash(leaf_bytes));
    line.result = (|| {
        let st = read_receipt_leaf(leaf_bytes, &ctx.log_key, &ctx.log_id)?;
        line.kind.clone_from(&st.kind);
        line.subjects = st.subject_summary();
        check_statement(&st, r.index)?;
        let proof = match (ctx.version, &r.inclusion_proof, &r.proof) {
            (BundleVersion::V1, Some(inline), _) => Some(decode_hashes(inline)?),
            (BundleVersion::V2, _, Some(_)) if in_range => {
                return Err(ReceiptError::ProofInsideRange { index: r.index });
            }
            (BundleVersion::V2, _, Some(refs)) => Some(resolve(refs, &ctx.nodes)?),
            (_, _, _) if in_range => None,
            _ => return Err(ReceiptError::MissingProof { index: r.index }),
        };
        let (size, root) = ctx.latest.ok_or(ReceiptError::NoCheckpoint)?;
        if let Some(proof) = proof {
            interlock_merkle::verify_inclusion(
                r.index,
                size,
                &leaf_hash(leaf_bytes),
                &proof,
                &root,
            )
            .map_err(|e| ReceiptError::BadInclusion {
                index: r.index,
                size,
                reason: e.to_string(),
            })?;
        }
        let p = st.predicate();
        named.extend(
            SURFACE_NAMING_MEMBERS
                .iter()
                .filter_map(|k| p.get(*k).and_then(Value::as_str))
                .filter(|h| !h.is_empty())
                .map(str::to_owned),
        );
        match st.kind.as_str() {
            "plan.decision" => check_approval(p, &ctx.approvers)?,
            kind if signed_subject(kind).is_some() => {
                check_signed_subject(kind, p, &ctx.approvers)?;
            }
            "approver.registered" => {
                if let (Some(k), Some(i)) = (
                    p.get("key_id").and_then(Value::as_str),
                    p.get("identity").and_then(Value::as_str),
                ) {
                    registered = Some(Registered {
                        key_id: k.to_owned(),
                        identity: i.to_owned(),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    })();
    Checked {
        line,
        registered,
        named,
        range_leaf,
    }
}

/// The inner approver envelope of a `plan.decision` receipt.
fn check_approval(
    p: &interlock_canon::Map,
    approvers: &BTreeMap<KeyId, VerifyingKey>,
) -> Result<(), ReceiptError> {
    let st = p.get("statement").ok_or(ReceiptError::ApprovalMissing)?;
    let a = verify_embedded(st, approvers)?;
    let recorded = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mismatch = |what: &'static str, signed: String| ReceiptError::ApprovalMismatch {
        what,
        recorded: recorded(what),
        signed,
    };
    if recorded("plan_id") != a.plan_id {
        return Err(mismatch("plan_id", a.plan_id));
    }
    if recorded("plan_hash") != a.plan_hash.to_string() {
        return Err(mismatch("plan_hash", a.plan_hash.to_string()));
    }
    if p.contains_key("decision") && recorded("decision") != a.decision.name() {
        return Err(mismatch("decision", a.decision.name().to_owned()));
    }
    Ok(())
}

/// What a leaf of a signed decision about a subject other than a plan
/// embeds (issue 39 item 9: only plan decisions' signatures were checked):
/// the member holding the DSSE envelope, and the decision its kind implies.
fn signed_subject(kind: &str) -> Option<(&'static str, Decision)> {
    Some(match kind {
        "server.approved" | "tool.approved" | "standing.granted" | "server.removed" => {
            ("envelope", Decision::Approve)
        }
        "server.rejected" | "tool.blocked" => ("envelope", Decision::Reject),
        "tool.envelope_widened" => ("statement", Decision::Approve),
        _ => return None,
    })
}

/// The approver envelope a server, tool, standing-grant, removal or
/// envelope-widening leaf embeds: signed by a trusted approver key, for the
/// decision the leaf's kind records, about the subject the leaf names (and,
/// where the leaf records it, at that hash).
fn check_signed_subject(
    kind: &str,
    p: &interlock_canon::Map,
    approvers: &BTreeMap<KeyId, VerifyingKey>,
) -> Result<(), ReceiptError> {
    let (member, decision) = signed_subject(kind).expect("a signed subject's kind");
    let st = p.get(member).ok_or(ReceiptError::ApprovalMissing)?;
    let a = verify_embedded(st, approvers)?;
    let text = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let (subject, hash) = match kind {
        "server.approved" | "server.rejected" => (
            format!("server:{}", text("server")),
            Some(text("surface_hash")),
        ),
        "tool.approved" | "tool.blocked" => (
            format!("tool:{}/{}", text("server"), text("tool")),
            Some(text("definition_hash")),
        ),
        "server.removed" => (
            format!("server-removal:{}", text("server")),
            Some(text("removal_hash")),
        ),
        "standing.granted" => (format!("standing:{}", text("id")), None),
        _ => (
            format!("envelope:{}/{}", text("server"), text("tool")),
            Some(text("envelope_hash")),
        ),
    };
    let mismatch =
        |what: &'static str, recorded: String, signed: String| ReceiptError::ApprovalMismatch {
            what,
            recorded,
            signed,
        };
    if a.plan_id != subject {
        return Err(mismatch("subject", subject, a.plan_id));
    }
    if let Some(hash) = hash
        && hash != a.plan_hash.to_string()
    {
        return Err(mismatch("subject hash", hash, a.plan_hash.to_string()));
    }
    if a.decision != decision {
        return Err(mismatch(
            "decision",
            decision.name().to_owned(),
            a.decision.name().to_owned(),
        ));
    }
    Ok(())
}

/// A DSSE approver envelope embedded in a leaf: its payload type, a trusted
/// key, a strict signature over the PAE, canonical bytes, and the statement
/// naming the key that signed it.
fn verify_embedded(
    st: &Value,
    approvers: &BTreeMap<KeyId, VerifyingKey>,
) -> Result<ApprovalStatement, ReceiptError> {
    let bad = |e: &dyn fmt::Display| ReceiptError::ApprovalMalformed(e.to_string());
    let env = Envelope::from_json(&canon::to_serde_json(st)).map_err(|e| bad(&e))?;
    if env.payload_type != APPROVAL_PAYLOAD_TYPE {
        return Err(bad(&format!(
            "payloadType `{}` is not `{APPROVAL_PAYLOAD_TYPE}`",
            env.payload_type
        )));
    }
    let key = approvers
        .get(&env.key_id)
        .ok_or(ReceiptError::UntrustedApprover(env.key_id))?;
    key.verify_strict(
        &pae(&env.payload_type, &env.payload),
        &Signature::from_bytes(&env.signature),
    )
    .map_err(|_| ReceiptError::BadApprovalSignature(env.key_id))?;
    let v = canon::parse_json(&env.payload).map_err(|e| bad(&e))?;
    if canon::canonical_bytes(&v) != env.payload {
        return Err(bad(&"the approval payload is not in canonical (JCS) form"));
    }
    let a = ApprovalStatement::from_value(&v).map_err(|e| bad(&e))?;
    if a.approver_key_id != env.key_id {
        return Err(bad(&format!(
            "the approval names key {} but is signed by {}",
            a.approver_key_id, env.key_id
        )));
    }
    Ok(a)
}

/// The latest checkpoint's cosignatures against the witnesses the auditor
/// gave (issue 43): each one's verdict in the report; an invalid cosignature,
/// a cosignature line by a witness not given (when any was given), or fewer
/// than `min_witnesses` valid ones is a problem.
fn check_witnesses(checkpoint: &str, opts: &VerifyOptions, report: &mut VerifyReport) {
    let mut keys = Vec::new();
    for vkey in &opts.witnesses {
        match CosignatureVerifier::from_vkey(vkey) {
            Ok(k) => keys.push(k),
            Err(e) => report.problems.push(ReceiptError::BadWitnessKey {
                vkey: vkey.clone(),
                reason: e.to_string(),
            }),
        }
    }
    let Ok(note) = SignedNote::parse(checkpoint) else {
        // Already reported as a bad checkpoint.
        return;
    };
    let (verdicts, unknown) = witness_report(&note, &keys);
    let mut have = 0;
    for (name, verdict) in verdicts {
        match &verdict {
            WitnessVerdict::Cosigned { .. } => have += 1,
            WitnessVerdict::Invalid { reason } => {
                report.problems.push(ReceiptError::BadCosignature {
                    witness: name.clone(),
                    reason: (*reason).to_owned(),
                })
            }
            WitnessVerdict::Absent => {}
        }
        report.witnesses.push(WitnessLine { name, verdict });
    }
    if !keys.is_empty() {
        for witness in &unknown {
            report.problems.push(ReceiptError::UnknownCosigner {
                witness: witness.clone(),
            });
        }
    }
    report.other_cosigners = unknown;
    if have < opts.min_witnesses {
        report.problems.push(ReceiptError::TooFewWitnesses {
            have,
            need: opts.min_witnesses,
        });
    }
}
