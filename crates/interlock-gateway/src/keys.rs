//! API keys: generated once, shown once, stored only as SHA-256.
//!
//! A key is `ilk_` + 43 base64url characters (32 random bytes). The prefix lets
//! secret scanners recognise a leaked key; the hash is what the store keeps, so
//! the database alone never lets anyone call the gateway.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use interlock_engine::Engine;
use interlock_store::{ApiKeyKind, ApiKeyRecord, StoreError};

/// The prefix of every Interlock API key.
pub const KEY_PREFIX: &str = "ilk_";

/// A new random key (shown to the operator once).
pub fn generate_key() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// `sha256:<hex>` of a key, as stored.
pub fn key_hash(key: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
    format!("sha256:{}", hex::encode(d.as_ref()))
}

/// Creates a key for `name` and stores its hash; returns the key (the only
/// time it exists outside the caller's hands) and the record.
pub async fn issue_key(
    engine: &Engine,
    kind: ApiKeyKind,
    name: &str,
    role: &str,
) -> Result<(String, ApiKeyRecord), interlock_engine::EngineError> {
    let key = generate_key();
    let record = engine
        .store()
        .add_api_key(&key_hash(&key), kind, name, role)
        .await?;
    // Who may call the gateway is itself a decision worth a receipt.
    let mut m = interlock_canon::Map::new();
    m.insert("kind".into(), kind.as_str().into());
    m.insert("name".into(), name.into());
    m.insert("role".into(), role.into());
    m.insert("key_hash".into(), record.key_hash.as_str().into());
    engine
        .record(interlock_trust::events::EventType::ApiKeyIssued.as_str(), m)
        .await?;
    Ok((key, record))
}

/// The active key record for a presented key of the expected kind, if any.
pub async fn authenticate(
    engine: &Engine,
    presented: &str,
    kind: ApiKeyKind,
) -> Result<Option<ApiKeyRecord>, StoreError> {
    if !presented.starts_with(KEY_PREFIX) || presented.len() > 128 {
        return Ok(None);
    }
    Ok(engine
        .store()
        .api_key(&key_hash(presented))
        .await?
        .filter(|r| r.kind == kind && r.revoked_at.is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_prefixed_and_hashed() {
        let a = generate_key();
        let b = generate_key();
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX) && a.len() == 4 + 43);
        assert_eq!(key_hash("ilk_x"), key_hash("ilk_x"));
        assert!(key_hash(&a).starts_with("sha256:") && !key_hash(&a).contains(&a[4..]));
    }
}
