//! The command that starts a server confined: bubblewrap's namespaces (user,
//! mount, PID, IPC, UTS, cgroup, network) over an empty root with only the
//! granted paths bound into it, the protected ones masked, no capabilities,
//! a new session, killed with its parent; util-linux's `prlimit` inside it
//! sets the resource limits before the server's program runs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::defaults::{Derived, Launch, SYSTEM_READ};
use crate::profile::{Limits, Net, Profile, Setting};
use crate::protected::Protected;

/// Why a server cannot start confined. Each names what is missing; the
/// server is not started unconfined instead.
#[derive(Clone, Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox needs bubblewrap (`bwrap`), which is not installed: install it (Debian: `apt install bubblewrap`) or set sandbox = \"off\" for this server"
    )]
    NoBubblewrap,
    #[error(
        "the sandbox cannot start here: {0} (bubblewrap needs unprivileged user namespaces, or root); or set sandbox = \"off\" for this server"
    )]
    KernelRefused(String),
    #[error("the sandbox needs util-linux's `prlimit` for resource limits, which is not installed")]
    NoPrlimit,
    #[error("cannot start `{command}`: {why}")]
    NoProgram { command: String, why: String },
    #[error("`{path}` is inside `{protected}`, which no server may reach")]
    Protected { path: PathBuf, protected: PathBuf },
    #[error("the sandbox path `{0}` is not absolute")]
    Relative(PathBuf),
    #[error("the sandbox's seccomp filter: {0}")]
    Seccomp(String),
    #[error("the server's state directory `{path}` cannot be made: {why}")]
    StateDir { path: PathBuf, why: String },
    #[error(
        "net = [...] needs `socat` in the sandbox to relay to the gateway's egress proxy, which is not installed (Debian: `apt install socat`)"
    )]
    NoRelay,
}

/// What the gateway knows about its machine when it starts a server.
#[derive(Clone, Debug)]
pub struct Host {
    /// Never reachable.
    pub protected: Protected,
    /// `bwrap`, checked to work here ([`Host::check`]).
    pub bwrap: PathBuf,
    /// `prlimit`.
    pub prlimit: PathBuf,
    /// `socat`, the relay inside a sandbox with egress (`net = [...]`) from
    /// its loopback port to the gateway's egress proxy; `None`: not here.
    pub socat: Option<PathBuf>,
    /// The seccomp filter's cBPF program (`crate::seccomp`), installed in
    /// every sandbox.
    pub seccomp: Vec<u8>,
}

