//! One hook event, from any of the four clients, as the gateway judges it.

use interlock_canon::{self as canon, Digest, Map, Value};
use serde_json::Value as Json;

use crate::client::Client;
use crate::tool::{self, NativeTool};

/// When in the tool's life the client asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the tool runs: allow, deny or hold it (`PreToolUse`,
    /// `beforeShellExecution`, `BeforeTool`, …).
    Before,
    /// The client is about to ask its user for permission (`PermissionRequest`).
    Permission,
    /// After the tool ran: its outcome, for the log.
    After,
}

impl Phase {
    /// The phase an event name most likely means, whichever client sent
    /// it: for shaping the answer to an event that could not be read.
    pub fn guess(event_name: &str) -> Phase {
        match event_name {
            "PermissionRequest" => Phase::Permission,
            n if n.starts_with("Post") || n.starts_with("post") => Phase::After,
            n if n.starts_with("after") || n.starts_with("After") => Phase::After,
            _ => Phase::Before,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::Permission => "permission",
            Phase::After => "after",
        }
    }
}

/// A hook event the gateway cannot judge.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HookError {
    #[error("the hook event is not valid JSON: {0}")]
    Json(String),
    #[error("the hook event is not a JSON object")]
    NotAnObject,
    #[error("the hook event has no `{0}`")]
    Missing(&'static str),
    /// An event about something other than a tool (a session start, a
    /// prompt): nothing to decide.
    #[error("{client} hook event `{event}` is not about a tool use")]
    NotAToolEvent { client: Client, event: String },
}

/// What came of a tool the client ran (an after-event).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub exit_code: Option<i64>,
    /// Whether the client reports the tool failed.
    pub failed: bool,
    pub files_changed: Vec<String>,
}

/// One tool use a client reports.
#[derive(Clone, Debug, PartialEq)]
pub struct HookEvent {
    pub client: Client,
    pub phase: Phase,
    /// The client's own event name (`PreToolUse`).
    pub event_name: String,
    /// The agent session (`session_id`, Cursor's `conversation_id`).
    pub session: Option<String>,
    /// The working directory the tool runs in (absolute).
    pub cwd: String,
    /// The project's root, when the client names one (Cursor's workspace).
    pub project: Option<String>,
    /// The client's name for the tool (`Bash`, `run_shell_command`).
    pub tool_name: String,
    pub tool: NativeTool,
    /// The tool's exact input, as the client sent it.
    pub input: Value,
    pub outcome: Option<Outcome>,
}

impl HookEvent {
    /// The canonical tool name (`Bash`, `Edit`, `mcp__server__tool`).
    pub fn canonical_tool(&self) -> String {
        self.tool.canonical_name(&self.tool_name)
    }

    /// What a held call's approval is bound to: the client, the canonical
    /// tool, the exact input and the working directory (JCS-canonical). The
    /// same tool use retried has the same binding; any byte changed, not.
    pub fn binding(&self) -> Value {
        let mut m = Map::new();
        m.insert("client".into(), self.client.slug().into());
        m.insert("tool".into(), self.canonical_tool().into());
        m.insert("input".into(), self.input.clone());
        m.insert("cwd".into(), self.cwd.as_str().into());
        Value::Object(m)
    }

    /// The binding's `sha256:` digest.
    pub fn input_hash(&self) -> Digest {
        canon::digest(&self.binding())
    }
}

fn str_at<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

/// Reads a hook event `client` sent (strict JSON: duplicate members and
/// invalid text are refused).
pub fn parse(client: Client, bytes: &[u8]) -> Result<HookEvent, HookError> {
    let value = canon::parse_json(bytes).map_err(|e| HookError::Json(e.to_string()))?;
    let json = canon::to_serde_json(&value);
    if !json.is_object() {
        return Err(HookError::NotAnObject);
    }
    let event_name = str_at(&json, "hook_event_name")
        .ok_or(HookError::Missing("hook_event_name"))?
        .to_owned();
    let not_a_tool = || HookError::NotAToolEvent {
        client,
        event: event_name.clone(),
    };
    let phase = match (client, event_name.as_str()) {
        (Client::ClaudeCode | Client::Codex, "PreToolUse") => Phase::Before,
        (Client::ClaudeCode | Client::Codex, "PermissionRequest") => Phase::Permission,
        (Client::ClaudeCode | Client::Codex, "PostToolUse" | "PostToolUseFailure") => Phase::After,
        (
            Client::Cursor,
            "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse",
        ) => Phase::Before,
        (
            Client::Cursor,
            "afterShellExecution" | "afterMCPExecution" | "afterFileEdit" | "postToolUse",
        ) => Phase::After,
        (Client::GeminiCli, "BeforeTool") => Phase::Before,
        (Client::GeminiCli, "AfterTool") => Phase::After,
        _ => return Err(not_a_tool()),
    };
    let session = str_at(&json, "session_id")
        .or_else(|| str_at(&json, "conversation_id"))
        .map(str::to_owned);
    let project = json
        .get("workspace_roots")
        .and_then(Json::as_array)
        .and_then(|r| r.first())
        .and_then(Json::as_str)
        .map(str::to_owned);
    let cwd = str_at(&json, "cwd")
        .map(str::to_owned)
        .or_else(|| project.clone())
        .ok_or(HookError::Missing("cwd"))?;
    let (tool_name, input_json, mcp) = tool_of(client, &event_name, &json)?;
    let input = canon::from_serde_json(&input_json).map_err(|e| HookError::Json(e.to_string()))?;
    let tool = tool::read(
        &tool_name,
        &input_json,
        mcp.as_ref().map(|(s, t)| (s.as_str(), t.as_str())),
    );
    let outcome = (phase == Phase::After).then(|| outcome_of(&json, &tool));
    Ok(HookEvent {
        client,
        phase,
        event_name,
        session,
        cwd,
        project,
        tool_name,
        tool,
        input,
        outcome,
    })
}

