//! The log key on a team's machines (issue 20): every gateway that appends to
//! one shared database signs its checkpoints with the one key its log was
//! started with, so a joining machine receives that key instead of making its
//! own.
//!
//! Two rules live here. A machine with no log key does not invent one for a
//! database whose log already records a key (it would only be refused by the
//! log, after leaving a useless key behind); it says how to receive the team's.
//! And a received key is kept only if it is the one the database records, so a
//! key sealed by someone else to this machine's (public) recipient cannot slip
//! in as the team's.

use interlock_keychain::{Keychain, KeychainKey, OfferedKey};
use interlock_merkle::NoteVerifier;

use crate::{Host, HostError, LOG_KEY};

/// What `accept_log_key` kept, and what it checked it against.
#[derive(Debug)]
pub struct AcceptedLogKey {
    /// The key now in this machine's keychain.
    pub key: KeychainKey,
    /// The verifier key the database records for its log, which the accepted
    /// key matches; `None` when the database has no log yet.
    pub database_vkey: Option<String>,
}

impl Host {
    /// The verifier key (`origin+id+base64`) the database records for its log,
    /// if the database exists and its log has been started.
    pub async fn recorded_log_vkey(&self) -> Result<Option<String>, HostError> {
        let location = self.store_location()?;
        if let Some(file) = location.file()
            && !file.exists()
        {
            return Ok(None);
        }
        let store = interlock_store::Store::connect(&location).await?;
        let vkey = store.get_meta(interlock_log::META_VKEY).await;
        store.close().await;
        Ok(vkey?)
    }

    /// The log key a writer signs with: the keychain's, or a new one when
    /// there is none and the database's log records no key yet.
    pub(crate) async fn writer_log_key(
        &self,
        keychain: &Keychain,
    ) -> Result<KeychainKey, HostError> {
        if let Some(key) = keychain.load_key(LOG_KEY)? {
            return Ok(key);
        }
        if let Some(vkey) = self.recorded_log_vkey().await? {
            return Err(HostError::NoLogKeyForSharedLog { vkey });
        }
        Ok(keychain.create_key(LOG_KEY)?)
    }

    /// Opens a sealed log key with this machine's pending request and keeps
    /// it, if it is the key the database's log records (any key, on a database
    /// with no log yet). A different log key already in the keychain is
    /// replaced only with `replace`. The request stays pending until
    /// [`Host::finish_log_key_transfer`].
    pub async fn accept_log_key(
        &self,
        sealed: &str,
        replace: bool,
    ) -> Result<AcceptedLogKey, HostError> {
        let keychain = self.keychain()?;
        let offered = keychain.open_transfer(LOG_KEY, sealed)?;
        let database_vkey = self.recorded_log_vkey().await?;
        if let Some(vkey) = &database_vkey {
            check_offered_against(&offered, vkey)?;
        }
        let key = keychain.accept_transfer(offered, replace)?;
        Ok(AcceptedLogKey { key, database_vkey })
    }

    /// Spends the pending request [`Host::accept_log_key`] opened with, once
    /// the acceptance is on the log: until then a stopped `accept` can be run
    /// again with the same sealed file (issue 44).
    pub fn finish_log_key_transfer(&self) -> Result<(), HostError> {
        Ok(self.keychain()?.finish_transfer(LOG_KEY)?)
    }
}

fn check_offered_against(offered: &OfferedKey, vkey: &str) -> Result<(), HostError> {
    let recorded = NoteVerifier::from_vkey(vkey).map_err(|e| {
        HostError::Changed(format!(
            "the database records a log key that cannot be read ({e}): {vkey}"
        ))
    })?;
    if recorded.key != offered.public_key() {
        return Err(HostError::NotTheTeamLogKey {
            offered: offered.key_id().to_string(),
            vkey: vkey.to_owned(),
        });
    }
    Ok(())
}

/// Turns the log's refusal of a foreign key into words that say what to do.
pub(crate) fn explain_key_mismatch(e: interlock_engine::EngineError) -> HostError {
    match e {
        interlock_engine::EngineError::Log(interlock_log::LogError::KeyMismatch {
            stored,
            ours,
        }) => HostError::LogKeyMismatch { stored, ours },
        other => HostError::Engine(other),
    }
}
