//! The audience a team-mode desktop signs for (issue 39 item 7).
//!
//! Every statement names its audience, the log origin of the gateway it is
//! made for, and a gateway refuses one made for another. A desktop in team
//! mode learns that origin from the team gateway itself, so a gateway that
//! lies — a compromised team gateway, or one the person was pointed at by
//! mistake — could report *another* gateway's origin and have the app sign a
//! decision valid there (where the same approver key is registered). The app
//! therefore signs only for one audience per team address:
//!
//! - the one it was configured with (`[team] audience` in `desktop.toml`, or
//!   `$INTERLOCK_TEAM_AUDIENCE`), which the gateway's owner reads from
//!   `interlock serve`'s start-up lines or `GET /api/v1/log/checkpoint`;
//! - else the one the gateway reported the first time the app reached it,
//!   remembered in `<data dir>/team-audience.json` (0600) for that address —
//!   trust on first use, said so in the log line that pins it.
//!
//! [`crate::decide_remote`] refuses to sign when the gateway reports any other
//! audience, and the app's confirmation dialog shows the pinned one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use interlock_gateway::client::ReviewerClient;

use crate::HostError;

/// The file, in the desktop's data directory, that remembers first-use pins.
pub const TEAM_AUDIENCE_FILE: &str = "team-audience.json";

/// How an audience came to be pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinSource {
    /// `[team] audience` / `$INTERLOCK_TEAM_AUDIENCE`.
    Configured,
    /// Remembered from an earlier first use.
    Remembered,
    /// Reported by the gateway just now, and remembered from now on.
    FirstUse,
}

/// The one audience this app signs for at one team address.
#[derive(Debug)]
pub struct AudiencePin {
    file: PathBuf,
    url: String,
    pinned: Mutex<Option<(String, PinSource)>>,
}

impl AudiencePin {
    /// The pin for the team gateway at `url`: `configured`, else what
    /// `<data_dir>/team-audience.json` remembers for `url`, else none yet
    /// ([`AudiencePin::ensure`] takes it on first use).
    pub fn load(data_dir: &Path, url: &str, configured: Option<&str>) -> Result<Self, HostError> {
        let file = data_dir.join(TEAM_AUDIENCE_FILE);
        let pinned = match configured.map(str::trim).filter(|a| !a.is_empty()) {
            Some(a) => Some((a.to_owned(), PinSource::Configured)),
            None => read(&file)?.remove(url).map(|a| (a, PinSource::Remembered)),
        };
        Ok(AudiencePin {
            file,
            url: url.to_owned(),
            pinned: Mutex::new(pinned),
        })
    }

    /// The pinned audience, if there is one yet.
    pub fn pinned(&self) -> Option<(String, PinSource)> {
        self.pinned.lock().expect("not poisoned").clone()
    }

    /// The pinned audience; with none yet, the one `client`'s gateway reports
    /// now, remembered for this address from now on.
    pub async fn ensure(&self, client: &ReviewerClient) -> Result<String, HostError> {
        if let Some((a, _)) = self.pinned() {
            return Ok(a);
        }
        let reported = client.audience().await?;
        let mut pinned = self.pinned.lock().expect("not poisoned");
        if let Some((a, _)) = pinned.as_ref() {
            return Ok(a.clone());
        }
        let mut all = read(&self.file)?;
        let kept = all
            .entry(self.url.clone())
            .or_insert_with(|| reported.clone())
            .clone();
        write(&self.file, &all)?;
        tracing::warn!(
            url = %self.url,
            audience = %kept,
            "pinned the team gateway's audience on first use; set [team] audience in \
             desktop.toml to pin it without trusting the first answer"
        );
        *pinned = Some((kept.clone(), PinSource::FirstUse));
        Ok(kept)
    }
}

fn read(file: &Path) -> Result<BTreeMap<String, String>, HostError> {
    let err = |message: String| HostError::File {
        path: file.to_owned(),
        message,
    };
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| err(format!("not a map of team addresses to audiences: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(err(e.to_string())),
    }
}

/// Writes the map owner-only (connect's atomic write: a random temporary
/// name created exclusively, then a rename), in the data directory made
/// owner-only if a team-mode app, which hosts nothing there, has none yet.
fn write(file: &Path, all: &BTreeMap<String, String>) -> Result<(), HostError> {
    if let Some(dir) = file.parent() {
        crate::data_dir::prepare(dir)?;
    }
    let text = serde_json::to_vec_pretty(all).expect("a map of strings serializes");
    crate::connect::write_atomic(file, &text, 0o600).map_err(|e| HostError::File {
        path: file.to_owned(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_audience_wins_over_a_remembered_one() {
        let dir = tempfile::tempdir().unwrap();
        let url = "https://gw.team.example";
        let mut all = BTreeMap::new();
        all.insert(url.to_owned(), "interlock.local/log/remembered".to_owned());
        write(&dir.path().join(TEAM_AUDIENCE_FILE), &all).unwrap();
        let pin = AudiencePin::load(dir.path(), url, Some("interlock.local/log/told")).unwrap();
        assert_eq!(
            pin.pinned(),
            Some(("interlock.local/log/told".into(), PinSource::Configured))
        );
        let pin = AudiencePin::load(dir.path(), url, None).unwrap();
        assert_eq!(
            pin.pinned(),
            Some((
                "interlock.local/log/remembered".into(),
                PinSource::Remembered
            ))
        );
        // Another address has no pin yet.
        let other = AudiencePin::load(dir.path(), "https://other.example", None).unwrap();
        assert_eq!(other.pinned(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.path().join(TEAM_AUDIENCE_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn regression_a_first_use_pin_creates_the_missing_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("not-yet");
        let mut all = BTreeMap::new();
        all.insert(
            "https://gw.example".to_owned(),
            "interlock.local/log/ab".to_owned(),
        );
        write(&data.join(TEAM_AUDIENCE_FILE), &all).unwrap();
        assert_eq!(read(&data.join(TEAM_AUDIENCE_FILE)).unwrap(), all);
    }

    #[test]
    fn regression_a_garbled_pin_file_is_an_error_not_an_empty_pin() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(TEAM_AUDIENCE_FILE), b"[1, 2").unwrap();
        let e = AudiencePin::load(dir.path(), "https://gw.example", None).unwrap_err();
        assert!(e.to_string().contains("team-audience.json"), "{e}");
    }
}
