//! C2SP tlog-proof files (<https://c2sp.org/tlog-proof>): one entry's index,
//! its RFC 6962 inclusion proof and the signed checkpoint it reaches, as text.
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64 opaque data>          (optional)
//! index <decimal, no leading zeroes>
//! <base64 hash>                       (zero or more: the inclusion proof, leaf's sibling first)
//!
//! <the checkpoint, a signed note, verbatim>
//! ```
//!
//! The format does not carry the entry: the verifier computes the leaf hash
//! from data it has (here, the `extra` line when the application puts the
//! entry there — never trusted on its own, only through the proof). Parsing is
//! strict: canonical base64, no leading zeroes, 32-byte hashes, nothing
//! between the proof and the blank line, a checkpoint that parses as a signed
//! note; what it means is left to [`TlogProof::verify`].

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::checkpoint::{Checkpoint, open_checkpoint};
use crate::hash::Hash;
use crate::note::{NoteError, NoteVerifier, SignedNote};
use crate::proof::{ProofError, verify_inclusion};

/// The first line of every tlog-proof.
pub const TLOG_PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

/// The conventional file extension (without the dot).
pub const TLOG_PROOF_EXTENSION: &str = "tlog-proof";

/// Why a tlog-proof did not parse or did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TlogProofError {
    #[error("not a tlog-proof: the first line is not `{TLOG_PROOF_HEADER}`")]
    Header,
    #[error("tlog-proof line {line}: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("the tlog-proof's checkpoint: {0}")]
    Checkpoint(NoteError),
    #[error(
        "the inclusion proof of entry {index} does not reach the checkpoint (size {size}): {reason}"
    )]
    Inclusion {
        index: u64,
        size: u64,
        reason: ProofError,
    },
}

/// A parsed tlog-proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlogProof {
    /// The `extra` line's data, if present (unauthenticated).
    pub extra: Option<Vec<u8>>,
    pub index: u64,
    /// The inclusion proof, leaf's sibling first.
    pub proof: Vec<Hash>,
    /// The signed checkpoint note, verbatim.
    pub checkpoint: String,
}

