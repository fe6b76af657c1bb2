//! The built-in filesystem executor and prober.
//!
//! Each operation is a short sequence of blocking system calls, run as one unit on
//! tokio's blocking pool: hopping threads per call (as `tokio::fs` does) would add
//! latency without making any single call less blocking.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use base64::Engine as _;
use interlock_canon::{Digest, Value};
use interlock_core::{Check, Stage};

use crate::confine::{Denied, Roots};
use crate::params;
use crate::{AdapterConfig, ConfigError, ExecError, ExecOutcome, Executor, ProbeOutcome, Prober};
use crate::{int, object};

const ACTIONS: [&str; 4] = [
    "fs.write_file",
    "fs.ensure_absent",
    "fs.make_dir",
    "fs.read_file",
];
const PROBES: [&str; 5] = [
    "fs.path_exists",
    "fs.path_absent",
    "fs.is_dir",
    "fs.file_sha256",
    "fs.file_contains",
];

/// Mode of a newly written file when the stage gives none (before the umask).
const DEFAULT_FILE_MODE: u32 = 0o644;

/// Filesystem actions and probes, confined to the configured roots.
///
/// Symlinks inside the roots are followed (a write to `root/current/app.toml` with
/// `current -> releases/7` writes `root/releases/7/app.toml`), because the path that
/// was checked is the path that is used. The one exception is `fs.ensure_absent`,
/// which removes a final symlink itself: making a path absent must not delete what
/// the link points to.
#[derive(Clone, Debug)]
pub struct Filesystem {
    roots: Roots,
    read_cap: u64,
}

impl Filesystem {
    /// Resolves the roots of `config` to their real paths (each must be an existing
    /// directory).
    pub fn new(config: &AdapterConfig) -> Result<Filesystem, ConfigError> {
        Ok(Filesystem {
            roots: Roots::new(&config.fs_roots)?,
            read_cap: config.read_cap,
        })
    }
}

impl From<Denied> for ExecError {
    fn from(d: Denied) -> ExecError {
        match d {
            Denied::Forbidden(m) => ExecError::Forbidden(m),
            Denied::Invalid(m) => ExecError::InvalidParams(m),
            Denied::Io(m) => ExecError::Io(m),
        }
    }
}

fn denied_reason(d: Denied) -> String {
    match d {
        Denied::Forbidden(m) | Denied::Invalid(m) | Denied::Io(m) => m,
    }
}

/// Runs blocking filesystem work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("filesystem task failed: {e}"))
}

fn io_err(what: &str, path: &Path, e: io::Error) -> ExecError {
    ExecError::Io(format!("{what} `{}`: {e}", path.display()))
}

fn path_value(p: &Path) -> Value {
    Value::String(p.display().to_string())
}

#[async_trait]
impl Executor for Filesystem {
    fn actions(&self) -> Vec<&'static str> {
        ACTIONS.to_vec()
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        if !ACTIONS.contains(&stage.action.as_str()) {
            return Err(ExecError::Unsupported(format!(
                "the filesystem adapter does not perform `{}`",
                stage.action
            )));
        }
        params::check_action(&stage.action, &stage.params).map_err(ExecError::InvalidParams)?;
        match stage.action.as_str() {
            "fs.write_file" => {
                let content = params::string(&stage.params, "content")
                    .unwrap_or_default()
                    .to_owned();
                let mode = params::mode(&stage.params).map_err(ExecError::InvalidParams)?;
                let path = self.roots.confine(&stage.target, true)?;
                blocking(move || write_file(&path, content.as_bytes(), mode))
                    .await
                    .map_err(ExecError::Io)?
            }
            "fs.ensure_absent" => {
                let path = self.roots.confine(&stage.target, false)?;
                if self.roots.is_root(&path) {
                    return Err(ExecError::Forbidden(format!(
                        "`{}` is an allowed root itself and cannot be removed",
                        stage.target
                    )));
                }
                blocking(move || ensure_absent(&path))
                    .await
                    .map_err(ExecError::Io)?
            }
            "fs.make_dir" => {
                let mode = params::mode(&stage.params).map_err(ExecError::InvalidParams)?;
                let path = self.roots.confine(&stage.target, true)?;
                blocking(move || make_dir(&path, mode))
                    .await
                    .map_err(ExecError::Io)?
            }
            "fs.read_file" => {
                let max = match params::integer(&stage.params, "max_bytes") {
                    None => self.read_cap,
                    Some(n) if n > 0 && n.unsigned_abs() <= self.read_cap => n.unsigned_abs(),
                    Some(n) => {
                        return Err(ExecError::InvalidParams(format!(
                            "`max_bytes` must be between 1 and {}, found {n}",
                            self.read_cap
                        )));
                    }
                };
                let path = self.roots.confine(&stage.target, true)?;
                blocking(move || read_file(&path, max))
                    .await
                    .map_err(ExecError::Io)?
            }
            other => Err(ExecError::Unsupported(other.to_owned())),
        }
    }
}

