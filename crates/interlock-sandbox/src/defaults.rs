//! The profile a server gets without settings, derived from its launch: it
//! may read its own installation, and read and write what its client
//! configured it to work on (the existing paths in its arguments and
//! environment), so `mcp-server-filesystem ROOT` works as configured.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// How a server is started, as configured (and pinned).
#[derive(Clone, Copy, Debug)]
pub struct Launch<'a> {
    /// The program, as written (a name looked up in `PATH`, or a path).
    pub command: &'a str,
    pub args: &'a [String],
    /// Its configured environment (values may be secrets: never pinned).
    pub env: &'a BTreeMap<String, String>,
    pub cwd: Option<&'a Path>,
}

impl Launch<'_> {
    /// The launch as pinned with the server's surface: command, arguments,
    /// the *names* of its environment variables, its working directory and
    /// its sandbox setting.
    pub fn pinned(&self, sandbox: &crate::Setting) -> serde_json::Value {
        serde_json::json!({
            "command": self.command,
            "args": self.args,
            "env": self.env.keys().collect::<Vec<_>>(),
            "cwd": self.cwd.map(|c| c.to_string_lossy().into_owned()),
            "sandbox": sandbox.pinned(),
        })
    }
}

/// System directories every server may read: programs, libraries, shared
/// data and the system's configuration (its secrets masked).
pub const SYSTEM_READ: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Paths derived from a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// The program as the sandbox runs it (an absolute path).
    pub program: PathBuf,
    /// Read-only: the program's installation, its interpreter's, the
    /// directories of the files it was given, its working directory.
    pub read: Vec<PathBuf>,
    /// Read-write: the directories it was given.
    pub write: Vec<PathBuf>,
}

impl Derived {
    /// One line for a person: what the server may read and write by
    /// default (`interlock connect` shows it for each imported server).
    pub fn describe(&self) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let reads = if self.read.is_empty() {
            "the system's directories".to_owned()
        } else {
            format!("the system's directories, {}", list(&self.read))
        };
        let writes = if self.write.is_empty() {
            "only its own state directory".to_owned()
        } else {
            format!("{} and its own state directory", list(&self.write))
        };
        format!("sandboxed, no network; reads {reads}; writes {writes}")
    }
}

/// Derives the default profile of `launch`, looking `command` up in `path`
/// (the `PATH` the server gets). `None` when the program cannot be found.
pub fn derive(launch: &Launch<'_>, path: Option<&OsStr>) -> Result<Derived, String> {
    let program = find_program(launch.command, path, launch.cwd)
        .ok_or_else(|| format!("`{}` was not found in PATH", launch.command))?;
    let mut out = Derived {
        program: program.clone(),
        ..Derived::default()
    };
    installation(&program, &mut out.read, 0);
    if let Some(cwd) = launch.cwd {
        out.read.push(cwd.to_path_buf());
    }
    let values = launch
        .args
        .iter()
        .chain(launch.env.values())
        .flat_map(|a| path_candidates(a));
    for candidate in values {
        let p = match (Path::new(candidate).is_absolute(), launch.cwd) {
            (true, _) => PathBuf::from(candidate),
            (false, Some(cwd)) if looks_like_path(candidate) => cwd.join(candidate),
            _ => continue,
        };
        // `/dev/null`, `/proc/self/fd/1`: the sandbox has its own.
        if ["/proc", "/dev", "/sys"].iter().any(|s| p.starts_with(s)) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&p) else {
            // A file it was configured to create (a log, a database): the
            // directory it goes in, when that exists.
            if let Some(dir) = p.parent().filter(|d| d.is_dir() && *d != Path::new("/")) {
                out.write.push(dir.to_path_buf());
            }
            continue;
        };
        if meta.is_dir() {
            out.write.push(p);
            continue;
        }
        if let Some(tree) = package_tree(&p) {
            out.read.push(tree);
        } else if let Some(dir) = p.parent() {
            // A script or data file: its directory (its neighbours: the
            // modules it imports), read-only; it never rewrites itself.
            out.read.push(dir.to_path_buf());
        }
        // The `node_modules` a script's imports resolve from (Node looks in
        // every ancestor), where a link leads (pnpm, a workspace's).
        out.read.extend(
            p.ancestors()
                .skip(1)
                .map(|a| a.join("node_modules"))
                .filter(|nm| nm.is_dir())
                .filter_map(|nm| std::fs::canonicalize(nm).ok()),
        );
    }
    out.read.sort();
    out.read.dedup();
    out.write.sort();
    out.write.dedup();
    Ok(out)
}

