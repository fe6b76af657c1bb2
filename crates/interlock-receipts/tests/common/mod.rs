//! Shared fixtures: real keys, real sealed leaves, a real tree and checkpoints.
#![allow(dead_code)]

use ed25519_dalek::{SigningKey, VerifyingKey};
use interlock_canon::{Digest, Map, Number, Value, from_serde_json};
use interlock_core::decision::{Decision, KeyId, Terms, sign_decision};
use interlock_merkle::{Checkpoint, NoteVerifier, Tree, leaf_hash, sign_checkpoint};
use interlock_receipts::{
    ApproverKey, Bundle, BundleBuilder, BundleVersion, CanonicalPredicate, seal, seal_statement,
};

pub const ORIGIN: &str = "interlock.test/log";
pub const IDENTITY: &str = "alice@example.com";

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

pub fn vkey(name: &str, k: &VerifyingKey) -> String {
    NoteVerifier::new(name, *k).unwrap().to_vkey()
}

pub fn approver_entry(k: &VerifyingKey, identity: &str) -> ApproverKey {
    ApproverKey {
        key_id: KeyId::of(k),
        public_key: k.to_bytes(),
        identity: identity.into(),
    }
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn n(v: i64) -> Value {
    Value::Number(Number::from_i64(v).unwrap())
}

/// The predicate of entry `seq`: entry 0 registers the approver; then a mix of kinds,
/// with a real approver envelope every `decision_every` entries.
pub fn predicate(seq: u64, approver: &SigningKey, decision_every: u64) -> Map {
    let mut p = Map::new();
    p.insert("seq".into(), n(seq as i64));
    p.insert("time".into(), n(1_760_000_000 + seq as i64));
    let plan_id = format!("p{}", seq / 5);
    let plan_hash = Digest::of_bytes(plan_id.as_bytes());
    let kind = if seq == 0 {
        let vk = approver.verifying_key();
        p.insert("key_id".into(), s(&KeyId::of(&vk).to_string()));
        p.insert("identity".into(), s(IDENTITY));
        p.insert("public_key".into(), s(&hex::encode(vk.to_bytes())));
        "approver.registered"
    } else if seq.is_multiple_of(decision_every) {
        let (_, env) = sign_decision(
            approver,
            &Terms {
                audience: "interlock.test/log",
                subject: &plan_id,
                subject_hash: plan_hash,
                decision: Decision::Approve,
                reason: "looks right",
                issued_at: 1_760_000_000,
                not_before: 1_760_000_000,
                expires_at: 1_760_000_000 + 3600,
                nonce: [seq as u8; 16],
                policy_digest: Digest::of_bytes(b"policy"),
            },
        )
        .unwrap();
        p.insert("plan_id".into(), s(&plan_id));
        p.insert("plan_hash".into(), s(&plan_hash.to_string()));
        p.insert("decision".into(), s("approve"));
        p.insert("statement".into(), from_serde_json(&env.to_json()).unwrap());
        "plan.decision"
    } else {
        match seq % 4 {
            0 => {
                p.insert("plan_id".into(), s(&plan_id));
                p.insert("plan_hash".into(), s(&plan_hash.to_string()));
                "plan.proposed"
            }
            1 => {
                p.insert("plan_id".into(), s(&plan_id));
                p.insert("plan_hash".into(), s(&plan_hash.to_string()));
                p.insert("from".into(), s("approved"));
                p.insert("to".into(), s("executing"));
                "plan.transition"
            }
            2 => {
                p.insert("plan_id".into(), s(&plan_id));
                p.insert("stage".into(), s("migrate"));
                p.insert("ok".into(), Value::Bool(true));
                "stage.probe"
            }
            _ => {
                p.insert("plan_id".into(), s(&plan_id));
                p.insert("plan_hash".into(), s(&plan_hash.to_string()));
                p.insert("stage".into(), s("migrate"));
                "stage.dispatch"
            }
        }
    };
    p.insert("type".into(), s(kind));
    p
}

/// A signed leaf (the format of logs written before statement leaves).
pub fn seal_with(p: Map, k: &SigningKey) -> Vec<u8> {
    seal(p, &KeyId::of(&k.verifying_key()), |m| {
        Ok(ed25519_dalek::Signer::sign(k, m))
    })
    .unwrap()
}

/// A statement leaf, as the log writes them.
pub fn statement_leaf(p: Map) -> Vec<u8> {
    seal_statement(&CanonicalPredicate::new(p)).unwrap()
}

/// Which leaf format a test log is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Statement,
    Signed,
}

