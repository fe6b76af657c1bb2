//! The built-in argv-command executor (`cmd.run`) and prober (`cmd.exit_code`).
//!
//! A command is the widest door Interlock has, so every property that narrows it is
//! enforced here rather than left to configuration discipline:
//! - only allow-listed programs, by the absolute path resolved at configuration time
//!   (never a `PATH` lookup at run time), optionally only with an allowed argv prefix;
//! - never a shell: the program is `execve`d with the argv as given, so `;`, `$(…)`
//!   and globs are plain bytes;
//! - a cleared environment (only `PATH`, `HOME`, `LANG` pass), so the gateway's
//!   secrets in its environment never reach the command; stdin is `/dev/null`;
//! - its own process group, killed as a whole on timeout and after the command
//!   ends, so no helper process outlives its stage (a process that calls `setsid`
//!   itself escapes this; a cgroup would be needed to catch that);
//! - stdout and stderr each keep only their first `output_cap` bytes; the rest is
//!   read and counted, not stored, so the command neither blocks on a full pipe nor
//!   fills the gateway's memory.

use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use interlock_canon::Value;
use interlock_core::{Check, Stage};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::confine::{Denied, Roots};
use crate::params;
use crate::{AdapterConfig, CommandRule, ConfigError, ExecError, ExecOutcome, Executor};
use crate::{ProbeOutcome, Prober, int, millis, object};

/// Environment variables a command inherits from the gateway; all others are cleared.
const PASSED_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

/// Bytes of stderr kept from the end, for [`ExecError::NonZeroExit`]: the last lines
/// usually say why a program failed.
const STDERR_TAIL: usize = 2048;

/// How long to wait for a killed process to be reaped before giving up on it.
const REAP_GRACE: Duration = Duration::from_secs(2);

/// Allow-listed argv commands.
#[derive(Clone, Debug)]
pub struct Commands {
    rules: Vec<CommandRule>,
    timeout: Duration,
    output_cap: usize,
    /// `cwd` must lie inside the filesystem roots, like any other path a plan names.
    roots: Roots,
}

impl Commands {
    pub fn new(config: &AdapterConfig) -> Result<Commands, ConfigError> {
        if config.command_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        Ok(Commands {
            rules: config.commands.clone(),
            timeout: config.command_timeout,
            output_cap: config.output_cap,
            roots: Roots::new(&config.fs_roots)?,
        })
    }

    /// The program to execute for `target` with `argv`, if a rule allows it.
    fn allowed(&self, target: &str, argv: &[String]) -> Result<PathBuf, String> {
        self.rules
            .iter()
            .find(|r| r.allows(target, argv))
            .map(|r| r.program.clone())
            .ok_or_else(|| {
                if self
                    .rules
                    .iter()
                    .any(|r| r.name == target || Path::new(target) == r.program)
                {
                    format!("`{target}` is allow-listed only with another argv prefix")
                } else {
                    format!("program `{target}` is not allow-listed")
                }
            })
    }
}

/// What a stream produced: its head (up to the cap), its tail (for error
/// messages) and how many bytes there were in all.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn truncated(&self) -> bool {
        self.total > self.head.len() as u64
    }

    fn head_text(&self) -> String {
        String::from_utf8_lossy(&self.head).into_owned()
    }

    fn tail_text(&self) -> String {
        let (a, b) = self.tail.as_slices();
        let mut bytes = a.to_vec();
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Reads a stream to its end, keeping at most `cap` bytes of head and `tail_cap` of
/// tail.
async fn capture(stream: Option<impl AsyncRead + Unpin>, cap: usize, tail_cap: usize) -> Capture {
    let mut out = Capture::default();
    let Some(mut stream) = stream else {
        return out;
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        out.total += n as u64;
        let room = cap.saturating_sub(out.head.len());
        out.head.extend_from_slice(&chunk[..room.min(n)]);
        out.tail.extend(&chunk[n.saturating_sub(tail_cap)..]);
        while out.tail.len() > tail_cap {
            out.tail.pop_front();
        }
    }
    out
}

/// A finished command.
struct Finished {
    status: ExitStatus,
    stdout: Capture,
    stderr: Capture,
    elapsed: Duration,
}

/// Why a command did not finish.
enum RunError {
    Spawn(String),
    Timeout(Duration),
}

/// Signals the whole process group led by `pid` (the command was made its leader).
/// Failure (typically: the group is already gone) is fine; this is cleanup.
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

async fn run(
    program: &Path,
    argv: &[String],
    cwd: &Path,
    timeout: Duration,
    output_cap: usize,
) -> Result<Finished, RunError> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(argv)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for key in PASSED_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| RunError::Spawn(format!("cannot start `{}`: {e}", program.display())))?;
    let pid = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // Waits for the exit *and* for both pipes to close: a helper that keeps the
    // output open keeps the command running as far as the deadline is concerned.
    let finished = tokio::time::timeout(timeout, async {
        tokio::join!(
            child.wait(),
            capture(stdout, output_cap, 0),
            capture(stderr, output_cap, STDERR_TAIL),
        )
    })
    .await;
    kill_group(pid);
    match finished {
        Ok((Ok(status), stdout, stderr)) => Ok(Finished {
            status,
            stdout,
            stderr,
            elapsed: started.elapsed(),
        }),
        Ok((Err(e), _, _)) => Err(RunError::Spawn(format!(
            "cannot wait for `{}`: {e}",
            program.display()
        ))),
        Err(_) => {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
            Err(RunError::Timeout(timeout))
        }
    }
}

