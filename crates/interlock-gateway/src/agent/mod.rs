//! The agent face: the MCP endpoint agents call (`/mcp`), and everything it
//! answers with.
//!
//! - [`mcp`]: the Streamable HTTP transport and JSON-RPC framing; sessions
//!   and the stateless era; which method goes where.
//! - [`calls`]: `tools/list` and the tool call's path, stage by stage.
//! - [`content`]: prompts, resources and completions of approved servers.
//! - [`governance`]: the governance tools (`propose_plan`, `get_plan`,
//!   `list_plans`, `execute_plan`).
//! - `hooks`: coding agents' hooks (`/hooks/v1/{client}`): their own tool
//!   uses judged, held and logged like calls (issue 40).
//! - `held_plan`: waiting on a held plan bound by a digest (a hook's held
//!   use, a held request to a model): found again on a retry, waited on.
//! - `llm`: the LLM proxy (`/v1/chat/completions`, `/v1/models`): prompts
//!   scanned, each verdict logged before a request leaves (issue 42).
//!
//! Architecture invariant: nothing outside this folder imports it but the
//! routes that join the faces (`http`), and it imports no other face
//! (`no_import_runs_from_a_lower_room_into_a_face`).

pub mod calls;
pub mod content;
pub mod governance;
pub(crate) mod held_plan;
pub(crate) mod hooks;
pub(crate) mod llm;
pub mod mcp;

/// The agent face's routes: `/mcp` (Streamable HTTP), coding agents' hooks
/// and the LLM proxy.
pub fn routes() -> axum::Router<crate::gateway::Gateway> {
    use axum::routing::get;
    use axum::routing::post;
    axum::Router::new()
        .route("/mcp", get(mcp::get).post(mcp::post).delete(mcp::delete))
        .route("/hooks/v1/{client}", post(hooks::post))
        .route("/v1/chat/completions", post(llm::chat_completions))
        .route("/v1/messages", post(llm::messages))
        .route("/v1/models", get(llm::models))
        // Gemini's API at either version its SDK asks (the provider's
        // `base_url` names the one it is sent to).
        .route("/v1/models/{model_action}", post(llm::gemini))
        .route("/v1beta/models/{model_action}", post(llm::gemini))
}
