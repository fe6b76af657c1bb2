//! C2SP tlog-cosignature v1 (<https://c2sp.org/tlog-cosignature>), Ed25519:
//! a witness's timestamped statement that a checkpoint is the largest
//! consistent tree head it has seen for that log.
//!
//! ```text
//! — <witness name> base64(key ID ‖ u64 big-endian timestamp ‖ Ed25519 signature)
//! ```
//!
//! The key ID is `SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4]`; the signed
//! message is `"cosignature/v1\ntime <timestamp>\n"` followed by the checkpoint
//! body. The message does not commit to the witness's name, so one key must
//! never serve two witness names (the spec's rule; [`CosignatureVerifier`]
//! binds the pair).
//!
//! A cosignature line is a note signature line whose payload after the key
//! ID is 72 bytes, so [`SignedNote::parse`] keeps it among
//! [`SignedNote::foreign`]; [`witness_report`] reads it from there.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, Signer, VerifyingKey};

use crate::note::{
    ForeignSignature, NoteError, SignedNote, check_key_id, format_vkey, is_valid_key_name,
    parse_vkey,
};

/// Signature type byte of an Ed25519 tlog-cosignature v1 key.
pub const ALG_COSIGNATURE_V1: u8 = 0x04;

/// Bytes of a cosignature after its key ID: an 8-byte timestamp and a signature.
pub const COSIGNATURE_LEN: usize = 8 + 64;

/// The largest timestamp a cosignature may carry (the spec's `2^63 - 1`).
pub const MAX_TIMESTAMP: u64 = (1 << 63) - 1;

/// Key ID of an Ed25519 cosigner: `SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[:4]`.
pub fn cosignature_key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut h = ring::digest::Context::new(&ring::digest::SHA256);
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update(&[ALG_COSIGNATURE_V1]);
    h.update(key.as_bytes());
    let d = h.finish();
    let d = d.as_ref();
    [d[0], d[1], d[2], d[3]]
}

/// The message a cosigner signs over a checkpoint body `text` at `timestamp`.
pub fn cosignature_message(text: &str, timestamp: u64) -> Vec<u8> {
    format!("cosignature/v1\ntime {timestamp}\n{text}").into_bytes()
}

/// One cosignature line, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cosignature {
    /// The witness's name.
    pub name: String,
    /// Its key ID.
    pub key_id: [u8; 4],
    /// POSIX seconds at which it was made.
    pub timestamp: u64,
    /// The Ed25519 signature over [`cosignature_message`].
    pub signature: [u8; 64],
}

impl Cosignature {
    /// Reads a foreign signature line as a cosignature, if its payload has a
    /// cosignature's length.
    pub fn from_foreign(sig: &ForeignSignature) -> Option<Self> {
        if sig.signature.len() != COSIGNATURE_LEN {
            return None;
        }
        let (ts, signature) = sig.signature.split_at(8);
        Some(Self {
            name: sig.name.clone(),
            key_id: sig.key_id,
            timestamp: u64::from_be_bytes(ts.try_into().ok()?),
            signature: signature.try_into().ok()?,
        })
    }

    /// This cosignature as a note signature line (`— name base64…\n`).
    pub fn to_line(&self) -> String {
        let mut blob = Vec::with_capacity(4 + COSIGNATURE_LEN);
        blob.extend_from_slice(&self.key_id);
        blob.extend_from_slice(&self.timestamp.to_be_bytes());
        blob.extend_from_slice(&self.signature);
        format!("\u{2014} {} {}\n", self.name, B64.encode(blob))
    }

    /// This cosignature as a [`ForeignSignature`], to add to a [`SignedNote`].
    pub fn to_foreign(&self) -> ForeignSignature {
        let mut signature = Vec::with_capacity(COSIGNATURE_LEN);
        signature.extend_from_slice(&self.timestamp.to_be_bytes());
        signature.extend_from_slice(&self.signature);
        ForeignSignature {
            name: self.name.clone(),
            key_id: self.key_id,
            signature,
        }
    }
}

/// Parses the body of a witness's `add-checkpoint` answer: one or more
/// cosignature lines, each ending in a newline. Lines of other shapes are refused.
pub fn parse_cosignature_lines(body: &str) -> Result<Vec<Cosignature>, NoteError> {
    if body.is_empty() || !body.ends_with('\n') {
        return Err(NoteError::MalformedSignatureBlock);
    }
    // A note with a placeholder text parses the lines with the note's own rules.
    let note = SignedNote::parse(&format!("x\n\n{body}"))?;
    if !note.signatures.is_empty() {
        return Err(NoteError::MalformedSignatureLine {
            line: 1,
            reason: "a plain Ed25519 note signature where a cosignature was expected",
        });
    }
    note.foreign
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Cosignature::from_foreign(f).ok_or(NoteError::MalformedSignatureLine {
                line: i + 1,
                reason: "not a cosignature (key ID, 8-byte time, 64-byte signature)",
            })
        })
        .collect()
}

/// A witness's public key, as an auditor or a log configures it.
#[derive(Clone, PartialEq, Eq)]
pub struct CosignatureVerifier {
    /// The witness's name.
    pub name: String,
    /// Its Ed25519 public key.
    pub key: VerifyingKey,
}

impl fmt::Debug for CosignatureVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_vkey())
    }
}

impl CosignatureVerifier {
    /// A verifier with a checked name; weak keys are refused.
    pub fn new(name: &str, key: VerifyingKey) -> Result<Self, NoteError> {
        if !is_valid_key_name(name) {
            return Err(NoteError::InvalidKeyName(name.to_owned()));
        }
        if key.is_weak() {
            return Err(NoteError::InvalidPublicKey);
        }
        Ok(Self {
            name: name.to_owned(),
            key,
        })
    }

