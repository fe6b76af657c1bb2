//! Ed25519 keys held in the OS keychain: approvers' keys and the gateway's
//! checkpoint key.
//!
//! An approval is only worth something if the key that made it cannot be copied off
//! the machine by whatever else runs there (an agent, a web view, a backup). So the
//! 32-byte secret is generated here, written straight into the OS keychain (the
//! Secret Service on Linux, through gnome-keyring or KWallet) and never written to
//! disk by Interlock. A [`KeychainKey`] holds only the key's name and public key; each
//! signature fetches the secret from the keychain, signs, and zeroizes it again, so a
//! long-running process does not keep the secret in its memory between signatures.
//!
//! # Refusing stores that do not persist
//!
//! `keyring` has in-memory stores (its mock). A key created in one would sign
//! happily and then vanish with the process, leaving approvals that nobody can make
//! again and a registry entry whose key is gone. [`Keychain::open`] therefore uses the
//! real Secret Service and fails with [`KeychainError::NoSecretService`] when none is
//! reachable, and [`Keychain::with_store`] rejects any store that does not keep
//! credentials until they are deleted.
//!
//! # Backend
//!
//! On Linux this links `keyring-core` with only the
//! `zbus-secret-service-keyring-store` (pure Rust: `zbus` on `async-io`, RustCrypto for
//! the Secret Service's Diffie–Hellman session encryption), so building needs no
//! `libdbus-dev` or OpenSSL and the blocking calls work with or without a tokio runtime
//! (call them from `spawn_blocking` inside one: each is a D-Bus round trip).
//! Headless machines (CI, servers) get a keychain from `scripts/with-keyring`.
//!
//! # What is stored
//!
//! One Secret Service item per key, in the default ("login") collection, with the
//! attributes `service` = the keychain's service name and `username` = the key name,
//! labelled `Interlock key <name> (<service>)`; its secret is the raw 32-byte Ed25519
//! secret key. The public key is derived from the secret, not stored beside it, so the
//! two cannot disagree.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ed25519_dalek::{SECRET_KEY_LENGTH, Signature, SigningKey, VerifyingKey};
use interlock_core::decision::{DecisionError, KeyId};
use keyring_core::api::{CredentialPersistence, CredentialStore};
use keyring_core::{Entry, Error as StoreError};
use zeroize::{Zeroize, Zeroizing};

pub mod transfer;
pub use transfer::{OfferedKey, TransferError};

/// The longest key name accepted. Names end up in Secret Service attributes and
/// labels, which some implementations limit; 128 is far more than a name needs.
pub const MAX_NAME_LEN: usize = 128;

/// Why a keychain operation failed. No variant ever carries secret key bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// The Secret Service could not be reached (no session bus, or nothing owns
    /// `org.freedesktop.secrets` on it). The string is the D-Bus error.
    #[error(
        "no Secret Service on the session bus; start gnome-keyring (see scripts/with-keyring): {0}"
    )]
    NoSecretService(String),
    /// The store would lose keys (process memory, logout, reboot).
    #[error(
        "refusing keychain store `{vendor}`: it keeps keys only {persistence}, and an approver key must persist until deleted"
    )]
    NotPersistent { vendor: String, persistence: String },
    /// No OS keychain backend is built for this platform.
    #[error("no OS keychain backend is available on this platform")]
    Unsupported,
    /// A key or service name that this crate will not use.
    #[error("invalid {what} `{name}`: use 1 to {MAX_NAME_LEN} of A-Z a-z 0-9 . _ -")]
    InvalidName { what: &'static str, name: String },
    /// [`Keychain::create_key`] found a key of that name; it never overwrites one,
    /// because the old key's approvals and registry entry would be orphaned.
    #[error("key `{0}` already exists in the keychain")]
    AlreadyExists(String),
    /// The key was deleted from the keychain after it was loaded.
    #[error("key `{0}` is no longer in the keychain")]
    NotFound(String),
    /// The keychain item is not a 32-byte Ed25519 secret key.
    #[error(
        "the keychain item for key `{name}` is not a {SECRET_KEY_LENGTH}-byte Ed25519 secret key ({len} bytes)"
    )]
    Malformed { name: String, len: usize },
    /// The item under this name now holds a different key than when it was loaded.
    /// Signing with it would produce signatures under a public key nobody expects.
    #[error(
        "key `{name}` in the keychain has changed since it was loaded (expected {expected}, found {found})"
    )]
    KeyChanged {
        name: String,
        expected: KeyId,
        found: KeyId,
    },
    /// The keychain is locked, or the user (or a missing prompter) refused access.
    #[error("the keychain refused access (is it locked? see scripts/with-keyring): {0}")]
    Access(String),
    /// Several Secret Service items match this key's attributes (e.g. one written by
    /// another tool), so which secret is the key is ambiguous.
    #[error("{count} keychain items match key `{name}`; remove the extra ones")]
    Ambiguous { name: String, count: usize },
    /// Any other failure reported by the keychain.
    #[error("keychain error: {0}")]
    Store(String),
    /// The OS random number generator failed while generating a key.
    #[error("the OS random number generator failed: {0}")]
    Random(String),
    /// Handing a key to another machine failed ([`transfer`]).
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

