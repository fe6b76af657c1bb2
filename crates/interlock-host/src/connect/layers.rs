//! Backups: each connect that changes a client's file pushes a layer — the
//! file's bytes before it, and what it added elsewhere (upstreams, keychain
//! tokens, the agent key) — and `interlock connect --undo` pops the newest.
//!
//! Layers live in `<data dir>/connect/<client>-<hash of the file's path>/`,
//! a directory only the user can read: the backup is the file as it was,
//! secrets included, since undo must give it back byte for byte.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What one connect did, to be undone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Layer {
    pub client: String,
    /// The client's file as written (the symlink's target, if it is one).
    pub file: PathBuf,
    /// SHA-256 (hex) of the bytes connect wrote, so undo can tell whether
    /// anything changed the file since.
    pub written_sha256: String,
    /// The file's permission bits, restored with its bytes.
    pub mode: u32,
    /// `[servers.NAME]` tables this connect added to `gateway_config`.
    pub servers: Vec<String>,
    pub gateway_config: PathBuf,
    /// Upstreams this connect relies on but found configured (the same
    /// server, imported by another client): if the connect that added one is
    /// undone, this layer takes it over instead of losing it.
    #[serde(default)]
    pub shared: Vec<String>,
    /// Keychain tokens this connect stored.
    pub tokens: Vec<String>,
    /// The agent key this connect minted (its name; only its hash is stored).
    pub agent: Option<String>,
    /// The client's entries this connect took out (moved behind the gateway).
    #[serde(default)]
    pub removed: Vec<String>,
    /// The entry it added to reach the gateway.
    #[serde(default)]
    pub added: Option<String>,
    /// The keychain name of the key the backup is sealed with
    /// (`super::sealed`); `None` for a backup kept as it was (a connect that
    /// moved no token, or one made before sealing).
    #[serde(default)]
    pub backup_key: Option<String>,
}

/// The layer directory of one client file.
pub(crate) fn dir(data_dir: &Path, slug: &str, file: &Path) -> PathBuf {
    let h = super::sha256_hex(file.to_string_lossy().as_bytes());
    data_dir
        .join("connect")
        .join(format!("{slug}-{}", &h[..12]))
}

/// The newest layer, with its number.
pub(crate) fn top(dir: &Path) -> std::io::Result<Option<(u32, Layer)>> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut best = None;
    for e in read {
        let name = e?.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if best.is_none_or(|b| n > b) {
            best = Some(n);
        }
    }
    let Some(n) = best else { return Ok(None) };
    let text = std::fs::read(dir.join(format!("{n}.json")))?;
    let layer = serde_json::from_slice(&text)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    Ok(Some((n, layer)))
}

/// Every layer of every client file under `data_dir`, with its directory
/// and number.
pub(crate) fn all(data_dir: &Path) -> std::io::Result<Vec<(PathBuf, u32, Layer)>> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(data_dir.join("connect")) else {
        return Ok(out);
    };
    for d in dirs {
        let d = d?.path();
        for e in std::fs::read_dir(&d)? {
            let name = e?.file_name();
            let Some(n) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let text = std::fs::read(d.join(format!("{n}.json")))?;
            let layer = serde_json::from_slice(&text)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            out.push((d.clone(), n, layer));
        }
    }
    Ok(out)
}

/// Rewrites layer `n`'s record (an ownership hand-over).
pub(crate) fn rewrite(dir: &Path, n: u32, layer: &Layer) -> std::io::Result<()> {
    write_private(
        &dir.join(format!("{n}.json")),
        &serde_json::to_vec_pretty(layer).map_err(std::io::Error::other)?,
    )
}

/// The backup bytes of layer `n`.
pub(crate) fn backup(dir: &Path, n: u32) -> std::io::Result<Vec<u8>> {
    std::fs::read(dir.join(format!("{n}.orig")))
}

/// Pushes a layer: the backup first, then its record (a layer without a
/// record is never read).
pub(crate) fn push(dir: &Path, original: &[u8], layer: &Layer) -> std::io::Result<u32> {
    create_private_dir(dir)?;
    let n = top(dir)?.map_or(1, |(n, _)| n + 1);
    write_private(&dir.join(format!("{n}.orig")), original)?;
    write_private(
        &dir.join(format!("{n}.json")),
        &serde_json::to_vec_pretty(layer).map_err(std::io::Error::other)?,
    )?;
    Ok(n)
}

/// Removes layer `n` (its record first, so a half-removed layer is gone).
///
/// The removal is synced before this returns: the caller deletes what the
/// layer names from the keychain next, and a power cut that brought the
/// record back after that would leave an undo that cannot open its backup
/// (issue 44, `regression_issue_44_an_undone_connect_stays_undone_after_a_power_cut`).
pub(crate) fn pop(dir: &Path, n: u32) -> std::io::Result<()> {
    std::fs::remove_file(dir.join(format!("{n}.json")))?;
    sync_dir(dir)?;
    std::fs::remove_file(dir.join(format!("{n}.orig")))
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    // Its name in `connect/`, durable like the records written in it.
    match dir.parent() {
        Some(parent) => sync_dir(parent),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` (owner-only) through a temporary file and a
/// rename, then syncs the directory: a crash or a power cut leaves the old
/// record or the new one, never a torn one that would make every later undo
/// fail to read it, and once this returns the record is on the disk (the
/// keychain tokens a pushed layer names are stored after it).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Makes the directory's entries (a create, rename or unlink in it) durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}
