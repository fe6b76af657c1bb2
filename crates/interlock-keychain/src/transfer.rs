//! Handing a service key (the log key) to another machine's keychain without
//! its secret ever resting anywhere in the clear.
//!
//! A team's gateways append to one log, so they must sign its checkpoints with
//! one key (issue 20). The receiving machine asks first: [`Keychain::request_transfer`]
//! makes a one-time X25519 identity, keeps it in the receiver's keychain and
//! returns its public recipient (`age1…`), which may travel in the open. The
//! holder seals the key to that recipient ([`Keychain::seal_key_for`]): an
//! [age](https://age-encryption.org/v1) file, ASCII-armored so it can be pasted,
//! readable by nothing but the identity waiting in the receiver's keychain. The
//! receiver opens it ([`Keychain::open_transfer`]) — the caller checks the
//! offered public key against what it expects (the database's recorded log key)
//! — and stores it ([`Keychain::accept_transfer`]); once the caller has
//! recorded that, [`Keychain::finish_transfer`] deletes the one-time identity:
//! a sealed file cannot be opened after that.
//!
//! What is sealed: `interlock-key-transfer/v1\n`, the key's name, `\n`, and the
//! 32-byte Ed25519 secret. A file sealed for one key name is refused as another.

use std::fmt;
use std::str::FromStr;

use ed25519_dalek::{SECRET_KEY_LENGTH, SigningKey, VerifyingKey};
use interlock_core::decision::KeyId;
use zeroize::Zeroizing;

use crate::{Keychain, KeychainError, KeychainKey, check_name};

/// The first line of every sealed key.
const MAGIC: &[u8] = b"interlock-key-transfer/v1\n";
/// The largest sealed text accepted: a sealed 32-byte key is about 500 bytes of
/// armor, so anything much larger is not one.
pub const MAX_SEALED_LEN: usize = 16 * 1024;

/// Why a key transfer failed. Never carries secret bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransferError {
    /// `open_transfer` / `accept_transfer` without a pending `request_transfer`
    /// (or after it was used).
    #[error(
        "no transfer of key `{0}` is pending on this machine: run the request step first (each request opens one sealed key, once)"
    )]
    NotRequested(String),
    /// The recipient is not an age X25519 recipient (`age1…`).
    #[error("not an age X25519 recipient (age1…): {0}")]
    BadRecipient(String),
    /// The sealed text could not be opened with this machine's pending identity:
    /// sealed for another request, damaged, or not an age file at all.
    #[error("the sealed key cannot be opened here: {0}")]
    CannotOpen(String),
    /// It opened, but is not a sealed Interlock key of this name.
    #[error("the sealed text is not an Interlock key `{expected}` ({why})")]
    NotAKey { expected: String, why: &'static str },
    /// The sealed text is larger than any sealed key.
    #[error("the sealed text is {0} bytes; a sealed key is under {MAX_SEALED_LEN}")]
    TooLarge(usize),
    /// A different key of this name is already in the keychain.
    #[error(
        "key `{name}` in this keychain is {existing}, not the offered {offered}; pass the replace option to replace it (what it signed stays verifiable with its public key, which is printed)"
    )]
    Different {
        name: String,
        existing: KeyId,
        offered: KeyId,
    },
    /// The age library failed to seal.
    #[error("sealing failed: {0}")]
    Seal(String),
}

/// A key opened from a sealed transfer, not yet stored: its public half is
/// there to check before [`Keychain::accept_transfer`] keeps it.
pub struct OfferedKey {
    name: String,
    secret: Zeroizing<[u8; SECRET_KEY_LENGTH]>,
    public: VerifyingKey,
}

impl fmt::Debug for OfferedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OfferedKey")
            .field("name", &self.name)
            .field("key_id", &KeyId::of(&self.public))
            .finish_non_exhaustive()
    }
}

impl OfferedKey {
    /// The offered key's public half.
    pub fn public_key(&self) -> VerifyingKey {
        self.public
    }

    /// The offered key's id.
    pub fn key_id(&self) -> KeyId {
        KeyId::of(&self.public)
    }
}

impl Keychain {
    /// Prepares this keychain to receive key `name`: a fresh one-time X25519
    /// identity is kept in the keychain (replacing any earlier pending request
    /// for that name) and its public recipient returned, to be given to the
    /// key's holder.
    pub fn request_transfer(&self, name: &str) -> Result<String, KeychainError> {
        check_name("key name", name)?;
        let identity = age::x25519::Identity::generate();
        let recipient = identity.to_public().to_string();
        let secret = identity.to_string();
        use age::secrecy::ExposeSecret;
        self.store_token(&transfer_token(name), secret.expose_secret())?;
        Ok(recipient)
    }

    /// Seals key `name` from this keychain for `recipient` (what the receiver's
    /// [`Keychain::request_transfer`] returned): ASCII-armored age text.
    pub fn seal_key_for(&self, name: &str, recipient: &str) -> Result<String, KeychainError> {
        let recipient = age::x25519::Recipient::from_str(recipient.trim())
            .map_err(|e| TransferError::BadRecipient(e.to_owned()))?;
        let key = self
            .load_key(name)?
            .ok_or_else(|| KeychainError::NotFound(name.to_owned()))?;
        let signing = self.signing_key(&key)?;
        let mut plain = Zeroizing::new(Vec::with_capacity(MAGIC.len() + name.len() + 33));
        plain.extend_from_slice(MAGIC);
        plain.extend_from_slice(name.as_bytes());
        plain.push(b'\n');
        plain.extend_from_slice(signing.as_bytes());
        age::encrypt_and_armor(&recipient, &plain)
            .map_err(|e| TransferError::Seal(e.to_string()).into())
    }

