//! What no server may reach, whatever its profile says: the gateway's own
//! state, the session's buses and keyrings, and the user's secrets.
//!
//! The sandbox starts from an empty file system, so none of these is visible
//! unless a granted path contains it; then it is masked (an empty directory
//! or file mounted over it). A granted path *inside* one of them is refused.

use std::path::{Path, PathBuf};

/// Paths under the user's home that hold secrets or the desktop session's
/// state (keys, tokens, browser profiles, keyrings, every program's config).
pub const HOME_SECRETS: [&str; 22] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".pki",
    ".mozilla",
    ".thunderbird",
    ".local/share/keyrings",
    ".local/share/interlock",
    ".local/share/Trash",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".bash_history",
    ".zsh_history",
];

/// System paths that reach the gateway's machine rather than files: the
/// system bus, other daemons' sockets, the X server, the system's secrets.
pub const SYSTEM_SECRETS: [&str; 16] = [
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/run",
    "/var/run",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
];

/// Whether a protected path that does not exist would be a file (masked with
/// an empty file) rather than a directory.
pub fn file_like(path: &Path) -> bool {
    const FILES: [&str; 12] = [
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        "credentials",
        "credentials.toml",
        ".bash_history",
        ".zsh_history",
        "shadow",
        "shadow-",
        "gshadow",
        "gshadow-",
    ];
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILES.contains(&n) || n == "sudoers")
}

/// The set of protected paths for one gateway.
#[derive(Clone, Debug, Default)]
pub struct Protected {
    paths: Vec<PathBuf>,
}

impl Protected {
    /// The secrets of `home`, the session's runtime directory, the system's
    /// own, and `gateway_paths` (its data directory, config file, database).
    pub fn new(
        home: Option<&Path>,
        runtime_dir: Option<&Path>,
        gateway_paths: &[PathBuf],
    ) -> Protected {
        let mut paths: Vec<PathBuf> = SYSTEM_SECRETS.iter().map(PathBuf::from).collect();
        if let Some(home) = home {
            paths.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
        }
        paths.extend(runtime_dir.map(Path::to_path_buf));
        paths.extend(gateway_paths.iter().cloned());
        // Both the path as named and where it leads: a symlinked data
        // directory is protected under either name.
        let resolved: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        paths.extend(resolved);
        paths.sort();
        paths.dedup();
        Protected { paths }
    }

    /// From this process's environment (`HOME`, `XDG_RUNTIME_DIR`).
    pub fn from_env(gateway_paths: &[PathBuf]) -> Protected {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
        Protected::new(home.as_deref(), runtime.as_deref(), gateway_paths)
    }

    /// Every protected path.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The protected path that contains `path` (or is it), if any.
    pub fn containing(&self, path: &Path) -> Option<&Path> {
        self.paths
            .iter()
            .find(|p| path.starts_with(p))
            .map(PathBuf::as_path)
    }

    /// The protected paths strictly inside `path`: masked when `path` is
    /// granted.
    pub fn inside<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a Path> + 'a {
        self.paths
            .iter()
            .filter(move |p| p.starts_with(path) && p.as_path() != path)
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_a_secret_is_found_and_a_parent_masks_it() {
        let p = Protected::new(
            Some(Path::new("/home/ann")),
            Some(Path::new("/run/user/1000")),
            &[PathBuf::from("/home/ann/.local/share/interlock")],
        );
        assert_eq!(
            p.containing(Path::new("/home/ann/.ssh/id_ed25519")),
            Some(Path::new("/home/ann/.ssh"))
        );
        assert!(p.containing(Path::new("/home/ann/src")).is_none());
        // `.sshx` is not `.ssh`: components, not text prefixes.
        assert!(p.containing(Path::new("/home/ann/.sshx")).is_none());
        let masked: Vec<_> = p.inside(Path::new("/home/ann")).collect();
        assert!(masked.contains(&Path::new("/home/ann/.ssh")));
        assert!(masked.contains(&Path::new("/home/ann/.local/share/interlock")));
        assert!(!masked.contains(&Path::new("/run/user/1000")));
    }
}
