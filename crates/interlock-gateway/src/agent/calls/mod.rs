//! The tool call's room: everything that decides what happens to a call an
//! agent makes, and what its log leaf says.
//!
//! The call's path is a stack of stages, their order in `pipeline::path`:
//! `route` (role, governance tools, served?) → `request` (arguments) and
//! `resume` (a stateless retry of a held call) → `limit` (rate, quota) →
//! `inspect` (`assess`, the `envelope` before) → `authorize` (stop, `held`,
//! standing, or forward) → `forward` (intent, send, `notifications`, `scan`,
//! the `envelope` after); each ends the call with a typed `stop::Stop` or
//! goes on, and `settle` writes the one `tool.call` leaf of every verdict.
//!
//! Beside the path: `call` (the call as the stages see it), `leaf` (verdicts
//! and leaves as types), `listing` (`tools/list`), `progress` (the agent's SSE
//! stream while a call waits or runs), `tasks` (MCP tasks), `reads` (content
//! reads — prompts, resources, completions — take the call's `limit` and
//! `inspect` stages and its scan-and-record step; not its envelope).
//!
//! What the gateway keeps for agents between requests (tasks, sealed
//! round-trip states, rate buckets, held-call ids) is `crate::sessions`.
//!
//! Architecture invariant: a check on tool calls goes in [`assess`] (before)
//! or [`scan`] (after), or [`envelope`] (both), and its verdict into [`leaf::Verdict`]; nothing else in
//! the gateway decides whether a call runs or writes a `tool.call` leaf.

pub mod assess;
pub(crate) mod authorize;
pub(crate) mod call;
pub mod envelope;
pub(crate) mod forward;
pub(crate) mod held;
pub(crate) mod inspect;
pub mod leaf;
pub(crate) mod limit;
pub(crate) mod listing;
pub(crate) mod notifications;
pub(crate) mod pipeline;
pub(crate) mod progress;
pub(crate) mod reads;
pub(crate) mod request;
pub(crate) mod resume;
pub(crate) mod route;
pub mod scan;
pub(crate) mod settle;
pub(crate) mod stop;
pub(crate) mod tasks;
