//! Running the binary and finding the shared vectors.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs `interlock ARGS` in the repository root with `stdin`.
pub fn interlock(args: &[&str], stdin: Option<&[u8]>) -> Output {
    interlock_with(args, stdin, &[])
}

/// Runs `interlock ARGS` with extra environment variables.
pub fn interlock_with(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
    cmd.args(args)
        .current_dir(manifest_dir())
        .env_remove("INTERLOCK_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the binary runs");
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or_default()).unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// `$INTERLOCK_VECTORS_DIR`, else `../shared/vectors` beside the repository.
pub fn vectors() -> PathBuf {
    let dir = std::env::var_os("INTERLOCK_VECTORS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../shared/vectors"));
    assert!(dir.is_dir(), "test vectors not found at {}", dir.display());
    dir
}

/// The hash `interlock plans show ID` / `interlock servers show NAME` prints now
/// (`kind` is `plans` or `servers`): what a reviewer who looked signs with `--hash`.
pub fn shown_hash(kind: &str, id: &str, env: &[(&str, &str)]) -> String {
    let out = interlock_with(&[kind, "show", id], None, env);
    let label = if kind == "plans" { "hash" } else { "observed" };
    stdout(&out)
        .lines()
        .find_map(|l| l.strip_prefix(label).map(|h| h.trim().to_owned()))
        .filter(|h| h.starts_with("sha256:"))
        .unwrap_or_else(|| {
            panic!(
                "`{kind} show {id}` printed no hash: {}{}",
                stdout(&out),
                stderr(&out)
            )
        })
}

/// `interlock KIND approve ID --reason REASON --hash H EXTRA…`, H being the hash
/// `KIND show ID` prints now.
pub fn approve_as_shown(
    kind: &str,
    id: &str,
    reason: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let hash = shown_hash(kind, id, env);
    let mut args = vec![kind, "approve", id, "--reason", reason, "--hash", &hash];
    args.extend_from_slice(extra);
    interlock_with(&args, None, env)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The package's directory, read when the test runs (cargo and nextest set
/// `CARGO_MANIFEST_DIR`): a build cache shared between clones at different
/// paths may hand this binary over from another clone, whose compile-time
/// path need not exist.
pub fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("CARGO_MANIFEST_DIR (set by cargo and nextest)"),
    )
}