/// A handle on the OS keychain, scoped to one service name (e.g. `interlock`), under
/// which keys are stored by name. Cheap to clone; clones share one D-Bus connection.
#[derive(Clone)]
pub struct Keychain {
    service: String,
    store: Arc<StoreSlot>,
}

impl fmt::Debug for Keychain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keychain")
            .field("service", &self.service)
            .field("store", &self.store.current().vendor())
            .finish()
    }
}

/// The store a [`Keychain`] talks to, and how to open it again.
///
/// A Secret Service store holds one D-Bus session with the daemon; when the
/// daemon dies (gnome-keyring aborts on a GLib assertion when clients open
/// sessions concurrently — gnome-keyring#190, seen under this project's test
/// load) that session is gone for good, and every later call through the old
/// store fails. D-Bus activation (or systemd) starts a new daemon with the
/// items on disk, so a store [`Keychain::open`] made is opened again once
/// and the call repeated ([`Keychain::on_item`]). An explicit store
/// ([`Keychain::with_store`]) is never replaced behind its owner's back.
struct StoreSlot {
    current: std::sync::Mutex<Arc<CredentialStore>>,
    reopen: Option<OpenStore>,
}

/// Opens a store (the platform's, for a [`Keychain::open`] handle).
type OpenStore = fn() -> Result<Arc<CredentialStore>, KeychainError>;

impl StoreSlot {
    fn current(&self) -> Arc<CredentialStore> {
        self.current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// A new store in place of `failed`, unless another thread already
    /// replaced it (then that one); `None` for a store that is not reopened.
    fn replace(
        &self,
        failed: &Arc<CredentialStore>,
    ) -> Option<Result<Arc<CredentialStore>, KeychainError>> {
        let reopen = self.reopen?;
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !Arc::ptr_eq(&current, failed) {
            return Some(Ok(current.clone()));
        }
        Some(reopen().inspect(|fresh| *current = fresh.clone()))
    }
}

/// Which keychain item a call is about: a key (username = its name) or a
/// token (username = `token:<name>`), each with the label it is stored under.
#[derive(Clone, Copy)]
enum Item<'a> {
    Key(&'a str),
    Token(&'a str),
}

impl Item<'_> {
    fn name(&self) -> &str {
        match self {
            Item::Key(name) | Item::Token(name) => name,
        }
    }
}

impl Keychain {
    /// Opens the OS keychain for `service`: on Linux, the Secret Service on the
    /// session bus (`DBUS_SESSION_BUS_ADDRESS`). Fails with
    /// [`KeychainError::NoSecretService`] when there is none, rather than falling back
    /// to anything that does not persist.
    pub fn open(service: &str) -> Result<Keychain, KeychainError> {
        check_name("service name", service)?;
        let mut keychain = Keychain::with_store(os_store()?, service)?;
        keychain.store = Arc::new(StoreSlot {
            current: std::sync::Mutex::new(keychain.store.current()),
            reopen: Some(os_store),
        });
        Ok(keychain)
    }