/// A log of `n` sealed leaves and its tree.
pub struct Log {
    pub key: SigningKey,
    pub approver: SigningKey,
    pub origin: String,
    pub leaves: Vec<Vec<u8>>,
    pub tree: Tree,
}

impl Log {
    pub fn new(n: u64, decision_every: u64) -> Log {
        Log::with_keys(n, decision_every, key(1), key(2), ORIGIN)
    }

    /// A log of an older format: every leaf a signed DSSE envelope.
    pub fn signed(n: u64, decision_every: u64) -> Log {
        Log::with_format(n, decision_every, key(1), key(2), ORIGIN, Format::Signed)
    }

    pub fn with_keys(
        n: u64,
        decision_every: u64,
        key: SigningKey,
        approver: SigningKey,
        origin: &str,
    ) -> Log {
        Log::with_format(n, decision_every, key, approver, origin, Format::Statement)
    }

    pub fn with_format(
        n: u64,
        decision_every: u64,
        key: SigningKey,
        approver: SigningKey,
        origin: &str,
        format: Format,
    ) -> Log {
        let leaves: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let p = predicate(i, &approver, decision_every);
                match format {
                    Format::Statement => statement_leaf(p),
                    Format::Signed => seal_with(p, &key),
                }
            })
            .collect();
        let hashes: Vec<_> = leaves.iter().map(|l| leaf_hash(l)).collect();
        Log {
            key,
            approver,
            origin: origin.into(),
            tree: Tree::from_leaves(&hashes),
            leaves,
        }
    }

    /// A log of exactly these predicates (statement leaves), its first the
    /// approver's registration ([`predicate`] of 0).
    pub fn of_predicates(rest: Vec<Map>) -> Log {
        let (key, approver) = (key(1), key(2));
        let mut leaves = vec![statement_leaf(predicate(0, &approver, 1))];
        leaves.extend(rest.into_iter().map(statement_leaf));
        let hashes: Vec<_> = leaves.iter().map(|l| leaf_hash(l)).collect();
        Log {
            key,
            approver,
            origin: ORIGIN.into(),
            tree: Tree::from_leaves(&hashes),
            leaves,
        }
    }

    pub fn vkey(&self) -> String {
        vkey(&self.origin, &self.key.verifying_key())
    }

    pub fn checkpoint(&self, size: u64) -> String {
        let cp = Checkpoint {
            origin: self.origin.clone(),
            size,
            root: self.tree.root_at(size).unwrap(),
            extensions: vec![],
        };
        sign_checkpoint(&cp, &self.origin, &self.key, &self.key.verifying_key())
            .unwrap()
            .to_string()
    }

    /// A bundle of `indices` against the full tree, with an earlier
    /// checkpoint: the receipts of `range` (which `indices` must cover) by
    /// the range proof, the others with inclusion proofs (the node table).
    pub fn bundle(
        &self,
        indices: &[u64],
        earlier: Option<u64>,
        range: Option<(u64, u64)>,
    ) -> Bundle {
        self.bundle_of(BundleVersion::V2, indices, earlier, range)
    }

    /// The same, in the older format: every receipt with its inline proof,
    /// the range a claim only.
    pub fn bundle_v1(
        &self,
        indices: &[u64],
        earlier: Option<u64>,
        range: Option<(u64, u64)>,
    ) -> Bundle {
        self.bundle_of(BundleVersion::V1, indices, earlier, range)
    }

    fn bundle_of(
        &self,
        version: BundleVersion,
        indices: &[u64],
        earlier: Option<u64>,
        range: Option<(u64, u64)>,
    ) -> Bundle {
        let size = self.tree.len();
        let mut b = BundleBuilder::new(
            self.origin.clone(),
            self.vkey(),
            vec![approver_entry(&self.approver.verifying_key(), IDENTITY)],
            self.checkpoint(size),
        )
        .version(version);
        if let Some(e) = earlier {
            b = b.earlier_checkpoint(
                self.checkpoint(e),
                self.tree.consistency_proof(e, size).unwrap(),
            );
        }
        let v2_range = range.filter(|_| version == BundleVersion::V2);
        for &i in indices {
            let leaf = self.leaves[i as usize].clone();
            b = if v2_range.is_some_and(|(from, to)| from <= i && i <= to) {
                b.range_receipt(i, leaf)
            } else {
                b.receipt(i, leaf, self.tree.inclusion_proof(i, size).unwrap())
            };
        }
        if let Some((from, to)) = range {
            let proof = match version {
                BundleVersion::V2 => self.tree.range_proof(from, to + 1, size).unwrap(),
                BundleVersion::V1 => Vec::new(),
            };
            b = b.range(from, to, proof);
        }
        b.build().unwrap()
    }

    /// Every receipt, as an unfiltered export: one range, no proofs.
    pub fn full_bundle(&self) -> Bundle {
        let all: Vec<u64> = (0..self.tree.len()).collect();
        self.bundle(
            &all,
            Some(self.tree.len() / 2),
            Some((0, self.tree.len() - 1)),
        )
    }

    /// Every receipt in the older format (a proof per receipt).
    pub fn full_bundle_v1(&self) -> Bundle {
        let all: Vec<u64> = (0..self.tree.len()).collect();
        self.bundle_v1(
            &all,
            Some(self.tree.len() / 2),
            Some((0, self.tree.len() - 1)),
        )
    }
}

