//! C2SP tlog-checkpoint bodies (<https://c2sp.org/tlog-checkpoint>) and their
//! signing/opening as signed notes.
//!
//! ```text
//! <origin>\n
//! <tree size, decimal, no leading zeroes>\n
//! <base64 root hash>\n
//! [<extension line>\n ...]
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, Signer, VerifyingKey};

use crate::hash::Hash;
use crate::note::{NoteError, NoteSigner, NoteVerifier, SignedNote};

/// Why a checkpoint body was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// The body does not end with a newline.
    #[error("checkpoint does not end with a newline")]
    MissingFinalNewline,
    /// Fewer than the three mandatory lines.
    #[error("checkpoint has {0} lines, expected at least 3 (origin, size, root)")]
    TooFewLines(usize),
    /// A line (1-based) is empty; this includes an empty origin or extension line.
    #[error("checkpoint line {0} is empty")]
    EmptyLine(usize),
    /// A character other than newline below U+0020.
    #[error("checkpoint contains control character U+{0:04X}")]
    ControlCharacter(u32),
    /// The size line is not ASCII decimal digits.
    #[error("tree size {0:?} is not a decimal number")]
    InvalidSize(String),
    /// The size line has a leading zero.
    #[error("tree size {0:?} has a leading zero")]
    SizeLeadingZero(String),
    /// The size does not fit in 64 bits.
    #[error("tree size {0:?} does not fit in 64 bits")]
    SizeOverflow(String),
    /// The root line is not canonical standard base64.
    #[error("root hash {0:?} is not valid standard base64")]
    InvalidRootBase64(String),
    /// The root decodes to a length other than 32 bytes.
    #[error("root hash is {0} bytes, expected 32")]
    WrongRootLength(usize),
    /// The checkpoint would not serialize to text that parses back to itself.
    #[error("checkpoint fields cannot be serialized faithfully: {0}")]
    Unrepresentable(&'static str),
}

/// A tlog checkpoint: a log's origin, tree size and root hash, plus optional extension lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Unique identity of the log (a schema-less URL is recommended).
    pub origin: String,
    /// Number of leaves.
    pub size: u64,
    /// RFC 6962 root at `size`.
    pub root: Hash,
    /// Optional extension lines, without their newlines.
    pub extensions: Vec<String>,
}

impl Checkpoint {
    /// The checkpoint body (note text), ending in a newline.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        );
        for e in &self.extensions {
            s.push_str(e);
            s.push('\n');
        }
        s
    }

    /// Parses a checkpoint body strictly.
    pub fn parse(text: &str) -> Result<Checkpoint, NoteError> {
        Ok(Self::parse_body(text)?)
    }

    fn parse_body(text: &str) -> Result<Checkpoint, CheckpointError> {
        if let Some(c) = text.chars().find(|&c| c < ' ' && c != '\n') {
            return Err(CheckpointError::ControlCharacter(u32::from(c)));
        }
        let body = text
            .strip_suffix('\n')
            .ok_or(CheckpointError::MissingFinalNewline)?;
        let lines: Vec<&str> = body.split('\n').collect();
        if let Some(i) = lines.iter().position(|l| l.is_empty()) {
            // An empty body is one empty line: report it as too short.
            if lines.len() < 3 && body.is_empty() {
                return Err(CheckpointError::TooFewLines(0));
            }
            return Err(CheckpointError::EmptyLine(i + 1));
        }
        let [origin, size, root, extensions @ ..] = lines.as_slice() else {
            return Err(CheckpointError::TooFewLines(lines.len()));
        };
        Ok(Checkpoint {
            origin: (*origin).to_owned(),
            size: parse_size(size)?,
            root: parse_root(root)?,
            extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
        })
    }

    /// Checks that [`to_text`](Self::to_text) parses back to `self`.
    pub fn validate(&self) -> Result<(), NoteError> {
        let parsed = Self::parse(&self.to_text())?;
        if &parsed != self {
            return Err(CheckpointError::Unrepresentable(
                "origin or an extension line contains a newline",
            )
            .into());
        }
        Ok(())
    }
}

fn parse_size(s: &str) -> Result<u64, CheckpointError> {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CheckpointError::InvalidSize(s.to_owned()));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(CheckpointError::SizeLeadingZero(s.to_owned()));
    }
    s.parse()
        .map_err(|_| CheckpointError::SizeOverflow(s.to_owned()))
}

fn parse_root(s: &str) -> Result<Hash, CheckpointError> {
    let raw = B64
        .decode(s)
        .map_err(|_| CheckpointError::InvalidRootBase64(s.to_owned()))?;
    Hash::try_from(raw.as_slice()).map_err(|_| CheckpointError::WrongRootLength(raw.len()))
}

/// Signs `cp` as a signed note under key `name`, with any Ed25519 signer whose
/// public key is `public` (refused with [`NoteError::SignerKeyMismatch`] if
/// its signatures do not verify with `public`).
///
/// This builds a [`NoteSigner`], which checks the key with a signature of its
/// own: a writer signing checkpoint after checkpoint keeps one `NoteSigner`
/// and calls [`sign_checkpoint_with`] instead.
pub fn sign_checkpoint<S: Signer<Signature> + ?Sized>(
    cp: &Checkpoint,
    name: &str,
    signer: &S,
    public: &VerifyingKey,
) -> Result<SignedNote, NoteError> {
    cp.validate()?;
    sign_checkpoint_with(cp, &NoteSigner::new(name, *public, signer)?)
}

/// Signs `cp` as a signed note with `signer` (whose key was checked when it
/// was built).
pub fn sign_checkpoint_with<S: Signer<Signature> + ?Sized>(
    cp: &Checkpoint,
    signer: &NoteSigner<'_, S>,
) -> Result<SignedNote, NoteError> {
    cp.validate()?;
    signer.sign_note(&cp.to_text())
}

/// Parses a signed checkpoint note, requires at least one valid signature by a
/// known verifier (and none invalid), then parses the text as a checkpoint.
pub fn open_checkpoint(note: &str, verifiers: &[NoteVerifier]) -> Result<Checkpoint, NoteError> {
    let n = SignedNote::parse(note)?;
    n.verify(verifiers)?;
    Checkpoint::parse(&n.text)
}