    /// Uses an explicit `keyring` store (e.g. another platform's, or a store a caller
    /// configured). Refuses stores that do not keep credentials until they are deleted
    /// (`keyring`'s in-memory mock, kernel keyrings that forget at reboot, …).
    pub fn with_store(
        store: Arc<CredentialStore>,
        service: &str,
    ) -> Result<Keychain, KeychainError> {
        check_name("service name", service)?;
        let persistence = match store.persistence() {
            CredentialPersistence::UntilDelete => None,
            CredentialPersistence::EntryOnly => Some("while one entry object lives"),
            CredentialPersistence::ProcessOnly => Some("in process memory"),
            CredentialPersistence::UntilLogout => Some("until logout"),
            CredentialPersistence::UntilReboot => Some("until reboot"),
            _ => Some("for an unspecified time"),
        };
        if let Some(persistence) = persistence {
            return Err(KeychainError::NotPersistent {
                vendor: store.vendor(),
                persistence: persistence.to_owned(),
            });
        }
        Ok(Keychain {
            service: service.to_owned(),
            store: Arc::new(StoreSlot {
                current: std::sync::Mutex::new(store),
                reopen: None,
            }),
        })
    }

    /// The service name keys are stored under.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Generates a new Ed25519 key from the OS random generator and stores its secret
    /// in the keychain under `name`. Fails with [`KeychainError::AlreadyExists`] rather
    /// than replace an existing key.
    ///
    /// The existence check and the write are two Secret Service calls, so two
    /// processes creating the same name at the same instant could both succeed (the
    /// second replaces the first); [`KeychainKey`]'s signing detects that afterwards
    /// ([`KeychainError::KeyChanged`]) instead of signing with the wrong key.
    pub fn create_key(&self, name: &str) -> Result<KeychainKey, KeychainError> {
        if let Some(mut existing) = self.read_secret(name)? {
            existing.zeroize();
            return Err(KeychainError::AlreadyExists(name.to_owned()));
        }
        let mut secret = Zeroizing::new([0u8; SECRET_KEY_LENGTH]);
        getrandom::fill(secret.as_mut_slice()).map_err(|e| KeychainError::Random(e.to_string()))?;
        let public = SigningKey::from_bytes(&secret).verifying_key();
        self.set_secret(Item::Key(name), secret.as_slice())?;
        // Read it back: a key the keychain did not really keep would sign now and be
        // unusable later, after its public key was registered as an approver.
        let stored = self.load_key(name)?.ok_or_else(|| {
            KeychainError::Store(format!("key `{name}` was not kept by the keychain"))
        })?;
        if stored.public != public {
            return Err(KeychainError::KeyChanged {
                name: name.to_owned(),
                expected: KeyId::of(&public),
                found: stored.key_id(),
            });
        }
        Ok(stored)
    }

    /// Loads the key stored under `name` (its public key, derived from the secret), or
    /// `None` if there is none.
    pub fn load_key(&self, name: &str) -> Result<Option<KeychainKey>, KeychainError> {
        let Some(secret) = self.read_secret(name)? else {
            return Ok(None);
        };
        let public = SigningKey::from_bytes(&secret).verifying_key();
        Ok(Some(KeychainKey {
            name: name.to_owned(),
            public,
            keychain: self.clone(),
        }))
    }

    /// Loads the key `name`, creating it first if there is none; the flag says whether
    /// it was created (so a caller can register a new approver key, or print it).
    pub fn load_or_create(&self, name: &str) -> Result<(KeychainKey, bool), KeychainError> {
        if let Some(key) = self.load_key(name)? {
            return Ok((key, false));
        }
        Ok((self.create_key(name)?, true))
    }

    /// Deletes the key `name` from the keychain. Returns whether there was one.
    /// Irreversible: approvals it made still verify, but it can make no more.
    pub fn delete_key(&self, name: &str) -> Result<bool, KeychainError> {
        self.delete(Item::Key(name))
    }

    /// Stores an API token (e.g. a team gateway's reviewer key) under `name`,
    /// replacing any earlier one. Tokens live beside keys but in their own
    /// namespace (`token:<name>`), so a token can never be read as a key.
    pub fn store_token(&self, name: &str, token: &str) -> Result<(), KeychainError> {
        if token.is_empty() {
            return Err(KeychainError::Store(format!("token `{name}` is empty")));
        }
        self.set_secret(Item::Token(name), token.as_bytes())
    }

