//! `tools/list`: the tools an agent may see — the governance tools and every
//! served upstream tool its role allows, checked against pinning on every
//! listing (a client is never trusted to re-list after drift).

use interlock_store::ApiKeyRecord;
use serde_json::value::RawValue;

use crate::agent::governance;
use crate::gateway::Gateway;
use crate::jsonrpc;

/// The listing for `agent`, paginated as its protocol version wants. With
/// `tasks` (a 2025-11-25 session), each upstream tool that says nothing of
/// task execution is listed with `execution.taskSupport: "optional"`: the
/// gateway runs any call as a task ([`super::tasks`]), whatever its upstream
/// can do. That member is the only change to a definition as listed.
pub(crate) fn tools_list(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    stateless: bool,
    tasks: bool,
) -> Vec<u8> {
    let roles = gw.roles();
    let mut defs: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    if let serde_json::Value::Array(governance) = governance::definitions() {
        for d in governance {
            let name = d["name"].as_str().unwrap_or_default();
            if roles.allows(&agent.role, name) {
                defs.push(serde_json::to_string(&d).expect("JSON").into());
            }
        }
    }
    let views = gw.pins().views();
    for view in &views {
        if gw.upstream(&view.record.name).is_none() {
            continue; // no longer configured
        }
        for (tool, exposed) in &view.served {
            if view.check(tool).is_ok() && roles.allows(&agent.role, &exposed.exposed_name) {
                let def = exposed.definition.get();
                defs.push(match tasks.then(|| with_task_support(def)).flatten() {
                    Some(d) => d.into(),
                    None => def.into(),
                });
            }
        }
    }
    // The listing is bounded in all, not only per upstream: many servers
    // each within the limit must not add up to an answer without bound.
    let caps = gw.config().limits.tools_list_caps();
    let bytes: usize = defs.iter().map(|d| d.len()).sum();
    if bytes > caps.max_bytes || defs.len() > caps.max_items {
        tracing::warn!(
            tools = defs.len(),
            bytes,
            "tools/list refused: larger than limits.max_tools / limits.max_tools_list_bytes"
        );
        return jsonrpc::error(
            Some(id),
            jsonrpc::code::INTERNAL_ERROR,
            &format!(
                "the tool listing is larger than the gateway serves ({} tools, {bytes} bytes; limits.max_tools = {}, limits.max_tools_list_bytes = {})",
                defs.len(),
                caps.max_items,
                caps.max_bytes
            ),
        );
    }
    jsonrpc::listing(id, "tools", defs, stateless)
}

/// `definition` with `execution: {"taskSupport": "optional"}`, if it has no
/// `execution` member (one an upstream wrote is left as it is).
fn with_task_support(definition: &str) -> Option<String> {
    let mut members: indexmap::IndexMap<String, Box<RawValue>> =
        serde_json::from_str(definition).ok()?;
    if members.contains_key("execution") {
        return None;
    }
    members.insert(
        "execution".into(),
        RawValue::from_string(r#"{"taskSupport":"optional"}"#.into()).expect("JSON"),
    );
    serde_json::to_string(&members).ok()
}