impl TlogProof {
    /// Parses a tlog-proof strictly (see the module docs).
    pub fn parse(text: &str) -> Result<TlogProof, TlogProofError> {
        let (head, checkpoint) =
            text.split_once("\n\n")
                .ok_or_else(|| TlogProofError::Malformed {
                    line: text.lines().count(),
                    reason: "no empty line before the checkpoint".into(),
                })?;
        let mut lines = head.split('\n').enumerate().map(|(i, l)| (i + 1, l));
        let bad = |line: usize, reason: &str| TlogProofError::Malformed {
            line,
            reason: reason.to_owned(),
        };
        if lines.next().map(|(_, l)| l) != Some(TLOG_PROOF_HEADER) {
            return Err(TlogProofError::Header);
        }
        let (mut n, mut line) = lines.next().ok_or_else(|| bad(2, "no index line"))?;
        let mut extra = None;
        if let Some(data) = line.strip_prefix("extra ") {
            extra = Some(decode_b64(data).ok_or_else(|| bad(n, "extra is not base64"))?);
            (n, line) = lines.next().ok_or_else(|| bad(n + 1, "no index line"))?;
        }
        let digits = line
            .strip_prefix("index ")
            .ok_or_else(|| bad(n, "expected `index N`"))?;
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        let index = canonical
            .then(|| digits.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| bad(n, "the index is not a decimal without leading zeroes"))?;
        let proof = lines
            .map(|(n, l)| {
                decode_b64(l)
                    .and_then(|h| Hash::try_from(h.as_slice()).ok())
                    .ok_or_else(|| bad(n, "not a 32-byte hash in standard base64"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The checkpoint must at least be a signed note; its signatures and
        // body are checked by `verify`.
        SignedNote::parse(checkpoint).map_err(TlogProofError::Checkpoint)?;
        Ok(TlogProof {
            extra,
            index,
            proof,
            checkpoint: checkpoint.to_owned(),
        })
    }

    /// Verifies the checkpoint's signature by one of `verifiers` (the log's
    /// key for its origin) and that `leaf_hash` at [`index`](Self::index) is
    /// in the tree it signs; returns the checkpoint. Cosignatures by keys not
    /// among `verifiers` are ignored, as the spec allows.
    pub fn verify(
        &self,
        leaf_hash: &Hash,
        verifiers: &[NoteVerifier],
    ) -> Result<Checkpoint, TlogProofError> {
        let cp =
            open_checkpoint(&self.checkpoint, verifiers).map_err(TlogProofError::Checkpoint)?;
        verify_inclusion(self.index, cp.size, leaf_hash, &self.proof, &cp.root).map_err(
            |reason| TlogProofError::Inclusion {
                index: self.index,
                size: cp.size,
                reason,
            },
        )?;
        Ok(cp)
    }
}

impl std::fmt::Display for TlogProof {
    /// The file's text: `parse(&p.to_string()) == p`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{TLOG_PROOF_HEADER}")?;
        if let Some(extra) = &self.extra {
            writeln!(f, "extra {}", B64.encode(extra))?;
        }
        writeln!(f, "index {}", self.index)?;
        for h in &self.proof {
            writeln!(f, "{}", B64.encode(h))?;
        }
        writeln!(f)?;
        f.write_str(&self.checkpoint)
    }
}

/// Standard, padded base64 that re-encodes to itself (no stray bits).
fn decode_b64(s: &str) -> Option<Vec<u8>> {
    let bytes = B64.decode(s).ok()?;
    (B64.encode(&bytes) == s).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::leaf_hash;
    use crate::tree::Tree;
    use ed25519_dalek::SigningKey;

    /// The example in the spec (c2sp.org/tlog-proof, C2SP/C2SP@5ba5ee8),
    /// verbatim. Its signatures are elided (`[...]`) there, so it parses up to
    /// the checkpoint's signature lines and no further.
    const SPEC_EXAMPLE: &str = "c2sp.org/tlog-proof@v1
extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ
index 73894
gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=
RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=
AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=

example.com/fancylog
109482
sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=

— example.com/fancylog hI2DJw[...]1roloI=
— witness1.example mJirIklj[...]qY9v2B/5bg==
— witness2.example TnKKVHLX[...]xwYwrSjgow==
— witness3.example S4X82uH5[...]3oEcROGLFQ==
";

    #[test]
    fn the_spec_example_is_read_up_to_its_elided_signatures() {
        // Everything before the checkpoint is read as the spec describes it.
        let head = SPEC_EXAMPLE.split_once("\n\n").unwrap().0;
        let with_real_note = format!("{head}\n\n{}", real_note(109482).1);
        let p = TlogProof::parse(&with_real_note).unwrap();
        assert_eq!(p.index, 73894);
        assert_eq!(p.proof.len(), 5);
        assert_eq!(
            B64.encode(p.proof[4]),
            "AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk="
        );
        assert!(
            p.extra
                .as_deref()
                .unwrap()
                .starts_with(b"age-v1.2.1-darwin-arm64.tar.gz")
        );
        assert_eq!(p.to_string(), with_real_note);
        // The example itself: its `[...]` signatures are not base64.
        assert!(matches!(
            TlogProof::parse(SPEC_EXAMPLE),
            Err(TlogProofError::Checkpoint(_))
        ));
    }

    /// A signed checkpoint of a tree of `size` leaves, and its tree.
    fn real_note(size: u64) -> (Tree, String, NoteVerifier) {
        let key = SigningKey::from_bytes(&[7; 32]);
        let leaves: Vec<Hash> = (0..size).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let tree = Tree::from_leaves(&leaves);
        let cp = Checkpoint {
            origin: "example.com/fancylog".into(),
            size,
            root: tree.root(),
            extensions: vec![],
        };
        let note = crate::sign_checkpoint(&cp, &cp.origin, &key, &key.verifying_key())
            .unwrap()
            .to_string();
        let v = NoteVerifier::new(&cp.origin, key.verifying_key()).unwrap();
        (tree, note, v)
    }

    #[test]
    fn a_proof_round_trips_and_verifies_only_for_its_leaf_and_index() {
        let (tree, note, v) = real_note(300);
        for (index, extra) in [(0u64, None), (7, Some(b"the entry".to_vec())), (299, None)] {
            let p = TlogProof {
                extra,
                index,
                proof: tree.inclusion_proof(index, 300).unwrap(),
                checkpoint: note.clone(),
            };
            let text = p.to_string();
            assert_eq!(TlogProof::parse(&text).unwrap(), p);
            let leaf = tree.leaf(index).unwrap();
            assert_eq!(p.verify(&leaf, std::slice::from_ref(&v)).unwrap().size, 300);
            let other = tree.leaf((index + 1) % 300).unwrap();
            assert!(matches!(
                p.verify(&other, std::slice::from_ref(&v)),
                Err(TlogProofError::Inclusion { .. })
            ));
            let mut moved = p.clone();
            moved.index = (index + 2) % 300;
            assert!(moved.verify(&leaf, std::slice::from_ref(&v)).is_err());
        }
        let stranger = NoteVerifier::new(
            "example.com/fancylog",
            SigningKey::from_bytes(&[8; 32]).verifying_key(),
        )
        .unwrap();
        let p = TlogProof {
            extra: None,
            index: 3,
            proof: tree.inclusion_proof(3, 300).unwrap(),
            checkpoint: note,
        };
        assert!(matches!(
            p.verify(&tree.leaf(3).unwrap(), &[stranger]),
            Err(TlogProofError::Checkpoint(_))
        ));
    }

    #[test]
    fn strict_text() {
        let (tree, note, _) = real_note(5);
        let good = TlogProof {
            extra: Some(b"x".to_vec()),
            index: 1,
            proof: tree.inclusion_proof(1, 5).unwrap(),
            checkpoint: note,
        }
        .to_string();
        assert!(TlogProof::parse(&good).is_ok());
        for (from, to) in [
            ("c2sp.org/tlog-proof@v1", "c2sp.org/tlog-proof@v2"),
            ("index 1", "index 01"),
            ("index 1", "index +1"),
            ("index 1", "index  1"),
            ("index 1", "idx 1"),
            ("extra eA==", "extra eA"),
            ("extra eA==", "extra eB=="),
        ] {
            let t = good.replacen(from, to, 1);
            assert!(TlogProof::parse(&t).is_err(), "{to}");
        }
        // A short hash, and a missing blank line.
        let lines: Vec<&str> = good.lines().collect();
        let t = good.replacen(lines[3], &lines[3][..40], 1);
        assert!(TlogProof::parse(&t).is_err());
        assert!(TlogProof::parse(&good.replacen("\n\n", "\n", 1)).is_err());
    }
}
