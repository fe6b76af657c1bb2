//! Alerts (issue 21): what a committed log leaf becomes on its way to a team's
//! SIEM, chat or pager — the event, its severity, the filters a sink applies,
//! and each sink's wire format.
//!
//! Why a crate of its own, and pure: delivery reads leaves *from the log* and
//! does its I/O in the gateway (`interlock_gateway::alerts`); everything that
//! decides which bytes a receiver gets lives here, with no I/O, so each format
//! is unit-tested against its documented wire format, and a record exported
//! from a SIEM can be checked by anyone who recomputes it.
//!
//! Every event carries the log's origin, the leaf index, the RFC 6962 leaf hash
//! and the size of the signed checkpoint it was sent under ([`Record`]), so the
//! receiving side can verify it against a receipts bundle or the live log
//! (`interlock receipts verify-event`). Arguments and results are never sent
//! raw: a `tool.call` leaf holds only their hashes and the findings, and the
//! event takes its fields from the leaf.
#![forbid(unsafe_code)]

pub mod event;
pub mod filter;
pub mod formats;
pub mod severity;

pub use event::{AlertEvent, Category, Intent, Record};
pub use filter::Filter;
pub use formats::{SinkKind, WireRequest, encode};
pub use severity::Severity;