    /// The API token stored under `name`, if any.
    pub fn load_token(&self, name: &str) -> Result<Option<Zeroizing<String>>, KeychainError> {
        let Some(bytes) = self.get_secret(Item::Token(name))? else {
            return Ok(None);
        };
        match std::str::from_utf8(&bytes) {
            Ok(s) => Ok(Some(Zeroizing::new(s.to_owned()))),
            Err(_) => Err(KeychainError::Malformed {
                name: name.to_owned(),
                len: bytes.len(),
            }),
        }
    }

    /// Deletes the token `name`. Returns whether there was one.
    pub fn delete_token(&self, name: &str) -> Result<bool, KeychainError> {
        self.delete(Item::Token(name))
    }

    /// Runs `op` on `item`'s entry. When the Secret Service went away
    /// mid-call (its daemon died: see [`StoreSlot`]), the store is opened
    /// again and `op` runs once more; every `op` here is safe to repeat (a
    /// read, a write of the same bytes, a delete).
    fn on_item<T>(
        &self,
        item: Item<'_>,
        op: impl Fn(&Entry) -> Result<T, StoreError>,
    ) -> Result<T, KeychainError> {
        let name = item.name();
        match item {
            Item::Key(name) => check_name("key name", name)?,
            Item::Token(name) => check_name("token name", name)?,
        }
        let run = |store: &CredentialStore| {
            let (user, label) = match item {
                Item::Key(name) => (
                    name.to_owned(),
                    format!("Interlock key {name} ({})", self.service),
                ),
                Item::Token(name) => (
                    format!("token:{name}"),
                    format!("Interlock token {name} ({})", self.service),
                ),
            };
            let modifiers = HashMap::from([("label", label.as_str())]);
            op(&store.build(&self.service, &user, Some(&modifiers))?)
        };
        let store = self.store.current();
        match run(store.as_ref()) {
            Err(e) if service_went_away(&describe(&e)) => match self.store.replace(&store) {
                Some(Ok(fresh)) => run(fresh.as_ref()).map_err(|e| store_error(e, name)),
                Some(Err(reopen)) => Err(reopen),
                None => Err(store_error(e, name)),
            },
            other => other.map_err(|e| store_error(e, name)),
        }
    }

    /// The secret bytes of `item`, `None` if there is no such item.
    fn get_secret(&self, item: Item<'_>) -> Result<Option<Zeroizing<Vec<u8>>>, KeychainError> {
        self.on_item(item, |entry| match entry.get_secret() {
            Ok(bytes) => Ok(Some(Zeroizing::new(bytes))),
            Err(StoreError::NoEntry) => Ok(None),
            Err(e) => Err(e),
        })
    }

    fn set_secret(&self, item: Item<'_>, secret: &[u8]) -> Result<(), KeychainError> {
        self.on_item(item, |entry| entry.set_secret(secret))
    }

    /// Deletes `item`; whether there was one. A delete repeated after the
    /// service went away that finds nothing reports `true`: the first try
    /// may have deleted it, and either way it is gone.
    fn delete(&self, item: Item<'_>) -> Result<bool, KeychainError> {
        let tries = std::cell::Cell::new(0u8);
        self.on_item(item, |entry| {
            tries.set(tries.get() + 1);
            match entry.delete_credential() {
                Ok(()) => Ok(true),
                Err(StoreError::NoEntry) => Ok(tries.get() > 1),
                Err(e) => Err(e),
            }
        })
    }

    /// The 32-byte secret of key `name`: `None` if there is no item, an
    /// error if it is not a 32-byte key. Zeroized when dropped.
    fn read_secret(
        &self,
        name: &str,
    ) -> Result<Option<Zeroizing<[u8; SECRET_KEY_LENGTH]>>, KeychainError> {
        let Some(bytes) = self.get_secret(Item::Key(name))? else {
            return Ok(None);
        };
        if bytes.len() != SECRET_KEY_LENGTH {
            return Err(KeychainError::Malformed {
                name: name.to_owned(),
                len: bytes.len(),
            });
        }
        let mut secret = Zeroizing::new([0u8; SECRET_KEY_LENGTH]);
        secret.copy_from_slice(&bytes);
        Ok(Some(secret))
    }