/// The name of a [`interlock_receipts::ReceiptError`] variant (its `Debug`
/// form up to its fields): what the browser's verifier must name too.
pub fn error_name(e: &interlock_receipts::ReceiptError) -> String {
    format!("{e:?}")
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// Writes one verified bundle and what `verify_bundle` said of it into
/// `dir`, named after the running test and a counter: a fixture for the
/// browser's verifier (issue 18).
pub fn write_fixture(
    dir: &std::path::Path,
    bytes: &[u8],
    opts: &interlock_receipts::VerifyOptions,
    report: &interlock_receipts::VerifyReport,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .replace("::", "-");
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let expected = serde_json::json!({
        "ok": report.is_ok(),
        "origin": report.origin,
        "tree_size": report.tree_size,
        "surfaces": report.surfaces,
        "problems": report.problems.iter().map(error_name).collect::<Vec<_>>(),
        "receipts": report.receipts.iter().map(|r| serde_json::json!({
            "index": r.index,
            "kind": r.kind,
            "subjects": r.subjects,
            "ok": r.result.is_ok(),
            "error": r.result.as_ref().err().map(error_name),
        })).collect::<Vec<_>>(),
        "text": report.to_string(),
    });
    let fixture = serde_json::json!({
        "test": test,
        "pinned_log_key": opts.pinned_log_key,
        "bundle": text,
        "expected": expected,
    });
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(format!("{test}-{n:03}.json")),
        serde_json::to_vec(&fixture).unwrap(),
    )
    .unwrap();
}

/// The DSSE envelope of `by`'s statement about `subject` at `hash`, as JSON
/// in a leaf.
pub fn signed_statement(by: &SigningKey, subject: &str, hash: Digest, decision: Decision) -> Value {
    let (_, env) = sign_decision(
        by,
        &Terms {
            audience: ORIGIN,
            subject,
            subject_hash: hash,
            decision,
            reason: "reviewed",
            issued_at: 1_760_000_000,
            not_before: 1_760_000_000,
            expires_at: 1_760_000_000 + 3600,
            nonce: [9; 16],
            policy_digest: Digest::of_bytes(b"policy"),
        },
    )
    .unwrap();
    from_serde_json(&env.to_json()).unwrap()
}

/// A leaf of `kind` at `seq` with `fields`.
pub fn leaf_of(seq: u64, kind: &str, fields: Vec<(&str, Value)>) -> Map {
    let mut p = Map::new();
    p.insert("seq".into(), n(seq as i64));
    p.insert("time".into(), n(1_760_000_000 + seq as i64));
    p.insert("type".into(), s(kind));
    for (k, v) in fields {
        p.insert(k.into(), v);
    }
    p
}
