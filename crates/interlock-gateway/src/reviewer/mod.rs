//! The reviewer face: the reviewer HTTP API (`/api/v1`) the review UI, the
//! desktop app and the CLI's team mode call, and `/metrics`.
//!
//! - [`key`]: which reviewer key calls, and whether its scope lets it in.
//! - [`api`]: plans, servers, tools, envelopes, held calls, the log and the
//!   event stream.
//! - [`standing`]: standing approvals and the scopes a held call may be
//!   approved for.
//! - [`servers`]: adding a server, and removing one with a signed removal.
//! - [`clients`]: "Connect a client" over the host's connector.
//! - [`agent_hooks`]: coding agents' hook settings over the host's installer.
//! - [`signin`]: a one-time sign-in link redeemed by a browser.
//! - [`receipts`]: the receipts index, filters and exports.
//! - [`alerts`]: alert sinks' status, test sends and redelivery.
//! - [`metrics`]: `GET /metrics`.
//! - [`launch`]: what a server's launch and sandbox are, as shown.
//!
//! Architecture invariant: nothing outside this folder imports it but the
//! routes that join the faces (`http`), and it imports no other face
//! (`no_import_runs_from_a_lower_room_into_a_face`).

pub mod agent_hooks;
pub mod alerts;
pub mod api;
pub mod clients;
pub mod key;
pub mod launch;
pub mod metrics;
pub mod receipts;
pub mod route;
pub mod servers;
pub mod signin;
pub mod standing;
pub mod witnesses;

/// The reviewer face's routes: `/api/v1/…` and `/metrics`.
pub fn routes() -> axum::Router<crate::gateway::Gateway> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/api/v1/openapi.json", get(api::openapi))
        .route("/api/v1/inbox", get(api::inbox))
        .route("/api/v1/plans", get(api::plans))
        .route("/api/v1/plans/{id}", get(api::plan))
        .route("/api/v1/plans/{id}/decisions", post(api::decide_plan))
        .route("/api/v1/plans/{id}/rollback", post(api::propose_rollback))
        .route("/api/v1/servers", get(api::servers).post(servers::add))
        .route("/api/v1/servers/requests", get(servers::requests))
        .route(
            "/api/v1/servers/{name}/removal",
            get(servers::removal).post(servers::remove),
        )
        .route("/api/v1/servers/{name}", get(api::server))
        .route("/api/v1/servers/{name}/decisions", post(api::decide_server))
        .route("/api/v1/servers/{name}/review", post(api::review_server))
        .route(
            "/api/v1/servers/{name}/tools/{tool}/decisions",
            post(api::decide_tool),
        )
        .route("/api/v1/surfaces/{hash}", get(api::surface))
        .route("/api/v1/claims", get(api::claims))
        .route(
            "/api/v1/servers/{name}/envelopes/{tool}/widening",
            get(api::envelope_widening),
        )
        .route(
            "/api/v1/servers/{name}/envelopes/{tool}/decisions",
            post(api::decide_envelope),
        )
        .route("/api/v1/approvers", get(api::approvers))
        .route("/api/v1/clients", get(clients::list))
        .route("/api/v1/clients/{client}/connect", post(clients::connect))
        .route("/api/v1/clients/{client}/undo", post(clients::undo))
        .route("/api/v1/hooks", get(agent_hooks::list))
        .route("/api/v1/hooks/{client}/install", post(agent_hooks::install))
        .route("/api/v1/hooks/{client}/undo", post(agent_hooks::undo))
        .route("/api/v1/signin", post(signin::redeem_handler))
        .route("/api/v1/log", get(api::log))
        .route("/api/v1/log/checkpoint", get(api::checkpoint))
        .route("/api/v1/log/witnesses", get(witnesses::witnesses))
        .route("/api/v1/log/{index}/proof", get(api::log_proof))
        .route("/api/v1/log/{index}/tlog-proof", get(receipts::tlog_proof))
        .route("/api/v1/receipts", get(receipts::receipts))
        .route("/api/v1/overview", get(receipts::overview))
        .route("/api/v1/receipts/export", post(receipts::export))
        .route("/api/v1/alerts", get(alerts::list))
        .route("/api/v1/alerts/{sink}/test", post(alerts::test))
        .route("/api/v1/alerts/{sink}/redeliver", post(alerts::redeliver))
        .route("/metrics", get(metrics::serve))
        .route("/api/v1/events", get(api::events))
        .merge(standing::routes())
}