    /// Fetches the secret for `key` and checks it still is the key that was loaded.
    fn signing_key(&self, key: &KeychainKey) -> Result<SigningKey, KeychainError> {
        let secret = self
            .read_secret(&key.name)?
            .ok_or_else(|| KeychainError::NotFound(key.name.clone()))?;
        // SigningKey zeroizes its copy on drop (ed25519-dalek's default `zeroize`
        // feature); `secret` is zeroized when it goes out of scope here.
        let signing = SigningKey::from_bytes(&secret);
        if signing.verifying_key() != key.public {
            return Err(KeychainError::KeyChanged {
                name: key.name.clone(),
                expected: key.key_id(),
                found: KeyId::of(&signing.verifying_key()),
            });
        }
        Ok(signing)
    }
}

/// An Ed25519 key whose secret stays in the OS keychain. Holds only the name and the
/// public key; every signature fetches the secret, uses it and zeroizes it.
#[derive(Clone)]
pub struct KeychainKey {
    name: String,
    public: VerifyingKey,
    keychain: Keychain,
}

impl fmt::Debug for KeychainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeychainKey")
            .field("name", &self.name)
            .field("service", &self.keychain.service)
            .field("key_id", &self.key_id())
            .finish()
    }
}

impl KeychainKey {
    /// The name the key is stored under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Ed25519 public key.
    pub fn public_key(&self) -> VerifyingKey {
        self.public
    }

    /// The key's identity as approval statements name it (SHA-256 of the public key).
    pub fn key_id(&self) -> KeyId {
        KeyId::of(&self.public)
    }

    /// A short form of [`Self::key_id`] for humans to compare (`abcd:ef01:…`).
    pub fn fingerprint(&self) -> String {
        self.key_id().fingerprint()
    }

    /// The secret, held in this process from now on (zeroized on drop), for a
    /// *service* key that signs at a high rate — the gateway's log key signs every
    /// receipt, and a D-Bus round trip per entry would cap the log. Never use it for
    /// an approver key: those sign through [`Self::sign_message`], one fetch per
    /// decision, so their secret is in memory only while it signs.
    pub fn load_service_key(&self) -> Result<ed25519_dalek::SigningKey, KeychainError> {
        self.keychain.signing_key(self)
    }

    /// Signs `message` with the secret fetched from the keychain now. Fails if the key
    /// was deleted or replaced since it was loaded.
    pub fn sign_message(&self, message: &[u8]) -> Result<Signature, KeychainError> {
        let signing = self.keychain.signing_key(self)?;
        Ok(ed25519_dalek::Signer::sign(&signing, message))
    }
}

/// Approval statements (`interlock_core::decision::sign_decision`).
impl interlock_core::decision::Signer for KeychainKey {
    fn public_key(&self) -> VerifyingKey {
        self.public
    }

    fn sign(&self, message: &[u8]) -> Result<Signature, DecisionError> {
        self.sign_message(message)
            .map_err(|e| DecisionError::Signing(e.to_string()))
    }
}

/// Log checkpoints and other signed notes (`interlock_merkle::sign_checkpoint`), which
/// take any Ed25519 `signature::Signer`. Use `try_sign`: the infallible `sign` panics
/// when the keychain fails.
impl ed25519_dalek::Signer<Signature> for KeychainKey {
    fn try_sign(&self, message: &[u8]) -> Result<Signature, ed25519_dalek::SignatureError> {
        self.sign_message(message)
            .map_err(ed25519_dalek::SignatureError::from_source)
    }
}

/// The platform's persistent keychain store.
#[cfg(target_os = "linux")]
fn os_store() -> Result<Arc<CredentialStore>, KeychainError> {
    // Any failure here is a failure to reach the service (no bus, nothing owning
    // org.freedesktop.secrets, or its DH session refused); say how to get one.
    // A daemon that dies while the session is opened (gnome-keyring has crashed
    // so under load here) leaves `NoReply` or a disconnect: D-Bus activation
    // starts a new one, so that is tried again, twice, before giving up.
    let mut attempt = 0u64;
    loop {
        match zbus_secret_service_keyring_store::Store::new() {
            Ok(store) => return Ok(store),
            Err(e) if attempt < 2 && service_went_away(&describe(&e)) => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(250 * attempt));
            }
            Err(e) => return Err(KeychainError::NoSecretService(describe(&e))),
        }
    }
}

