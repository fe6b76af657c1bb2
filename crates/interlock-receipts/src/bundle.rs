//! The export bundle: one JSON object, written as canonical JCS.
//!
//! ```text
//! {"bundle_version":"interlock.receipts/v1", "origin":…,
//!  "trust":{"log_key":<vkey>,"approver_keys":[{"key_id","public_key","identity"}]},
//!  "checkpoint":<signed note>, "earlier_checkpoints":[{"note","consistency_proof":[b64…]}],
//!  "range":{"from","to"} (optional),
//!  "receipts":[{"index","leaf":<statement object (or an older log's DSSE envelope)>,"inclusion_proof":[b64…]}],
//!  "surfaces":[{"hash":"sha256:…","surface":<an approved MCP surface>}] (optional)}
//! ```
//!
//! `surfaces` (issue 16 item 7, exported on request) holds the surfaces a
//! reviewer approved that the receipts name (`surface_hash`, `baseline_hash`),
//! so a receipt can show the exact tool definitions it was approved under;
//! the verifier recomputes each one's hash and checks a verified receipt names it.
//!
//! Intake is strict: unknown or duplicate fields, integers beyond 2^53 − 1, lone
//! surrogates, non-canonical base64 or hex, and leaves that are not exactly their
//! JCS form are rejected. The outer object is read with `serde_json` (typed,
//! `deny_unknown_fields`, each leaf kept as its raw bytes) and every leaf with
//! `interlock_canon`'s strict intake: parsing a 100,000-receipt bundle into one
//! value tree would cost more than the whole of the non-signature checks.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use interlock_canon::{self as canon, MAX_SAFE_INTEGER, Value};
use interlock_core::decision::KeyId;
use interlock_merkle::Hash;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::ReceiptError;
use crate::leaf;

/// The bundle format this crate writes and reads.
pub const BUNDLE_VERSION: &str = "interlock.receipts/v1";

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

/// A contiguous range of log indices (inclusive) the exporter claims to cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexRange {
    pub from: u64,
    pub to: u64,
}

/// One receipt: the leaf's bytes (its JCS statement, or an older log's JCS DSSE
/// envelope) and its inclusion proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleReceipt {
    pub index: u64,
    pub leaf: Vec<u8>,
    pub inclusion_proof: Vec<Hash>,
}

/// An approved surface carried in a bundle: its hash as the receipts name it
/// and its JCS bytes (`{"instructions", "tools", …}`, as the gateway stores it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleSurface {
    pub hash: String,
    pub surface: Vec<u8>,
}

/// An export bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub origin: String,
    pub trust: Trust,
    /// The latest signed checkpoint (note text).
    pub checkpoint: String,
    pub earlier_checkpoints: Vec<EarlierCheckpoint>,
    pub range: Option<IndexRange>,
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
    #[serde(default)]
    pub range: Option<RawRange>,
    #[serde(borrow)]
    pub receipts: Vec<RawReceipt<'a>>,
    #[serde(default, borrow)]
    pub surfaces: Vec<RawSurface<'a>>,
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
pub(crate) struct RawRange {
    pub from: u64,
    pub to: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReceipt<'a> {
    pub index: u64,
    #[serde(borrow)]
    pub leaf: &'a RawValue,
    #[serde(borrow)]
    pub inclusion_proof: Vec<&'a str>,
}

impl<'a> RawBundle<'a> {
    /// The typed outer parse plus the checks serde cannot express.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<RawBundle<'a>, ReceiptError> {
        let raw: RawBundle<'a> = serde_json::from_slice(bytes)
            .map_err(|e| ReceiptError::MalformedBundle(e.to_string()))?;
        let too_big = |what: &str, n: u64| {
            ReceiptError::MalformedBundle(format!("{what} {n} is beyond 2^53 - 1"))
        };
        let max = MAX_SAFE_INTEGER as u64;
        if let Some(r) = &raw.range {
            for n in [r.from, r.to] {
                if n > max {
                    return Err(too_big("range bound", n));
                }
            }
        }
        if let Some(r) = raw.receipts.iter().find(|r| r.index > max) {
            return Err(too_big("receipt index", r.index));
        }
        if raw.bundle_version != BUNDLE_VERSION {
            return Err(ReceiptError::UnsupportedVersion(raw.bundle_version));
        }
        Ok(raw)
    }
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
    /// Parses a bundle strictly (see the module docs). Does not verify anything
    /// beyond the format; see [`crate::verify_bundle`].
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
        let receipts = raw
            .receipts
            .iter()
            .map(|r| {
                let leaf = r.leaf.get().as_bytes();
                leaf::check_form(leaf)?;
                Ok(BundleReceipt {
                    index: r.index,
                    leaf: leaf.to_vec(),
                    inclusion_proof: decode_hashes(&r.inclusion_proof)?,
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
        Ok(Bundle {
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
            receipts,
            surfaces,
        })
    }

    /// The bundle as canonical JCS bytes (keys sorted, no white space); leaves
    /// are spliced in as their own JCS bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let per_receipt = self
            .receipts
            .first()
            .map_or(0, |r| r.leaf.len() + r.inclusion_proof.len() * 47 + 64);
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
        out.extend_from_slice(b"{\"bundle_version\":");
        s(&mut out, BUNDLE_VERSION);
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
        out.extend_from_slice(b"],\"origin\":");
        s(&mut out, &self.origin);
        if let Some(r) = self.range {
            out.extend_from_slice(
                format!(",\"range\":{{\"from\":{},\"to\":{}}}", r.from, r.to).as_bytes(),
            );
        }
        out.extend_from_slice(b",\"receipts\":[");
        for (i, r) in self.receipts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"inclusion_proof\":");
            hashes(&mut out, &r.inclusion_proof);
            out.extend_from_slice(format!(",\"index\":{},\"leaf\":", r.index).as_bytes());
            out.extend_from_slice(&r.leaf);
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
                origin: origin.into(),
                trust: Trust {
                    log_key: log_vkey.into(),
                    approver_keys,
                },
                checkpoint: latest_checkpoint_note.into(),
                earlier_checkpoints: Vec::new(),
                range: None,
                receipts: Vec::new(),
                surfaces: Vec::new(),
            },
        }
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
            inclusion_proof,
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

    /// Claims the bundle holds every receipt of `from..=to` (so a dropped one is detected).
    pub fn range(mut self, from: u64, to: u64) -> Self {
        self.bundle.range = Some(IndexRange { from, to });
        self
    }

    /// Sorts the receipts by index and checks every leaf is well-formed and
    /// canonical (a statement, or an older log's envelope) and every index a
    /// safe integer.
    pub fn build(mut self) -> Result<Bundle, ReceiptError> {
        self.bundle.receipts.sort_by_key(|r| r.index);
        for r in &self.bundle.receipts {
            if r.index > MAX_SAFE_INTEGER as u64 {
                return Err(ReceiptError::MalformedBundle(format!(
                    "receipt index {} is beyond 2^53 - 1",
                    r.index
                )));
            }
            leaf::check_form(&r.leaf)?;
        }
        self.bundle.surfaces.sort_by(|a, b| a.hash.cmp(&b.hash));
        self.bundle.surfaces.dedup_by(|a, b| a.hash == b.hash);
        for sf in &self.bundle.surfaces {
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
