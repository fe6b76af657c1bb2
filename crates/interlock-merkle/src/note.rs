//! C2SP signed notes (<https://c2sp.org/signed-note>) with Ed25519 keys.
//!
//! ```text
//! <text, one or more lines each ending in "\n">
//! <blank line>
//! — <key name> base64(4-byte key ID ‖ signature)
//! ```
//!
//! Rules enforced when parsing: the note is UTF-8 without ASCII control
//! characters other than newline; the text is non-empty, ends in a newline and
//! is separated from the signatures by the *last* blank line (the spec allows
//! blank lines inside the text; checkpoint bodies forbid them separately);
//! every signature line is `"— " name " " base64 "\n"` with a valid key name
//! (non-empty, no Unicode spaces, no `+`), standard padded canonical base64
//! decoding to at least 5 bytes; at most [`MAX_SIGNATURES`] lines.
//!
//! Rules enforced when verifying: signatures whose (name, key ID) pair matches
//! no known verifier are ignored; a signature that matches a known verifier
//! must verify with [`VerifyingKey::verify_strict`] or the whole note is
//! rejected; the same known key signing twice is rejected; at least one known
//! key must have signed.

use std::collections::HashSet;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, Signer, VerifyingKey};

use crate::checkpoint::CheckpointError;
use crate::hash::to_hex;

/// At most this many signature lines are accepted in a note (C2SP requires at least 16).
pub const MAX_SIGNATURES: usize = 100;

/// Signature type identifier byte of Ed25519 in C2SP signed-note.
pub const ALG_ED25519: u8 = 0x01;

const SIG_PREFIX: &str = "\u{2014} ";

/// Why a note, a key, or a checkpoint was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// The note contains an ASCII control character other than newline.
    #[error("note contains control character U+{0:04X} (only newline is allowed)")]
    ControlCharacter(u32),
    /// The note text is empty.
    #[error("note text is empty")]
    EmptyText,
    /// The note text does not end with a newline.
    #[error("note text does not end with a newline")]
    TextMissingNewline,
    /// There is no blank line separating the text from signatures.
    #[error("note has no blank line separating the text from the signatures")]
    MissingSignatureBlock,
    /// The signature block is empty or does not end with a newline.
    #[error("note signature block is empty or does not end with a newline")]
    MalformedSignatureBlock,
    /// A signature line is malformed.
    #[error("signature line {line}: {reason}")]
    MalformedSignatureLine { line: usize, reason: &'static str },
    /// More signature lines than [`MAX_SIGNATURES`].
    #[error("note has more than {max} signature lines")]
    TooManySignatures { max: usize },
    /// A key name is empty or contains a space or `+`.
    #[error("invalid key name {0:?}: must be non-empty with no spaces and no '+'")]
    InvalidKeyName(String),
    /// A verifier key string is malformed.
    #[error("malformed verifier key: {0}")]
    MalformedVerifierKey(&'static str),
    /// A verifier key is not an Ed25519 key.
    #[error("unsupported verifier key type 0x{0:02x} (only Ed25519, 0x01)")]
    UnsupportedKeyType(u8),
    /// The public key bytes are not a valid (or are a weak) Ed25519 point.
    #[error("invalid Ed25519 public key")]
    InvalidPublicKey,
    /// The key ID in a verifier key string does not match its name and key.
    #[error("verifier key ID {got} does not match the derived key ID {expected}")]
    KeyIdMismatch { expected: String, got: String },
    /// Two verifiers share the same name and key ID.
    #[error("more than one verifier has name {name:?} and key ID {key_id}")]
    AmbiguousVerifier { name: String, key_id: String },
    /// A signature by a known key does not verify.
    #[error("signature by known key {name:?} (key ID {key_id}) does not verify")]
    InvalidSignature { name: String, key_id: String },
    /// A known key signed the note more than once.
    #[error("known key {name:?} (key ID {key_id}) signed the note more than once")]
    DuplicateSignature { name: String, key_id: String },
    /// No signature by any known key.
    #[error("note has no signature by a known key")]
    NoKnownSignature,
    /// The signer failed.
    #[error("signing failed: {0}")]
    Signing(String),
    /// A [`NoteSigner`] was built over a signer whose signatures do not
    /// verify with the public key it was given (a mismatched or wrong key).
    #[error("the signer's signatures do not verify with the public key {key_name:?} claims")]
    SignerKeyMismatch { key_name: String },
    /// The note text is not a valid checkpoint.
    #[error("malformed checkpoint: {0}")]
    Checkpoint(#[from] CheckpointError),
}

/// A key name is valid: non-empty, no Unicode white space, no `+`.
pub fn is_valid_key_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c == '+' || c.is_control())
}

fn check_key_name(name: &str) -> Result<(), NoteError> {
    if is_valid_key_name(name) {
        Ok(())
    } else {
        Err(NoteError::InvalidKeyName(name.to_owned()))
    }
}

