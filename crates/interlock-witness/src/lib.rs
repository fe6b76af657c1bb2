//! A witness (issue 43): whether to cosign a log's checkpoint.
//!
//! A receipt proves an entry is in the log the gateway's key signed; it does
//! not prove every auditor was shown the same log. A witness closes that: it
//! cosigns a checkpoint only if it is consistent with every checkpoint of that
//! log it cosigned before, so an operator who signs a second, forked history
//! under the same key finds no witness that saw the first one to cosign it.
//!
//! The rules are C2SP tlog-witness's `add-checkpoint`
//! (<https://c2sp.org/tlog-witness>), each refusal a [`Refusal`] whose
//! [`RefusalKind`] the HTTP face turns into the spec's status code. The state
//! (the latest cosigned checkpoint per origin) lives in the store and is
//! checked and moved in one write transaction
//! ([`Store::witness_advance`]), so two submissions at once cannot roll it
//! back. Submissions that show the log misbehaving — a different root at the
//! same size, a proof that does not verify — are kept
//! ([`Store::witness_refusals`]).
//!
//! No HTTP here: `interlock_gateway::witness` serves it.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ed25519_dalek::SigningKey;
use interlock_merkle::{
    AddCheckpoint, Checkpoint, CosignatureSigner, CosignatureVerifier, NoteVerifier, SignedNote,
    verify_consistency,
};
use interlock_store::{Store, StoreError, WitnessedCheckpoint};

/// The `Content-Type` of a 409 answer whose body is the latest cosigned size
/// (C2SP tlog-witness): both the witness's face and the log's submitter use it.
pub const TLOG_SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

/// A log this witness cosigns for: its origin and the keys that sign its checkpoints.
#[derive(Clone, Debug)]
pub struct TrustedLog {
    pub origin: String,
    pub keys: Vec<NoteVerifier>,
}

impl TrustedLog {
    /// A log known by its checkpoint key (`name+id+key`, type 0x01), whose
    /// name is its origin, as Interlock's logs are.
    pub fn from_vkey(vkey: &str) -> Result<Self, interlock_merkle::NoteError> {
        let key = NoteVerifier::from_vkey(vkey)?;
        Ok(Self {
            origin: key.name.clone(),
            keys: vec![key],
        })
    }
}

/// How a refusal is answered (the spec's status codes, named).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalKind {
    /// 400: the request is malformed, or its old size exceeds the checkpoint's.
    BadRequest,
    /// 403: no signature by a key this witness trusts for the origin.
    Forbidden,
    /// 404: the origin is not a log this witness cosigns for.
    NotFound,
    /// 409: the old size is not the latest cosigned size (the body says it),
    /// or the same size with another root.
    Conflict,
    /// 422: the consistency proof does not verify.
    Unprocessable,
    /// 500: the witness could not read or write its state.
    Internal,
}

/// Why a checkpoint was not cosigned.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("malformed request: {0}")]
    Malformed(String),
    #[error("this witness does not cosign for the log {0:?}")]
    UnknownLog(String),
    #[error("the checkpoint has no valid signature by a key of {origin:?}: {reason}")]
    NotSigned { origin: String, reason: String },
    #[error("old size {old} is larger than the checkpoint's size {size}")]
    OldSizeAbove { old: u64, size: u64 },
    #[error("old size {old} is not the latest cosigned size {latest}")]
    StaleOldSize { old: u64, latest: u64 },
    #[error("a different root at size {size} than the one cosigned before: the log has forked")]
    Fork { size: u64 },
    #[error("the consistency proof from size {old} to {size} does not verify: {reason}")]
    BadProof { old: u64, size: u64, reason: String },
    #[error("the witness's state: {0}")]
    Store(#[from] StoreError),
    #[error("cosigning failed: {0}")]
    Signing(String),
}

impl Refusal {
    pub fn kind(&self) -> RefusalKind {
        match self {
            Refusal::Malformed(_) | Refusal::OldSizeAbove { .. } => RefusalKind::BadRequest,
            Refusal::UnknownLog(_) => RefusalKind::NotFound,
            Refusal::NotSigned { .. } => RefusalKind::Forbidden,
            Refusal::StaleOldSize { .. } | Refusal::Fork { .. } => RefusalKind::Conflict,
            Refusal::BadProof { .. } => RefusalKind::Unprocessable,
            Refusal::Store(_) | Refusal::Signing(_) => RefusalKind::Internal,
        }
    }

    /// The latest cosigned size, for a 409 answer's `text/x.tlog.size` body.
    pub fn latest_size(&self) -> Option<u64> {
        match self {
            Refusal::StaleOldSize { latest, .. } => Some(*latest),
            // A fork's 409 says why in plain text, so the log does not take it
            // for a size to resynchronise from.
            _ => None,
        }
    }

    /// A refusal that is evidence the log misbehaved (kept by the witness).
    pub fn is_misbehaviour(&self) -> bool {
        matches!(self, Refusal::Fork { .. } | Refusal::BadProof { .. })
    }
}

