//! The call as the stages see it: routed, inspected, bound to what was
//! approved. A room of its own so the stages that take it (the hold, the
//! scan, the settling of its leaf) need not import the pipeline that makes it.

use std::sync::OnceLock;
use std::time::Instant;

use interlock_canon::Value;
use interlock_store::ApiKeyRecord;
use serde_json::value::RawValue;

use super::assess::Assessment;
use super::envelope::Before;
use super::leaf::Bound;
use crate::gateway::Gateway;

/// A routed, inspected call: what every verdict about it shares.
pub(crate) struct Call<'a> {
    pub gw: &'a Gateway,
    pub agent: &'a ApiKeyRecord,
    pub id: &'a RawValue,
    /// The name the agent called (`server__tool`).
    pub exposed: &'a str,
    pub server: &'a str,
    /// The upstream's own tool name.
    pub tool: &'a str,
    pub args: &'a Value,
    pub args_digest: &'a str,
    pub assessment: &'a Assessment,
    /// The agent's MCP session id (`None` for a stateless call): what a
    /// grant *for this session* binds to.
    pub session: Option<&'a str>,
    /// How long a held call waits for a reviewer.
    pub hold_secs: u64,
    /// The call's task was cancelled (see [`Origin::cancelled`]).
    pub cancelled: Option<&'a std::sync::atomic::AtomicBool>,
    /// The gateway's id of this call (`leaf::new_call_id`).
    pub call_id: String,
    /// The approved definition and baseline the call is bound to.
    pub bound: Bound,
    /// The arguments against the tool's behavioural envelope: what of them
    /// is outside it, and what the result is checked and learned with.
    pub before: &'a Before,
    /// The call's `tool.call.intent` leaf, once written (forwarded calls only).
    pub intent: OnceLock<u64>,
    /// When the call arrived (its decision latency, `/metrics`).
    pub arrived: Instant,
}

/// Where a call comes from and how long it may wait, beside its agent.
#[derive(Clone, Copy, Default)]
pub(crate) struct Origin<'a> {
    /// The SSE stream of the agent's request (progress, relayed log messages).
    pub progress: Option<&'a super::progress::Progress>,
    /// The agent's MCP session id; `None` for a stateless request.
    pub session: Option<&'a str>,
    /// How long a held call waits for a reviewer, if not `calls.hold_secs`
    /// (a task's lifetime: nothing times out on the client's side).
    pub hold_secs: Option<u64>,
    /// Set when the agent cancels the call's task: a held call stops
    /// waiting, and an approval that arrives later runs nothing.
    pub cancelled: Option<&'a std::sync::atomic::AtomicBool>,
    /// Set to the retry time when a rate limit or quota refused the call,
    /// so a plain JSON answer can be HTTP 429 with `Retry-After`.
    pub limited: Option<&'a std::sync::OnceLock<u64>>,
}
