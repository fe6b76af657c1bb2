//! Running a witness (issue 43): `interlock witness serve`, small enough for
//! an auditor's machine or beside a team's Postgres.
//!
//! Its Ed25519 key lives in the OS keychain under [`witness_key_entry`] (one key
//! per witness name: the cosignature message does not commit to the name, so
//! the spec forbids one key serving two). Its state — the latest checkpoint
//! it cosigned per log — is in `<data dir>/witness.db`, or the database given.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use interlock_store::{Store, StoreLocation};
use interlock_witness::{TrustedLog, Witness};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{Host, HostError};

/// The witness's SQLite file in its data directory.
pub const WITNESS_DATABASE_FILE: &str = "witness.db";

/// The keychain entry of the witness named `name`: `witness-`, the name with
/// what a keychain entry may not hold replaced by `_`, and 8 hex digits of
/// the name's hash (so `w.test/a` and `w.test_a` keep two keys).
pub fn witness_key_entry(name: &str) -> String {
    let readable: String = name
        .chars()
        .take(80)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = interlock_merkle::leaf_hash(name.as_bytes());
    let tag: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("witness-{readable}-{tag}")
}

/// What `interlock witness serve` was told.
#[derive(Clone, Debug)]
pub struct WitnessSettings {
    /// The witness's name (a schema-less URL by convention, e.g. `witness.example/w1`).
    pub name: String,
    /// Where to listen (loopback unless told otherwise).
    pub listen: SocketAddr,
    /// The logs it cosigns for, each by its checkpoint verifier key.
    pub logs: Vec<String>,
    /// Its database (else `<data dir>/witness.db`).
    pub database: Option<StoreLocation>,
}

/// A witness serving until [`stop`](RunningWitness::stop).
#[derive(Debug)]
pub struct RunningWitness {
    vkey: String,
    bound: SocketAddr,
    stop: watch::Sender<bool>,
    server: JoinHandle<std::io::Result<()>>,
}

impl RunningWitness {
    /// The witness's cosignature verifier key (what logs and auditors configure).
    pub fn vkey(&self) -> &str {
        &self.vkey
    }

    /// The address it serves on.
    pub fn address(&self) -> SocketAddr {
        self.bound
    }

    /// Stops serving and waits for open requests to finish.
    pub async fn stop(self) -> Result<(), HostError> {
        let _ = self.stop.send(true);
        match self.server.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(HostError::Serve(e.to_string())),
            Err(e) => Err(HostError::Serve(e.to_string())),
        }
    }

    /// Serves until the server fails (or is stopped from elsewhere).
    pub async fn wait(self) -> Result<(), HostError> {
        match self.server.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(HostError::Serve(e.to_string())),
            Err(e) => Err(HostError::Serve(e.to_string())),
        }
    }
}

impl Host {
    /// The cosignature verifier key of the witness `name`, creating its key
    /// in the keychain on first use.
    pub fn witness_vkey(&self, name: &str) -> Result<String, HostError> {
        let (key, _) = self.keychain()?.load_or_create(&witness_key_entry(name))?;
        interlock_merkle::CosignatureVerifier::new(name, key.public_key())
            .map(|v| v.to_vkey())
            .map_err(|e| HostError::Changed(format!("witness name {name:?}: {e}")))
    }

    /// Starts the witness: binds first (a taken port is said plainly), then
    /// its key from the keychain, its database, and the tlog-witness face.
    pub async fn start_witness(
        &self,
        settings: WitnessSettings,
    ) -> Result<RunningWitness, HostError> {
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .map_err(|e| HostError::Listen {
                address: settings.listen,
                message: e.to_string(),
            })?;
        let bound = listener.local_addr().map_err(|e| HostError::Listen {
            address: settings.listen,
            message: e.to_string(),
        })?;
        let logs = settings
            .logs
            .iter()
            .map(|vkey| {
                TrustedLog::from_vkey(vkey)
                    .map_err(|e| HostError::Changed(format!("log key {vkey:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if logs.is_empty() {
            return Err(HostError::Changed(
                "a witness needs at least one log to cosign for (--log KEY)".into(),
            ));
        }
        let (key, _) = self
            .keychain()?
            .load_or_create(&witness_key_entry(&settings.name))?;
        let signing = Arc::new(key.load_service_key()?);
        let location = match settings.database {
            Some(db) => db,
            None => {
                let dir: PathBuf = self.data_dir()?;
                crate::data_dir::prepare(&dir)?;
                StoreLocation::File(dir.join(WITNESS_DATABASE_FILE))
            }
        };
        let store = Store::connect(&location).await?;
        let witness = Witness::new(&settings.name, signing, logs, store)
            .map_err(|e| HostError::Changed(format!("witness name {:?}: {e}", settings.name)))?;
        let vkey = witness.vkey();
        let (stop, mut stopped) = watch::channel(false);
        let server = tokio::spawn(interlock_gateway::witness::serve(
            Arc::new(witness),
            listener,
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
        Ok(RunningWitness {
            vkey,
            bound,
            stop,
            server,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::witness_key_entry;

    #[test]
    fn each_witness_name_has_its_own_keychain_entry() {
        let a = witness_key_entry("w.test/a");
        let b = witness_key_entry("w.test_a");
        assert_ne!(a, b);
        assert!(a.starts_with("witness-w.test_a-"), "{a}");
        let long = witness_key_entry(&"x".repeat(500));
        assert!(long.len() <= 128, "{}", long.len());
        assert!(
            long.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        );
    }
}
