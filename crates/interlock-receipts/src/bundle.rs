//! The export bundle: one JSON object, written as canonical JCS.
//!
//! Version 2 (`interlock.receipts/v2`, what this crate writes) ties receipts
//! to the signed checkpoint in two ways, so a bundle costs what it must:
//!
//! ```text
//! {"bundle_version":"interlock.receipts/v2", "origin":…,
//!  "trust":{"log_key":<vkey>,"approver_keys":[{"key_id","public_key","identity"}]},
//!  "checkpoint":<signed note>, "earlier_checkpoints":[{"note","consistency_proof":[b64…]}],
//!  "nodes":[b64…],                                  the shared node table
//!  "range":{"from","to","proof":[b64…]} (optional),  the contiguous part
//!  "receipts":[{"index","leaf"}                     inside the range: no proof
//!             |{"index","leaf","proof":[n…]}],      outside: node-table references
//!  "surfaces":[{"hash":"sha256:…","surface":<an approved MCP surface>}] (optional)}
//! ```
//!
//! * **The contiguous part.** The receipts of `range` (`from..=to`, all of
//!   them, in order) carry no proof: the verifier recomputes the tree over
//!   their leaves, with `range.proof` — the `O(log n)` roots of the subtrees
//!   outside the range ([`interlock_merkle::range`]) — and compares the root
//!   with the checkpoint's. An unfiltered export is one range, `[0, size)`,
//!   and its range proof is empty.
//! * **The shared node table.** A receipt outside the range (a filtered
//!   export's, or a key registration carried beside an index range) has an
//!   RFC 6962 inclusion proof, written as indices into `nodes`: the audit
//!   paths of nearby receipts share most of their upper nodes, and each node is
//!   written once. `[nodes[i] for i in proof]` is the receipt's own audit path,
//!   so one receipt still verifies on its own. Every node is referenced.
//!
//! Version 1 (`interlock.receipts/v1`, older bundles) still reads and verifies:
//! every receipt carries its audit path inline (`inclusion_proof`: base64
//! hashes), and `range` (no `proof`) only claims which indices are present.
//!
//! `surfaces` (issue 16 item 7, exported on request) holds the surfaces a
//! reviewer approved that the receipts name (`surface_hash`, `baseline_hash`),
//! so a receipt can show the exact tool definitions it was approved under;
//! the verifier recomputes each one's hash and checks a verified receipt names it.
//!
//! Intake is strict: unknown or duplicate fields, fields of the other version,
//! integers beyond 2^53 − 1, lone surrogates, non-canonical base64 or hex, and
//! leaves that are not exactly their JCS form are rejected. The outer object is
//! read with `serde_json` (typed, `deny_unknown_fields`, each leaf kept as its
//! raw bytes) and every leaf on its own, as exactly canonical JCS
//! (`interlock_canon::parse_canonical_json`; the strict intake names what is
//! wrong with one that is not): parsing a 100,000-receipt bundle into one value
//! tree would cost more than the whole of the non-signature checks.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use interlock_canon::{self as canon, MAX_SAFE_INTEGER, Value};
use interlock_core::decision::KeyId;
use interlock_merkle::Hash;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::ReceiptError;
use crate::leaf;

pub use crate::format_names::{BUNDLE_VERSION, BUNDLE_VERSION_V1};

/// Which bundle format: what [`Bundle::to_bytes`] writes, what was read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BundleVersion {
    /// Every receipt with its own inline audit path.
    V1,
    /// A contiguous range recomputed over its leaves, the rest with
    /// references into a shared node table.
    #[default]
    V2,
}

impl BundleVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            BundleVersion::V1 => BUNDLE_VERSION_V1,
            BundleVersion::V2 => BUNDLE_VERSION,
        }
    }
}

/// A trusted approver key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApproverKey {
    pub key_id: KeyId,
    /// The 32-byte Ed25519 public key (hex in the bundle).
    pub public_key: [u8; 32],
    pub identity: String,
}

/// The trust policy: the log key and the approver keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trust {
    /// The log key as a C2SP verifier key (`NoteVerifier::to_vkey`).
    pub log_key: String,
    pub approver_keys: Vec<ApproverKey>,
}