/// A unique name for a temporary file next to `path`: hidden, tagged, and never
/// reused within this process even if an earlier one was left behind by a crash.
fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.interlock-{}-{n}.tmp", std::process::id()))
}

/// Makes a directory entry change durable: a rename or unlink is only on disk once
/// the directory holding it has been synced.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes atomically: a reader sees the old content or the new, never a mix, and
/// after a crash the file is one or the other. Temp file in the same directory (so
/// the rename does not cross filesystems), fsync, rename over, fsync the directory.
fn write_file(path: &Path, content: &[u8], mode: Option<u32>) -> Result<ExecOutcome, ExecError> {
    let parent = path
        .parent()
        .ok_or_else(|| ExecError::InvalidParams("cannot write to `/`".into()))?;
    match fs::metadata(parent) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ExecError::Io(format!(
                "`{}` is not a directory",
                parent.display()
            )));
        }
        Err(e) => return Err(io_err("parent directory", parent, e)),
    }
    let existing = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(ExecError::Io(format!(
                "`{}` is a directory",
                path.display()
            )));
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("cannot inspect", path, e)),
    };
    // Without a requested mode, a replaced file keeps its mode and a new one gets the
    // usual default under the process umask (applied by the kernel at creation).
    let explicit_mode = mode.or(existing.as_ref().map(|m| m.mode() & 0o7777));
    let temp = temp_path(path);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            // Private until the requested mode is set, so content is never briefly
            // readable more widely than approved.
            .mode(if explicit_mode.is_some() {
                0o600
            } else {
                DEFAULT_FILE_MODE
            })
            .open(&temp)
            .map_err(|e| io_err("cannot create temporary file", &temp, e))?;
        file.write_all(content)
            .map_err(|e| io_err("cannot write", &temp, e))?;
        if let Some(m) = explicit_mode {
            file.set_permissions(fs::Permissions::from_mode(m))
                .map_err(|e| io_err("cannot set mode of", &temp, e))?;
        }
        file.sync_all()
            .map_err(|e| io_err("cannot sync", &temp, e))?;
        let final_mode = file
            .metadata()
            .map_err(|e| io_err("cannot inspect", &temp, e))?
            .mode()
            & 0o7777;
        drop(file);
        fs::rename(&temp, path).map_err(|e| io_err("cannot rename into", path, e))?;
        sync_dir(parent).map_err(|e| io_err("cannot sync directory", parent, e))?;
        Ok(final_mode)
    })();
    let final_mode = match result {
        Ok(m) => m,
        Err(e) => {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
    };
    let digest = Digest::of_bytes(content);
    Ok(ExecOutcome {
        summary: format!(
            "{} {} bytes to {}",
            if existing.is_some() {
                "replaced with"
            } else {
                "wrote"
            },
            content.len(),
            path.display()
        ),
        detail: object([
            ("path", path_value(path)),
            ("bytes", int(content.len())),
            ("sha256", Value::String(digest.to_string())),
            ("mode", int(final_mode)),
            ("replaced", Value::Bool(existing.is_some())),
        ]),
        output: None,
    })
}

fn ensure_absent(path: &Path) -> Result<ExecOutcome, ExecError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(ExecOutcome {
                summary: format!("{} already absent", path.display()),
                detail: object([("path", path_value(path)), ("removed", Value::Bool(false))]),
                output: None,
            });
        }
        Err(e) => return Err(io_err("cannot inspect", path, e)),
    };
    let kind = if meta.is_dir() {
        fs::remove_dir(path).map_err(|e| io_err("cannot remove directory", path, e))?;
        "directory"
    } else {
        fs::remove_file(path).map_err(|e| io_err("cannot remove", path, e))?;
        if meta.file_type().is_symlink() {
            "symlink"
        } else {
            "file"
        }
    };
    if let Some(parent) = path.parent() {
        sync_dir(parent).map_err(|e| io_err("cannot sync directory", parent, e))?;
    }
    Ok(ExecOutcome {
        summary: format!("removed {kind} {}", path.display()),
        detail: object([
            ("path", path_value(path)),
            ("removed", Value::Bool(true)),
            ("kind", Value::String(kind.into())),
        ]),
        output: None,
    })
}

