//! Role patterns over native tools, written as Claude Code writes its
//! permission rules: `Bash(git *)` (a command line glob), `Edit(src/**)`
//! (a path glob, relative to the project or absolute; it covers `Write`
//! too), `Read(docs/**)`, `WebFetch(https://docs.rs/*)`, a bare `Bash` (any
//! use), and MCP tools by name (`mcp__github__*`). A role's `tools` list may
//! mix them with its MCP globs; `*` alone allows everything.

use globset::{GlobBuilder, GlobMatcher};

use crate::event::HookEvent;
use crate::tool::NativeTool;

/// One compiled pattern.
#[derive(Clone, Debug)]
pub struct NativePattern {
    tool: GlobMatcher,
    argument: Option<GlobMatcher>,
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("native tool pattern {pattern:?}: {why}")]
pub struct PatternError {
    pub pattern: String,
    pub why: String,
}

/// Whether a role entry is a native-tool pattern (`Name(…)`, or one of the
/// native tool names alone) rather than an MCP tool glob.
pub fn is_native(entry: &str) -> bool {
    let name = entry.split('(').next().unwrap_or(entry);
    (entry.ends_with(')') && entry.contains('('))
        || NATIVE_NAMES.contains(&name)
        || entry.starts_with("mcp__")
}

/// The canonical native tool names.
pub const NATIVE_NAMES: [&str; 5] = ["Bash", "Write", "Edit", "Read", "WebFetch"];

impl NativePattern {
    pub fn parse(entry: &str) -> Result<NativePattern, PatternError> {
        let err = |why: String| PatternError {
            pattern: entry.to_owned(),
            why,
        };
        let (name, argument) = match entry.split_once('(') {
            Some((name, rest)) => {
                let arg = rest
                    .strip_suffix(')')
                    .ok_or_else(|| err("a `(` is never closed".into()))?;
                (name, Some(arg))
            }
            None => (entry, None),
        };
        if name.is_empty() {
            return Err(err("it names no tool".into()));
        }
        let glob = |p: &str, paths: bool| {
            GlobBuilder::new(p)
                .literal_separator(paths)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| err(e.to_string()))
        };
        let paths = matches!(name, "Edit" | "Write" | "Read");
        Ok(NativePattern {
            tool: glob(name, false)?,
            argument: match argument {
                None | Some("*") | Some("**") | Some("") => None,
                Some(a) => Some(glob(a, paths)?),
            },
        })
    }

    /// Whether the event's tool use matches.
    pub fn matches(&self, event: &HookEvent) -> bool {
        let name = event.canonical_tool();
        let name_matches = self.tool.is_match(&name)
            // `Edit(…)` covers every file-editing tool, as in Claude Code.
            || (name == "Write" && self.tool.is_match("Edit"));
        if !name_matches {
            return false;
        }
        let Some(argument) = &self.argument else {
            return true;
        };
        let subjects = event.tool.subjects();
        if subjects.is_empty() {
            return false;
        }
        let root = event.project.as_deref().unwrap_or(&event.cwd);
        subjects.iter().all(|s| match &event.tool {
            NativeTool::Write { .. } | NativeTool::Read { .. } => {
                // Resolved first: `src/../.env` is `.env`, whatever it says.
                let ctx = interlock_inspect::NativeContext {
                    cwd: &event.cwd,
                    project: event.project.as_deref(),
                    home: None,
                };
                let absolute = interlock_inspect::resolve_path(s, &ctx);
                let relative = absolute
                    .strip_prefix(root.trim_end_matches('/'))
                    .and_then(|r| r.strip_prefix('/'));
                match relative {
                    Some(relative) => argument.is_match(relative) || argument.is_match(&absolute),
                    None => argument.is_match(&absolute),
                }
            }
            _ => argument.is_match(s.trim()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Client, parse};

    fn event(tool: &str, input: &str) -> HookEvent {
        let body = format!(
            r#"{{"hook_event_name":"PreToolUse","cwd":"/w/app","session_id":"s","tool_name":"{tool}","tool_input":{input}}}"#
        );
        parse(Client::ClaudeCode, body.as_bytes()).unwrap()
    }

    #[test]
    fn patterns_match_commands_and_paths() {
        let git = NativePattern::parse("Bash(git *)").unwrap();
        assert!(git.matches(&event("Bash", r#"{"command":"git push origin feature/x"}"#)));
        assert!(!git.matches(&event("Bash", r#"{"command":"rm -rf ~"}"#)));
        let src = NativePattern::parse("Edit(src/**)").unwrap();
        assert!(src.matches(&event(
            "Write",
            r#"{"file_path":"/w/app/src/a/b.rs","content":""}"#
        )));
        assert!(!src.matches(&event("Edit", r#"{"file_path":"/w/app/.env"}"#)));
        assert!(!src.matches(&event("Edit", r#"{"file_path":"/w/app/src/../.env"}"#)));
        assert!(!src.matches(&event("Edit", r#"{"file_path":"src/../../other/src/x"}"#)));
        assert!(
            NativePattern::parse("Bash")
                .unwrap()
                .matches(&event("Bash", r#"{"command":"ls"}"#))
        );
        assert!(
            NativePattern::parse("mcp__github__*")
                .unwrap()
                .matches(&event("mcp__github__create_issue", "{}"))
        );
        assert!(is_native("Bash(git *)") && is_native("Read") && !is_native("files__read_*"));
        assert!(NativePattern::parse("Bash(git *").is_err());
    }
}
