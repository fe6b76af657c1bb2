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

/// Who issued a key, as its `apikey.issued` receipt says (issue 46: an
/// auditor reading the receipt could not tell), or revoked it or changed its
/// shadow mode outside the admin API (whose receipts name the admin token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssuedBy {
    /// The machine's owner, through the admin socket beside the running
    /// gateway (`interlock agents add`, `reviewers add`).
    OwnerBesideGateway,
    /// The machine's owner, with the keychain (no gateway running).
    OwnerWithKeychain,
    /// A browser that redeemed a one-time sign-in link.
    SigninLink,
    /// `interlock connect` (or the desktop's Connect), for a client it wrote.
    Connect,
    /// The desktop app, for its own window.
    DesktopApp,
}

impl IssuedBy {
    /// The receipt's `by`.
    pub fn name(self) -> &'static str {
        match self {
            IssuedBy::OwnerBesideGateway => "owner (admin socket)",
            IssuedBy::OwnerWithKeychain => "owner (keychain)",
            IssuedBy::SigninLink => "sign-in link",
            IssuedBy::Connect => "interlock connect",
            IssuedBy::DesktopApp => "desktop app",
        }
    }
}

/// Creates a key for `name` and stores its hash; returns the key (the only
/// time it exists outside the caller's hands) and the record. The receipt
/// says who issued it, and commits in one transaction with the key's row:
/// a process killed between two commits left a key row with no receipt,
/// which took the agent's name for good while nobody held the key (issue 44,
/// `regression_issue_44_a_key_is_issued_with_its_receipt_or_not_at_all`).
pub async fn issue_key(
    engine: &Engine,
    kind: ApiKeyKind,
    name: &str,
    role: &str,
    by: IssuedBy,
    shadow: bool,
) -> Result<(String, ApiKeyRecord), interlock_engine::EngineError> {
    if name.trim().is_empty() {
        return Err(StoreError::InvalidInput("the key's name is empty".into()).into());
    }
    let key = generate_key();
    let record = ApiKeyRecord {
        key_hash: key_hash(&key),
        kind,
        name: name.to_owned(),
        role: role.to_owned(),
        created_at: engine.now(),
        revoked_at: None,
        shadow,
    };
    // Who may call the gateway is itself a decision worth a receipt.
    let mut m = interlock_canon::Map::new();
    m.insert("kind".into(), kind.as_str().into());
    m.insert("name".into(), name.into());
    m.insert("role".into(), role.into());
    m.insert("key_hash".into(), record.key_hash.as_str().into());
    m.insert("by".into(), by.name().into());
    m.insert("shadow".into(), shadow.into());
    let add = interlock_store::AdminChange::AddKey {
        key_hash: record.key_hash.clone(),
        kind,
        name: record.name.clone(),
        role: record.role.clone(),
        // In the same transaction: `agents add --shadow` killed between two
        // commits left a key that was meant never to block, blocking.
        shadow,
        settings: interlock_store::KeySettings::default(),
        now: record.created_at,
    };
    engine
        .record_with_change(
            interlock_trust::events::EventType::ApiKeyIssued.as_str(),
            m,
            interlock_store::StateChange::Admin(add),
        )
        .await?;
    Ok((key, record))
}

/// Revokes every active key of `kind` named `name`; returns how many. Each
/// revocation commits in one transaction with its `admin.action`
/// (`key.revoked`) receipt, as the admin API's does: `interlock agents
/// revoke`, connect's and hooks' undo and the desktop's new window key wrote
/// the row alone, so who took a key away was nowhere on the log (issue 44,
/// `regression_issue_44_a_key_revoked_from_the_cli_has_its_receipt`). A
/// process stopped between two keys leaves each whole; running it again
/// revokes the rest.
pub async fn revoke_keys(
    engine: &Engine,
    kind: ApiKeyKind,
    name: &str,
    by: IssuedBy,
) -> Result<u64, interlock_engine::EngineError> {
    let mut revoked = 0;
    for k in active_keys(engine, kind, name).await? {
        let mut m = interlock_canon::Map::new();
        m.insert("action".into(), "key.revoked".into());
        m.insert("by".into(), by_of(by));
        m.insert("key_hash".into(), k.key_hash.as_str().into());
        m.insert("name".into(), name.into());
        m.insert("kind".into(), kind.as_str().into());
        let change = interlock_store::AdminChange::RevokeKey {
            key_hash: k.key_hash.clone(),
            now: engine.now(),
        };
        if committed(engine, m, change).await? {
            revoked += 1;
        }
    }
    Ok(revoked)
}