impl Host {
    /// Finds bubblewrap and prlimit in `path` and starts one trivial sandbox
    /// to learn whether this kernel lets it. Blocking (one short process).
    pub fn check(protected: Protected, path: Option<&OsStr>) -> Result<Host, SandboxError> {
        let path = path.map(OsStr::to_os_string).unwrap_or_else(|| {
            OsString::from("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        });
        let bwrap = crate::defaults::find_program("bwrap", Some(&path), None)
            .ok_or(SandboxError::NoBubblewrap)?;
        let prlimit = crate::defaults::find_program("prlimit", Some(&path), None)
            .ok_or(SandboxError::NoPrlimit)?;
        let seccomp = crate::seccomp::program()?;
        let filter = crate::seccomp::sealed(&seccomp)?;
        let mut trial = std::process::Command::new(&bwrap);
        trial.args(base_args());
        trial
            .arg("--seccomp")
            .arg(crate::seccomp::number(&filter).to_string());
        for dir in SYSTEM_READ {
            trial.arg("--ro-bind-try").arg(dir).arg(dir);
        }
        let out = trial
            .arg("--")
            .arg(&prlimit)
            .arg("--nofile=64")
            .arg("true")
            .env_clear()
            .output()
            .map_err(|e| SandboxError::KernelRefused(e.to_string()))?;
        drop(filter);
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(SandboxError::KernelRefused(if why.is_empty() {
                format!("bwrap exited with {}", out.status)
            } else {
                why
            }));
        }
        let socat = crate::defaults::find_program("socat", Some(&path), None);
        Ok(Host {
            protected,
            bwrap,
            prlimit,
            socat,
            seccomp,
        })
    }
}

/// A server's confinement, resolved: what it may read and write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The program, absolute.
    pub program: PathBuf,
    /// Read-only paths (beyond the system's directories).
    pub read: Vec<PathBuf>,
    /// Read-write paths (beyond its state directory).
    pub write: Vec<PathBuf>,
    /// Its private state directory on the host, read-write, bound at
    /// [`SANDBOX_HOME`] (its `HOME`).
    pub state_dir: PathBuf,
    pub net: Net,
    pub limits: Limits,
    /// The egress proxy's socket on the host, bound into the sandbox, when
    /// `net` lists destinations and the gateway runs the proxy; `None`: no
    /// network at all.
    pub egress: Option<PathBuf>,
}

/// Resolves `launch` under `profile` (the derived defaults plus what the
/// profile adds) against what is protected. Refuses a granted path inside a
/// protected one; symlinks are followed first, so a link into `~/.ssh` is
/// `~/.ssh`.
pub fn resolve(
    profile: &Profile,
    derived: Derived,
    state_dir: &Path,
    protected: &Protected,
) -> Result<Resolved, SandboxError> {
    let check = |paths: Vec<PathBuf>| -> Result<Vec<PathBuf>, SandboxError> {
        let mut out = Vec::new();
        for p in paths {
            if !p.is_absolute() {
                return Err(SandboxError::Relative(p));
            }
            // A path that does not exist yet is bound when it does.
            let real = std::fs::canonicalize(&p).unwrap_or(p.clone());
            for candidate in [&p, &real] {
                if let Some(prot) = protected.containing(candidate) {
                    return Err(SandboxError::Protected {
                        path: p.clone(),
                        protected: prot.to_path_buf(),
                    });
                }
            }
            out.push(real);
        }
        out.sort();
        out.dedup();
        Ok(out)
    };
    let write = check(
        derived
            .write
            .into_iter()
            .chain(profile.write.clone())
            .collect(),
    )?;
    let read = check(
        derived
            .read
            .into_iter()
            .chain(profile.read.clone())
            .collect(),
    )?
    .into_iter()
    .filter(|r| !write.iter().any(|w| r.starts_with(w)))
    .collect();
    Ok(Resolved {
        program: derived.program,
        read,
        write,
        state_dir: state_dir.to_path_buf(),
        net: profile.net.clone(),
        limits: profile.limits,
        egress: None,
    })
}

/// The profile a setting stands for (`Default` and `Off` alike: the caller
/// does not confine an `Off` server at all).
pub fn profile_of(setting: &Setting) -> Profile {
    match setting {
        Setting::Profile(p) => (**p).clone(),
        Setting::Default | Setting::Off => Profile::default(),
    }
}

/// The flags every sandbox starts with.
fn base_args() -> Vec<&'static str> {
    vec![
        // User, mount, PID, IPC, UTS, cgroup and network namespaces: the
        // server sees no other process (the gateway's /proc, memory and
        // signals are out of reach), no abstract Unix socket (session buses)
        // and no TCP port of the machine, only its own loopback.
        "--unshare-all",
        "--die-with-parent",
        // setsid: no TIOCSTI into the gateway's terminal.
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
}

/// The sandbox's own `/proc` (its PID namespace's: no process outside) and
/// a minimal `/dev`, mounted after every grant, so that no grant (even of
/// `/`) can show the machine's.
const OWN_PSEUDO_FS: [&str; 4] = ["--proc", "/proc", "--dev", "/dev"];

/// A grant as bound: itself, or for `/` each entry of the root but the
/// system's directories (bound read-only already), the pseudo file systems
/// (the sandbox's own) and links — so the sandbox keeps a root of its own
/// where its mount points (its home, the proxy's socket) can be made.
fn expand_root(grant: &Path) -> Vec<PathBuf> {
    if grant != Path::new("/") {
        return vec![grant.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir("/") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .filter(|p| {
            !SYSTEM_READ.iter().any(|s| p == Path::new(s))
                && !["/proc", "/sys", "/dev"].iter().any(|s| p == Path::new(s))
        })
        .collect();
    out.sort();
    out
}

fn push(a: &mut Vec<OsString>, items: &[&OsStr]) {
    a.extend(items.iter().map(|s| s.to_os_string()));
}

/// Where the egress proxy's socket appears inside a sandbox with egress.
pub const EGRESS_SOCKET: &str = "/run/interlock/egress.sock";

/// The loopback port inside a sandbox with egress where the relay listens:
/// what `HTTPS_PROXY` names.
pub const EGRESS_PORT: u16 = 3128;

/// The environment a server with egress gets, so HTTP clients that honour
/// the proxy variables (curl, Python's, Go's, Java's) use the relay.
pub fn egress_env() -> Vec<(String, String)> {
    let proxy = format!("http://127.0.0.1:{EGRESS_PORT}");
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .into_iter()
    .map(|k| (k.to_owned(), proxy.clone()))
    .collect()
}

/// Where a confined server's private state directory appears inside its
/// sandbox, and so its `HOME`: a fixed path, so nothing of the host's tree
/// (the gateway's data directory, where the state lives) is made visible
/// even as an empty mount point.
pub const SANDBOX_HOME: &str = "/state";

/// An empty read-only tmpfs over `dir`.
fn mask_dir(a: &mut Vec<OsString>, dir: &Path) {
    for flag in ["--tmpfs", "--remount-ro"] {
        a.push(flag.into());
        a.push(dir.as_os_str().to_os_string());
    }
}

/// The program and arguments that start `launch` confined by `resolved`
/// (run with the environment the server gets, `HOME` set to
/// [`SANDBOX_HOME`], where its state directory is bound).
///
/// `seccomp_fd` is the inheritable descriptor of the filter
/// ([`crate::seccomp::sealed`]) the caller keeps open until the child runs.
pub fn command(
    host: &Host,
    launch: &Launch<'_>,
    resolved: &Resolved,
    seccomp_fd: Option<i32>,
) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
    let mut a: Vec<OsString> = base_args().into_iter().map(OsString::from).collect();
    if let Some(fd) = seccomp_fd {
        a.push("--seccomp".into());
        a.push(fd.to_string().into());
    }
    let grants: Vec<&Path> = resolved
        .read
        .iter()
        .chain(&resolved.write)
        .map(PathBuf::as_path)
        .collect();
    let system_ro = |a: &mut Vec<OsString>, only_under_a_grant: bool| {
        for dir in SYSTEM_READ {
            if !only_under_a_grant || grants.iter().any(|g| Path::new(dir).starts_with(g)) {
                push(a, &["--ro-bind-try".as_ref(), dir.as_ref(), dir.as_ref()]);
            }
        }
    };
    system_ro(&mut a, false);
    // A private /tmp, unless a grant is /tmp itself or holds it (`/`): the
    // grants inside /tmp are bound on top of it.
    if !grants.iter().any(|g| Path::new("/tmp").starts_with(g)) {
        push(&mut a, &["--tmpfs".as_ref(), "/tmp".as_ref()]);
    }
    for (paths, flag) in [(&resolved.read, "--ro-bind"), (&resolved.write, "--bind")] {
        for p in paths.iter().flat_map(|p| expand_root(p)) {
            push(&mut a, &[flag.as_ref(), p.as_os_str(), p.as_os_str()]);
        }
    }
    // A grant of `/` would make the system's directories writable: they are
    // read-only again on top of it.
    system_ro(&mut a, true);
    // Masks after the binds they cover (bubblewrap applies them in order).
    let mut granted: Vec<&Path> = SYSTEM_READ.iter().map(Path::new).collect();
    granted.extend(resolved.read.iter().map(PathBuf::as_path));
    granted.extend(resolved.write.iter().map(PathBuf::as_path));
    let mut masks: Vec<&Path> = granted
        .iter()
        .flat_map(|g| host.protected.inside(g))
        .collect();
    masks.sort();
    masks.dedup();
    for m in masks {
        // The sandbox mounts its own over these below.
        if ["/proc", "/dev"].iter().any(|p| m.starts_with(p)) {
            continue;
        }
        let writable = resolved.write.iter().any(|w| m.starts_with(w));
        match std::fs::symlink_metadata(m) {
            // A link (`/var/run`): where it leads is masked under its own name.
            Ok(meta) if meta.is_symlink() => {}
            Ok(meta) if meta.is_dir() => mask_dir(&mut a, m),
            Ok(_) => push(
                &mut a,
                &["--ro-bind".as_ref(), "/dev/null".as_ref(), m.as_os_str()],
            ),
            // Absent under a writable grant: the server could create it (an
            // `authorized_keys` on the host); an empty file or tmpfs takes
            // its place (bubblewrap makes the mount point, empty, on the host).
            Err(_) if writable && crate::protected::file_like(m) => {
                push(
                    &mut a,
                    &["--ro-bind".as_ref(), "/dev/null".as_ref(), m.as_os_str()],
                );
            }
            Err(_) if writable => mask_dir(&mut a, m),
            Err(_) => {}
        }
    }
    push(&mut a, &OWN_PSEUDO_FS.map(OsStr::new));
    push(
        &mut a,
        &[
            "--bind".as_ref(),
            resolved.state_dir.as_os_str(),
            SANDBOX_HOME.as_ref(),
        ],
    );
    let relay = match &resolved.egress {
        Some(socket) => {
            let socat = host.socat.as_ref().ok_or(SandboxError::NoRelay)?;
            push(
                &mut a,
                &[
                    "--bind".as_ref(),
                    socket.as_os_str(),
                    EGRESS_SOCKET.as_ref(),
                ],
            );
            Some(socat)
        }
        None => None,
    };
    // The root itself (the directories made for the mount points) read-only.
    push(&mut a, &["--remount-ro".as_ref(), "/".as_ref()]);
    let cwd = launch
        .cwd
        .map(Path::as_os_str)
        .unwrap_or(SANDBOX_HOME.as_ref());
    push(&mut a, &["--chdir".as_ref(), cwd]);
    push(&mut a, &["--".as_ref()]);
    if let Some(socat) = relay {
        // The relay from the sandbox's loopback to the proxy, then the server
        // (its arguments as `$@`, never through the shell's parser).
        a.push("/bin/sh".into());
        a.push("-c".into());
        a.push(
            format!(
                "\"$0\" TCP-LISTEN:{EGRESS_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:{EGRESS_SOCKET} & exec \"$@\""
            )
            .into(),
        );
        a.push(socat.as_os_str().to_os_string());
    }
    push(&mut a, &[host.prlimit.as_os_str()]);
    let l = resolved.limits;
    a.push(format!("--data={}", l.memory_mb.saturating_mul(1 << 20)).into());
    a.push(format!("--nofile={}", l.open_files).into());
    a.push(format!("--fsize={}", l.file_size_mb.saturating_mul(1 << 20)).into());
    if l.cpu_secs > 0 {
        a.push(format!("--cpu={}", l.cpu_secs).into());
    }
    if l.processes > 0 {
        a.push(format!("--nproc={}", l.processes).into());
    }
    a.push("--".into());
    a.push(resolved.program.as_os_str().to_os_string());
    a.extend(launch.args.iter().map(OsString::from));
    Ok((host.bwrap.clone(), a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn host(protected: Protected) -> Host {
        Host {
            protected,
            bwrap: "/usr/bin/bwrap".into(),
            prlimit: "/usr/bin/prlimit".into(),
            socat: None,
            seccomp: Vec::new(),
        }
    }

    #[test]
    fn a_granted_path_inside_a_secret_is_refused_even_through_a_symlink() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        let link = home.path().join("innocent");
        std::os::unix::fs::symlink(home.path().join(".ssh"), &link).unwrap();
        let protected = Protected::new(Some(home.path()), None, &[]);
        let derived = Derived {
            program: "/bin/sh".into(),
            read: vec![],
            write: vec![link.clone()],
        };
        let err = resolve(
            &Profile::default(),
            derived,
            Path::new("/tmp/s"),
            &protected,
        )
        .unwrap_err();
        assert!(matches!(err, SandboxError::Protected { .. }), "{err}");
    }

    #[test]
    fn a_granted_parent_masks_the_secrets_inside_it() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".netrc"), "machine x").unwrap();
        let protected = Protected::new(Some(home.path()), None, &[]);
        let env = BTreeMap::new();
        let launch = Launch {
            command: "/bin/sh",
            args: &[],
            env: &env,
            cwd: None,
        };
        let derived = Derived {
            program: "/bin/sh".into(),
            read: vec![],
            write: vec![home.path().to_path_buf()],
        };
        let r = resolve(
            &Profile::default(),
            derived,
            Path::new("/tmp/s"),
            &protected,
        )
        .unwrap();
        let (_, args) = command(&host(protected), &launch, &r, None).unwrap();
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let at = |flag: &str, path: &Path| {
            text.windows(2)
                .position(|w| w[0] == flag && w[1] == path.to_string_lossy())
        };
        let home_real = std::fs::canonicalize(home.path()).unwrap();
        let bound = text
            .windows(3)
            .position(|w| w[0] == "--bind" && w[1] == home_real.to_string_lossy())
            .expect("home bound");
        let ssh = at("--tmpfs", &home.path().join(".ssh")).expect(".ssh masked");
        assert!(ssh > bound, "the mask comes after the bind");
        assert!(text.windows(3).any(|w| w[0] == "--ro-bind"
            && w[1] == "/dev/null"
            && w[2] == home.path().join(".netrc").to_string_lossy()));
        // Absent under a writable grant: masked too, so it cannot be created.
        assert!(at("--tmpfs", &home.path().join(".aws")).is_some());
        assert_eq!(text.last().map(String::as_str), Some("/bin/sh"));
    }