/// An earlier checkpoint with its consistency proof to the latest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EarlierCheckpoint {
    pub note: String,
    pub consistency_proof: Vec<Hash>,
}

/// A contiguous range of log indices (inclusive). In a v2 bundle its receipts
/// carry no proof of their own (see the module docs); in a v1 bundle it only
/// claims which indices are present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexRange {
    pub from: u64,
    pub to: u64,
}

impl IndexRange {
    pub fn contains(&self, index: u64) -> bool {
        self.from <= index && index <= self.to
    }
}

/// One receipt: the leaf's bytes (its JCS statement, or an older log's JCS DSSE
/// envelope) and its inclusion proof — `None` for a receipt of a v2 bundle's
/// range, which the range vouches for as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleReceipt {
    pub index: u64,
    pub leaf: Vec<u8>,
    pub inclusion_proof: Option<Vec<Hash>>,
}

/// An approved surface carried in a bundle: its hash as the receipts name it
/// and its JCS bytes (`{"instructions", "tools", …}`, as the gateway stores it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleSurface {
    pub hash: String,
    pub surface: Vec<u8>,
}

/// An export bundle. Inclusion proofs are held resolved (one audit path per
/// receipt); the v2 node table is how they are written, built by
/// [`Bundle::to_bytes`] and resolved by [`Bundle::parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub version: BundleVersion,
    pub origin: String,
    pub trust: Trust,
    /// The latest signed checkpoint (note text).
    pub checkpoint: String,
    pub earlier_checkpoints: Vec<EarlierCheckpoint>,
    pub range: Option<IndexRange>,
    /// v2: the range proof of `range` against the latest checkpoint (the
    /// subtree roots outside it, left to right). Empty in v1.
    pub range_proof: Vec<Hash>,
    pub receipts: Vec<BundleReceipt>,
    /// Approved surfaces the receipts name, by hash (empty unless asked for).
    pub surfaces: Vec<BundleSurface>,
}