    /// This witness's key ID.
    pub fn key_id(&self) -> [u8; 4] {
        cosignature_key_id(&self.name, &self.key)
    }

    /// Parses a verifier key `name+hex(keyid)+base64(0x04 ‖ key)`.
    pub fn from_vkey(vkey: &str) -> Result<Self, NoteError> {
        // The name is checked by `new`, with the weak key.
        let (name, id_hex, key) = parse_vkey(vkey, ALG_COSIGNATURE_V1, |_| Ok(()))?;
        let v = Self::new(name, key)?;
        check_key_id(&v.key_id(), id_hex)?;
        Ok(v)
    }

    /// Formats as a verifier key `name+hex(keyid)+base64(0x04 ‖ key)`.
    pub fn to_vkey(&self) -> String {
        format_vkey(&self.name, self.key_id(), ALG_COSIGNATURE_V1, &self.key)
    }

    /// Whether `c` claims to be this witness's (same name and key ID).
    pub fn claims(&self, c: &Cosignature) -> bool {
        c.name == self.name && c.key_id == self.key_id()
    }

    /// Verifies `c` over the checkpoint body `text` (strictly).
    pub fn verify(&self, text: &str, c: &Cosignature) -> bool {
        self.claims(c)
            && c.timestamp <= MAX_TIMESTAMP
            && self
                .key
                .verify_strict(
                    &cosignature_message(text, c.timestamp),
                    &Signature::from_bytes(&c.signature),
                )
                .is_ok()
    }
}

/// Makes cosignatures under a witness name with any Ed25519 [`Signer`].
pub struct CosignatureSigner<'a, S: ?Sized> {
    verifier: CosignatureVerifier,
    signer: &'a S,
}

impl<S: ?Sized> fmt::Debug for CosignatureSigner<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CosignatureSigner")
            .field("vkey", &self.verifier.to_vkey())
            .finish_non_exhaustive()
    }
}

impl<'a, S: Signer<Signature> + ?Sized> CosignatureSigner<'a, S> {
    /// A cosigner named `name` whose public key is `public`; refuses a
    /// `signer` whose signatures do not verify with `public`.
    pub fn new(name: &str, public: VerifyingKey, signer: &'a S) -> Result<Self, NoteError> {
        let verifier = CosignatureVerifier::new(name, public)?;
        // Not a cosignature message (no "cosignature/v1" header), so the
        // probe's signature cannot pass for one.
        let probe = b"interlock: CosignatureSigner self-check (not a cosignature)";
        let sig: Signature = signer
            .try_sign(probe)
            .map_err(|e| NoteError::Signing(e.to_string()))?;
        public
            .verify_strict(probe, &sig)
            .map_err(|_| NoteError::SignerKeyMismatch {
                key_name: name.to_owned(),
            })?;
        Ok(Self { verifier, signer })
    }

    /// The matching verifier.
    pub fn verifier(&self) -> &CosignatureVerifier {
        &self.verifier
    }

    /// Cosigns the checkpoint body `text` at `timestamp` (POSIX seconds).
    pub fn cosign(&self, text: &str, timestamp: u64) -> Result<Cosignature, NoteError> {
        if timestamp > MAX_TIMESTAMP {
            return Err(NoteError::Signing("timestamp beyond 2^63 - 1".into()));
        }
        let sig: Signature = self
            .signer
            .try_sign(&cosignature_message(text, timestamp))
            .map_err(|e| NoteError::Signing(e.to_string()))?;
        Ok(Cosignature {
            name: self.verifier.name.clone(),
            key_id: self.verifier.key_id(),
            timestamp,
            signature: sig.to_bytes(),
        })
    }
}

/// What one configured witness said about a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WitnessVerdict {
    /// A valid cosignature made at this time (POSIX seconds).
    Cosigned { timestamp: u64 },
    /// No line claims to be this witness's.
    Absent,
    /// A line claims to be this witness's but does not verify, or there are two.
    Invalid { reason: &'static str },
}

/// Each configured witness's verdict on `note`, in the order given, and the
/// names of cosignature-shaped lines that match no configured witness.
pub fn witness_report(
    note: &SignedNote,
    witnesses: &[CosignatureVerifier],
) -> (Vec<(String, WitnessVerdict)>, Vec<String>) {
    let lines: Vec<(Option<Cosignature>, &ForeignSignature)> = note
        .foreign
        .iter()
        .map(|f| (Cosignature::from_foreign(f), f))
        .collect();
    let verdicts = witnesses
        .iter()
        .map(|w| {
            let named: Vec<_> = lines.iter().filter(|(_, f)| f.name == w.name).collect();
            let verdict = match named.as_slice() {
                [] if note.signatures.iter().any(|s| s.name == w.name) => WitnessVerdict::Invalid {
                    reason: "its line is a plain note signature, not a cosignature",
                },
                [] => WitnessVerdict::Absent,
                [(Some(c), _)] if !w.claims(c) => WitnessVerdict::Invalid {
                    reason: "its line has another key ID than the key given",
                },
                [(Some(c), _)] if w.verify(&note.text, c) => WitnessVerdict::Cosigned {
                    timestamp: c.timestamp,
                },
                [(Some(_), _)] => WitnessVerdict::Invalid {
                    reason: "its cosignature does not verify",
                },
                [(None, _)] => WitnessVerdict::Invalid {
                    reason: "its line is not a cosignature",
                },
                _ => WitnessVerdict::Invalid {
                    reason: "it has more than one line",
                },
            };
            (w.name.clone(), verdict)
        })
        .collect();
    let unknown = lines
        .iter()
        .filter(|(c, f)| c.is_some() && !witnesses.iter().any(|w| w.name == f.name))
        .map(|(_, f)| f.name.clone())
        .collect();
    (verdicts, unknown)
}