#[async_trait]
impl Executor for Commands {
    fn actions(&self) -> Vec<&'static str> {
        vec!["cmd.run"]
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        if stage.action != "cmd.run" {
            return Err(ExecError::Unsupported(format!(
                "the command adapter does not perform `{}`",
                stage.action
            )));
        }
        params::check_action(&stage.action, &stage.params).map_err(ExecError::InvalidParams)?;
        let argv = params::string_list(&stage.params, "argv").unwrap_or_default();
        let program = self
            .allowed(&stage.target, &argv)
            .map_err(ExecError::Forbidden)?;
        let timeout = match params::integer(&stage.params, "timeout_ms") {
            None => self.timeout,
            Some(ms) if ms > 0 && ms.unsigned_abs() <= millis(self.timeout) => {
                Duration::from_millis(ms.unsigned_abs())
            }
            Some(ms) => {
                return Err(ExecError::InvalidParams(format!(
                    "`timeout_ms` must be between 1 and {} (the configured limit), found {ms}",
                    millis(self.timeout)
                )));
            }
        };
        let cwd = match params::string(&stage.params, "cwd") {
            None => PathBuf::from("/"),
            Some(c) => self.roots.confine(c, true).map_err(|d| match d {
                Denied::Forbidden(m) => ExecError::Forbidden(format!("cwd: {m}")),
                Denied::Invalid(m) => ExecError::InvalidParams(format!("cwd: {m}")),
                Denied::Io(m) => ExecError::Io(format!("cwd: {m}")),
            })?,
        };
        let done = match run(&program, &argv, &cwd, timeout, self.output_cap).await {
            Ok(done) => done,
            Err(RunError::Spawn(m)) => return Err(ExecError::Io(m)),
            Err(RunError::Timeout(t)) => {
                return Err(ExecError::Timeout {
                    timeout_ms: millis(t),
                });
            }
        };
        if !done.status.success() {
            return Err(ExecError::NonZeroExit {
                code: done.status.code(),
                stderr_tail: done.stderr.tail_text(),
            });
        }
        let code = done.status.code().unwrap_or_default();
        Ok(ExecOutcome {
            summary: format!(
                "{} exited with code {code} after {} ms",
                program.display(),
                done.elapsed.as_millis()
            ),
            detail: object([
                ("program", Value::String(program.display().to_string())),
                (
                    "argv",
                    Value::Array(argv.iter().cloned().map(Value::String).collect()),
                ),
                ("cwd", Value::String(cwd.display().to_string())),
                ("exit_code", int(code)),
                ("elapsed_ms", int(millis(done.elapsed))),
                ("stdout", Value::String(done.stdout.head_text())),
                ("stdout_bytes", int(done.stdout.total)),
                ("stdout_truncated", Value::Bool(done.stdout.truncated())),
                ("stderr", Value::String(done.stderr.head_text())),
                ("stderr_bytes", int(done.stderr.total)),
                ("stderr_truncated", Value::Bool(done.stderr.truncated())),
            ]),
            output: None,
        })
    }
}

#[async_trait]
impl Prober for Commands {
    fn probes(&self) -> Vec<&'static str> {
        vec!["cmd.exit_code"]
    }

    async fn probe(&self, check: &Check, target: &str) -> ProbeOutcome {
        if check.probe != "cmd.exit_code" {
            return ProbeOutcome::unprobeable(format!(
                "the command adapter does not answer `{}`",
                check.probe
            ));
        }
        if let Err(m) = params::check_probe(&check.probe, &check.params) {
            return ProbeOutcome::unprobeable(format!("invalid parameters: {m}"));
        }
        let argv = params::string_list(&check.params, "argv").unwrap_or_default();
        let Some(expected) = params::integer(&check.params, "code") else {
            return ProbeOutcome::unprobeable("invalid parameters: `code` is missing");
        };
        let program = match self.allowed(target, &argv) {
            Ok(p) => p,
            Err(m) => return ProbeOutcome::unprobeable(m),
        };
        match run(
            &program,
            &argv,
            Path::new("/"),
            self.timeout,
            self.output_cap,
        )
        .await
        {
            Err(RunError::Spawn(m)) => ProbeOutcome::unprobeable(m),
            Err(RunError::Timeout(t)) => ProbeOutcome::unprobeable(format!(
                "`{}` did not finish within {} ms",
                program.display(),
                t.as_millis()
            )),
            // Killed by a signal: no exit code was observed, so nothing can be
            // compared (and guessing would be failing open).
            Ok(done) => match done.status.code() {
                None => ProbeOutcome::unprobeable(format!(
                    "`{}` was terminated by signal {}",
                    program.display(),
                    done.status.signal().unwrap_or_default()
                )),
                Some(code) => ProbeOutcome::from_bool(
                    i64::from(code) == expected,
                    format!("`{}` exited with code {code}", program.display()),
                ),
            },
        }
    }
}
