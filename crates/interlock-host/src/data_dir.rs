//! The data directory is the owner's alone (issue 39 item 19): it holds the
//! database, the admin socket, the gateway's config and each sandboxed
//! server's state. Made 0700; one found wider (a directory made before this
//! rule, by umask 022) is narrowed, and the log says so. The database file
//! itself is the store's to keep 0600.

use std::path::Path;

use crate::HostError;

/// Makes `dir` (0700, with any missing parents) or narrows it to 0700.
pub(crate) fn prepare(dir: &Path) -> Result<(), HostError> {
    let file_err = |e: std::io::Error| HostError::File {
        path: dir.to_owned(),
        message: e.to_string(),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        match std::fs::metadata(dir) {
            Ok(meta) => {
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    tracing::warn!(
                        directory = %dir.display(),
                        was = format!("{mode:o}"),
                        "the data directory was open to other users; narrowed to 700"
                    );
                    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                        .map_err(file_err)?;
                }
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(file_err),
            Err(e) => Err(file_err(e)),
        }
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).map_err(file_err)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::prepare;

    fn mode(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    /// Issue 39 item 19: the data directory was made 0755 (by umask), so any
    /// local user listed and read what it holds.
    #[test]
    fn regression_issue_39_the_data_directory_is_owner_only() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("a/b/interlock");
        prepare(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);

        let old = root.path().join("old");
        std::fs::create_dir(&old).unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare(&old).unwrap();
        assert_eq!(mode(&old), 0o700, "an existing wider directory is narrowed");
    }
}