/// Whether a D-Bus failure says the service went away mid-request, or that
/// the daemon serving now is a new one that never saw our session (worth a
/// new session and attempt), rather than that there is none or it refused.
fn service_went_away(described: &str) -> bool {
    [
        "NoReply",
        "Disconnected",
        "disconnected from message bus",
        "Secret.Error.NoSession",
    ]
    .iter()
    .any(|m| described.contains(m))
}

#[cfg(not(target_os = "linux"))]
fn os_store() -> Result<Arc<CredentialStore>, KeychainError> {
    Err(KeychainError::Unsupported)
}

/// Converts a `keyring` error without its payload: `BadEncoding` and `BadDataFormat`
/// carry the raw item bytes (here: secret key bytes), which are zeroized, never shown.
fn store_error(e: StoreError, name: &str) -> KeychainError {
    match e {
        StoreError::NoEntry => KeychainError::NotFound(name.to_owned()),
        StoreError::NoStorageAccess(e) => KeychainError::Access(e.to_string()),
        StoreError::Ambiguous(entries) => KeychainError::Ambiguous {
            name: name.to_owned(),
            count: entries.len(),
        },
        StoreError::BadEncoding(mut bytes) | StoreError::BadDataFormat(mut bytes, _) => {
            let len = bytes.len();
            bytes.zeroize();
            KeychainError::Malformed {
                name: name.to_owned(),
                len,
            }
        }
        other => KeychainError::Store(describe(&other)),
    }
}

/// Display of a `keyring` error that carries no item bytes, with its source chain
/// (the D-Bus error is in the source, and it is what says why).
fn describe(e: &StoreError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

#[cfg(all(test, target_os = "linux"))]
mod transient_tests {
    /// The failure a CI run met when gnome-keyring-daemon crashed while an
    /// approval opened its session is retried; "nothing there" is not.
    #[test]
    fn regression_a_daemon_that_dies_mid_session_is_tried_again() {
        assert!(super::service_went_away(
            "Platform failure: zbus error: org.freedesktop.DBus.Error.NoReply: Message recipient disconnected from message bus without replying"
        ));
        // What a handle's next call meets once a new daemon serves.
        assert!(super::service_went_away(
            "Platform failure: zbus error: org.freedesktop.Secret.Error.NoSession: The session does not exist"
        ));
        assert!(!super::service_went_away(
            "Platform failure: zbus error: org.freedesktop.DBus.Error.ServiceUnknown: The name is not activatable"
        ));
    }
}

/// Names become Secret Service attributes and item labels; keep them to a portable,
/// unambiguous alphabet so that a name typed on a command line matches exactly.
fn check_name(what: &'static str, name: &str) -> Result<(), KeychainError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(KeychainError::InvalidName {
            what,
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_store_is_refused() {
        let mock = keyring_core::mock::Store::new().expect("mock store");
        let err = Keychain::with_store(mock, "interlock-test").unwrap_err();
        assert!(
            matches!(err, KeychainError::NotPersistent { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("in process memory"), "{err}");
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", "a b", "a/b", "ключ", &"x".repeat(MAX_NAME_LEN + 1)] {
            assert!(check_name("key name", bad).is_err(), "{bad:?}");
        }
        for good in [
            "approver",
            "gateway-checkpoint",
            "a.b_c-1",
            &"x".repeat(MAX_NAME_LEN),
        ] {
            assert!(check_name("key name", good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn secret_bytes_never_reach_error_text() {
        let secret = vec![0xA5u8; SECRET_KEY_LENGTH];
        let hex_secret = "a5a5a5a5";
        let err = store_error(StoreError::BadEncoding(secret.clone()), "k");
        assert_eq!(
            err,
            KeychainError::Malformed {
                name: "k".into(),
                len: 32
            }
        );
        let err2 = store_error(StoreError::BadDataFormat(secret, "bad".into()), "k");
        for text in [
            format!("{err:?}"),
            err.to_string(),
            format!("{err2:?}"),
            err2.to_string(),
        ] {
            assert!(!text.contains("165"), "{text}");
            assert!(!text.to_lowercase().contains(hex_secret), "{text}");
        }
    }
}
