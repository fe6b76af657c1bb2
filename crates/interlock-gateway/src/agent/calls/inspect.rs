//! Inspect: the arguments assessed (findings, the tool's risk, the role's
//! limit, the upstream's roots) and held against the tool's behavioural
//! envelope — a host or path root outside it holds the call, and no standing
//! approval covers that.

use interlock_canon::Value;
use interlock_store::ApiKeyRecord;

use super::assess::{Assessment, assess_at, assess_with_roots};
use super::envelope;
use super::route::Routed;
use crate::gateway::Gateway;

/// What inspection found, for the verdict and the call's leaf.
pub(crate) struct Inspected {
    pub assessment: Assessment,
    /// The arguments against the tool's envelope (kept for the answer's check).
    pub before: envelope::Before,
}

pub(crate) async fn inspect(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    routed: &Routed,
    args: &Value,
) -> Inspected {
    let tool_def = routed
        .view
        .observed
        .as_ref()
        .and_then(|s| s.tool(&routed.tool));
    let mut assessment = assess_with_roots(
        gw.config(),
        routed.upstream.config.roots.clone(),
        &agent.role,
        tool_def,
        args,
    );
    let before = envelope::before(gw, routed.server(), &routed.tool, args, agent.shadow).await;
    let envelope_holds = before.hold_reasons();
    if !envelope_holds.is_empty() {
        assessment.hold_reasons.extend(envelope_holds);
        assessment.inspection_hold = true;
    }
    Inspected { assessment, before }
}

/// A content read's request (issue 39 item 11) assessed as a call's
/// arguments are, under the server's roots: what it carries, at a read's
/// own low risk (no tool definition; it acts on nothing).
pub(crate) fn inspect_read(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    server: &str,
    request: &Value,
) -> Assessment {
    let roots = gw
        .upstream(server)
        .map(|u| u.config.roots.clone())
        .unwrap_or_default();
    assess_at(
        gw.config(),
        roots,
        &agent.role,
        interlock_core::RiskLevel::Low,
        request,
    )
}
