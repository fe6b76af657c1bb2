//! What waits for a reviewer, by one rule: proposed plans (held tool calls
//! among them) and servers that [`ServerView::waits_for_review`]. The
//! reviewer API's inbox, the tray's count and the tray's list are all this
//! (issue 46: the tray listed only a count, and its risk must be the label
//! every other view shows — [`ServerView::risk`] for a server).

use std::sync::Arc;

use interlock_core::RiskLevel;
use interlock_engine::{Engine, EngineError};
use interlock_store::{PlanRecord, PlanStatus, ServerStatus};
use interlock_trust::SubjectKind;
use interlock_trust::pins::{Blocked, Pins, ServerView};
use serde_json::Value;

/// One item waiting for a reviewer.
pub enum Waiting {
    Plan(PlanRecord),
    Server(Arc<ServerView>),
}

impl Waiting {
    /// When it last changed (Unix seconds): the inbox is newest first.
    pub fn updated_at(&self) -> i64 {
        match self {
            Waiting::Plan(p) => p.updated_at,
            Waiting::Server(v) => v.record.updated_at,
        }
    }

    /// What a short list shows of it.
    pub fn entry(&self) -> InboxEntry {
        match self {
            Waiting::Plan(p) => InboxEntry {
                kind: SubjectKind::Plan,
                subject: p.plan_id.clone(),
                title: p.title.clone(),
                risk: RiskLevel::from_name(&p.risk).unwrap_or(RiskLevel::High),
                why: Why::Proposed,
            },
            Waiting::Server(v) => InboxEntry {
                kind: SubjectKind::Server,
                subject: v.record.name.clone(),
                title: v.record.name.clone(),
                risk: v.risk(),
                why: Why::of_server(
                    v.record.status,
                    v.blocked
                        .values()
                        .filter(|(b, _)| *b != Blocked::ByReviewer)
                        .count()
                        + v.blocked_content.len(),
                ),
            },
        }
    }
}

/// Everything waiting, newest first.
pub async fn waiting(engine: &Engine, pins: &Pins) -> Result<Vec<Waiting>, EngineError> {
    let mut items: Vec<Waiting> = engine
        .plans(Some(PlanStatus::Proposed))
        .await?
        .into_iter()
        .map(Waiting::Plan)
        .collect();
    items.extend(
        pins.views()
            .into_iter()
            .filter(|v| v.waits_for_review())
            .map(Waiting::Server),
    );
    items.sort_by_key(|w| std::cmp::Reverse(w.updated_at()));
    Ok(items)
}

/// Why an item waits, in a few words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A plan (or a held call) proposed for a decision.
    Proposed,
    /// A server not yet approved.
    New,
    /// A server whose surface changed so much it is quarantined.
    Quarantined,
    /// A trusted server with this many held tools or pinned items.
    Held(usize),
}

impl Why {
    fn of_server(status: ServerStatus, held: usize) -> Why {
        match status {
            ServerStatus::Pending => Why::New,
            ServerStatus::Quarantined => Why::Quarantined,
            _ => Why::Held(held),
        }
    }

    pub fn words(self) -> String {
        match self {
            Why::Proposed => "waits for a decision".into(),
            Why::New => "new, not yet approved".into(),
            Why::Quarantined => "quarantined: its surface changed".into(),
            Why::Held(1) => "1 change held".into(),
            Why::Held(n) => format!("{n} changes held"),
        }
    }
}

/// What a short list (the tray's) shows of an item, from this gateway or a
/// team gateway's inbox alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxEntry {
    pub kind: SubjectKind,
    /// The plan id or the server name: what its review route names.
    pub subject: String,
    pub title: String,
    pub risk: RiskLevel,
    pub why: Why,
}