/// A witness: its key, the logs it cosigns for, and its durable state.
pub struct Witness {
    store: Store,
    key: Arc<SigningKey>,
    verifier: CosignatureVerifier,
    logs: Vec<TrustedLog>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("vkey", &self.verifier.to_vkey())
            .field("logs", &self.logs.len())
            .finish_non_exhaustive()
    }
}

impl Witness {
    /// A witness named `name` (a schema-less URL is the convention) signing
    /// with `key` (from the OS keychain), cosigning for `logs`.
    pub fn new(
        name: &str,
        key: Arc<SigningKey>,
        logs: Vec<TrustedLog>,
        store: Store,
    ) -> Result<Self, interlock_merkle::NoteError> {
        let verifier = CosignatureVerifier::new(name, key.verifying_key())?;
        Ok(Self {
            store,
            key,
            verifier,
            logs,
        })
    }

    /// This witness's verifier key (`name+id+base64(0x04 ‖ key)`), what
    /// auditors and logs configure.
    pub fn vkey(&self) -> String {
        self.verifier.to_vkey()
    }

    /// The logs this witness cosigns for.
    pub fn logs(&self) -> &[TrustedLog] {
        &self.logs
    }

    /// The store underneath (its latest checkpoints and refusals).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Handles an `add-checkpoint` request body: the cosignature line (with
    /// its final newline) if the checkpoint is consistent with everything this
    /// witness cosigned for its log, else why not.
    pub async fn add_checkpoint(&self, body: &str) -> Result<String, Refusal> {
        let request = AddCheckpoint::parse(body).map_err(|e| Refusal::Malformed(e.to_string()))?;
        let note = SignedNote::parse(&request.checkpoint)
            .map_err(|e| Refusal::Malformed(format!("checkpoint: {e}")))?;
        let checkpoint = Checkpoint::parse(&note.text)
            .map_err(|e| Refusal::Malformed(format!("checkpoint: {e}")))?;
        let log = self
            .logs
            .iter()
            .find(|l| l.origin == checkpoint.origin)
            .ok_or_else(|| Refusal::UnknownLog(checkpoint.origin.clone()))?;
        note.verify(&log.keys).map_err(|e| Refusal::NotSigned {
            origin: checkpoint.origin.clone(),
            reason: e.to_string(),
        })?;
        if request.old_size > checkpoint.size {
            return Err(Refusal::OldSizeAbove {
                old: request.old_size,
                size: checkpoint.size,
            });
        }
        let signer = CosignatureSigner::new(&self.verifier.name, self.verifier.key, &*self.key)
            .map_err(|e| Refusal::Signing(e.to_string()))?;
        let decided: Result<String, Refusal> = self
            .store
            .witness_advance(&checkpoint.origin, |latest| {
                check(latest, &request, &checkpoint)?;
                let cosignature = signer
                    .cosign(&note.text, unix_now())
                    .map_err(|e| Refusal::Signing(e.to_string()))?;
                let next = WitnessedCheckpoint {
                    origin: checkpoint.origin.clone(),
                    size: checkpoint.size,
                    root: checkpoint.root,
                    note: request.checkpoint.clone(),
                    updated_at: 0,
                };
                Ok((next, cosignature.to_line()))
            })
            .await?;
        if let Err(refusal) = &decided
            && refusal.is_misbehaviour()
        {
            tracing::warn!(origin = %checkpoint.origin, "refused: {refusal}");
            self.store
                .witness_refused(
                    &checkpoint.origin,
                    &request.checkpoint,
                    &refusal.to_string(),
                )
                .await?;
        }
        decided
    }
}

/// The spec's checks of a submission against the latest cosigned checkpoint.
fn check(
    latest: Option<&WitnessedCheckpoint>,
    request: &AddCheckpoint,
    checkpoint: &Checkpoint,
) -> Result<(), Refusal> {
    let latest_size = latest.map_or(0, |l| l.size);
    if request.old_size != latest_size {
        return Err(Refusal::StaleOldSize {
            old: request.old_size,
            latest: latest_size,
        });
    }
    let Some(latest) = latest.filter(|l| l.size > 0) else {
        // Nothing cosigned yet (or only the empty tree): trust on first use,
        // with no proof to give.
        if !request.proof.is_empty() {
            return Err(Refusal::BadProof {
                old: 0,
                size: checkpoint.size,
                reason: "a proof from size 0 must be empty".into(),
            });
        }
        return Ok(());
    };
    if latest.size == checkpoint.size {
        if latest.root != checkpoint.root {
            return Err(Refusal::Fork {
                size: checkpoint.size,
            });
        }
        return Ok(());
    }
    verify_consistency(
        latest.size,
        checkpoint.size,
        &request.proof,
        &latest.root,
        &checkpoint.root,
    )
    .map_err(|e| Refusal::BadProof {
        old: latest.size,
        size: checkpoint.size,
        reason: e.to_string(),
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
