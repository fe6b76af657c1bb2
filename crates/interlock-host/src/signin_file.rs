//! Where the headless first run's sign-in link goes (issue 39 item 15). The
//! link makes whoever opens it first a reviewer, so it must not land in a log
//! that others read — a container's (`podman logs`), a journal, a CI job's
//! output. On a terminal it is printed; otherwise it is written to
//! `<data dir>/signin-link`, created afresh owner-only (0600), and only that
//! file's path is printed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::HostError;

/// The file's name in the data directory.
pub const SIGNIN_LINK_FILE: &str = "signin-link";

/// Writes `link` to `<data_dir>/signin-link`, owner-only, and returns its path.
/// An earlier file (an earlier run's spent link) is replaced; the new one is
/// created exclusively, so a link planted at that name is never followed.
pub fn write_signin_link(data_dir: &Path, link: &str) -> Result<PathBuf, HostError> {
    let path = data_dir.join(SIGNIN_LINK_FILE);
    let file_err = |e: std::io::Error| HostError::File {
        path: path.clone(),
        message: e.to_string(),
    };
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(file_err(e)),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).map_err(file_err)?;
    writeln!(file, "{link}").map_err(file_err)?;
    file.sync_all().map_err(file_err)?;
    Ok(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// Issue 39 item 15: the first-run link went to stdout, which a container
    /// runtime keeps as its log, readable by whoever reads logs.
    #[test]
    fn regression_issue_39_the_first_run_link_is_an_owner_only_file_off_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_signin_link(dir.path(), "http://127.0.0.1:1/#/signin/ils_a").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "http://127.0.0.1:1/#/signin/ils_a\n"
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // A link planted at the name is replaced, never written through.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "theirs").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        write_signin_link(dir.path(), "http://127.0.0.1:1/#/signin/ils_b").unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "theirs");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "http://127.0.0.1:1/#/signin/ils_b\n"
        );
    }
}