impl InboxEntry {
    /// Reads one item of `GET /api/v1/inbox` (a team gateway's, for the
    /// desktop app in team mode). `None` for an item it does not know.
    pub fn from_summary(item: &Value) -> Option<InboxEntry> {
        let text = |k: &str| item[k].as_str().map(str::to_owned);
        match item["kind"].as_str()? {
            "plan" => Some(InboxEntry {
                kind: SubjectKind::Plan,
                subject: text("plan_id")?,
                title: text("title").unwrap_or_default(),
                risk: item["risk"]
                    .as_str()
                    .and_then(RiskLevel::from_name)
                    .unwrap_or(RiskLevel::High),
                why: Why::Proposed,
            }),
            "server" => {
                let status = ServerStatus::parse(item["status"].as_str()?)?;
                let held = item["blocked_tools"].as_array().map_or(0, |b| {
                    b.iter()
                        .filter(|t| t["action"] != Blocked::ByReviewer.name())
                        .count()
                }) + item["blocked_content"].as_array().map_or(0, Vec::len);
                Some(InboxEntry {
                    kind: SubjectKind::Server,
                    subject: text("name")?,
                    title: text("name")?,
                    risk: item["risk_level"]
                        .as_str()
                        .and_then(RiskLevel::from_name)
                        .unwrap_or(RiskLevel::Low),
                    why: Why::of_server(status, held),
                })
            }
            _ => None,
        }
    }

    /// One line: `CRITICAL · server fs — quarantined: its surface changed`.
    pub fn line(&self) -> String {
        let what = match self.kind {
            SubjectKind::Plan => format!(
                "plan {}",
                interlock_core::one_line::one_line(&self.title, 48)
            ),
            SubjectKind::Server => format!(
                "server {}",
                interlock_core::one_line::one_line(&self.title, 48)
            ),
            SubjectKind::Standing => format!("standing {}", self.subject),
        };
        format!(
            "{} · {what} — {}",
            self.risk.name().to_uppercase(),
            self.why.words()
        )
    }
}

/// The few items a short list shows: the riskiest first, then the newest.
pub fn most_urgent(mut entries: Vec<InboxEntry>, n: usize) -> Vec<InboxEntry> {
    // A stable sort keeps the inbox's newest-first order within a level.
    entries.sort_by_key(|e| std::cmp::Reverse(e.risk));
    entries.truncate(n);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_team_inbox_item_reads_as_the_local_one_would() {
        let server = json!({"kind": "server", "name": "fs", "status": "QUARANTINED",
            "risk_level": "critical", "blocked_tools": [], "blocked_content": []});
        let e = InboxEntry::from_summary(&server).unwrap();
        assert_eq!(e.risk, RiskLevel::Critical);
        assert_eq!(e.why, Why::Quarantined);
        assert_eq!(
            e.line(),
            "CRITICAL · server fs — quarantined: its surface changed"
        );
        let held = json!({"kind": "server", "name": "gh", "status": "TRUSTED", "risk_level": "medium",
            "blocked_tools": [{"tool": "a", "action": "hold"}, {"tool": "b", "action": "block"}],
            "blocked_content": []});
        assert_eq!(
            InboxEntry::from_summary(&held).unwrap().why,
            Why::Held(1),
            "a tool a reviewer blocked waits for nobody"
        );
        let plan = json!({"kind": "plan", "plan_id": "p1", "title": "Deploy\nnow", "risk": "low"});
        assert_eq!(
            InboxEntry::from_summary(&plan).unwrap().line(),
            "LOW · plan Deploy now — waits for a decision"
        );
        assert_eq!(InboxEntry::from_summary(&json!({"kind": "other"})), None);
    }

    #[test]
    fn the_riskiest_come_first_and_the_newest_within_a_level() {
        let e = |s: &str, risk| InboxEntry {
            kind: SubjectKind::Plan,
            subject: s.into(),
            title: s.into(),
            risk,
            why: Why::Proposed,
        };
        let newest_first = vec![
            e("low-new", RiskLevel::Low),
            e("high-new", RiskLevel::High),
            e("low-old", RiskLevel::Low),
            e("critical", RiskLevel::Critical),
            e("high-old", RiskLevel::High),
        ];
        let top: Vec<String> = most_urgent(newest_first, 4)
            .into_iter()
            .map(|e| e.subject)
            .collect();
        assert_eq!(top, ["critical", "high-new", "high-old", "low-new"]);
    }
}
