//! Confinement of the stdio MCP servers the gateway starts (issue 38).
//!
//! An upstream server is third-party code that runs before anyone has
//! reviewed it. Started as the gateway's user it could read the gateway's
//! memory and environment, rewrite the database that judges it, reach the
//! keyring that holds the approver key, or connect to the admin socket. Here
//! every stdio server starts in a sandbox from its first start, pending or
//! approved: [`confine`] turns a launch and its [`Setting`] into the
//! bubblewrap command that runs it, or an error that names what is missing
//! (never an unconfined start, unless the operator wrote `sandbox = "off"`).
//!
//! - [`profile`]: the `sandbox` setting as written (`read`, `write`, `net`,
//!   `limits`, or `"off"`).
//! - [`defaults`]: what a server may use without settings, derived from its
//!   launch; the launch as pinned with the server's surface.
//! - [`protected`]: what no server may reach, whatever its profile says.
//! - [`confine`](mod@confine): the bubblewrap command.
//!
//! Architecture invariant: this crate decides what a server may reach and
//! builds the command; it starts nothing but the one trial sandbox of
//! [`Host::check`], speaks no MCP, and has no async.

pub mod confine;
pub mod defaults;
pub mod profile;
pub mod protected;
pub mod seccomp;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub use confine::{
    EGRESS_PORT, EGRESS_SOCKET, Host, Resolved, SANDBOX_HOME, SandboxError, egress_env,
};
pub use defaults::Launch;
pub use profile::{HostPort, Limits, Net, Profile, Setting};
pub use protected::Protected;

/// One gateway's confinement of its servers: what is protected, where each
/// server's private state lives (`<state root>/<server>`), and bubblewrap,
/// checked once on first use.
#[derive(Debug)]
pub struct Confiner {
    protected: Protected,
    state_root: PathBuf,
    host: std::sync::OnceLock<Result<Host, SandboxError>>,
}

impl Confiner {
    /// A confiner for a gateway whose state is in `data_dir` (protected,
    /// with `extra` paths: its config file, say); servers' state goes in
    /// `<data_dir>/servers/`, each server seeing only its own.
    pub fn new(data_dir: &Path, extra: &[PathBuf]) -> Confiner {
        let mut gateway_paths = vec![data_dir.to_path_buf()];
        gateway_paths.extend(extra.iter().cloned());
        Confiner {
            protected: Protected::from_env(&gateway_paths),
            state_root: data_dir.join("servers"),
            host: std::sync::OnceLock::new(),
        }
    }

    /// A confiner with `protected` given (tests: a home of their own).
    pub fn with_protected(protected: Protected, state_root: PathBuf) -> Confiner {
        Confiner {
            protected,
            state_root,
            host: std::sync::OnceLock::new(),
        }
    }

    /// Where the gateway's egress proxy for `server` listens (beside its
    /// state directory, not in it: the server cannot replace it).
    pub fn egress_socket(&self, server: &str) -> PathBuf {
        self.state_root.join(format!("{server}.egress.sock"))
    }

    /// The state directory of `server`.
    pub fn state_dir(&self, server: &str) -> PathBuf {
        self.state_root.join(server)
    }

    /// bubblewrap on this machine (checked the first time; blocking).
    pub fn host(&self) -> Result<&Host, SandboxError> {
        self.host
            .get_or_init(|| {
                Host::check(self.protected.clone(), std::env::var_os("PATH").as_deref())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// [`confine`] for `server`.
    pub fn confine(
        &self,
        server: &str,
        launch: &Launch<'_>,
        setting: &Setting,
        path: Option<&OsStr>,
    ) -> Result<Confined, SandboxError> {
        if server.is_empty() || server.contains('/') || server.starts_with('.') {
            return Err(SandboxError::StateDir {
                path: self.state_root.join(server),
                why: "a server name is one path component".into(),
            });
        }
        let egress = self.egress_socket(server);
        confine(
            self.host()?,
            launch,
            setting,
            &self.state_dir(server),
            path,
            // Egress only through a proxy the gateway runs now; without one
            // (a review's observation), no network.
            Some(egress.as_path()).filter(|p| p.exists()),
        )
    }
}

/// A server ready to start confined: the program to run (bubblewrap), its
/// arguments, what it was granted (for the review window and the log), and
/// the environment it needs besides its own.
#[derive(Debug)]
pub struct Confined {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub resolved: Resolved,
    /// The proxy variables, when it has egress.
    pub env: Vec<(String, String)>,
    /// The seccomp filter's descriptor, which the child inherits: keep it
    /// until the child has started, then drop it.
    pub seccomp: std::os::fd::OwnedFd,
}

/// Confines `launch` under `setting` on `host`, with `state_dir` as the
/// server's private home (made if missing, owner-only). `path` is the
/// `PATH` the server gets, to find its program; `egress` the socket of the
/// gateway's egress proxy for it, if one runs (a profile's `net` list is
/// reached only through it; without one the server has no network). Not
/// for `Setting::Off`: the caller starts such a server itself.
pub fn confine(
    host: &Host,
    launch: &Launch<'_>,
    setting: &Setting,
    state_dir: &Path,
    path: Option<&OsStr>,
    egress: Option<&Path>,
) -> Result<Confined, SandboxError> {
    let derived = defaults::derive(launch, path).map_err(|why| SandboxError::NoProgram {
        command: launch.command.to_owned(),
        why,
    })?;
    let profile = confine::profile_of(setting);
    let mut resolved = confine::resolve(&profile, derived, state_dir, &host.protected)?;
    if matches!(profile.net, Net::Allow(_)) {
        resolved.egress = egress.map(Path::to_path_buf);
    }
    make_state_dir(state_dir)?;
    let filter = seccomp::sealed(&host.seccomp)?;
    let (program, args) =
        confine::command(host, launch, &resolved, Some(seccomp::number(&filter)))?;
    let env = if resolved.egress.is_some() {
        egress_env()
    } else {
        Vec::new()
    };
    Ok(Confined {
        program,
        args,
        resolved,
        env,
        seccomp: filter,
    })
}

fn make_state_dir(dir: &Path) -> Result<(), SandboxError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let fail = |e: std::io::Error| SandboxError::StateDir {
        path: dir.to_path_buf(),
        why: e.to_string(),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)
}