// ---------------------------------------------------------------- raw intake

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBundle<'a> {
    pub bundle_version: String,
    pub origin: String,
    pub trust: RawTrust,
    pub checkpoint: String,
    pub earlier_checkpoints: Vec<RawEarlier<'a>>,
    /// v2 only: the shared node table.
    #[serde(default, borrow)]
    pub nodes: Option<Vec<&'a str>>,
    #[serde(default, borrow)]
    pub range: Option<RawRange<'a>>,
    #[serde(borrow)]
    pub receipts: Vec<RawReceipt<'a>>,
    #[serde(default, borrow)]
    pub surfaces: Vec<RawSurface<'a>>,
    /// Set by [`RawBundle::parse`] from `bundle_version`.
    #[serde(skip)]
    pub version: BundleVersion,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSurface<'a> {
    pub hash: String,
    #[serde(borrow)]
    pub surface: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTrust {
    pub log_key: String,
    pub approver_keys: Vec<RawApprover>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawApprover {
    pub key_id: String,
    pub public_key: String,
    pub identity: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEarlier<'a> {
    pub note: String,
    #[serde(borrow)]
    pub consistency_proof: Vec<&'a str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRange<'a> {
    pub from: u64,
    pub to: u64,
    /// v2 only: the range proof.
    #[serde(default, borrow)]
    pub proof: Option<Vec<&'a str>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReceipt<'a> {
    pub index: u64,
    #[serde(borrow)]
    pub leaf: &'a RawValue,
    /// v1: the audit path, inline.
    #[serde(default, borrow)]
    pub inclusion_proof: Option<Vec<&'a str>>,
    /// v2, outside the range: the audit path as node-table references.
    #[serde(default)]
    pub proof: Option<Vec<u64>>,
}

impl<'a> RawBundle<'a> {
    /// The typed outer parse plus the checks serde cannot express: safe
    /// integers, and exactly the fields of the bundle's version.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<RawBundle<'a>, ReceiptError> {
        let mut raw: RawBundle<'a> = serde_json::from_slice(bytes)
            .map_err(|e| ReceiptError::MalformedBundle(e.to_string()))?;
        let malformed = |m: String| Err(ReceiptError::MalformedBundle(m));
        let max = MAX_SAFE_INTEGER as u64;
        if let Some(r) = &raw.range {
            for n in [r.from, r.to] {
                if n > max {
                    return malformed(format!("range bound {n} is beyond 2^53 - 1"));
                }
            }
        }
        if let Some(r) = raw.receipts.iter().find(|r| r.index > max) {
            return malformed(format!("receipt index {} is beyond 2^53 - 1", r.index));
        }
        raw.version = match raw.bundle_version.as_str() {
            BUNDLE_VERSION => BundleVersion::V2,
            BUNDLE_VERSION_V1 => BundleVersion::V1,
            _ => return Err(ReceiptError::UnsupportedVersion(raw.bundle_version)),
        };
        let range_proof = raw.range.as_ref().map(|r| r.proof.is_some());
        match raw.version {
            BundleVersion::V1 => {
                if raw.nodes.is_some() || range_proof == Some(true) {
                    return malformed(format!(
                        "a {BUNDLE_VERSION_V1} bundle has no `nodes` and no range `proof`"
                    ));
                }
                if let Some(r) = raw
                    .receipts
                    .iter()
                    .find(|r| r.inclusion_proof.is_none() || r.proof.is_some())
                {
                    return malformed(format!(
                        "receipt {} of a {BUNDLE_VERSION_V1} bundle must carry `inclusion_proof` (and no `proof`)",
                        r.index
                    ));
                }
            }
            BundleVersion::V2 => {
                if raw.nodes.is_none() || range_proof == Some(false) {
                    return malformed(format!(
                        "a {BUNDLE_VERSION} bundle has `nodes`, and a `proof` in its `range`"
                    ));
                }
                if let Some(r) = raw.receipts.iter().find(|r| r.inclusion_proof.is_some()) {
                    return malformed(format!(
                        "receipt {} of a {BUNDLE_VERSION} bundle carries an inline `inclusion_proof`",
                        r.index
                    ));
                }
            }
        }
        Ok(raw)
    }

    /// The decoded node table (empty for v1).
    pub(crate) fn node_table(&self) -> Result<Vec<Hash>, ReceiptError> {
        decode_hashes(self.nodes.as_deref().unwrap_or_default()).map_err(|e| match e {
            ReceiptError::MalformedProof(m) => {
                ReceiptError::MalformedBundle(format!("the node table's {m}"))
            }
            other => other,
        })
    }
}

/// A receipt's audit path from its node-table references.
pub(crate) fn resolve(refs: &[u64], nodes: &[Hash]) -> Result<Vec<Hash>, ReceiptError> {
    refs.iter()
        .map(|&r| {
            usize::try_from(r)
                .ok()
                .and_then(|i| nodes.get(i))
                .copied()
                .ok_or(ReceiptError::BadNodeReference {
                    reference: r,
                    nodes: nodes.len(),
                })
        })
        .collect()
}

/// Decodes standard base64 (canonical: padded, no stray bits) into a 32-byte hash.
pub(crate) fn decode_hashes(items: &[&str]) -> Result<Vec<Hash>, ReceiptError> {
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            B64.decode(s)
                .ok()
                .and_then(|h| Hash::try_from(h.as_slice()).ok())
                .ok_or_else(|| {
                    ReceiptError::MalformedProof(format!(
                        "proof element {i} is not a 32-byte hash in standard base64"
                    ))
                })
        })
        .collect()
}

/// Decodes 64 lowercase hex digits.
pub(crate) fn decode_key_hex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || s.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).ok()?;
    Some(out)
}

