//! Connect's undo backup, sealed (issue 39 item 19). The backup is the
//! client's file as it was before connect — its tokens included, in clear,
//! though connect moved those tokens into the keychain. When connect moved
//! any, the backup is sealed (ChaCha20-Poly1305) with a random key kept in
//! the keychain beside them (`connect-backup.…`), which undo reads back and
//! then deletes: the data directory alone no longer holds the tokens.

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

/// What a sealed backup starts with (a client's file never does: JSON, JSONC
/// and TOML do not start with a NUL byte).
const MAGIC: &[u8] = b"\0interlock-sealed-backup-v1\n";

/// The keychain name prefix of a backup's sealing key.
pub(crate) const BACKUP_KEY_PREFIX: &str = interlock_gateway::admin::CONNECT_BACKUP_KEY_PREFIX;

/// Why a sealed backup could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("the backup's sealing key is not a valid key")]
    BadKey,
    #[error("the backup does not open with its key (changed, or another layer's key)")]
    Tampered,
}

/// A fresh key, hex, for the keychain.
pub(crate) fn new_key() -> String {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).expect("the OS random source works");
    hex::encode(key)
}

fn aead(key_hex: &str) -> Result<LessSafeKey, SealError> {
    let key = hex::decode(key_hex).map_err(|_| SealError::BadKey)?;
    let unbound = UnboundKey::new(&CHACHA20_POLY1305, &key).map_err(|_| SealError::BadKey)?;
    Ok(LessSafeKey::new(unbound))
}

/// `plain` sealed with `key_hex`: the magic, a random nonce, the ciphertext
/// and its tag.
pub(crate) fn seal(key_hex: &str, plain: &[u8]) -> Result<Vec<u8>, SealError> {
    let key = aead(key_hex)?;
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).expect("the OS random source works");
    let mut body = plain.to_vec();
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(MAGIC),
        &mut body,
    )
    .map_err(|_| SealError::BadKey)?;
    let mut out = Vec::with_capacity(MAGIC.len() + NONCE_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Whether `bytes` is a sealed backup (else a backup from before sealing, or
/// one of a connect that moved no token: the file as it was).
pub(crate) fn is_sealed(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The backup `sealed` opened with `key_hex`.
pub(crate) fn open(key_hex: &str, sealed: &[u8]) -> Result<Vec<u8>, SealError> {
    let rest = sealed.strip_prefix(MAGIC).ok_or(SealError::Tampered)?;
    if rest.len() < NONCE_LEN {
        return Err(SealError::Tampered);
    }
    let (nonce, body) = rest.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealError::Tampered)?;
    let mut body = body.to_vec();
    let plain = aead(key_hex)?
        .open_in_place(nonce, Aad::from(MAGIC), &mut body)
        .map_err(|_| SealError::Tampered)?;
    Ok(plain.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_backup_opens_only_with_its_key_and_unchanged() {
        let plain =
            br#"{"mcpServers":{"gh":{"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"ghp_secret"}}}}"#;
        let key = new_key();
        let sealed = seal(&key, plain).unwrap();
        assert!(is_sealed(&sealed) && !is_sealed(plain));
        assert!(
            !sealed.windows(10).any(|w| w == b"ghp_secret"),
            "the token is not in the sealed bytes"
        );
        assert_eq!(open(&key, &sealed).unwrap(), plain);
        assert!(matches!(
            open(&new_key(), &sealed),
            Err(SealError::Tampered)
        ));
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(open(&key, &flipped), Err(SealError::Tampered)));
        assert!(matches!(open("zz", &sealed), Err(SealError::BadKey)));
    }
}