fn check_no_controls(s: &str) -> Result<(), NoteError> {
    match s.chars().find(|&c| c < ' ' && c != '\n') {
        Some(c) => Err(NoteError::ControlCharacter(u32::from(c))),
        None => Ok(()),
    }
}

/// Checks a note text: non-empty, ends in newline, no control characters.
fn check_text(text: &str) -> Result<(), NoteError> {
    if text.is_empty() {
        return Err(NoteError::EmptyText);
    }
    if !text.ends_with('\n') {
        return Err(NoteError::TextMissingNewline);
    }
    check_no_controls(text)
}

/// Ed25519 key ID: the first 4 bytes of `SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)`.
pub fn key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut h = ring::digest::Context::new(&ring::digest::SHA256);
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update(&[ALG_ED25519]);
    h.update(key.as_bytes());
    let d = h.finish();
    let d = d.as_ref();
    [d[0], d[1], d[2], d[3]]
}

/// One Ed25519 signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSignature {
    /// Key name.
    pub name: String,
    /// Key ID (big-endian `uint32` in the spec).
    pub key_id: [u8; 4],
    /// Ed25519 signature over the note text.
    pub signature: [u8; 64],
}

/// A signature line whose payload is not 4 + 64 bytes: another algorithm (e.g.
/// a tlog-cosignature witness cosignature or ML-DSA). Kept so the note
/// re-serializes completely; ignored when verifying unless it claims to be by
/// a known Ed25519 key, which is then an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignSignature {
    /// Key name.
    pub name: String,
    /// Key ID.
    pub key_id: [u8; 4],
    /// Signature bytes after the key ID.
    pub signature: Vec<u8>,
}

fn write_sig_line(
    f: &mut impl fmt::Write,
    name: &str,
    key_id: &[u8; 4],
    sig: &[u8],
) -> fmt::Result {
    let mut blob = Vec::with_capacity(4 + sig.len());
    blob.extend_from_slice(key_id);
    blob.extend_from_slice(sig);
    writeln!(f, "{SIG_PREFIX}{name} {}", B64.encode(blob))
}

/// A signed note: its text and signature lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedNote {
    /// The text, including its final newline (not the separating blank line).
    pub text: String,
    /// Ed25519-sized signature lines, in order.
    pub signatures: Vec<NoteSignature>,
    /// Signature lines of other sizes (other algorithms), in order, written after `signatures`.
    pub foreign: Vec<ForeignSignature>,
}

impl fmt::Display for SignedNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        f.write_str("\n")?;
        for s in &self.signatures {
            write_sig_line(f, &s.name, &s.key_id, &s.signature)?;
        }
        for s in &self.foreign {
            write_sig_line(f, &s.name, &s.key_id, &s.signature)?;
        }
        Ok(())
    }
}

impl SignedNote {
    /// An unsigned note with a checked `text`; add signatures with [`NoteSigner::sign_into`].
    pub fn new(text: impl Into<String>) -> Result<Self, NoteError> {
        let text = text.into();
        check_text(&text)?;
        Ok(Self {
            text,
            signatures: Vec::new(),
            foreign: Vec::new(),
        })
    }

    /// Parses a signed note strictly (see the module docs). Does not verify signatures.
    pub fn parse(s: &str) -> Result<Self, NoteError> {
        check_no_controls(s)?;
        let split = s.rfind("\n\n").ok_or(NoteError::MissingSignatureBlock)?;
        let (text, sigs) = (&s[..=split], &s[split + 2..]);
        check_text(text)?;
        if sigs.is_empty() || !sigs.ends_with('\n') {
            return Err(NoteError::MalformedSignatureBlock);
        }
        let mut note = Self {
            text: text.to_owned(),
            signatures: Vec::new(),
            foreign: Vec::new(),
        };
        for (i, line) in sigs.split_terminator('\n').enumerate() {
            let line_no = i + 1;
            if i >= MAX_SIGNATURES {
                return Err(NoteError::TooManySignatures {
                    max: MAX_SIGNATURES,
                });
            }
            let bad = |reason| NoteError::MalformedSignatureLine {
                line: line_no,
                reason,
            };
            let rest = line
                .strip_prefix(SIG_PREFIX)
                .ok_or(bad("does not start with an em dash and a space"))?;
            let (name, b64) = rest
                .split_once(' ')
                .ok_or(bad("no space between key name and signature"))?;
            if !is_valid_key_name(name) {
                return Err(bad("invalid key name"));
            }
            let blob = B64
                .decode(b64)
                .map_err(|_| bad("signature is not valid standard base64"))?;
            if blob.len() < 5 {
                return Err(bad("signature is shorter than a key ID and one byte"));
            }
            let key_id = [blob[0], blob[1], blob[2], blob[3]];
            let name = name.to_owned();
            match <[u8; 64]>::try_from(&blob[4..]) {
                Ok(signature) => note.signatures.push(NoteSignature {
                    name,
                    key_id,
                    signature,
                }),
                Err(_) => note.foreign.push(ForeignSignature {
                    name,
                    key_id,
                    signature: blob[4..].to_vec(),
                }),
            }
        }
        Ok(note)
    }

