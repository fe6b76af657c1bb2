//! Inspection of an agent's own tools (issue 40): the shell commands it runs,
//! the files it writes and reads, the URLs it fetches — what a coding agent's
//! hooks report, outside any MCP server.
//!
//! Pure, like the rest of the crate. The rules favour precision as the
//! argument rules do: `rm -rf build/` inside the project is work, `rm -rf ~`
//! is not; `curl localhost:8080/health` is a developer checking a server,
//! `curl http://169.254.169.254/` is not. What each rule means and the
//! labelled set it is scored on: `tests/native.rs`.

mod context;
mod fetch;
mod findings;
mod paths;
mod shell;
mod words;

pub use context::NativeContext;
use findings::{Findings, read_rules, write_rules};

use crate::{Category, Finding, Severity};

/// What the agent is about to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeAction<'a> {
    /// Run a shell command line.
    Shell { command: &'a str },
    /// Create, replace or edit the file at `path` (the new text, when known).
    Write {
        path: &'a str,
        content: Option<&'a str>,
    },
    /// Read the file at `path`.
    Read { path: &'a str },
    /// Fetch the URL (a web fetch tool, not a shell command).
    Fetch { url: &'a str },
}

impl NativeAction<'_> {
    /// The JSON path its findings name.
    fn path(&self) -> &'static str {
        match self {
            NativeAction::Shell { .. } => "$.command",
            NativeAction::Write { .. } | NativeAction::Read { .. } => "$.file_path",
            NativeAction::Fetch { .. } => "$.url",
        }
    }
}

/// `path` made absolute against the context's working directory, `.` and
/// `..` resolved lexically, `~` expanded when the home is known: what a
/// rule about where a file is must match (`src/../.env` is `.env`).
pub fn resolve_path(path: &str, ctx: &NativeContext<'_>) -> String {
    paths::resolve(path, ctx)
}

/// What inspection finds in one native action. Findings never repeat the
/// offending text.
pub fn inspect_native(action: &NativeAction<'_>, ctx: &NativeContext<'_>) -> Vec<Finding> {
    let mut out = Findings {
        path: action.path(),
        found: Vec::new(),
    };
    match *action {
        NativeAction::Shell { command } => shell::inspect(command, ctx, &mut out),
        NativeAction::Write { path, content } => {
            write_rules(&paths::resolve(path, ctx), ctx, &mut out);
            if let Some(text) = content
                && text.len() <= 1 << 20
                && text.lines().any(shell::fetch_and_run)
            {
                out.add(
                    Category::RemoteCode,
                    "remote-code-in-written-script",
                    Severity::High,
                );
            }
        }
        NativeAction::Read { path } => read_rules(&paths::resolve(path, ctx), ctx, &mut out),
        NativeAction::Fetch { url } => fetch::inspect(url, &mut out),
    }
    out.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_judged_by_where_and_what() {
        let ctx = NativeContext {
            cwd: "/w/app",
            project: None,
            home: Some("/home/u"),
        };
        let rules = |path| {
            inspect_native(
                &NativeAction::Write {
                    path,
                    content: None,
                },
                &ctx,
            )
            .into_iter()
            .map(|f| f.rule)
            .collect::<Vec<_>>()
        };
        assert!(rules("src/lib.rs").is_empty());
        assert!(rules("/tmp/x").is_empty());
        assert_eq!(rules(".git/hooks/pre-push"), vec!["protected-git-hooks"]);
        assert!(rules("/etc/hosts").contains(&"write-outside-project"));
        assert!(rules(".env").contains(&"sensitive-file-dotenv"));
    }
}
