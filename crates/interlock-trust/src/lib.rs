//! Interlock's decisions about what the gateway serves, apart from how it is
//! served.
//!
//! Why a crate of its own (issue 37): a decision about a subject — a server's
//! surface, one tool's definition, a tool's behavioural envelope, a standing
//! approval — is made from signed statements, the store and the engine's log,
//! never from a request or a connection. Kept below the gateway, each decision
//! is tested without a gateway up, and a change to one (say, standing
//! approvals) touches this crate and the face that shows it, not the MCP
//! endpoint, the reviewer API and the host at once.
//!
//! Modules, one job each:
//! - [`pins`]: surface pinning — the served table, drift, quarantine, a
//!   reviewer's approval of an observed surface, removal.
//! - [`tool_decision`]: one tool's definition approved or blocked on its own.
//! - [`envelopes`]: learned behavioural envelopes and their signed widening.
//! - [`standing`]: standing approvals — the signed grant, its narrowing and
//!   revocation, and the lookup the call path makes.
//! - [`scopes`]: what a held call may be approved for (once, session, hour,
//!   these arguments), each wider scope a standing approval ready to sign;
//!   [`held_id`]: how a held call and its proposer are named.
//! - [`review`]: the boundary review's classification, the lockfile, and its
//!   reports (text, Markdown, SARIF).
//! - [`events`]: the event bus and its typed event kinds.
//!
//! Architecture invariant: nothing here speaks HTTP or MCP — no axum, hyper,
//! reqwest or rmcp in this crate's dependencies (`only_the_gateway_speaks_http_and_mcp`).
#![forbid(unsafe_code)]

pub mod envelopes;
pub mod events;
pub mod held_id;
pub mod pins;
pub mod review;
pub mod scopes;
pub mod standing;
pub mod tool_decision;

pub use events::{EventBus, EventType, GatewayEvent, SubjectKind};
