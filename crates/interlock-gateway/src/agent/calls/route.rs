//! Route: what the agent called — a governance tool the gateway answers
//! itself, or a tool of an upstream server — whether the key's role may call
//! it, and whether it is served now (a tool of a pending, held or quarantined
//! server is refused with its `tool.call` leaf, so the log shows the attempt).

use std::sync::Arc;

use interlock_canon as canon;
use interlock_store::ApiKeyRecord;
use interlock_trust::pins::{ExposedTool, NotServed, ServerView};
use serde_json::json;
use serde_json::value::RawValue;

use super::leaf::{Bound, CallLeaf, Outcome, Verdict, new_call_id};
use super::request::Request;
use super::settle::append_or_refuse;
use super::stop::Stop;
use crate::agent::governance;
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::upstream::table::Upstream;
use interlock_trust::held_id::arguments_digest;

/// A call routed to a served tool of an upstream.
pub(crate) struct Routed {
    /// The server's current view (its record, baseline and observed surface).
    pub view: Arc<ServerView>,
    /// The upstream's own name of the tool.
    pub tool: String,
    pub upstream: Arc<Upstream>,
    pub exposed: Arc<ExposedTool>,
}

impl Routed {
    pub(crate) fn server(&self) -> &str {
        &self.view.record.name
    }
}

/// Routes `request`; a governance tool is answered here.
pub(crate) async fn route(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    request: &Request,
) -> Result<Routed, Stop> {
    let name = &request.name;
    if !gw.roles().allows(&agent.role, name) {
        return Err(Stop::Forbidden {
            tool: name.clone(),
            role: agent.role.clone(),
        });
    }
    if governance::is_governance_tool(name) {
        let args: serde_json::Value = request
            .arguments()
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or(json!({}));
        let result = governance::call(gw, &agent.name, name, &args).await;
        return Err(Stop::Answered(jsonrpc::result_value(id, &result)));
    }
    let (view, tool) = gw
        .pins()
        .resolve(name)
        .ok_or_else(|| Stop::unknown_tool(name))?;
    let upstream = gw
        .upstream(&view.record.name)
        .ok_or_else(|| Stop::unknown_tool(name))?;
    let exposed = match view.check(&tool) {
        Ok(e) => Arc::clone(e),
        Err(NotServed::UnknownTool) => return Err(Stop::unknown_tool(name)),
        Err(why) => return Err(not_served(gw, agent, id, request, &view, &tool, why).await),
    };
    Ok(Routed {
        view,
        tool,
        upstream,
        exposed,
    })
}

/// A tool its server does not serve now: the refusal, logged.
async fn not_served(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    request: &Request,
    view: &ServerView,
    tool: &str,
    why: NotServed,
) -> Stop {
    let server = view.record.name.as_str();
    let message = why.message(server, tool);
    let arguments_hash = request
        .arguments()
        .and_then(|a| canon::parse_json(a.get().as_bytes()).ok())
        .map(|v| arguments_digest(&v).to_string())
        .unwrap_or_default();
    let call_id = new_call_id();
    let leaf = CallLeaf {
        agent,
        server,
        tool,
        arguments_hash: &arguments_hash,
        call_id: &call_id,
        bound: Bound::of(view, tool),
        assessment: None,
        intent: None,
        envelope: &[],
    };
    let answer = jsonrpc::error_with_data(
        Some(id),
        code::TOOL_NOT_SERVED,
        &message,
        Some(&json!({"server": server, "tool": tool, "status": view.record.status.as_str()})),
    );
    let outcome = Outcome::Refused { message };
    Stop::Answered(
        append_or_refuse(gw, id, &leaf, &Verdict::NotServed, &outcome, None)
            .await
            .map_or_else(|refusal| refusal, |_| answer),
    )
}
