//! `tools/list`: the tools an agent may see — the governance tools and every
//! served upstream tool its role allows, checked against pinning on every
//! listing (a client is never trusted to re-list after drift).

use interlock_store::ApiKeyRecord;
use serde_json::value::RawValue;

use crate::gateway::Gateway;
use crate::governance;
use crate::jsonrpc;

/// The listing for `agent`, paginated as its protocol version wants.
pub(crate) fn tools_list(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    stateless: bool,
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
                defs.push(exposed.definition.get().into());
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