impl Bundle {
    /// Parses a bundle strictly (see the module docs), either version. Does
    /// not verify anything beyond the format (a node reference must exist);
    /// see [`crate::verify_bundle`].
    pub fn parse(bytes: &[u8]) -> Result<Bundle, ReceiptError> {
        let raw = RawBundle::parse(bytes)?;
        let mut approver_keys = Vec::with_capacity(raw.trust.approver_keys.len());
        for (position, a) in raw.trust.approver_keys.iter().enumerate() {
            let bad = |reason: &str| ReceiptError::MalformedApproverKey {
                position,
                reason: reason.to_owned(),
            };
            approver_keys.push(ApproverKey {
                key_id: a.key_id.parse().map_err(|_| bad("bad key_id"))?,
                public_key: decode_key_hex(&a.public_key)
                    .ok_or_else(|| bad("public_key is not 64 lowercase hex digits"))?,
                identity: a.identity.clone(),
            });
        }
        let earlier_checkpoints = raw
            .earlier_checkpoints
            .iter()
            .map(|e| {
                Ok(EarlierCheckpoint {
                    note: e.note.clone(),
                    consistency_proof: decode_hashes(&e.consistency_proof)?,
                })
            })
            .collect::<Result<_, ReceiptError>>()?;
        let nodes = raw.node_table()?;
        let receipts = raw
            .receipts
            .iter()
            .map(|r| {
                let leaf = r.leaf.get().as_bytes();
                leaf::check_form(leaf)?;
                let inclusion_proof = match (&r.inclusion_proof, &r.proof) {
                    (Some(inline), _) => Some(decode_hashes(inline)?),
                    (None, Some(refs)) => Some(resolve(refs, &nodes)?),
                    (None, None) => None,
                };
                Ok(BundleReceipt {
                    index: r.index,
                    leaf: leaf.to_vec(),
                    inclusion_proof,
                })
            })
            .collect::<Result<_, ReceiptError>>()?;
        let surfaces = raw
            .surfaces
            .iter()
            .map(|r| {
                let bytes = r.surface.get().as_bytes();
                check_surface_form(&r.hash, bytes)?;
                Ok(BundleSurface {
                    hash: r.hash.clone(),
                    surface: bytes.to_vec(),
                })
            })
            .collect::<Result<_, ReceiptError>>()?;
        let range_proof = match raw.range.as_ref().and_then(|r| r.proof.as_deref()) {
            Some(p) => decode_hashes(p)?,
            None => Vec::new(),
        };
        Ok(Bundle {
            version: raw.version,
            origin: raw.origin,
            trust: Trust {
                log_key: raw.trust.log_key,
                approver_keys,
            },
            checkpoint: raw.checkpoint,
            earlier_checkpoints,
            range: raw.range.map(|r| IndexRange {
                from: r.from,
                to: r.to,
            }),
            range_proof,
            receipts,
            surfaces,
        })
    }

    /// The shared node table [`to_bytes`](Self::to_bytes) writes for a v2
    /// bundle: every distinct node of the receipts' audit paths, in order of
    /// first use; and each receipt's references into it (`None` for a receipt
    /// without a proof).
    pub fn node_table(&self) -> (Vec<Hash>, Vec<Option<Vec<u64>>>) {
        let mut table = Vec::new();
        let mut position: std::collections::HashMap<Hash, u64> = std::collections::HashMap::new();
        let refs = self
            .receipts
            .iter()
            .map(|r| {
                r.inclusion_proof.as_ref().map(|path| {
                    path.iter()
                        .map(|h| {
                            *position.entry(*h).or_insert_with(|| {
                                table.push(*h);
                                table.len() as u64 - 1
                            })
                        })
                        .collect()
                })
            })
            .collect();
        (table, refs)
    }