fn make_dir(path: &Path, mode: Option<u32>) -> Result<ExecOutcome, ExecError> {
    let created = match fs::metadata(path) {
        Ok(m) if m.is_dir() => false,
        Ok(_) => {
            return Err(ExecError::Io(format!(
                "`{}` exists and is not a directory",
                path.display()
            )));
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(mode.unwrap_or(0o777))
                .create(path)
                .map_err(|e| io_err("cannot create directory", path, e))?;
            true
        }
        Err(e) => return Err(io_err("cannot inspect", path, e)),
    };
    // The requested mode is what was approved, so it is applied exactly (not under the
    // umask), also to a directory that already existed.
    if let Some(m) = mode {
        fs::set_permissions(path, fs::Permissions::from_mode(m))
            .map_err(|e| io_err("cannot set mode of", path, e))?;
    }
    if let Some(parent) = path.parent().filter(|_| created) {
        sync_dir(parent).map_err(|e| io_err("cannot sync directory", parent, e))?;
    }
    let final_mode = fs::metadata(path)
        .map(|m| m.mode() & 0o7777)
        .map_err(|e| io_err("cannot inspect", path, e))?;
    Ok(ExecOutcome {
        summary: if created {
            format!("created directory {}", path.display())
        } else {
            format!("directory {} already exists", path.display())
        },
        detail: object([
            ("path", path_value(path)),
            ("created", Value::Bool(created)),
            ("mode", int(final_mode)),
        ]),
        output: None,
    })
}

fn read_file(path: &Path, max: u64) -> Result<ExecOutcome, ExecError> {
    let file = File::open(path).map_err(|e| io_err("cannot open", path, e))?;
    let meta = file
        .metadata()
        .map_err(|e| io_err("cannot inspect", path, e))?;
    if !meta.is_file() {
        return Err(ExecError::Io(format!(
            "`{}` is not a regular file",
            path.display()
        )));
    }
    let mut buf = Vec::new();
    // One byte more than allowed tells "exactly max" from "longer".
    file.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_err("cannot read", path, e))?;
    let truncated = buf.len() as u64 > max;
    buf.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    let mut fields = vec![
        ("path", path_value(path)),
        ("size", int(meta.len())),
        ("bytes", int(buf.len())),
        ("truncated", Value::Bool(truncated)),
    ];
    if !truncated {
        fields.push(("sha256", Value::String(Digest::of_bytes(&buf).to_string())));
    }
    match std::str::from_utf8(&buf) {
        Ok(text) => fields.push(("content", Value::String(text.to_owned()))),
        Err(_) => fields.push((
            "content_base64",
            Value::String(base64::engine::general_purpose::STANDARD.encode(&buf)),
        )),
    }
    Ok(ExecOutcome {
        summary: format!(
            "read {} bytes from {}{}",
            buf.len(),
            path.display(),
            if truncated { " (truncated)" } else { "" }
        ),
        detail: Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
        output: None,
    })
}

#[async_trait]
impl Prober for Filesystem {
    fn probes(&self) -> Vec<&'static str> {
        PROBES.to_vec()
    }

    async fn probe(&self, check: &Check, target: &str) -> ProbeOutcome {
        if !PROBES.contains(&check.probe.as_str()) {
            return ProbeOutcome::unprobeable(format!(
                "the filesystem adapter does not answer `{}`",
                check.probe
            ));
        }
        if let Err(m) = params::check_probe(&check.probe, &check.params) {
            return ProbeOutcome::unprobeable(format!("invalid parameters: {m}"));
        }
        let path = match self.roots.confine(target, true) {
            Ok(p) => p,
            Err(d) => return ProbeOutcome::unprobeable(denied_reason(d)),
        };
        let probe = check.probe.clone();
        let params = check.params.clone();
        let read_cap = self.read_cap;
        blocking(move || match probe.as_str() {
            "fs.path_exists" => path_state(&path, |kind| {
                kind.map_or_else(
                    || ProbeOutcome::Unmet {
                        observed: format!("{} does not exist", path.display()),
                    },
                    |k| ProbeOutcome::Met {
                        observed: format!("{} exists ({k})", path.display()),
                    },
                )
            }),
            "fs.path_absent" => path_state(&path, |kind| {
                kind.map_or_else(
                    || ProbeOutcome::Met {
                        observed: format!("{} does not exist", path.display()),
                    },
                    |k| ProbeOutcome::Unmet {
                        observed: format!("{} exists ({k})", path.display()),
                    },
                )
            }),
            "fs.is_dir" => path_state(&path, |kind| match kind {
                Some("directory") => ProbeOutcome::Met {
                    observed: format!("{} is a directory", path.display()),
                },
                Some(k) => ProbeOutcome::Unmet {
                    observed: format!("{} is a {k}", path.display()),
                },
                None => ProbeOutcome::Unmet {
                    observed: format!("{} does not exist", path.display()),
                },
            }),
            "fs.file_sha256" => {
                let expected = params::string(&params, "sha256").unwrap_or_default();
                match expected.parse::<Digest>() {
                    Ok(d) => probe_sha256(&path, d),
                    Err(e) => ProbeOutcome::unprobeable(format!("invalid parameters: {e}")),
                }
            }
            "fs.file_contains" => {
                let text = params::string(&params, "text").unwrap_or_default();
                probe_contains(&path, text, read_cap)
            }
            other => ProbeOutcome::unprobeable(format!("unknown probe `{other}`")),
        })
        .await
        .unwrap_or_else(ProbeOutcome::unprobeable)
    }
}

