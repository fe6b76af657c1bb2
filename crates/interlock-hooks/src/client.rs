//! The four clients whose hooks the gateway answers.

use std::fmt;
use std::str::FromStr;

/// A coding agent with hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Client {
    ClaudeCode,
    Cursor,
    Codex,
    GeminiCli,
}

impl Client {
    pub const ALL: [Client; 4] = [
        Client::ClaudeCode,
        Client::Cursor,
        Client::Codex,
        Client::GeminiCli,
    ];

    /// The name in URLs, commands and leaves (`claude-code`).
    pub fn slug(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Codex => "codex",
            Client::GeminiCli => "gemini-cli",
        }
    }

    /// What a person calls it.
    pub fn display_name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Codex => "Codex",
            Client::GeminiCli => "Gemini CLI",
        }
    }

    /// How long the client waits for a hook by default, in seconds (Claude
    /// Code and Codex: 600 s; Gemini CLI: 60 000 ms; Cursor documents no
    /// number, so the shortest of the others).
    pub fn default_timeout_secs(self) -> u64 {
        match self {
            Client::ClaudeCode | Client::Codex => 600,
            Client::GeminiCli | Client::Cursor => 60,
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// A client name that is not one of the four.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown hook client {0:?} (expected claude-code, cursor, codex or gemini-cli)")]
pub struct UnknownClient(pub String);

impl FromStr for Client {
    type Err = UnknownClient;

    fn from_str(s: &str) -> Result<Client, UnknownClient> {
        Client::ALL
            .into_iter()
            .find(|c| c.slug() == s)
            .ok_or_else(|| UnknownClient(s.to_owned()))
    }
}
