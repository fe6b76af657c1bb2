//! What a tool can do (issue 46 item 2): the part of a server's risk that
//! comes from its tools' power — their annotations, their names and the inputs
//! that steer what they reach — rather than from wording a scan finds.
//!
//! A filesystem server whose tools are `write_file`, `edit_file` and
//! `move_file` reads as harmless text, yet it changes files: its risk is
//! medium whatever the scan says. One rule, here, rates every tool, so the
//! inbox, the server page, the Welcome page, notifications and the tray
//! agree ([`crate::first::FirstContact::risk`] takes the worst of it and the
//! findings).
//!
//! Levels (never critical: that is for injection and exfiltration wording):
//! - **high**: runs commands or code (its name says exec, run, shell, eval,
//!   script, …, or an input is a command or code), or destroys (its name says
//!   delete, remove, drop, …, or `destructiveHint: true` without
//!   `readOnlyHint: true`);
//! - **medium**: changes things or reaches the world (its name says write,
//!   edit, move, send, post, …; `openWorldHint: true` set explicitly; or an
//!   input is a path, URL, host or recipient on a tool not annotated
//!   read-only);
//! - otherwise nothing worth a label (a read-only or reading tool).
//!
//! Absent annotations count for nothing here: the MCP defaults
//! (`destructiveHint` and `openWorldHint` true) would rate every
//! unannotated tool high and the label would say nothing.

use interlock_canon::Value;

use crate::cues::{is_capability_input, words};
use crate::policy::Severity;
use crate::surface::{Surface, Tool};

/// Why a tool is rated as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolPower {
    pub level: Severity,
    /// In words a reviewer reads: "runs commands", "deletes", "writes", …
    pub why: String,
}

const EXECUTES: &[&str] = &[
    "exec",
    "execute",
    "run",
    "shell",
    "bash",
    "sh",
    "cmd",
    "command",
    "eval",
    "script",
    "spawn",
    "terminal",
    "subprocess",
    "sql",
];
const DESTROYS: &[&str] = &[
    "delete",
    "remove",
    "rm",
    "drop",
    "destroy",
    "wipe",
    "purge",
    "truncate",
    "kill",
    "terminate",
    "erase",
    "unlink",
    "revoke",
];
const CHANGES: &[&str] = &[
    "write", "edit", "create", "update", "move", "rename", "set", "put", "upload", "send", "post",
    "push", "commit", "insert", "append", "patch", "modify", "save", "copy", "mkdir", "merge",
    "publish", "deploy", "install", "transfer", "pay", "replace",
];
const CODE_INPUTS: &[&str] = &["command", "cmd", "code", "script", "shell", "sql"];

fn hint(annotations: Option<&Value>, key: &str) -> Option<bool> {
    annotations?.get(key)?.as_bool()
}

/// What `tool` can do, if it is worth a label (medium or high).
pub fn tool_power(tool: &Tool) -> Option<ToolPower> {
    let name = words(tool.name());
    let has = |set: &[&str]| name.iter().any(|w| set.contains(&w.as_str()));
    let annotations = tool.field("annotations");
    let read_only = hint(annotations, "readOnlyHint") == Some(true);
    let inputs: Vec<String> = tool
        .field("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let code_input = inputs
        .iter()
        .find(|i| words(i).iter().any(|w| CODE_INPUTS.contains(&w.as_str())));
    let high = |why: String| {
        Some(ToolPower {
            level: Severity::High,
            why,
        })
    };
    let medium = |why: String| {
        Some(ToolPower {
            level: Severity::Medium,
            why,
        })
    };
    if has(EXECUTES) && !read_only {
        return high("runs commands or code (its name)".into());
    }
    if let Some(i) = code_input.filter(|_| !read_only) {
        return high(format!("runs commands or code (its input `{i}`)"));
    }
    if has(DESTROYS) && !read_only {
        return high("deletes (its name)".into());
    }
    if hint(annotations, "destructiveHint") == Some(true) && !read_only {
        return high("may destroy (destructiveHint)".into());
    }
    if has(CHANGES) && !read_only {
        return medium("changes things (its name)".into());
    }
    if hint(annotations, "openWorldHint") == Some(true) {
        return medium("reaches the outside world (openWorldHint)".into());
    }
    if !read_only && let Some(i) = inputs.iter().find(|i| is_capability_input(i)) {
        return medium(format!("reaches what its input `{i}` names"));
    }
    None
}

/// Every tool of `surface` worth a label, by name, and the worst level.
pub fn surface_power(surface: &Surface) -> (Vec<(String, ToolPower)>, Option<Severity>) {
    let tools: Vec<(String, ToolPower)> = surface
        .tools()
        .iter()
        .filter_map(|(name, tool)| tool_power(tool).map(|p| (name.clone(), p)))
        .collect();
    let worst = tools.iter().map(|(_, p)| p.level).max();
    (tools, worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(json: &str) -> Tool {
        Tool::from_value(&interlock_canon::parse_json(json.as_bytes()).unwrap(), 0).unwrap()
    }

    fn level(json: &str) -> Option<Severity> {
        tool_power(&tool(json)).map(|p| p.level)
    }

    #[test]
    fn regression_issue_46_a_filesystem_servers_writing_tools_are_not_low() {
        for name in ["write_file", "edit_file", "move_file", "create_directory"] {
            let t = format!(
                r#"{{"name":"{name}","description":"Edits a file.","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string"}}}}}}}}"#
            );
            assert_eq!(level(&t), Some(Severity::Medium), "{name}");
        }
        // Reading, annotated read-only: nothing to label.
        assert_eq!(
            level(
                r#"{"name":"read_file","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#
            ),
            None
        );
    }

    #[test]
    fn running_commands_and_deleting_are_high() {
        assert_eq!(
            level(r#"{"name":"run_command","inputSchema":{}}"#),
            Some(Severity::High)
        );
        assert_eq!(
            level(
                r#"{"name":"do_it","inputSchema":{"type":"object","properties":{"command":{"type":"string"}}}}"#
            ),
            Some(Severity::High)
        );
        assert_eq!(
            level(r#"{"name":"delete_branch","inputSchema":{}}"#),
            Some(Severity::High)
        );
        assert_eq!(
            level(r#"{"name":"tidy","annotations":{"destructiveHint":true},"inputSchema":{}}"#),
            Some(Severity::High)
        );
    }

    #[test]
    fn absent_annotations_and_plain_readers_say_nothing() {
        assert_eq!(level(r#"{"name":"echo","inputSchema":{}}"#), None);
        assert_eq!(level(r#"{"name":"get_weather","inputSchema":{}}"#), None);
        assert_eq!(
            level(
                r#"{"name":"fetch","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}}"#
            ),
            Some(Severity::Medium)
        );
    }
}