type ToolOf = (String, Json, Option<(String, String)>);

/// The tool's name, its input, and (for an MCP tool) its server and name.
fn tool_of(client: Client, event: &str, json: &Json) -> Result<ToolOf, HookError> {
    let pick = |keys: &[&str]| {
        let mut m = serde_json::Map::new();
        for k in keys {
            if let Some(v) = json.get(*k) {
                m.insert((*k).to_owned(), v.clone());
            }
        }
        Json::Object(m)
    };
    if client == Client::Cursor {
        match event {
            "beforeShellExecution" | "afterShellExecution" => {
                return Ok(("Shell".into(), pick(&["command", "cwd"]), None));
            }
            "beforeReadFile" => return Ok(("Read".into(), pick(&["file_path"]), None)),
            "afterFileEdit" => return Ok(("Edit".into(), pick(&["file_path", "edits"]), None)),
            "beforeMCPExecution" | "afterMCPExecution" => {
                let name = str_at(json, "tool_name").ok_or(HookError::Missing("tool_name"))?;
                // Cursor sends the arguments as a JSON string.
                let input = match json.get("tool_input") {
                    Some(Json::String(s)) => serde_json::from_str(s)
                        .map_err(|e| HookError::Json(format!("`tool_input`: {e}")))?,
                    Some(v) => v.clone(),
                    None => Json::Object(Default::default()),
                };
                // Cursor names the server by how it is reached, not by a name.
                let server = str_at(json, "url")
                    .or_else(|| str_at(json, "command"))
                    .map(server_label)
                    .unwrap_or_else(|| "unnamed".into());
                let mcp = Some((server, name.to_owned()));
                return Ok((name.to_owned(), input, mcp));
            }
            _ => {}
        }
    }
    let name = str_at(json, "tool_name").ok_or(HookError::Missing("tool_name"))?;
    let input = json
        .get("tool_input")
        .cloned()
        .unwrap_or(Json::Object(Default::default()));
    // Gemini CLI names an MCP tool `mcp_<server>_<tool>` and says which in
    // `mcp_context`.
    let mcp = json.get("mcp_context").and_then(|c| {
        Some((
            str_at(c, "server_name")?.to_owned(),
            str_at(c, "tool_name")?.to_owned(),
        ))
    });
    Ok((name.to_owned(), input, mcp))
}

/// A label for an MCP server Cursor names only by its URL or command: the
/// URL's host, or the package or program the command starts.
fn server_label(how: &str) -> String {
    if let Some((_, rest)) = how.split_once("://") {
        return rest
            .split(['/', ':', '?'])
            .next()
            .unwrap_or(rest)
            .to_owned();
    }
    how.split_whitespace()
        .filter(|w| {
            !w.starts_with('-')
                && !matches!(
                    *w,
                    "npx" | "uvx" | "node" | "python" | "python3" | "bunx" | "pnpm" | "dlx"
                )
        })
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_owned())
        .next()
        .unwrap_or_else(|| "unnamed".into())
}

fn outcome_of(json: &Json, tool: &NativeTool) -> Outcome {
    let response = json.get("tool_response");
    let exit_code = [json.get("exit_code"), json.get("exitCode")]
        .into_iter()
        .chain(response.map(|r| r.get("exit_code")))
        .chain(response.map(|r| r.get("exitCode")))
        .flatten()
        .find_map(Json::as_i64);
    let failed = str_at(json, "hook_event_name") == Some("PostToolUseFailure")
        || response
            .and_then(|r| r.get("success"))
            .and_then(Json::as_bool)
            == Some(false)
        || response
            .and_then(|r| r.get("interrupted"))
            .and_then(Json::as_bool)
            == Some(true)
        || exit_code.is_some_and(|c| c != 0);
    let files_changed = match tool {
        NativeTool::Write { paths, .. } if !failed => paths.clone(),
        _ => Vec::new(),
    };
    Outcome {
        exit_code,
        failed,
        files_changed,
    }
}
