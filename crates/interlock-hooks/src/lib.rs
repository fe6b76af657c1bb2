//! Coding agents' hooks (issue 40): what Claude Code, Cursor, Codex and
//! Gemini CLI send before and after they use one of their own tools (a shell
//! command, a file edit, a web fetch, an MCP tool), read into one
//! [`HookEvent`]; the gateway's verdict written back as each client expects
//! it ([`answer`]); the role patterns over native tools (`Bash(git *)`,
//! `Edit(src/**)`, [`pattern`]); and the binding a held call's approval
//! signs ([`HookEvent::binding`]).
//!
//! Pure: no I/O, no clock, no async. The wire formats come from each
//! client's documentation; `tests/fixtures/hooks/` keeps their documented
//! payloads and answers, with where each came from (`SOURCES.md`).
#![forbid(unsafe_code)]

pub mod answer;
mod client;
mod event;
pub mod pattern;
mod tool;

pub use answer::{Answer, answer};
pub use client::Client;
pub use event::{HookError, HookEvent, Phase, parse};
pub use tool::NativeTool;
