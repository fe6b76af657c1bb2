//! The reviewer face: the reviewer HTTP API (`/api/v1`) the review UI, the
//! desktop app and the CLI's team mode call, and `/metrics`.
//!
//! - [`key`]: which reviewer key calls, and whether its scope lets it in.
//! - [`api`]: plans, servers, tools, envelopes, held calls, standing
//!   approvals, the log and the event stream.
//! - [`servers`]: adding a server, and removing one with a signed removal.
//! - [`clients`]: "Connect a client" over the host's connector.
//! - [`signin`]: a one-time sign-in link redeemed by a browser.
//! - [`receipts`]: the receipts index, filters and exports.
//! - [`alerts`]: alert sinks' status, test sends and redelivery.
//! - [`metrics`]: `GET /metrics`.
//! - [`launch`]: what a server's launch and sandbox are, as shown.
//!
//! Architecture invariant: nothing outside this folder imports it but the
//! routes that join the faces (`http`), and it imports no other face
//! (`no_import_runs_from_a_lower_room_into_a_face`).

pub mod alerts;
pub mod api;
pub mod clients;
pub mod key;
pub mod launch;
pub mod metrics;
pub mod receipts;
pub mod servers;
pub mod signin;
