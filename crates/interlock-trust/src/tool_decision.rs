//! A reviewer's signed decision about one tool (issue 16 item 5): approve its
//! current definition into the server's baseline, or block it, without
//! deciding about the rest of the server.
//!
//! The statement is the usual approval statement with `plan_id` =
//! `tool:<server>/<tool>` (server names never hold `/`) and `plan_hash` = the
//! tool's *observed* definition hash, so it approves or blocks exactly the
//! definition the reviewer saw; applied by compare-and-swap like a server
//! decision, in the same transaction as its `tool.approved` / `tool.blocked`
//! leaf.
//!
//! - **Approve** (a trusted or quarantined server): the baseline takes the
//!   tool's observed definition (added if new); the tool's hold, quarantine
//!   or block is lifted; the drift is recomputed against the new baseline. A
//!   quarantined server stays quarantined (that needs the server's approval).
//! - **Reject** = block: the tool is never served until a reviewer approves
//!   it, across listings and across approvals of the server. Allowed while
//!   the server is still pending review.

use std::collections::BTreeMap;

use interlock_canon::{self as canon, Digest, Map};
use interlock_core::{Decision, DsseEnvelope};
use interlock_engine::{Engine, EngineError};
use interlock_store::{ServerRecord, ServerStatus, ServerUpdate};
use interlock_surface::{DriftPolicy, Surface, surface_hash};

use crate::events::{EventBus, EventType, GatewayEvent};
use crate::pins::{Blocked, PinError, Signed, commit_decision, decode_surface, drift_record};

/// Signed statements about one tool name `tool:<server>/<tool>`.
pub const TOOL_SUBJECT_PREFIX: &str = "tool:";

pub fn tool_subject(server: &str, tool: &str) -> String {
    format!("{TOOL_SUBJECT_PREFIX}{server}/{tool}")
}

/// `(server, tool)` of a tool subject.
pub fn parse_tool_subject(subject: &str) -> Option<(&str, &str)> {
    subject
        .strip_prefix(TOOL_SUBJECT_PREFIX)?
        .split_once('/')
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
}

/// The observed definition hash of `tool` on `record` (what a decision about
/// it must sign).
pub fn observed_tool_hash(record: &ServerRecord, tool: &str) -> Result<Digest, PinError> {
    let observed = decode_surface(&record.name, record.observed.as_deref())?.ok_or_else(|| {
        PinError::NothingObserved {
            name: record.name.clone(),
        }
    })?;
    observed
        .tool(tool)
        .map(|t| t.hash())
        .ok_or_else(|| PinError::NoSuchTool {
            server: record.name.clone(),
            tool: tool.to_owned(),
        })
}

/// Verifies and applies a signed decision about one tool; the new row.
pub async fn decide_tool(
    engine: &Engine,
    policy: &DriftPolicy,
    envelope: &DsseEnvelope,
    events: &EventBus,
) -> Result<ServerRecord, PinError> {
    let claimed = interlock_core::decision::ApprovalStatement::claimed_by(envelope)
        .map_err(|e| PinError::Engine(EngineError::Decision(e)))?;
    let (server, tool) = parse_tool_subject(&claimed.plan_id)
        .ok_or_else(|| PinError::NotAToolStatement(claimed.plan_id.clone()))?;
    let (server, tool) = (server.to_owned(), tool.to_owned());
    let store = engine.store();
    let record = store
        .server(&server)
        .await?
        .ok_or_else(|| PinError::NoSuchServer(server.clone()))?;
    let current = observed_tool_hash(&record, &tool)?;
    if claimed.plan_hash != current {
        return Err(PinError::SurfaceChanged {
            name: format!("{server}/{tool}"),
            signed: claimed.plan_hash.to_string(),
            current: current.to_string(),
        });
    }
    let verified = engine
        .accept_subject_decision(envelope, &tool_subject(&server, &tool), current)
        .await?;
    let decision = verified.statement.decision;
    let update = match decision {
        Decision::Approve => approve(&record, &tool, policy)?,
        Decision::Reject => block(&record, &tool),
    };
    let kind = match decision {
        Decision::Approve => EventType::ToolApproved,
        Decision::Reject => EventType::ToolBlocked,
    };
    let mut m = Map::new();
    m.insert("server".into(), server.as_str().into());
    m.insert("tool".into(), tool.as_str().into());
    m.insert("definition_hash".into(), current.to_string().into());
    m.insert(
        "previous_baseline_hash".into(),
        record.baseline_hash.clone().unwrap_or_default().into(),
    );
    m.insert(
        "baseline_hash".into(),
        update.baseline_hash.clone().unwrap_or_default().into(),
    );
    m.insert("status".into(), update.status.as_str().into());
    let (new, index) = commit_decision(
        engine,
        kind,
        m,
        Signed {
            verified: &verified,
            envelope,
        },
        &record,
        (update, None),
        (format!("{server}/{tool}"), current.to_string()),
    )
    .await?;
    let verb = if decision == Decision::Approve {
        "Approved"
    } else {
        "Blocked"
    };
    events.send(GatewayEvent::server(
        kind,
        &server,
        format!("{verb} tool `{tool}` of `{server}` ({})", verified.identity),
        "info",
        new.observed_hash.as_deref().unwrap_or_default(),
        Some(index),
    ));
    Ok(new)
}

