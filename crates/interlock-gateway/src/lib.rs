//! Interlock's gateway: an MCP proxy in front of the agents' upstream MCP
//! servers, and the reviewer HTTP API.
//!
//! Why a crate of its own: it is the only place that speaks MCP and HTTP. It
//! pins each upstream server's approved tool surface (`interlock-surface` says
//! what changed; `interlock_trust::pins` decides what is served), forwards tool calls as raw
//! JSON, serves the governance tools over the engine, and logs every call,
//! drift, quarantine and decision in the engine's tamper-evident log.
//!
//! Modules, one job each:
//! - [`config`]: the TOML configuration.
//! - [`upstream`]: connections to upstream servers (stdio, Streamable HTTP).
//! - [`probes`]: effective-permission probes, run after every re-list; a
//!   probe whose permission grew quarantines its server.
//! - [`review`]: running the boundary review for CI (`interlock review`): every
//!   upstream observed read-only, then classified by `interlock_trust::review`.
//! - [`gateway`]: the running gateway (supervisors, sessions, keys cache).
//! - [`mcp`]: the agent-facing MCP endpoint (transport and framing only).
//! - [`calls`]: the tool call's room — inspection, risk, verdicts, held calls,
//!   response scanning, and the call's log leaf (standing approvals themselves
//!   are `interlock_trust::standing`).
//! - [`content`]: prompts, resources and completions of approved servers.
//! - [`governance`]: `propose_plan`, `get_plan`, `list_plans`, `execute_plan`.
//! - [`executor`]: plan stages and probes that call upstream tools (`mcp.call_tool`).
//! - [`api`]: the reviewer HTTP API and its SSE stream.
//! - [`http`]: routes and the Origin/Host guard.
//! - [`client`]: a client of another gateway's reviewer API (the desktop app's
//!   team mode).
//! - [`alerts`]: alert delivery to SIEMs, chat and pagers, read from the log (issue 21).
//! - [`metrics`]: `/metrics` for Prometheus (issue 21), counted by the tally
//!   (`tally`), which also keeps the receipts index: every leaf decoded once.
//! - [`sse`]: the server-sent events parser both upstream HTTP and [`client`] read with.
//! - [`clients`]: "Connect a client" on the reviewer API, over the host's connector.
//! - [`signin`]: one-time sign-in links (a browser becomes a reviewer).
//! - [`keys`]: API keys (hashed at rest), [`roles`]: what a role may call,
//!   [`jsonrpc`]: raw JSON-RPC framing. The event bus is `interlock_trust::events`.
//! - Shared by both faces, which do not import each other: [`auth`] (bearer
//!   keys, agent identities) and [`views`] (plan and decision summaries).
#![forbid(unsafe_code)]

pub mod admin;
pub mod agent;
pub mod alerts;
pub mod auth;
pub mod client;
pub mod config;
pub mod connector;
pub mod executor;
mod extract;
pub mod gateway;
pub mod http;
pub mod jsonrpc;
pub mod keys;
pub mod listing;
pub mod metrics;
pub mod peer;
pub mod probes;
pub mod protocol;
pub mod review;
pub mod reviewer;
pub mod roles;
pub mod scopes;
pub mod server_changes;
pub mod server_file;
pub mod sessions;
pub mod signin;
pub mod sse;
pub mod start;
mod tally;
pub mod upstream;
pub mod views;

pub use config::{DurabilityMode, GatewayConfig, LogConfig};

pub use gateway::Gateway;