/// An argument's possible paths: itself, and the value of `--flag=VALUE`.
fn path_candidates(arg: &str) -> impl Iterator<Item = &str> {
    let value = arg
        .strip_prefix('-')
        .and_then(|a| a.split_once('='))
        .map(|(_, v)| v);
    std::iter::once(arg).chain(value)
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with("./") || s.starts_with("../") || s == "."
}

/// `command` as an absolute path: as written when it holds a `/` (relative
/// to `cwd`), else the first executable of that name in `path`.
pub fn find_program(command: &str, path: Option<&OsStr>, cwd: Option<&Path>) -> Option<PathBuf> {
    if command.contains('/') {
        let p = match cwd {
            Some(c) if !Path::new(command).is_absolute() => c.join(command),
            _ => PathBuf::from(command),
        };
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The directories a program needs to run: the prefix it is installed in
/// (`…/bin/x` → `…`), where its symlinks lead, a virtual environment's base
/// interpreter (`pyvenv.cfg`'s `home`), and a script's interpreter (`#!`).
fn installation(program: &Path, read: &mut Vec<PathBuf>, depth: u8) {
    if depth > 3 {
        return;
    }
    let mut seen = vec![program.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(program)
        && real != program
    {
        seen.push(real);
    }
    for p in &seen {
        // A version manager's shim runs the manager from its own tree.
        if let Some(manager) = p.ancestors().find(|a| {
            a.file_name()
                .is_some_and(|n| VERSION_MANAGERS.iter().any(|m| n == OsStr::new(m)))
        }) {
            read.push(manager.to_path_buf());
        }
        let Some(root) = prefix_of(p) else { continue };
        if is_system(&root) {
            continue;
        }
        if let Ok(cfg) = std::fs::read_to_string(root.join("pyvenv.cfg")) {
            for line in cfg.lines() {
                if let Some((k, v)) = line.split_once('=')
                    && k.trim() == "home"
                {
                    let home = PathBuf::from(v.trim());
                    installation(&home.join("python3"), read, depth + 1);
                    if let Some(base) = prefix_of(&home.join("python3")) {
                        read.push(base);
                    }
                }
            }
        }
        read.push(root);
    }
    if let Some(interpreter) = shebang(program) {
        installation(&interpreter, read, depth + 1);
    }
}

/// Directories of version managers (pyenv, nvm, asdf, Volta): a program
/// found in one needs the manager's whole tree (its shims run the manager).
const VERSION_MANAGERS: [&str; 4] = [".pyenv", ".nvm", ".asdf", ".volta"];

/// `/x/bin/prog` → `/x`; `/x/prog` → `/x`.
fn prefix_of(program: &Path) -> Option<PathBuf> {
    let dir = program.parent()?;
    if dir.file_name() == Some(OsStr::new("bin")) {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir.to_path_buf())
    }
}

fn is_system(p: &Path) -> bool {
    p == Path::new("/") || SYSTEM_READ.iter().any(|s| p.starts_with(s))
}

/// The interpreter a script names in its first line (`#!/usr/bin/env node`
/// names `env`, which is a system program).
fn shebang(program: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let mut f = std::fs::File::open(program).ok()?;
    let n = f.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    let text = std::str::from_utf8(&line[..end]).ok()?;
    let interpreter = text.split_whitespace().next()?;
    Some(PathBuf::from(interpreter)).filter(|p| p.is_absolute())
}

/// A file inside a `node_modules` tree: the outermost `node_modules`
/// directory, so the package's own dependencies resolve.
fn package_tree(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .filter(|a| a.file_name() == Some(OsStr::new("node_modules")))
        .last()
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// `derive` for `command ARGS` with `env`, looked up in `path`.
    fn derive_for(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        path: Option<&OsStr>,
    ) -> Result<Derived, String> {
        derive(
            &Launch {
                command,
                args,
                env,
                cwd: None,
            },
            path,
        )
    }

    fn exec(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_filesystem_server_gets_its_root_writable_and_its_package_readable() {
        let dir = tempfile::tempdir().unwrap();
        let nm = dir.path().join("peers/node_modules");
        let script = nm.join("@modelcontextprotocol/server-filesystem/dist/index.js");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "").unwrap();
        let root = dir.path().join("work");
        std::fs::create_dir(&root).unwrap();
        let args = vec![
            script.to_string_lossy().into_owned(),
            root.to_string_lossy().into_owned(),
            "not-a-path".into(),
        ];
        let env = BTreeMap::new();
        let d = derive_for("sh", &args, &env, std::env::var_os("PATH").as_deref()).unwrap();
        assert!(d.program.is_absolute());
        assert_eq!(d.write, vec![root]);
        assert!(d.read.contains(&nm), "{:?}", d.read);
    }

    #[test]
    fn a_script_beside_a_linked_node_modules_reads_where_the_link_leads() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store/node_modules");
        std::fs::create_dir_all(store.join("@modelcontextprotocol/sdk")).unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::os::unix::fs::symlink(&store, project.join("node_modules")).unwrap();
        std::fs::write(project.join("server.mjs"), "").unwrap();
        let args = vec![project.join("server.mjs").to_string_lossy().into_owned()];
        let env = BTreeMap::new();
        let d = derive_for("/bin/sh", &args, &env, None).unwrap();
        assert!(d.read.contains(&project), "{:?}", d.read);
        assert!(
            d.read.contains(&std::fs::canonicalize(&store).unwrap()),
            "{:?}",
            d.read
        );
    }

    #[test]
    fn a_venv_program_reads_the_venv_and_its_base_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("pyenv/versions/3.11");
        exec(&base.join("bin/python3"), "");
        let venv = dir.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\n", base.join("bin").display()),
        )
        .unwrap();
        exec(
            &venv.join("bin/mcp-server-time"),
            &format!("#!{}\nimport x\n", venv.join("bin/python").display()),
        );
        std::os::unix::fs::symlink(base.join("bin/python3"), venv.join("bin/python")).unwrap();
        let env = BTreeMap::from([("DATA".to_owned(), "/definitely/not/here".to_owned())]);
        let program = venv.join("bin/mcp-server-time");
        let d = derive_for(
            program.to_str().unwrap(),
            &["--local-timezone=UTC".to_owned()],
            &env,
            None,
        )
        .unwrap();
        assert!(d.read.contains(&venv), "{:?}", d.read);
        assert!(d.read.contains(&base), "{:?}", d.read);
        assert!(d.write.is_empty());
    }

    #[test]
    fn flag_values_and_env_paths_count_and_a_missing_program_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([(
            "STATE".to_owned(),
            dir.path().to_string_lossy().into_owned(),
        )]);
        let args = vec![format!("--root={}", dir.path().display())];
        let d = derive_for("/bin/sh", &args, &env, None).unwrap();
        assert_eq!(d.write, vec![dir.path().to_path_buf()]);
        let none = derive_for(
            "no-such-program-here",
            &[],
            &env,
            Some(OsStr::new("/usr/bin")),
        );
        assert!(none.unwrap_err().contains("not found"));
    }

    #[test]
    fn the_pinned_launch_names_env_variables_without_their_values() {
        let env = BTreeMap::from([("TOKEN".to_owned(), "s3cret".to_owned())]);
        let v = Launch {
            command: "npx",
            args: &["-y".into(), "pkg".into()],
            env: &env,
            cwd: None,
        }
        .pinned(&crate::Setting::Default);
        assert_eq!(v["env"], serde_json::json!(["TOKEN"]));
        assert!(!v.to_string().contains("s3cret"));
        assert_eq!(v["sandbox"], "default");
    }
}
