//! The tool call's room: everything that decides what happens to a call an
//! agent makes, and what its log leaf says.
//!
//! - [`pipeline`]: one call from an authenticated agent to its answer, and the
//!   one place its verdicts are written to the log ([`pipeline::Call::settle`]);
//!   content reads share its inspect-and-record step.
//! - [`listing`]: `tools/list`, what an agent sees (its role, pinning).
//! - [`assess`]: argument inspection, the tool's risk, the role's limit.
//! - [`scan`]: the response scan (redact or withhold what a result carries).
//! - [`envelope`]: each tool's behavioural envelope, learned then enforced
//!   (arguments before the call: hold; the result after: withhold).
//! - [`call`]: the call as the stages see it (routed, inspected, bound).
//! - [`held`]: the held call's lifecycle (proposed as a plan, waited on, run
//!   once when approved).
//! - [`leaf`]: verdicts, outcomes and the shape of the `tool.call`,
//!   `prompt.get` and `resource.read` leaves, as types.
//! - [`notifications`]: the screen a call's relayed notifications pass through.
//! - [`progress`]: reporting to the agent's SSE stream while a call waits or runs.
//! - [`tasks`]: task-augmented calls (MCP tasks): answered at once, a held call
//!   waiting its task's lifetime, polled and fetched by the agent.
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
