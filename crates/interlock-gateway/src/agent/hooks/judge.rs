//! The verdict on one tool use a hook reports: the role, inspection, risk
//! and shadow mode, as for an MCP call ([`assess_findings`] is the one rule
//! for both), then allow, deny or hold.

use interlock_core::RiskLevel;
use interlock_hooks::pattern::{NativePattern, is_native};
use interlock_hooks::{Answer, HookEvent, NativeTool, Phase};
use interlock_inspect::{ArgContext, NativeContext, inspect_arguments, inspect_native};
use interlock_store::ApiKeyRecord;

use super::super::calls::assess::{Assessment, assess_findings};
use super::held;
use super::leaf::{self, HookVerdict, logged};
use crate::gateway::Gateway;
use crate::roles::DEFAULT_ROLE;
use interlock_trust::held_id::hook_tool;

/// Judges `event` for `agent`; a hold waits up to `wait_secs` for a reviewer.
pub(crate) async fn judge(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    event: &HookEvent,
    wait_secs: u64,
) -> Answer {
    if event.phase == Phase::After {
        return match leaf::append(gw, agent, event, &HookVerdict::Reported, None).await {
            Ok(_) => Answer::Nothing,
            // Nothing to refuse: the tool ran already. The client gets no
            // decision either way; the gateway's log says what failed.
            Err(e) => {
                tracing::error!(error = %e, "a hook's reported outcome could not be logged");
                Answer::Nothing
            }
        };
    }
    let tool = event.canonical_tool();
    if let Err(reason) = role_allows(gw, &agent.role, event) {
        let verdict = HookVerdict::NotAllowed {
            reason: reason.clone(),
        };
        return logged(gw, agent, event, &verdict, None, Answer::Deny { reason }).await;
    }
    let assessment = assess(gw, agent, event);
    let reasons = |r: &[String]| r.join("; ");
    if agent.shadow && (assessment.blocked() || assessment.held()) {
        let (would, why) = if assessment.blocked() {
            ("block", reasons(&assessment.block_reasons))
        } else {
            ("hold", reasons(&assessment.hold_reasons))
        };
        let verdict = HookVerdict::Shadow {
            would,
            reasons: why,
        };
        let allow = Answer::Allow {
            reason: format!("Interlock (shadow mode) would {would} this {tool} use"),
        };
        return logged(gw, agent, event, &verdict, Some(&assessment), allow).await;
    }
    if assessment.blocked() {
        let why = reasons(&assessment.block_reasons);
        let deny = Answer::Deny {
            reason: format!("Interlock refused this {tool} use: {why}"),
        };
        let verdict = HookVerdict::Blocked { reasons: why };
        return logged(gw, agent, event, &verdict, Some(&assessment), deny).await;
    }
    if assessment.held() {
        // A reviewer may have approved exactly this use for a while.
        let standing = interlock_trust::standing::find_hook(
            gw.engine(),
            &agent.role,
            &agent.name,
            &hook_tool(event.client.slug(), &tool),
            &event.input_hash(),
        )
        .await;
        match standing {
            Ok(Some(id)) => {
                let verdict = HookVerdict::Standing {
                    id: id.clone(),
                    reasons: reasons(&assessment.hold_reasons),
                };
                let allow = Answer::Allow {
                    reason: format!(
                        "Interlock: a reviewer approved exactly this {tool} use for a while ({id})"
                    ),
                };
                return logged(gw, agent, event, &verdict, Some(&assessment), allow).await;
            }
            Ok(None) => {}
            // Unreadable grants cover nothing: the use waits for a reviewer.
            Err(e) => tracing::warn!(error = %e, "standing approvals could not be read"),
        }
        return held::hold(gw, agent, event, &assessment, wait_secs).await;
    }
    let allow = Answer::Allow {
        reason: format!(
            "Interlock allowed this {tool} use (risk {})",
            assessment.risk.name()
        ),
    };
    logged(
        gw,
        agent,
        event,
        &HookVerdict::Allowed,
        Some(&assessment),
        allow,
    )
    .await
}

/// Whether the key's role allows this native tool use: the built-in
/// `default` role (unless the config defines it) and a role whose tools
/// include `*` allow every use; another allows only what one of its native
/// patterns (`Bash(git *)`, `Edit(src/**)`) matches.
fn role_allows(gw: &Gateway, role: &str, event: &HookEvent) -> Result<(), String> {
    let config = gw.config();
    let Some(defined) = config.roles.get(role) else {
        return if role == DEFAULT_ROLE {
            Ok(())
        } else {
            Err(format!(
                "Interlock refused this tool use: role `{role}` is not defined"
            ))
        };
    };
    if defined.tools.iter().any(|t| t == "*") {
        return Ok(());
    }
    let allowed = defined
        .tools
        .iter()
        .filter(|t| is_native(t))
        .filter_map(|t| NativePattern::parse(t).ok())
        .any(|p| p.matches(event));
    if allowed {
        Ok(())
    } else {
        Err(format!(
            "Interlock refused this {} use: role `{role}` allows no native tool pattern that matches it",
            event.canonical_tool()
        ))
    }
}

/// What inspection finds, and the verdict it leads to.
fn assess(gw: &Gateway, agent: &ApiKeyRecord, event: &HookEvent) -> Assessment {
    let home = std::env::var("HOME").ok();
    let ctx = NativeContext {
        cwd: &event.cwd,
        project: event.project.as_deref(),
        home: home.as_deref(),
    };
    let mut findings: Vec<_> = event
        .tool
        .actions()
        .iter()
        .flat_map(|a| inspect_native(a, &ctx))
        .collect();
    let tool_risk = match &event.tool {
        NativeTool::Shell { .. } | NativeTool::Write { .. } => RiskLevel::Medium,
        NativeTool::Read { .. } | NativeTool::Fetch { .. } => RiskLevel::Low,
        // An MCP tool the client calls itself, not through the gateway: no
        // approved definition vouches for it (the spec's default: destructive).
        NativeTool::Mcp { .. } => RiskLevel::High,
        NativeTool::Other => RiskLevel::Low,
    };
    let arguments = match &event.tool {
        NativeTool::Mcp { arguments, .. } => Some(arguments),
        NativeTool::Other => Some(&event.input),
        _ => None,
    };
    if let Some(arguments) = arguments {
        findings.extend(inspect_arguments(
            arguments,
            &ArgContext::with_roots([event.project.as_deref().unwrap_or(&event.cwd)]),
        ));
    }
    assess_findings(gw.config(), &agent.role, tool_risk, findings)
}