/// Turns shadow mode on or off for every active agent key named `name`;
/// returns how many keys changed. Each change commits with its
/// `admin.action` (`key.updated`) receipt: a key in shadow mode is never held
/// or blocked, so turning it on is a decision an auditor must be able to find
/// (`interlock agents shadow` wrote the row alone).
pub async fn set_shadow(
    engine: &Engine,
    name: &str,
    shadow: bool,
    by: IssuedBy,
) -> Result<u64, interlock_engine::EngineError> {
    let mut changed = 0;
    for k in active_keys(engine, ApiKeyKind::Agent, name).await? {
        if k.shadow == shadow {
            continue;
        }
        let settings = engine.store().key_settings(&k.key_hash).await?;
        let mut m = interlock_canon::Map::new();
        m.insert("action".into(), "key.updated".into());
        m.insert("by".into(), by_of(by));
        m.insert("key_hash".into(), k.key_hash.as_str().into());
        m.insert("name".into(), name.into());
        m.insert("shadow".into(), shadow.into());
        let change = interlock_store::AdminChange::UpdateKey {
            key_hash: k.key_hash.clone(),
            role: k.role.clone(),
            shadow,
            settings,
            now: engine.now(),
        };
        if committed(engine, m, change).await? {
            changed += 1;
        }
    }
    Ok(changed)
}

/// The active keys of `kind` named `name`.
async fn active_keys(
    engine: &Engine,
    kind: ApiKeyKind,
    name: &str,
) -> Result<Vec<ApiKeyRecord>, StoreError> {
    let mut keys = engine.store().api_keys(kind).await?;
    keys.retain(|k| k.name == name && k.revoked_at.is_none());
    Ok(keys)
}

/// A receipt's `by` for an act outside the admin API.
fn by_of(by: IssuedBy) -> interlock_canon::Value {
    let mut m = interlock_canon::Map::new();
    m.insert("name".into(), by.name().into());
    interlock_canon::Value::Object(m)
}

/// Records an `admin.action` with its change; `false` when the change found
/// its key no longer active (another process revoked it meanwhile).
async fn committed(
    engine: &Engine,
    fields: interlock_canon::Map,
    change: interlock_store::AdminChange,
) -> Result<bool, interlock_engine::EngineError> {
    match engine
        .record_with_change(
            interlock_trust::events::EventType::AdminAction.as_str(),
            fields,
            interlock_store::StateChange::Admin(change),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(interlock_engine::EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Why a name cannot be given to a new key (issue 39 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameTaken {
    /// An active key of the kind has it.
    Active,
    /// A revoked agent key had it. An agent's plans, standing grants and held
    /// calls belong to `agent:<name>`, so a name stays with the key that first
    /// had it and that key's rotations (`key.rotated` names both hashes): a
    /// new key under it would inherit what the revoked one was approved for.
    Retired,
}

impl NameTaken {
    /// The machine-readable code a refusal carries.
    pub fn code(self) -> &'static str {
        match self {
            NameTaken::Active => "name_taken",
            NameTaken::Retired => "name_retired",
        }
    }

    /// What a refusal says.
    pub fn message(self, kind: ApiKeyKind, name: &str) -> String {
        match self {
            NameTaken::Active => format!(
                "an active {} key is named {name:?} already; pick another name, or revoke that key first",
                kind.as_str()
            ),
            NameTaken::Retired => format!(
                "a revoked {} key was named {name:?}; an agent's name is its identity and is never \
                 given to a new key (it would inherit that agent's approved plans and held calls): \
                 pick another name, or rotate a live key to keep its identity",
                kind.as_str()
            ),
        }
    }
}

/// Whether `name` may be given to a new key of `kind`. A name is one key's
/// (issue 39 item 5): for agents, one key's and its rotations' for ever, so
/// an operator can neither take a live agent's name nor revive a revoked
/// one's. A reviewer key's name is only a label (decisions are the approver
/// key's), so only a live one blocks it on the admin API, and the owner may
/// give one person several elsewhere. Every face that issues a key asks
/// this first: the admin API (409), the admin socket and the CLI.
pub async fn name_taken(
    engine: &Engine,
    kind: ApiKeyKind,
    name: &str,
) -> Result<Option<NameTaken>, StoreError> {
    let keys = engine.store().api_keys(kind).await?;
    Ok(taken_among(&keys, kind, name))
}

/// The first of `base`, `base-2`, `base-3`, … that [`name_taken`] allows:
/// `interlock connect` names its key after the client, and a client
/// connected again after an undo gets a new identity, not the old one's.
pub async fn first_free_name(
    engine: &Engine,
    kind: ApiKeyKind,
    base: &str,
) -> Result<String, StoreError> {
    let keys = engine.store().api_keys(kind).await?;
    Ok(std::iter::once(base.to_owned())
        .chain((2..).map(|i| format!("{base}-{i}")))
        .find(|n| taken_among(&keys, kind, n).is_none())
        .expect("an unbounded sequence has a free name"))
}

/// [`name_taken`]'s rule over `keys` (every key of `kind`, revoked ones too).
fn taken_among(keys: &[ApiKeyRecord], kind: ApiKeyKind, name: &str) -> Option<NameTaken> {
    let named = || keys.iter().filter(|k| k.name == name);
    if named().any(|k| k.revoked_at.is_none()) {
        Some(NameTaken::Active)
    } else if kind == ApiKeyKind::Agent && named().next().is_some() {
        Some(NameTaken::Retired)
    } else {
        None
    }
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