    /// Verifies the note against `verifiers`; returns the names of the keys
    /// whose signatures verified (in signature order). See the module docs for the rules.
    pub fn verify(&self, verifiers: &[NoteVerifier]) -> Result<Vec<String>, NoteError> {
        check_text(&self.text)?;
        let find = |name: &str, id: &[u8; 4]| -> Result<Option<&NoteVerifier>, NoteError> {
            let mut it = verifiers
                .iter()
                .filter(|v| v.name == name && &v.key_id() == id);
            let first = it.next();
            if first.is_some() && it.next().is_some() {
                return Err(NoteError::AmbiguousVerifier {
                    name: name.to_owned(),
                    key_id: to_hex(id),
                });
            }
            Ok(first)
        };
        let mut seen = HashSet::new();
        let mut verified = Vec::new();
        for sig in &self.signatures {
            let Some(v) = find(&sig.name, &sig.key_id)? else {
                continue;
            };
            let ident = || (sig.name.clone(), to_hex(&sig.key_id));
            if !seen.insert((sig.name.as_str(), sig.key_id)) {
                let (name, key_id) = ident();
                return Err(NoteError::DuplicateSignature { name, key_id });
            }
            let signature = Signature::from_bytes(&sig.signature);
            if v.key
                .verify_strict(self.text.as_bytes(), &signature)
                .is_err()
            {
                let (name, key_id) = ident();
                return Err(NoteError::InvalidSignature { name, key_id });
            }
            verified.push(sig.name.clone());
        }
        for sig in &self.foreign {
            if find(&sig.name, &sig.key_id)?.is_some() {
                return Err(NoteError::InvalidSignature {
                    name: sig.name.clone(),
                    key_id: to_hex(&sig.key_id),
                });
            }
        }
        if verified.is_empty() {
            return Err(NoteError::NoKnownSignature);
        }
        Ok(verified)
    }
}

/// A known Ed25519 note key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteVerifier {
    /// Key name.
    pub name: String,
    /// Public key.
    pub key: VerifyingKey,
}

impl NoteVerifier {
    /// A verifier with a checked key name.
    pub fn new(name: &str, key: VerifyingKey) -> Result<Self, NoteError> {
        check_key_name(name)?;
        Ok(Self {
            name: name.to_owned(),
            key,
        })
    }

    /// This key's ID.
    pub fn key_id(&self) -> [u8; 4] {
        key_id(&self.name, &self.key)
    }

    /// Parses a verifier key `name+hex(keyid)+base64(0x01 ‖ public key)`.
    /// The key ID must be 8 lower-case hex digits and match the derived ID;
    /// weak (small-order) public keys are rejected.
    pub fn from_vkey(vkey: &str) -> Result<Self, NoteError> {
        let (name, id_hex, key) = parse_vkey(vkey, ALG_ED25519, check_key_name)?;
        if key.is_weak() {
            return Err(NoteError::InvalidPublicKey);
        }
        let v = Self {
            name: name.to_owned(),
            key,
        };
        check_key_id(&v.key_id(), id_hex)?;
        Ok(v)
    }

    /// Formats as a verifier key `name+hex(keyid)+base64(0x01 ‖ public key)`.
    pub fn to_vkey(&self) -> String {
        format_vkey(&self.name, self.key_id(), ALG_ED25519, &self.key)
    }
}

/// Signs note texts under a key name with any Ed25519 [`Signer`] (a
/// `SigningKey`, or a keychain/HSM-backed signer).
pub struct NoteSigner<'a, S: ?Sized> {
    name: String,
    public: VerifyingKey,
    key_id: [u8; 4],
    signer: &'a S,
}

impl<S: ?Sized> fmt::Debug for NoteSigner<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoteSigner")
            .field("name", &self.name)
            .field("key_id", &to_hex(&self.key_id))
            .finish_non_exhaustive()
    }
}

/// What [`NoteSigner::new`] signs to check its key: not a valid note text (it
/// does not end with a newline), so the signature, which is thrown away, could
/// not pass for one even if it leaked.
const SELF_CHECK: &[u8] = b"interlock: NoteSigner self-check (not a note)";

