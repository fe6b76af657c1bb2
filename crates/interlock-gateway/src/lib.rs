//! Interlock's gateway: an MCP proxy in front of the agents' upstream MCP
//! servers, and the reviewer HTTP API.
//!
//! Why a crate of its own: it is the only place that speaks MCP and HTTP. It
//! pins each upstream server's approved tool surface (`interlock-surface` says
//! what changed; [`pins`] decides what is served), forwards tool calls as raw
//! JSON, serves the governance tools over the engine, and logs every call,
//! drift, quarantine and decision in the engine's tamper-evident log.
//!
//! Modules, one job each:
//! - [`config`]: the TOML configuration.
//! - [`upstream`]: connections to upstream servers (stdio, Streamable HTTP).
//! - [`pins`]: surface pinning, drift and quarantine.
//! - [`gateway`]: the running gateway (supervisors, sessions, keys cache).
//! - [`mcp`]: the agent-facing MCP endpoint; [`callpath`]: inspection, risk,
//!   held calls and response scanning on every forwarded call.
//! - [`governance`]: `propose_plan`, `get_plan`, `list_plans`, `execute_plan`.
//! - [`executor`]: plan stages and probes that call upstream tools (`mcp.call_tool`).
//! - [`api`]: the reviewer HTTP API and its SSE stream.
//! - [`http`]: routes and the Origin/Host guard.
//! - [`client`]: a client of another gateway's reviewer API (the desktop app's
//!   team mode).
//! - [`sse`]: the server-sent events parser both upstream HTTP and [`client`] read with.
//! - [`standing`]: standing approvals by class of call.
//! - [`keys`]: API keys (hashed at rest), [`roles`]: what a role may call,
//!   [`events`]: the event bus, [`jsonrpc`]: raw JSON-RPC framing.
#![forbid(unsafe_code)]

pub mod api;
pub mod callpath;
pub mod client;
pub mod config;
pub mod content;
pub mod events;
pub mod executor;
mod extract;
pub mod gateway;
pub mod governance;
pub mod http;
pub mod jsonrpc;
pub mod keys;
pub mod mcp;
pub mod pins;
pub mod roles;
pub mod sse;
pub mod standing;
mod subscriptions;
pub mod upstream;

pub use config::GatewayConfig;
pub use events::{EventBus, GatewayEvent};
pub use gateway::Gateway;