    fn text_has_seccomp(args: &[OsString], fd: &str) -> bool {
        args.windows(2)
            .any(|w| w[0] == "--seccomp" && w[1].to_string_lossy() == fd)
    }

    #[test]
    fn egress_binds_the_proxy_socket_and_runs_the_relay_before_the_server() {
        let env = BTreeMap::new();
        let launch = Launch {
            command: "/bin/sh",
            args: &["-c".into(), "echo $0".into()],
            env: &env,
            cwd: None,
        };
        let mut r = resolve(
            &Profile::default(),
            Derived {
                program: "/bin/sh".into(),
                ..Derived::default()
            },
            Path::new("/tmp/s"),
            &Protected::default(),
        )
        .unwrap();
        r.egress = Some("/srv/gw/servers/s.egress.sock".into());
        let without = command(&host(Protected::default()), &launch, &r, None).unwrap_err();
        assert!(matches!(without, SandboxError::NoRelay), "{without}");
        let mut h = host(Protected::default());
        h.socat = Some("/usr/bin/socat".into());
        let (_, args) = command(&h, &launch, &r, Some(7)).unwrap();
        assert!(text_has_seccomp(&args, "7"));
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            text.windows(3)
                .any(|w| w == ["--bind", "/srv/gw/servers/s.egress.sock", EGRESS_SOCKET])
        );
        let sh = text.iter().position(|t| t == "/bin/sh").unwrap();
        assert_eq!(text[sh + 3], "/usr/bin/socat");
        assert_eq!(text[sh + 4], "/usr/bin/prlimit");
        // The server's own arguments stay arguments.
        assert_eq!(&text[text.len() - 2..], ["-c", "echo $0"]);
    }
}
