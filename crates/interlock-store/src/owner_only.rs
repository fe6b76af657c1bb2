//! The SQLite file and its directory are the owner's alone (issue 39 item
//! 19): the database holds plans, surfaces, receipts and key hashes, what the
//! gateway enforces and how, and another user of the machine has no business
//! reading or editing it. A new directory is made 0700 and a new file 0600;
//! an existing file (and its `-wal`/`-shm`) wider than that is narrowed, and
//! the log says so. An existing directory is only reported: it may be one the
//! owner chose to share (`--database /srv/x.sqlite`), not ours to change.

use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};

/// The permission bits a group or other user would read or write by.
#[cfg(unix)]
const NOT_OWNER: u32 = 0o077;

/// Makes `path`'s directory (if missing, 0700) and the file itself (if
/// missing, an empty 0600 file SQLite then fills), and narrows an existing
/// file wider than 0600.
pub(crate) async fn prepare(path: &Path) -> std::io::Result<()> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || prepare_blocking(&path))
        .await
        .map_err(std::io::Error::other)?
}

fn prepare_blocking(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_owner_only(parent)?;
    }
    #[cfg(unix)]
    {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            narrow_file(Path::new(&file))?;
        }
    }
    Ok(())
}

fn create_dir_owner_only(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
        if let Ok(meta) = std::fs::metadata(dir) {
            let mode = meta.permissions().mode() & 0o777;
            if meta.is_dir() && mode & NOT_OWNER != 0 {
                tracing::warn!(
                    directory = %dir.display(),
                    mode = format!("{mode:o}"),
                    "the database's directory is readable by other users; `chmod 700` it unless it is shared on purpose"
                );
            }
            return Ok(());
        }
    }
    builder.create(dir)
}

/// Narrows an existing file to 0600, saying so; a missing one is fine.
#[cfg(unix)]
fn narrow_file(file: &Path) -> std::io::Result<()> {
    let meta = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & NOT_OWNER != 0 {
        tracing::warn!(
            file = %file.display(),
            was = format!("{mode:o}"),
            "the database file was readable by other users; narrowed to 600"
        );
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}
