//! Interlock's gateway: an MCP proxy in front of the agents' upstream MCP
//! servers, and the reviewer HTTP API.
//!
//! Why a crate of its own: it is the only place that speaks MCP and HTTP. It
//! pins each upstream server's approved tool surface (`interlock-surface` says
//! what changed; `interlock_trust::pins` decides what is served), forwards tool calls as raw
//! JSON, serves the governance tools over the engine, and logs every call,
//! drift, quarantine and decision in the engine's tamper-evident log.
//!
//! The faces, one folder each, joined into one server by [`http`] (routes,
//! the Origin/Host guard, body limits); no face imports another, and nothing
//! below them imports a face (docs/ARCHITECTURE.md, held by a test):
//! - [`agent`]: the MCP endpoint agents call — the tool call's stages,
//!   content, the governance tools.
//! - [`reviewer`]: the reviewer API and `/metrics`.
//! - [`admin`]: the owner's admin socket and the admin API.
//!
//! Below them:
//! - the runtime: [`gateway`] (the shared state every face reads) and
//!   [`start`] (starting it: the supervisors, reload loop, alert delivery,
//!   the tally); [`sessions`]: what agents leave between requests.
//! - [`upstream`]: the MCP client (stdio in the sandbox, Streamable HTTP),
//!   the upstream table, relayed notifications, the egress proxy.
//! - [`pinned`]: what a server lists of what its `pin` list pins;
//!   [`probes`]: effective-permission probes after every re-list;
//!   [`executor`]: plan stages that call upstream tools.
//! - [`server_changes`] and [`server_file`]: servers added and removed at
//!   run time; [`server_requests`]: programs a reviewer asked to run,
//!   waiting for the machine's owner.
//! - [`review`]: running the boundary review for CI (classified by
//!   `interlock_trust::review`); [`client`]: another gateway's reviewer API.
//! - [`config`], [`keys`] (API keys, hashed at rest), [`roles`],
//!   [`auth`], [`peer`], `extract` (the API error type), [`views`],
//!   [`jsonrpc`], [`protocol`], [`sse`], [`signin`], [`connector`],
//!   [`metrics`], alert delivery ([`alerts`]).
//!
//! Decisions about what is served are `interlock_trust`'s; the event bus too.
#![forbid(unsafe_code)]

pub mod admin;
pub mod agent;
pub mod alerts;
pub mod auth;
pub mod client;
pub mod client_changes;
pub mod config;
pub mod connections;
pub mod connector;
pub mod executor;
mod extract;
pub mod gateway;
pub mod hook_client;
pub mod http;
pub mod inbox;
pub mod jsonrpc;
pub mod keys;
pub mod llm;
pub mod metrics;
mod outbound_url;
pub mod peer;
pub mod pinned;
pub mod probes;
pub mod protocol;
pub mod review;
pub mod reviewer;
pub mod roles;
pub mod server_changes;
pub mod server_file;
pub mod server_requests;
pub mod sessions;
pub mod signin;
pub mod sse;
pub mod start;
mod tally;
pub mod upstream;
pub mod views;
pub mod witness;
pub mod witnessing;

pub use config::{DurabilityMode, GatewayConfig, LogConfig};

pub use gateway::Gateway;
