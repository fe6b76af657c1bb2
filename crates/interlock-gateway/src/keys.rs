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

/// Whether an active key of `kind` is named `name` already. A name is one
/// key's (issue 39 item 5): plans and held calls belong to `agent:<name>`, so
/// a second agent key under an existing name would run that agent's approved
/// plans and consume its approved calls. Every face that issues a key asks
/// this first: the admin API (409), the admin socket and the CLI.
pub async fn name_taken(engine: &Engine, kind: ApiKeyKind, name: &str) -> Result<bool, StoreError> {
    Ok(engine
        .store()
        .api_keys(kind)
        .await?
        .iter()
        .any(|k| k.name == name && k.revoked_at.is_none()))
}

/// What a refusal of a taken name says.
pub fn name_taken_message(kind: ApiKeyKind, name: &str) -> String {
    format!(
        "an active {} key is named {name:?} already; pick another name, or revoke that key first",
        kind.as_str()
    )
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