impl<'a, S: Signer<Signature> + ?Sized> NoteSigner<'a, S> {
    /// A signer named `name` whose public key is `public`.
    ///
    /// Refuses ([`NoteError::SignerKeyMismatch`]) a `signer` whose signatures
    /// do not verify with `public`: it signs a fixed self-check message and
    /// verifies that with `verify_strict`. The check is made once, here, so
    /// a `NoteSigner` that exists signs with the key its verifier names, and
    /// [`sign`](Self::sign) does not verify every signature again. Keep one
    /// for as long as its key is in use rather than building one per note.
    pub fn new(name: &str, public: VerifyingKey, signer: &'a S) -> Result<Self, NoteError> {
        check_key_name(name)?;
        let probe: Signature = signer
            .try_sign(SELF_CHECK)
            .map_err(|e| NoteError::Signing(e.to_string()))?;
        public
            .verify_strict(SELF_CHECK, &probe)
            .map_err(|_| NoteError::SignerKeyMismatch {
                key_name: name.to_owned(),
            })?;
        Ok(Self {
            name: name.to_owned(),
            key_id: key_id(name, &public),
            public,
            signer,
        })
    }

    /// Key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Key ID.
    pub fn key_id(&self) -> [u8; 4] {
        self.key_id
    }

    /// The matching verifier.
    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier {
            name: self.name.clone(),
            key: self.public,
        }
    }

    /// Signs `text`. The signer's key was checked against the public key when
    /// this `NoteSigner` was built ([`new`](Self::new)); Ed25519 signing is
    /// deterministic, so the signature verifies with it.
    pub fn sign(&self, text: &str) -> Result<NoteSignature, NoteError> {
        check_text(text)?;
        let sig: Signature = self
            .signer
            .try_sign(text.as_bytes())
            .map_err(|e| NoteError::Signing(e.to_string()))?;
        Ok(NoteSignature {
            name: self.name.clone(),
            key_id: self.key_id,
            signature: sig.to_bytes(),
        })
    }

    /// Signs `text` into a new signed note.
    pub fn sign_note(&self, text: &str) -> Result<SignedNote, NoteError> {
        let mut note = SignedNote::new(text)?;
        self.sign_into(&mut note)?;
        Ok(note)
    }

    /// Adds (or replaces) this key's signature on `note`.
    pub fn sign_into(&self, note: &mut SignedNote) -> Result<(), NoteError> {
        let sig = self.sign(&note.text)?;
        note.signatures
            .retain(|s| !(s.name == sig.name && s.key_id == sig.key_id));
        note.signatures.push(sig);
        Ok(())
    }
}

/// A verifier key's parts, `name+hex(keyid)+base64(alg ‖ key)`, for a key of
/// type `alg` (a note signer's 0x01, a witness's 0x04): the name (after
/// `check_name`), the key ID as written (8 lower-case hex digits; the caller
/// checks it against the one its key type derives) and the Ed25519 key.
pub(crate) fn parse_vkey(
    vkey: &str,
    alg: u8,
    check_name: impl FnOnce(&str) -> Result<(), NoteError>,
) -> Result<(&str, &str, VerifyingKey), NoteError> {
    // The base64 part may itself contain '+', so split at most twice.
    let mut parts = vkey.splitn(3, '+');
    let (Some(name), Some(id_hex), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(NoteError::MalformedVerifierKey("expected name+keyid+key"));
    };
    check_name(name)?;
    if id_hex.len() != 8
        || !id_hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(NoteError::MalformedVerifierKey(
            "key ID is not 8 lower-case hex digits",
        ));
    }
    let raw = B64
        .decode(b64)
        .map_err(|_| NoteError::MalformedVerifierKey("key is not valid standard base64"))?;
    let (&found, key) = raw
        .split_first()
        .ok_or(NoteError::MalformedVerifierKey("key is empty"))?;
    if found != alg {
        return Err(NoteError::UnsupportedKeyType(found));
    }
    let key: &[u8; 32] = key
        .try_into()
        .map_err(|_| NoteError::MalformedVerifierKey("Ed25519 key is not 32 bytes"))?;
    let key = VerifyingKey::from_bytes(key).map_err(|_| NoteError::InvalidPublicKey)?;
    Ok((name, id_hex, key))
}

/// Refuses a written key ID that is not the derived one.
pub(crate) fn check_key_id(derived: &[u8; 4], written: &str) -> Result<(), NoteError> {
    let expected = to_hex(derived);
    if expected != written {
        return Err(NoteError::KeyIdMismatch {
            expected,
            got: written.to_owned(),
        });
    }
    Ok(())
}

/// `name+hex(keyid)+base64(alg ‖ key)`.
pub(crate) fn format_vkey(name: &str, key_id: [u8; 4], alg: u8, key: &VerifyingKey) -> String {
    let mut raw = Vec::with_capacity(33);
    raw.push(alg);
    raw.extend_from_slice(key.as_bytes());
    format!("{name}+{}+{}", to_hex(&key_id), B64.encode(raw))
}
