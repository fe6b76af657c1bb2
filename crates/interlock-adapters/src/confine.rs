//! Confinement of filesystem paths to the configured roots.
//!
//! A path is allowed only if it is inside a root twice over: *lexically* (after
//! resolving `.` and `..` as text, so `/root/../etc/passwd` is `/etc/passwd`) and
//! *physically* (after following every symlink on the way, so `/root/link/x` with
//! `link -> /etc` is `/etc/x`). The adapters then operate on the physical path they
//! checked, not on the text the plan carried.
//!
//! Limitation, stated plainly: the check and the operation are separate system calls,
//! so a process that can already write inside a root could swap a directory for a
//! symlink in between. Closing that race needs `openat2(RESOLVE_BENEATH)`-style
//! resolution; the roots are meant to be directories only the gateway writes.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::config::ConfigError;

/// Symlink hops allowed while resolving one path (Linux's own limit is 40).
const MAX_SYMLINK_HOPS: usize = 40;

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Denied {
    /// Outside every root (lexically or after symlinks).
    Forbidden(String),
    /// Not a usable path (relative, empty, NUL byte).
    Invalid(String),
    /// The path could not be resolved (permission denied, symlink loop).
    Io(String),
}

/// The configured roots, each both as written (lexically normalized) and as its
/// real path, so a root configured through a symlink (`/tmp` on some systems) still
/// matches targets written either way.
#[derive(Clone, Debug)]
pub(crate) struct Roots {
    lexical: Vec<PathBuf>,
    real: Vec<PathBuf>,
}

impl Roots {
    pub(crate) fn new(roots: &[PathBuf]) -> Result<Roots, ConfigError> {
        let mut lexical = Vec::new();
        let mut real = Vec::new();
        for root in roots {
            if !root.is_absolute() {
                return Err(ConfigError::RootNotAbsolute(root.clone()));
            }
            let unusable = |reason: String| ConfigError::RootUnusable {
                path: root.clone(),
                reason,
            };
            let canonical = std::fs::canonicalize(root).map_err(|e| unusable(e.to_string()))?;
            if !canonical.is_dir() {
                return Err(unusable("not a directory".into()));
            }
            lexical.push(normalize(root));
            real.push(canonical);
        }
        Ok(Roots { lexical, real })
    }

    /// Whether `path` (a physical path) is one of the roots itself.
    pub(crate) fn is_root(&self, path: &Path) -> bool {
        self.real.iter().any(|r| r == path)
    }

    /// Checks `target` and returns the physical path to operate on. With
    /// `follow_final` false the last component is not followed if it is a symlink
    /// (removing a link removes the link, not what it points to).
    pub(crate) fn confine(&self, target: &str, follow_final: bool) -> Result<PathBuf, Denied> {
        if target.is_empty() {
            return Err(Denied::Invalid("the target path is empty".into()));
        }
        if target.contains('\0') {
            return Err(Denied::Invalid(
                "the target path contains a NUL byte".into(),
            ));
        }
        let path = Path::new(target);
        if !path.is_absolute() {
            return Err(Denied::Invalid(format!(
                "the target path `{target}` is not absolute"
            )));
        }
        let lexical = normalize(path);
        let inside = |p: &Path, roots: &[PathBuf]| roots.iter().any(|r| p.starts_with(r));
        if !inside(&lexical, &self.lexical) && !inside(&lexical, &self.real) {
            return Err(Denied::Forbidden(format!(
                "`{target}` is outside the allowed filesystem roots"
            )));
        }
        let physical = match (follow_final, lexical.parent(), lexical.file_name()) {
            (false, Some(parent), Some(name)) => resolve(parent)?.join(name),
            _ => resolve(&lexical)?,
        };
        if !inside(&physical, &self.real) {
            return Err(Denied::Forbidden(format!(
                "`{target}` resolves through a symlink to `{}`, outside the allowed filesystem roots",
                physical.display()
            )));
        }
        Ok(physical)
    }
}

/// Resolves `.` and `..` as text. `..` at `/` stays at `/`, as the kernel does.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Follows every symlink in an absolute, normalized path, like `realpath`, except
/// that components that do not exist (yet) are kept as written: a file about to be
/// created must be checked too.
fn resolve(path: &Path) -> Result<PathBuf, Denied> {
    let mut pending: Vec<PathBuf> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            Component::ParentDir => Some(PathBuf::from("..")),
            _ => None,
        })
        .collect();
    let mut current = PathBuf::from("/");
    let mut hops = 0;
    // Once a component is missing, nothing below it can exist or be a symlink.
    let mut missing = false;
    while let Some(name) = pending.pop() {
        if name.as_os_str() == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        if missing {
            current = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(Denied::Io(format!(
                        "too many levels of symbolic links at `{}`",
                        next.display()
                    )));
                }
                let link = std::fs::read_link(&next).map_err(|e| {
                    Denied::Io(format!("cannot read symlink `{}`: {e}", next.display()))
                })?;
                if link.is_absolute() {
                    current = PathBuf::from("/");
                }
                for c in link.components().rev() {
                    match c {
                        Component::Normal(n) => pending.push(PathBuf::from(n)),
                        Component::ParentDir => pending.push(PathBuf::from("..")),
                        _ => {}
                    }
                }
            }
            Ok(_) => current = next,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                missing = true;
                current = next;
            }
            Err(e) => {
                return Err(Denied::Io(format!(
                    "cannot resolve `{}`: {e}",
                    next.display()
                )));
            }
        }
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_as_text() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/a/b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn resolve_keeps_missing_tail() {
        let dir = std::env::temp_dir();
        let real = std::fs::canonicalize(&dir).unwrap();
        let got = resolve(&normalize(&dir.join("no-such-dir-interlock/x/../y"))).unwrap();
        assert_eq!(got, real.join("no-such-dir-interlock/y"));
    }
}
