//! A client's tool, named and read as one of a few kinds the inspector and
//! the role patterns understand. Claude Code's names are the canonical ones
//! (`Bash`, `Write`, `Edit`, `Read`, `WebFetch`, `mcp__server__tool`): the
//! other clients' tools are mapped onto them.

use interlock_canon::Value;
use interlock_inspect::NativeAction;

/// What the agent's tool does, read from its input.
#[derive(Clone, Debug, PartialEq)]
pub enum NativeTool {
    /// A shell command line.
    Shell { command: String },
    /// Writes or edits files (one path, or each file of a patch).
    Write {
        paths: Vec<String>,
        content: Option<String>,
    },
    /// Reads a file.
    Read { path: String },
    /// Fetches URLs (Gemini CLI's `web_fetch` names them in a prompt).
    Fetch { urls: Vec<String> },
    /// An MCP tool the client calls directly (not through the gateway).
    Mcp {
        server: String,
        tool: String,
        arguments: Value,
    },
    /// Another tool (a search, a todo list, a subagent): inspected by its
    /// arguments only.
    Other,
}

impl NativeTool {
    /// The canonical name role patterns and leaves use.
    pub fn canonical_name(&self, client_name: &str) -> String {
        match self {
            NativeTool::Shell { .. } => "Bash".into(),
            NativeTool::Write { .. } => {
                if matches!(client_name, "Write" | "write_file") {
                    "Write".into()
                } else {
                    "Edit".into()
                }
            }
            NativeTool::Read { .. } => "Read".into(),
            NativeTool::Fetch { .. } => "WebFetch".into(),
            NativeTool::Mcp { server, tool, .. } => format!("mcp__{server}__{tool}"),
            NativeTool::Other => client_name.to_owned(),
        }
    }

    /// What a role pattern's argument glob is matched against: the command
    /// line, the path (each one, for a patch), the URL.
    pub fn subjects(&self) -> Vec<&str> {
        match self {
            NativeTool::Shell { command } => vec![command.as_str()],
            NativeTool::Write { paths, .. } => paths.iter().map(String::as_str).collect(),
            NativeTool::Read { path } => vec![path.as_str()],
            NativeTool::Fetch { urls } => urls.iter().map(String::as_str).collect(),
            NativeTool::Mcp { .. } | NativeTool::Other => Vec::new(),
        }
    }

    /// The actions the inspector judges (a patch is one write per file).
    pub fn actions(&self) -> Vec<NativeAction<'_>> {
        match self {
            NativeTool::Shell { command } => vec![NativeAction::Shell { command }],
            NativeTool::Write { paths, content } => paths
                .iter()
                .map(|path| NativeAction::Write {
                    path,
                    content: content.as_deref(),
                })
                .collect(),
            NativeTool::Read { path } => vec![NativeAction::Read { path }],
            NativeTool::Fetch { urls } => {
                urls.iter().map(|url| NativeAction::Fetch { url }).collect()
            }
            NativeTool::Mcp { .. } | NativeTool::Other => Vec::new(),
        }
    }

    /// What a person reads in a notification: the command, the path, the URL.
    pub fn summary(&self) -> String {
        match self {
            NativeTool::Shell { command } => command.clone(),
            NativeTool::Write { paths, .. } => paths.join(", "),
            NativeTool::Read { path } => path.clone(),
            NativeTool::Fetch { urls } => urls.join(" "),
            NativeTool::Mcp { server, tool, .. } => format!("{server}/{tool}"),
            NativeTool::Other => String::new(),
        }
    }
}

fn text(input: &serde_json::Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(serde_json::Value::as_str))
        .map(str::to_owned)
}

/// Reads a tool from its client name and input (any client's names).
pub(crate) fn read(name: &str, input: &serde_json::Value, mcp: Option<(&str, &str)>) -> NativeTool {
    if let Some((server, tool)) = mcp {
        return NativeTool::Mcp {
            server: server.to_owned(),
            tool: tool.to_owned(),
            arguments: interlock_canon::from_serde_json(input).unwrap_or(Value::Null),
        };
    }
    if let Some(rest) = name.strip_prefix("mcp__")
        && let Some((server, tool)) = rest.split_once("__")
    {
        return read(name, input, Some((server, tool)));
    }
    match name {
        "Bash" | "Shell" | "run_shell_command" | "shell" | "exec_command" | "local_shell" => {
            match text(input, &["command", "cmd"]) {
                Some(command) => NativeTool::Shell { command },
                None => match input.get("command").and_then(|c| c.as_array()) {
                    // Codex's `shell` tool takes an argv.
                    Some(argv) => NativeTool::Shell {
                        command: argv
                            .iter()
                            .filter_map(|a| a.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    },
                    None => NativeTool::Other,
                },
            }
        }
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "write_file" | "replace" | "Delete"
        | "edit_file" | "search_replace" => match text(
            input,
            &["file_path", "path", "notebook_path", "target_file"],
        ) {
            Some(path) => NativeTool::Write {
                paths: vec![path],
                content: text(input, &["content", "new_string", "new_source"]),
            },
            None => NativeTool::Other,
        },
        "apply_patch" => match text(input, &["command", "patch", "input"]) {
            Some(patch) => NativeTool::Write {
                paths: patch_paths(&patch),
                content: Some(patch),
            },
            None => NativeTool::Other,
        },
        "Read" | "read_file" | "read_many_files" => match text(
            input,
            &["file_path", "path", "absolute_path", "target_file"],
        ) {
            Some(path) => NativeTool::Read { path },
            None => NativeTool::Other,
        },
        "WebFetch" | "web_fetch" | "fetch" => {
            let urls = match text(input, &["url"]) {
                Some(url) => vec![url],
                None => text(input, &["prompt"])
                    .map(|p| urls_in(&p))
                    .unwrap_or_default(),
            };
            NativeTool::Fetch { urls }
        }
        _ => NativeTool::Other,
    }
}

/// The files a Codex `apply_patch` touches.
fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
        })
        .map(|p| p.trim().to_owned())
        .collect()
}

/// The `http://` and `https://` URLs written in a prompt.
fn urls_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "\"'<>()[]{}".contains(c))
        .filter(|w| {
            w.starts_with("http://") || w.starts_with("https://") || w.starts_with("file://")
        })
        .map(|w| w.trim_end_matches(['.', ',', ';', ':']).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clients_names_map_onto_one_kind() {
        let shell = NativeTool::Shell {
            command: "ls".into(),
        };
        assert_eq!(read("Bash", &json!({"command": "ls"}), None), shell);
        assert_eq!(
            read("run_shell_command", &json!({"command": "ls"}), None),
            shell
        );
        assert_eq!(read("Shell", &json!({"command": "ls"}), None), shell);
        let patch =
            "*** Begin Patch\n*** Add File: .env\n+A=1\n*** Update File: src/a.rs\n*** End Patch\n";
        match read("apply_patch", &json!({"command": patch}), None) {
            NativeTool::Write { paths, .. } => assert_eq!(paths, vec![".env", "src/a.rs"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            read(
                "web_fetch",
                &json!({"prompt": "Get http://169.254.169.254/x, please."}),
                None
            ),
            NativeTool::Fetch {
                urls: vec!["http://169.254.169.254/x".into()]
            }
        );
        assert_eq!(
            read("mcp__memory__create", &json!({}), None).canonical_name("mcp__memory__create"),
            "mcp__memory__create"
        );
    }
}
