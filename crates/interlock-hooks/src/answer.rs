//! The gateway's verdict in each client's own format (its documentation's
//! output schema, kept in `tests/fixtures/hooks/<client>/answers.json`).
//!
//! Every answer is JSON on standard output with exit code 0: each client
//! reads a deny from it, and Claude Code ignores exit code 2 for a
//! permission request, so a JSON deny is the one form all of them keep.

use serde_json::{Value as Json, json};

use crate::client::Client;
use crate::event::Phase;

/// What the gateway says about a tool use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// It may run. The reason is for the user, where the client shows one.
    Allow { reason: String },
    /// It must not run; the agent sees the reason (a hold is a deny that
    /// says how to retry).
    Deny { reason: String },
    /// Let the client ask its own user (the owner's choice when the gateway
    /// cannot be reached, for a client that can ask).
    Ask { reason: String },
    /// No decision: an after-event logged, or an event about no tool.
    Nothing,
}

impl Answer {
    pub fn name(&self) -> &'static str {
        match self {
            Answer::Allow { .. } => "allow",
            Answer::Deny { .. } => "deny",
            Answer::Ask { .. } => "ask",
            Answer::Nothing => "none",
        }
    }
}

/// `answer` as `client` expects it for an event of `phase` (its client name
/// `event_name`).
pub fn answer(client: Client, phase: Phase, event_name: &str, answer: &Answer) -> Json {
    if phase == Phase::After {
        return json!({});
    }
    match (client, phase) {
        (Client::ClaudeCode | Client::Codex, Phase::Permission) => match answer {
            Answer::Allow { .. } => json!({"hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"}}}),
            Answer::Deny { reason } => json!({"hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": reason}}}),
            // The client's own prompt is what follows.
            Answer::Ask { .. } | Answer::Nothing => json!({}),
        },
        (Client::ClaudeCode, _) => match answer {
            Answer::Nothing => json!({}),
            Answer::Allow { reason } | Answer::Deny { reason } | Answer::Ask { reason } => {
                json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": answer.name(),
                    "permissionDecisionReason": reason}})
            }
        },
        // Codex's PreToolUse takes only a deny; anything else is "no
        // objection", and its own approval flow goes on.
        (Client::Codex, _) => match answer {
            Answer::Deny { reason } => json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason}}),
            _ => json!({}),
        },
        (Client::Cursor, _) => match answer {
            Answer::Nothing => json!({}),
            Answer::Allow { .. } => json!({"permission": "allow"}),
            Answer::Deny { reason } => json!({
                "permission": "deny",
                "user_message": format!("Interlock: {reason}"),
                "agent_message": reason}),
            // `preToolUse` does not enforce "ask"; the shell and MCP events do.
            Answer::Ask { reason } if event_name == "preToolUse" => json!({
                "permission": "deny",
                "user_message": format!("Interlock: {reason}"),
                "agent_message": reason}),
            Answer::Ask { reason } => json!({
                "permission": "ask",
                "user_message": format!("Interlock: {reason}"),
                "agent_message": reason}),
        },
        (Client::GeminiCli, _) => match answer {
            Answer::Nothing => json!({}),
            Answer::Allow { .. } => json!({"decision": "allow"}),
            Answer::Deny { reason } => json!({"decision": "deny", "reason": reason}),
            // "ask" is in Gemini CLI's source, not its documentation: no
            // decision lets its own confirmation run instead.
            Answer::Ask { .. } => json!({}),
        },
    }
}