    /// Opens a sealed key `name` with this keychain's pending request. Nothing
    /// is stored: check [`OfferedKey::public_key`], then
    /// [`Keychain::accept_transfer`].
    pub fn open_transfer(&self, name: &str, sealed: &str) -> Result<OfferedKey, KeychainError> {
        check_name("key name", name)?;
        if sealed.len() > MAX_SEALED_LEN {
            return Err(TransferError::TooLarge(sealed.len()).into());
        }
        let identity = self
            .load_token(&transfer_token(name))?
            .ok_or_else(|| TransferError::NotRequested(name.to_owned()))?;
        let identity = age::x25519::Identity::from_str(identity.trim()).map_err(|_| {
            KeychainError::Store(format!(
                "the pending transfer identity for `{name}` is damaged"
            ))
        })?;
        let plain = Zeroizing::new(
            age::decrypt(&identity, sealed.trim().as_bytes())
                .map_err(|e| TransferError::CannotOpen(e.to_string()))?,
        );
        parse_sealed(name, &plain)
    }

    /// Stores an opened key under its name. The same key already there is
    /// kept as it is; a different one is refused unless `replace`. The
    /// pending request stays until [`Keychain::finish_transfer`]: the caller
    /// records the acceptance first (with the received key, the only one it
    /// may sign with), so a process stopped in between can open the same
    /// sealed file again and finish (issue 44).
    pub fn accept_transfer(
        &self,
        offered: OfferedKey,
        replace: bool,
    ) -> Result<KeychainKey, KeychainError> {
        let name = offered.name.clone();
        if let Some(existing) = self.load_key(&name)?
            && existing.public_key() != offered.public
            && !replace
        {
            return Err(TransferError::Different {
                name,
                existing: existing.key_id(),
                offered: offered.key_id(),
            }
            .into());
        }
        self.set_secret(crate::Item::Key(&name), offered.secret.as_slice())?;
        let stored = self
            .load_key(&name)?
            .ok_or_else(|| KeychainError::Store(format!("key `{name}` was not kept")))?;
        if stored.public_key() != offered.public {
            return Err(KeychainError::KeyChanged {
                name,
                expected: offered.key_id(),
                found: stored.key_id(),
            });
        }
        Ok(stored)
    }

    /// Ends the pending request for key `name`: the sealed file it opened
    /// cannot be opened again. Ending none is not an error.
    pub fn finish_transfer(&self, name: &str) -> Result<(), KeychainError> {
        check_name("key name", name)?;
        self.delete_token(&transfer_token(name))?;
        Ok(())
    }
}

/// The token under which a pending request's identity is kept.
fn transfer_token(name: &str) -> String {
    format!("transfer.{name}")
}

fn parse_sealed(name: &str, plain: &[u8]) -> Result<OfferedKey, KeychainError> {
    let not = |why| TransferError::NotAKey {
        expected: name.to_owned(),
        why,
    };
    let rest = plain
        .strip_prefix(MAGIC)
        .ok_or_else(|| not("no transfer header"))?;
    let newline = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| not("no key name"))?;
    if &rest[..newline] != name.as_bytes() {
        return Err(not("sealed for another key name").into());
    }
    let secret_bytes = &rest[newline + 1..];
    if secret_bytes.len() != SECRET_KEY_LENGTH {
        return Err(not("not a 32-byte Ed25519 secret").into());
    }
    let mut secret = Zeroizing::new([0u8; SECRET_KEY_LENGTH]);
    secret.copy_from_slice(secret_bytes);
    // The derived SigningKey zeroizes its copy when dropped here.
    let public = SigningKey::from_bytes(&secret).verifying_key();
    Ok(OfferedKey {
        name: name.to_owned(),
        secret,
        public,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_text_for_another_name_or_of_another_shape_is_refused() {
        let mut plain = MAGIC.to_vec();
        plain.extend_from_slice(b"approver\n");
        plain.extend_from_slice(&[7u8; 32]);
        assert!(parse_sealed("approver", &plain).is_ok());
        assert!(matches!(
            parse_sealed("log", &plain),
            Err(KeychainError::Transfer(TransferError::NotAKey { .. }))
        ));
        plain.push(0);
        assert!(parse_sealed("approver", &plain).is_err());
        assert!(parse_sealed("approver", b"something else").is_err());
    }

    #[test]
    fn an_offered_key_never_prints_its_secret() {
        let mut plain = MAGIC.to_vec();
        plain.extend_from_slice(b"log\n");
        plain.extend_from_slice(&[0xAB; 32]);
        let offered = parse_sealed("log", &plain).unwrap();
        let shown = format!("{offered:?}");
        assert!(!shown.to_lowercase().contains("abab"), "{shown}");
        assert!(!shown.contains("171, 171"), "{shown}");
    }
}