    /// The bundle as canonical JCS bytes (keys sorted, no white space), in
    /// its [`version`](Self::version)'s format; leaves are spliced in as their
    /// own JCS bytes. A v1 bundle needs every receipt's proof (a receipt
    /// without one is written with an empty path, which will not verify).
    pub fn to_bytes(&self) -> Vec<u8> {
        let v2 = self.version == BundleVersion::V2;
        let per_receipt = self.receipts.first().map_or(0, |r| {
            r.leaf.len() + r.inclusion_proof.as_ref().map_or(0, |p| p.len() * 47) + 64
        });
        let mut out = Vec::with_capacity(4096 + per_receipt * self.receipts.len() * 11 / 10);
        let s = |out: &mut Vec<u8>, v: &str| {
            out.extend_from_slice(&canon::canonical_bytes(&Value::String(v.to_owned())))
        };
        let hashes = |out: &mut Vec<u8>, hs: &[Hash]| {
            out.push(b'[');
            for (i, h) in hs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(B64.encode(h).as_bytes());
                out.push(b'"');
            }
            out.push(b']');
        };
        let (nodes, refs) = if v2 {
            self.node_table()
        } else {
            (Vec::new(), Vec::new())
        };
        out.extend_from_slice(b"{\"bundle_version\":");
        s(&mut out, self.version.as_str());
        out.extend_from_slice(b",\"checkpoint\":");
        s(&mut out, &self.checkpoint);
        out.extend_from_slice(b",\"earlier_checkpoints\":[");
        for (i, e) in self.earlier_checkpoints.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"consistency_proof\":");
            hashes(&mut out, &e.consistency_proof);
            out.extend_from_slice(b",\"note\":");
            s(&mut out, &e.note);
            out.push(b'}');
        }
        out.push(b']');
        if v2 {
            out.extend_from_slice(b",\"nodes\":");
            hashes(&mut out, &nodes);
        }
        out.extend_from_slice(b",\"origin\":");
        s(&mut out, &self.origin);
        if let Some(r) = self.range {
            out.extend_from_slice(format!(",\"range\":{{\"from\":{}", r.from).as_bytes());
            if v2 {
                out.extend_from_slice(b",\"proof\":");
                hashes(&mut out, &self.range_proof);
            }
            out.extend_from_slice(format!(",\"to\":{}}}", r.to).as_bytes());
        }
        out.extend_from_slice(b",\"receipts\":[");
        for (i, r) in self.receipts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if v2 {
                out.extend_from_slice(format!("{{\"index\":{},\"leaf\":", r.index).as_bytes());
                out.extend_from_slice(&r.leaf);
                if let Some(refs) = &refs[i] {
                    out.extend_from_slice(b",\"proof\":[");
                    for (j, n) in refs.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(n.to_string().as_bytes());
                    }
                    out.push(b']');
                }
            } else {
                out.extend_from_slice(b"{\"inclusion_proof\":");
                hashes(&mut out, r.inclusion_proof.as_deref().unwrap_or_default());
                out.extend_from_slice(format!(",\"index\":{},\"leaf\":", r.index).as_bytes());
                out.extend_from_slice(&r.leaf);
            }
            out.push(b'}');
        }
        out.push(b']');
        if !self.surfaces.is_empty() {
            out.extend_from_slice(b",\"surfaces\":[");
            for (i, sf) in self.surfaces.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"hash\":");
                s(&mut out, &sf.hash);
                out.extend_from_slice(b",\"surface\":");
                out.extend_from_slice(&sf.surface);
                out.push(b'}');
            }
            out.push(b']');
        }
        out.extend_from_slice(b",\"trust\":{\"approver_keys\":[");
        for (i, a) in self.trust.approver_keys.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"identity\":");
            s(&mut out, &a.identity);
            out.extend_from_slice(b",\"key_id\":");
            s(&mut out, &a.key_id.to_string());
            out.extend_from_slice(b",\"public_key\":");
            s(&mut out, &hex::encode(a.public_key));
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"log_key\":");
        s(&mut out, &self.trust.log_key);
        out.extend_from_slice(b"}}");
        out
    }
}

/// Assembles a [`Bundle`] (the exporter's side).
#[derive(Clone, Debug)]
pub struct BundleBuilder {
    bundle: Bundle,
}

impl BundleBuilder {
    /// `log_vkey` is the log key as `NoteVerifier::to_vkey`; `latest_checkpoint_note`
    /// the latest signed checkpoint, against which every proof is made.
    pub fn new(
        origin: impl Into<String>,
        log_vkey: impl Into<String>,
        approver_keys: Vec<ApproverKey>,
        latest_checkpoint_note: impl Into<String>,
    ) -> BundleBuilder {
        BundleBuilder {
            bundle: Bundle {
                version: BundleVersion::default(),
                origin: origin.into(),
                trust: Trust {
                    log_key: log_vkey.into(),
                    approver_keys,
                },
                checkpoint: latest_checkpoint_note.into(),
                earlier_checkpoints: Vec::new(),
                range: None,
                range_proof: Vec::new(),
                receipts: Vec::new(),
                surfaces: Vec::new(),
            },
        }
    }

    /// Writes the older format instead (for tests and comparisons: what
    /// bundles exported before v2 look like).
    pub fn version(mut self, version: BundleVersion) -> BundleBuilder {
        self.bundle.version = version;
        self
    }

    /// An earlier checkpoint and its consistency proof to the latest.
    pub fn earlier_checkpoint(
        mut self,
        note: impl Into<String>,
        consistency_proof: Vec<Hash>,
    ) -> BundleBuilder {
        self.bundle.earlier_checkpoints.push(EarlierCheckpoint {
            note: note.into(),
            consistency_proof,
        });
        self
    }

