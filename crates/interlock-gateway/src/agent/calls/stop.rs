//! How a call ends before it is forwarded, as a type: each stage returns
//! `Result<_, Stop>`, and the pipeline maps a stop to its JSON-RPC answer in
//! one place ([`Stop::into_answer`]). A stop whose answer needed its own leaf
//! written first (a refusal the log must show, a held call) carries the answer
//! already made.

use serde_json::json;
use serde_json::value::RawValue;

use crate::jsonrpc::{self, code};

/// Why a call ends before it reaches the upstream.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The answer is made, and its leaf (if the verdict needs one) written.
    Answered(Vec<u8>),
    /// The request is not a call the gateway can read, or names no tool it
    /// serves under that name (nothing is logged: nothing was decided).
    InvalidParams(String),
    /// The key's role may not call the tool.
    Forbidden { tool: String, role: String },
    /// The gateway could not decide (say, the key's limits are unreadable).
    Internal(String),
}

impl Stop {
    /// An unknown tool, as agents are told it.
    pub(crate) fn unknown_tool(name: &str) -> Stop {
        Stop::InvalidParams(format!("unknown tool `{name}`"))
    }

    /// The JSON-RPC answer to the request `id`.
    pub(crate) fn into_answer(self, id: &RawValue) -> Vec<u8> {
        match self {
            Stop::Answered(answer) => answer,
            Stop::InvalidParams(message) => {
                jsonrpc::error(Some(id), code::INVALID_PARAMS, &message)
            }
            Stop::Forbidden { tool, role } => jsonrpc::error_with_data(
                Some(id),
                code::FORBIDDEN,
                &format!("role `{role}` may not call `{tool}`"),
                Some(&json!({"tool": tool, "role": role})),
            ),
            Stop::Internal(message) => jsonrpc::error(Some(id), code::INTERNAL_ERROR, &message),
        }
    }
}
