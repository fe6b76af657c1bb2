//! One receipt as a C2SP tlog-proof file (<https://c2sp.org/tlog-proof>).
//!
//! The spec's file carries the entry's index, its inclusion proof and the
//! signed checkpoint, and leaves the entry to the application. Interlock puts
//! the leaf itself — the JCS statement — in the `extra` line, so the file is
//! the whole receipt: the verifier hashes the leaf, walks the proof to the
//! root the log key signed, and only then reads the statement (the spec's
//! "MUST NOT implicitly trust the extra data": nothing in it is believed
//! before the proof vouches for its bytes). A leaf supplied out of band is
//! used instead, and must then equal the `extra` data if both are present.
//!
//! What a tlog-proof cannot show: an approval's own signature is by an
//! approver key, and the file carries no trust section, so that signature is
//! reported as not checked (a bundle checks it against its trusted keys).

use std::fmt;

use interlock_core::decision::KeyId;
use interlock_merkle::{Hash, NoteVerifier, TlogProof, TlogProofError, leaf_hash};

use crate::error::ReceiptError;
use crate::leaf;
use crate::verify::{ReceiptLine, check_statement, read_receipt_leaf};

/// The tlog-proof of one receipt: the leaf in `extra`, its audit path and
/// the checkpoint that path reaches.
pub fn receipt_tlog_proof(
    index: u64,
    leaf_bytes: Vec<u8>,
    inclusion_proof: Vec<Hash>,
    checkpoint_note: String,
) -> TlogProof {
    TlogProof {
        extra: Some(leaf_bytes),
        index,
        proof: inclusion_proof,
        checkpoint: checkpoint_note,
    }
}

/// The outcome of verifying one tlog-proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlogProofReport {
    /// The checkpoint's origin, once it verified.
    pub origin: String,
    /// The checkpoint's tree size, once it verified.
    pub tree_size: Option<u64>,
    pub line: ReceiptLine,
    /// An approval whose approver signature could not be checked here.
    pub approval_unchecked: bool,
}

impl TlogProofReport {
    pub fn is_ok(&self) -> bool {
        self.line.result.is_ok()
    }
}

impl fmt::Display for TlogProofReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tree_size {
            Some(n) => writeln!(f, "log: {}, checkpoint size {n}", self.origin)?,
            None => writeln!(f, "log: checkpoint not verified")?,
        }
        writeln!(f, "{}", self.line)?;
        if self.approval_unchecked && self.is_ok() {
            writeln!(
                f,
                "the approver's own signature inside it was not checked: a tlog-proof carries no approver keys (verify it in a bundle)"
            )?;
        }
        writeln!(f, "{}", if self.is_ok() { "OK" } else { "FAILED" })
    }
}

/// Verifies a tlog-proof's text against the pinned log key (a C2SP vkey;
/// the file carries none of its own), with the leaf from `leaf` or, without
/// it, from the file's `extra` line.
pub fn verify_tlog_proof(text: &str, log_key: &str, leaf: Option<&[u8]>) -> TlogProofReport {
    let mut report = TlogProofReport {
        origin: String::new(),
        tree_size: None,
        line: ReceiptLine {
            position: 0,
            index: 0,
            kind: String::new(),
            subjects: String::new(),
            result: Ok(()),
        },
        approval_unchecked: false,
    };
    report.line.result = (|| {
        let tlog = |e: TlogProofError| ReceiptError::TlogProof(e.to_string());
        let proof = TlogProof::parse(text).map_err(tlog)?;
        report.line.index = proof.index;
        let verifier =
            NoteVerifier::from_vkey(log_key).map_err(|e| ReceiptError::BadPinnedKey {
                vkey: log_key.to_owned(),
                reason: e.to_string(),
            })?;
        let leaf_bytes = match (leaf, proof.extra.as_deref()) {
            (Some(given), Some(extra)) if given != extra => {
                return Err(ReceiptError::TlogProof(
                    "the leaf given is not the one in the file's `extra` line".into(),
                ));
            }
            (Some(given), _) => given,
            (None, Some(extra)) => extra,
            (None, None) => {
                return Err(ReceiptError::TlogProof(
                    "the file has no `extra` line with the leaf, and no leaf was given".into(),
                ));
            }
        };
        // The proof first: nothing in the leaf is read before it is vouched for.
        let cp = proof
            .verify(&leaf_hash(leaf_bytes), std::slice::from_ref(&verifier))
            .map_err(|e| match e {
                TlogProofError::Inclusion {
                    index,
                    size,
                    reason,
                } => ReceiptError::BadInclusion {
                    index,
                    size,
                    reason: reason.to_string(),
                },
                TlogProofError::Checkpoint(e) => ReceiptError::BadCheckpoint(e.to_string()),
                other => tlog(other),
            })?;
        if cp.origin != verifier.name {
            return Err(ReceiptError::OriginMismatch {
                which: "of the tlog-proof".into(),
                found: cp.origin,
                expected: verifier.name.clone(),
            });
        }
        report.origin = cp.origin;
        report.tree_size = Some(cp.size);
        leaf::check_form(leaf_bytes)?;
        let st = read_receipt_leaf(leaf_bytes, &verifier.key, &KeyId::of(&verifier.key))?;
        report.line.kind.clone_from(&st.kind);
        report.line.subjects = st.subject_summary();
        check_statement(&st, proof.index)?;
        report.approval_unchecked = st.kind == "plan.decision";
        Ok(())
    })();
    report
}
