//! What the built-in adapters may reach: filesystem roots and allow-listed programs.
//!
//! The configuration is the deployment's, never the agent's: a plan can only name
//! paths and programs, and the adapters refuse anything outside what is listed here,
//! however the plan was approved. Approval says "this is what I want"; the
//! configuration says "this is what the gateway can ever do".

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Configuration of [`crate::Adapters::builtin`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterConfig {
    /// Filesystem actions and probes refuse paths outside these directories, both
    /// lexically (after resolving `.` and `..`) and after following symlinks. Each
    /// must exist; it is resolved to its real path when the adapters are built.
    /// Empty means the filesystem adapter refuses everything.
    pub fs_roots: Vec<PathBuf>,
    /// Programs `cmd.run` and `cmd.exit_code` may start. Empty means none.
    pub commands: Vec<CommandRule>,
    /// The longest a command may run; a stage's `timeout_ms` may only shorten it.
    pub command_timeout: Duration,
    /// Bytes kept of each of stdout and stderr (the head); the rest is counted and
    /// discarded so a chatty program neither blocks nor fills memory.
    pub output_cap: usize,
    /// The most bytes `fs.file_contains` reads and the default and maximum of
    /// `fs.read_file`'s `max_bytes`. Beyond it `fs.file_contains` is unprobeable:
    /// "not found in the first N bytes" would be a guess, not an observation.
    pub read_cap: u64,
}

impl Default for AdapterConfig {
    /// No roots and no programs (nothing reachable), a 60 s command timeout, 64 KiB
    /// of output per stream, 16 MiB reads.
    fn default() -> Self {
        AdapterConfig {
            fs_roots: Vec::new(),
            commands: Vec::new(),
            command_timeout: Duration::from_secs(60),
            output_cap: 64 * 1024,
            read_cap: 16 * 1024 * 1024,
        }
    }
}

/// One allow-listed program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRule {
    /// The name as configured (`echo` or `/bin/echo`); a stage's target may use it.
    pub name: String,
    /// The absolute path that is executed. Resolved once, at configuration time, so
    /// a later change of `PATH` cannot swap the program behind an approval.
    pub program: PathBuf,
    /// When set, the stage's `argv` must start with these arguments (e.g. allow
    /// `git` only as `git status`).
    pub argv_prefix: Option<Vec<String>>,
}

impl CommandRule {
    /// Allows `program`: an absolute path to an existing file, or a bare name looked
    /// up in the gateway's `PATH` now.
    pub fn new(program: &str) -> Result<CommandRule, ConfigError> {
        let path = Path::new(program);
        let resolved = if path.is_absolute() {
            if !path.is_file() {
                return Err(ConfigError::ProgramNotFound(program.to_owned()));
            }
            path.to_path_buf()
        } else if program.contains('/') || program.is_empty() {
            return Err(ConfigError::ProgramNotAbsolute(program.to_owned()));
        } else {
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
                .ok_or_else(|| ConfigError::ProgramNotFound(program.to_owned()))?
        };
        Ok(CommandRule {
            name: program.to_owned(),
            program: resolved,
            argv_prefix: None,
        })
    }

    /// Restricts the rule to argv lists that start with `prefix`.
    pub fn with_argv_prefix<I, S>(mut self, prefix: I) -> CommandRule
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.argv_prefix = Some(prefix.into_iter().map(Into::into).collect());
        self
    }

    /// Whether this rule allows running `target` with `argv`.
    pub(crate) fn allows(&self, target: &str, argv: &[String]) -> bool {
        let program_matches = target == self.name || Path::new(target) == self.program;
        let argv_matches = self
            .argv_prefix
            .as_ref()
            .is_none_or(|prefix| argv.starts_with(prefix));
        program_matches && argv_matches
    }
}

/// A configuration the built-in adapters cannot work with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("filesystem root {0:?} is not an absolute path")]
    RootNotAbsolute(PathBuf),
    #[error("filesystem root {path:?} cannot be used: {reason}")]
    RootUnusable { path: PathBuf, reason: String },
    #[error("allow-listed program `{0}` is neither an absolute path nor a bare name")]
    ProgramNotAbsolute(String),
    #[error("allow-listed program `{0}` was not found (or is not a file)")]
    ProgramNotFound(String),
    #[error("command timeout must be positive")]
    ZeroTimeout,
}