/// Observes what is at `path` (`None`: nothing) and lets `judge` decide; anything but
/// "exists" or "does not exist" (e.g. permission denied) is unprobeable.
fn path_state(
    path: &Path,
    judge: impl FnOnce(Option<&'static str>) -> ProbeOutcome,
) -> ProbeOutcome {
    match fs::symlink_metadata(path) {
        Ok(m) => judge(Some(if m.is_dir() {
            "directory"
        } else if m.is_file() {
            "file"
        } else if m.file_type().is_symlink() {
            "symlink"
        } else {
            "special file"
        })),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => judge(None),
        Err(e) => ProbeOutcome::unprobeable(format!("cannot inspect {}: {e}", path.display())),
    }
}

/// Opens `path` as a regular file for a content probe: `Err` carries the outcome
/// when that is not possible (missing or not a file is an observation, `Unmet`;
/// an I/O failure is not, `Unprobeable`).
fn open_regular(path: &Path) -> Result<(File, u64), ProbeOutcome> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Err(ProbeOutcome::Unmet {
                observed: format!("{} does not exist", path.display()),
            });
        }
        Err(e) => {
            return Err(ProbeOutcome::unprobeable(format!(
                "cannot open {}: {e}",
                path.display()
            )));
        }
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok((file, m.len())),
        Ok(_) => Err(ProbeOutcome::Unmet {
            observed: format!("{} is not a regular file", path.display()),
        }),
        Err(e) => Err(ProbeOutcome::unprobeable(format!(
            "cannot inspect {}: {e}",
            path.display()
        ))),
    }
}

fn probe_sha256(path: &Path, expected: Digest) -> ProbeOutcome {
    let (mut file, _) = match open_regular(path) {
        Ok(f) => f,
        Err(outcome) => return outcome,
    };
    // Streamed, so a large file is hashed without being held in memory.
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => ctx.update(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                return ProbeOutcome::unprobeable(format!("cannot read {}: {e}", path.display()));
            }
        }
    }
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(ctx.finish().as_ref());
    let actual = Digest(bytes);
    ProbeOutcome::from_bool(
        actual == expected,
        format!("{} has {actual}", path.display()),
    )
}

fn probe_contains(path: &Path, text: &str, cap: u64) -> ProbeOutcome {
    let (file, len) = match open_regular(path) {
        Ok(f) => f,
        Err(outcome) => return outcome,
    };
    if len > cap {
        return ProbeOutcome::unprobeable(format!(
            "{} is {len} bytes, more than the {cap} bytes a content probe reads",
            path.display()
        ));
    }
    let mut buf = Vec::new();
    // The size may change between `metadata` and the read; the cap holds regardless.
    if let Err(e) = file.take(cap.saturating_add(1)).read_to_end(&mut buf) {
        return ProbeOutcome::unprobeable(format!("cannot read {}: {e}", path.display()));
    }
    if buf.len() as u64 > cap {
        return ProbeOutcome::unprobeable(format!(
            "{} grew beyond the {cap} bytes a content probe reads",
            path.display()
        ));
    }
    let needle = text.as_bytes();
    let found = match std::str::from_utf8(&buf) {
        Ok(s) => s.contains(text),
        Err(_) => needle.is_empty() || buf.windows(needle.len()).any(|w| w == needle),
    };
    ProbeOutcome::from_bool(
        found,
        format!(
            "{} ({} bytes) {} the text",
            path.display(),
            buf.len(),
            if found {
                "contains"
            } else {
                "does not contain"
            }
        ),
    )
}
