//! The checkpoint signer, behind a trait object.

use std::sync::Arc;

use ed25519_dalek::{Signature, SigningKey, VerifyingKey};

/// Signs checkpoints for the log. Implemented for [`SigningKey`] (tests,
/// throwaway demo keys); a keychain-backed implementation can be plugged in
/// without this crate knowing about keychains.
pub trait LogSigner: Send + Sync {
    /// The public key checkpoints verify with.
    fn public_key(&self) -> VerifyingKey;
    /// Signs `msg` (a checkpoint note text).
    fn try_sign(&self, msg: &[u8]) -> Result<Signature, signature::Error>;
}

impl LogSigner for SigningKey {
    fn public_key(&self) -> VerifyingKey {
        self.verifying_key()
    }

    fn try_sign(&self, msg: &[u8]) -> Result<Signature, signature::Error> {
        signature::Signer::try_sign(self, msg)
    }
}

/// The signer as the log holds it.
pub type CheckpointSigner = Arc<dyn LogSigner + Send + Sync>;

/// Adapts a [`LogSigner`] to the `Signer<Signature>` that
/// `interlock_merkle::sign_checkpoint` accepts.
pub(crate) struct AsSigner<'a>(pub(crate) &'a dyn LogSigner);

impl signature::Signer<Signature> for AsSigner<'_> {
    fn try_sign(&self, msg: &[u8]) -> Result<Signature, signature::Error> {
        self.0.try_sign(msg)
    }
}