    /// A receipt: the leaf bytes as stored in the log and the inclusion proof of
    /// `index` in the latest checkpoint's tree.
    pub fn receipt(mut self, index: u64, leaf_bytes: Vec<u8>, inclusion_proof: Vec<Hash>) -> Self {
        self.bundle.receipts.push(BundleReceipt {
            index,
            leaf: leaf_bytes,
            inclusion_proof: Some(inclusion_proof),
        });
        self
    }

    /// A receipt of the range ([`range`](Self::range)): its leaf only, vouched
    /// for by the range as a whole.
    pub fn range_receipt(mut self, index: u64, leaf_bytes: Vec<u8>) -> Self {
        self.bundle.receipts.push(BundleReceipt {
            index,
            leaf: leaf_bytes,
            inclusion_proof: None,
        });
        self
    }

    /// An approved surface (its hash and its stored JCS bytes), to be
    /// carried with the receipts that name it.
    pub fn surface(mut self, hash: impl Into<String>, surface_jcs: Vec<u8>) -> Self {
        self.bundle.surfaces.push(BundleSurface {
            hash: hash.into(),
            surface: surface_jcs,
        });
        self
    }

    /// The bundle holds every receipt of `from..=to` (so a dropped one is
    /// detected). In v2 those receipts are added with
    /// [`range_receipt`](Self::range_receipt) and `range_proof` is the range
    /// proof of `[from, to + 1)` against the latest checkpoint
    /// (`Tree::range_proof`); in v1 it must be empty and every receipt has
    /// its own proof.
    pub fn range(mut self, from: u64, to: u64, range_proof: Vec<Hash>) -> Self {
        self.bundle.range = Some(IndexRange { from, to });
        self.bundle.range_proof = range_proof;
        self
    }

    /// Sorts the receipts by index and checks every leaf is well-formed and
    /// canonical (a statement, or an older log's envelope), every index a
    /// safe integer, and that exactly the receipts of a v2 range, and all of
    /// a v1 bundle's, go without a proof of their own.
    pub fn build(mut self) -> Result<Bundle, ReceiptError> {
        let b = &mut self.bundle;
        b.receipts.sort_by_key(|r| r.index);
        let malformed = |m: String| Err(ReceiptError::MalformedBundle(m));
        for r in &b.receipts {
            if r.index > MAX_SAFE_INTEGER as u64 {
                return malformed(format!("receipt index {} is beyond 2^53 - 1", r.index));
            }
            let in_range = b.range.is_some_and(|g| g.contains(r.index));
            let wants_proof = b.version == BundleVersion::V1 || !in_range;
            if wants_proof != r.inclusion_proof.is_some() {
                return malformed(format!(
                    "receipt {} {} a proof of its own in a {} bundle",
                    r.index,
                    if wants_proof {
                        "needs"
                    } else {
                        "inside the range carries"
                    },
                    b.version.as_str()
                ));
            }
            leaf::check_form(&r.leaf)?;
        }
        if b.version == BundleVersion::V1 && !b.range_proof.is_empty() {
            return malformed(format!("a {BUNDLE_VERSION_V1} range carries no proof"));
        }
        b.surfaces.sort_by(|a, b| a.hash.cmp(&b.hash));
        b.surfaces.dedup_by(|a, b| a.hash == b.hash);
        for sf in &b.surfaces {
            check_surface_form(&sf.hash, &sf.surface)?;
        }
        Ok(self.bundle)
    }
}

/// A carried surface must be an object in canonical (JCS) form, so its bytes
/// are the ones the gateway hashed pieces of.
pub(crate) fn check_surface_form(hash: &str, bytes: &[u8]) -> Result<(), ReceiptError> {
    let bad = |reason: String| ReceiptError::MalformedSurface {
        hash: hash.to_owned(),
        reason,
    };
    let v = canon::parse_json(bytes).map_err(|e| bad(e.to_string()))?;
    if v.as_object().is_none() {
        return Err(bad("not an object".into()));
    }
    if canon::canonical_bytes(&v) != bytes {
        return Err(bad("not in canonical (JCS) form".into()));
    }
    Ok(())
}