fn blocked_of(record: &ServerRecord) -> BTreeMap<String, String> {
    serde_json::from_slice(&record.blocked_tools).unwrap_or_default()
}

fn block(record: &ServerRecord, tool: &str) -> ServerUpdate {
    let mut blocked = blocked_of(record);
    blocked.insert(tool.to_owned(), Blocked::ByReviewer.name().to_owned());
    ServerUpdate {
        status: record.status,
        baseline_hash: record.baseline_hash.clone(),
        baseline: record.baseline.clone(),
        observed_hash: record.observed_hash.clone(),
        observed: record.observed.clone(),
        drift: record.drift.clone(),
        blocked_tools: serde_json::to_vec(&blocked).expect("JSON serializes"),
    }
}

fn approve(
    record: &ServerRecord,
    tool: &str,
    policy: &DriftPolicy,
) -> Result<ServerUpdate, PinError> {
    let name = &record.name;
    if !matches!(
        record.status,
        ServerStatus::Trusted | ServerStatus::Quarantined
    ) {
        return Err(PinError::ToolNeedsServer {
            name: name.clone(),
            status: record.status.as_str().to_owned(),
        });
    }
    let baseline = decode_surface(name, record.baseline.as_deref())?.unwrap_or_default();
    let observed = decode_surface(name, record.observed.as_deref())?
        .ok_or_else(|| PinError::NothingObserved { name: name.clone() })?;
    let definition = observed.tool(tool).ok_or_else(|| PinError::NoSuchTool {
        server: name.clone(),
        tool: tool.to_owned(),
    })?;
    let new_baseline: Surface = baseline.with_tool(definition.clone());
    let drifts = interlock_surface::diff(&new_baseline, &observed);
    let drift: Vec<serde_json::Value> = drifts.iter().map(|d| drift_record(d, policy)).collect();
    let mut blocked = blocked_of(record);
    blocked.remove(tool);
    Ok(ServerUpdate {
        status: record.status,
        baseline_hash: Some(surface_hash(&new_baseline).to_string()),
        baseline: Some(canon::canonical_bytes(&new_baseline.to_value())),
        observed_hash: record.observed_hash.clone(),
        observed: record.observed.clone(),
        drift: serde_json::to_vec(&drift).expect("JSON serializes"),
        blocked_tools: serde_json::to_vec(&blocked).expect("JSON serializes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_subjects_round_trip_and_reject_what_names_nothing() {
        let s = tool_subject("files", "read/raw");
        assert_eq!(s, "tool:files/read/raw");
        assert_eq!(parse_tool_subject(&s), Some(("files", "read/raw")));
        for bad in [
            "tool:files",
            "tool:/x",
            "tool:files/",
            "server:files",
            "files/x",
        ] {
            assert_eq!(parse_tool_subject(bad), None, "{bad}");
        }
    }
}
