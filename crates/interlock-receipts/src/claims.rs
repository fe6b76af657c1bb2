//! Claims an auditor checks from the log alone (issue 16 item 9).
//!
//! [`drift_window_claim`] answers: *was any tool executed after its drift was
//! detected and before a reviewer decided?* It reads leaves in log order:
//!
//! * a **drift window** opens at a `server.*` leaf whose `blocked_tools` names
//!   a tool (that tool's window) or whose `status` is `QUARANTINED` (the whole
//!   server's), or at a reviewer's `tool.blocked` or `server.rejected`; it
//!   closes at the leaf that says otherwise: a reviewer's `server.approved`
//!   (a tool a reviewer blocked stays blocked), `tool.approved`, or a later
//!   drift leaf no longer naming it (the tool listed as approved again);
//! * an **execution** is a `tool.call` leaf whose verdict forwarded the call
//!   (or ran its approved held plan), placed at its `tool.call.intent` leaf
//!   (`intent_index`) — the moment the gateway decided to forward — or, for a
//!   held plan, at the plan's `stage.started` leaf; and every `stage.started`
//!   of an `mcp.call_tool` stage, placed at itself, against its server's
//!   windows.
//!
//! The claim holds when no execution falls strictly inside a window of its
//! server (or of its tool). The gateway makes it hold by construction: it
//! installs the stricter view before it writes the drift leaf, and re-checks
//! the view after a call's intent leaf is written.
//!
//! Pure: leaves in, a [`DriftWindowClaim`] out. Verify the log (or bundle)
//! first; a bundle filtered by time or subject answers only for what it holds.

use std::collections::BTreeMap;

use interlock_canon::{Map, Number, Value};

/// The verdicts under which a `tool.call` reached its upstream.
const EXECUTED_VERDICTS: [&str; 5] = [
    "allowed",
    "standing_approval",
    "shadow_would_block",
    "shadow_would_hold",
    "approved_plan",
];

/// A span of the log in which a server, or one of its tools, was not to be
/// served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftWindow {
    pub server: String,
    /// `None`: the whole server (quarantined).
    pub tool: Option<String>,
    /// The index of the leaf that opened it.
    pub opened_at: u64,
    /// The index of the leaf that closed it; `None` while still open.
    pub closed_at: Option<u64>,
    /// The type of that leaf (`server.approved`, `server.drift`, …).
    pub closed_by: Option<String>,
}

impl DriftWindow {
    fn covers(&self, server: &str, tool: Option<&str>, at: u64) -> bool {
        self.server == server
            && (self.tool.is_none() || self.tool.as_deref() == tool)
            && self.opened_at < at
            && self.closed_at.is_none_or(|c| at < c)
    }
}

/// A tool that ran inside a drift window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The leaf recording the execution (`tool.call` or `stage.started`).
    pub leaf_index: u64,
    /// Where it was placed (its intent leaf, or its plan's stage).
    pub executed_at: u64,
    pub server: String,
    pub tool: Option<String>,
    /// The call's verdict, or `stage` for a plan stage.
    pub verdict: String,
    pub window: DriftWindow,
}

/// The answer, with what it was computed from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriftWindowClaim {
    pub leaves_read: u64,
    pub executions_checked: u64,
    pub windows: Vec<DriftWindow>,
    pub violations: Vec<Violation>,
}

impl DriftWindowClaim {
    /// No tool ran inside a drift window.
    pub fn holds(&self) -> bool {
        self.violations.is_empty()
    }

    /// The answer as the CLI's `--json` and the reviewer API give it.
    pub fn to_value(&self) -> Value {
        let int = |i: u64| Value::Number(Number::from_i64(i as i64).expect("an index"));
        let opt = |v: Option<Value>| v.unwrap_or(Value::Null);
        let window = |w: &DriftWindow| {
            let mut m = Map::new();
            m.insert("server".into(), w.server.as_str().into());
            m.insert("tool".into(), opt(w.tool.as_deref().map(Value::from)));
            m.insert("opened_at".into(), int(w.opened_at));
            m.insert("closed_at".into(), opt(w.closed_at.map(int)));
            m.insert(
                "closed_by".into(),
                opt(w.closed_by.as_deref().map(Value::from)),
            );
            Value::Object(m)
        };
        let violation = |v: &Violation| {
            let mut m = Map::new();
            m.insert("leaf_index".into(), int(v.leaf_index));
            m.insert("executed_at".into(), int(v.executed_at));
            m.insert("server".into(), v.server.as_str().into());
            m.insert("tool".into(), opt(v.tool.as_deref().map(Value::from)));
            m.insert("verdict".into(), v.verdict.as_str().into());
            m.insert("window".into(), window(&v.window));
            Value::Object(m)
        };
        let mut m = Map::new();
        m.insert(
            "question".into(),
            "was any tool executed after its drift was detected and before a reviewer decided?"
                .into(),
        );
        m.insert(
            "answer".into(),
            if self.holds() { "no" } else { "yes" }.into(),
        );
        m.insert("leaves_read".into(), int(self.leaves_read));
        m.insert("executions_checked".into(), int(self.executions_checked));
        m.insert(
            "windows".into(),
            Value::Array(self.windows.iter().map(window).collect()),
        );
        m.insert(
            "violations".into(),
            Value::Array(self.violations.iter().map(violation).collect()),
        );
        Value::Object(m)
    }
}

struct Execution {
    leaf_index: u64,
    executed_at: u64,
    server: String,
    tool: Option<String>,
    verdict: String,
}

/// Reads `leaves` — `(index, type, predicate)` in log order — and answers the
/// drift-window claim.
pub fn drift_window_claim<'a, I>(leaves: I) -> DriftWindowClaim
where
    I: IntoIterator<Item = (u64, &'a str, &'a Map)>,
{
    let mut open: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
    let mut windows = Vec::new();
    let mut executions = Vec::new();
    let mut stage_of_plan: BTreeMap<String, u64> = BTreeMap::new();
    let mut leaves_read = 0;
    let close = |open: &mut BTreeMap<(String, Option<String>), u64>,
                 windows: &mut Vec<DriftWindow>,
                 key: &(String, Option<String>),
                 at: u64,
                 kind: &str| {
        if let Some(opened_at) = open.remove(key) {
            windows.push(DriftWindow {
                server: key.0.clone(),
                tool: key.1.clone(),
                opened_at,
                closed_at: Some(at),
                closed_by: Some(kind.to_owned()),
            });
        }
    };
    for (index, kind, p) in leaves {
        leaves_read += 1;
        let text = |k: &str| p.get(k).and_then(Value::as_str);
        match kind {
            "server.approved" | "server.rejected" => {
                // A decision about the server: every window closes, except a
                // tool a reviewer blocked (its leaf's `blocked_tools`), which
                // stays unservable; a rejected server is unservable whole.
                let Some(server) = text("server") else {
                    continue;
                };
                let kept: Vec<String> = p
                    .get("blocked_tools")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default();
                let keys: Vec<_> = open
                    .keys()
                    .filter(|k| k.0 == server && !k.1.as_ref().is_some_and(|t| kept.contains(t)))
                    .cloned()
                    .collect();
                for key in keys {
                    close(&mut open, &mut windows, &key, index, kind);
                }
                for tool in kept {
                    open.entry((server.to_owned(), Some(tool))).or_insert(index);
                }
                if kind == "server.rejected" {
                    open.entry((server.to_owned(), None)).or_insert(index);
                }
            }
            k if (k.starts_with("server.") || k == "tool.approved" || k == "tool.blocked")
                && (p.contains_key("blocked_tools") || p.contains_key("status")) =>
            {
                let Some(server) = text("server") else {
                    continue;
                };
                let quarantined = text("status") == Some("QUARANTINED");
                let blocked: Vec<String> = p
                    .get("blocked_tools")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default();
                let mut wanted: Vec<(String, Option<String>)> = blocked
                    .into_iter()
                    .map(|t| (server.to_owned(), Some(t)))
                    .collect();
                if quarantined {
                    wanted.push((server.to_owned(), None));
                }
                // A leaf that states the server's blocking replaces what was.
                if p.contains_key("blocked_tools") {
                    let stale: Vec<_> = open
                        .keys()
                        .filter(|k| k.0 == server && !wanted.contains(k))
                        .filter(|k| k.1.is_some() || text("status").is_some())
                        .cloned()
                        .collect();
                    for key in stale {
                        close(&mut open, &mut windows, &key, index, kind);
                    }
                }
                for key in wanted {
                    open.entry(key).or_insert(index);
                }
            }
            "stage.started" => {
                if let Some(plan) = text("plan_id") {
                    stage_of_plan.entry(plan.to_owned()).or_insert(index);
                }
                if text("action") == Some("mcp.call_tool")
                    && let Some(server) = text("target")
                {
                    executions.push(Execution {
                        leaf_index: index,
                        executed_at: index,
                        server: server.to_owned(),
                        tool: None,
                        verdict: "stage".into(),
                    });
                }
            }
            "tool.call" => {
                let verdict = p
                    .get("verdict")
                    .and_then(Value::as_object)
                    .and_then(|v| v.get("verdict"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !EXECUTED_VERDICTS.contains(&verdict) {
                    continue;
                }
                let (Some(server), Some(tool)) = (text("server"), text("tool")) else {
                    continue;
                };
                let intent = p
                    .get("intent_index")
                    .and_then(Value::as_number)
                    .and_then(|n| n.as_i64())
                    .and_then(|i| u64::try_from(i).ok());
                let plan_stage = p
                    .get("verdict")
                    .and_then(Value::as_object)
                    .and_then(|v| v.get("plan_id"))
                    .and_then(Value::as_str)
                    .and_then(|plan| stage_of_plan.get(plan).copied());
                executions.push(Execution {
                    leaf_index: index,
                    executed_at: intent.or(plan_stage).unwrap_or(index),
                    server: server.to_owned(),
                    tool: Some(tool.to_owned()),
                    verdict: verdict.to_owned(),
                });
            }
            _ => {}
        }
    }
    for ((server, tool), opened_at) in open {
        windows.push(DriftWindow {
            server,
            tool,
            opened_at,
            closed_at: None,
            closed_by: None,
        });
    }
    windows.sort_by_key(|w| (w.opened_at, w.server.clone(), w.tool.clone()));
    let violations = executions
        .iter()
        .filter_map(|e| {
            // A plan stage names no tool: only its server's windows apply.
            let window = windows.iter().find(|w| {
                (e.tool.is_some() || w.tool.is_none())
                    && w.covers(&e.server, e.tool.as_deref(), e.executed_at)
            })?;
            Some(Violation {
                leaf_index: e.leaf_index,
                executed_at: e.executed_at,
                server: e.server.clone(),
                tool: e.tool.clone(),
                verdict: e.verdict.clone(),
                window: window.clone(),
            })
        })
        .collect();
    DriftWindowClaim {
        leaves_read,
        executions_checked: executions.len() as u64,
        windows,
        violations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interlock_canon::parse_json;

    fn leaf(json: &str) -> Map {
        parse_json(json.as_bytes())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn claim(leaves: &[(u64, &str, Map)]) -> DriftWindowClaim {
        drift_window_claim(leaves.iter().map(|(i, k, m)| (*i, *k, m)))
    }

    fn call(server: &str, tool: &str, verdict: &str, intent: u64) -> Map {
        leaf(&format!(
            r#"{{"server":"{server}","tool":"{tool}","intent_index":{intent},"verdict":{{"verdict":"{verdict}"}}}}"#
        ))
    }

    fn held(server: &str, tools: &[&str], status: &str) -> Map {
        let blocked: Vec<String> = tools.iter().map(|t| format!(r#""{t}":"hold""#)).collect();
        leaf(&format!(
            r#"{{"server":"{server}","status":"{status}","blocked_tools":{{{}}}}}"#,
            blocked.join(",")
        ))
    }

    #[test]
    fn calls_before_the_drift_and_after_the_decision_are_no_violation() {
        let c = claim(&[
            (0, "server.approved", leaf(r#"{"server":"s"}"#)),
            (1, "tool.call.intent", leaf(r#"{"server":"s","tool":"t"}"#)),
            (2, "server.drift_held", held("s", &["t"], "TRUSTED")),
            // Its intent came before the drift: it was decided before.
            (3, "tool.call", call("s", "t", "allowed", 1)),
            (4, "tool.call", call("s", "t", "not_served", 3)),
            (5, "server.approved", leaf(r#"{"server":"s"}"#)),
            (6, "tool.call.intent", leaf(r#"{"server":"s","tool":"t"}"#)),
            (7, "tool.call", call("s", "t", "allowed", 6)),
        ]);
        assert!(c.holds(), "{c:?}");
        assert_eq!(c.executions_checked, 2);
        assert_eq!(c.windows.len(), 1);
        assert_eq!(c.windows[0].closed_by.as_deref(), Some("server.approved"));
    }

    #[test]
    fn regression_a_call_forwarded_inside_a_held_window_is_a_violation() {
        let c = claim(&[
            (0, "server.drift_held", held("s", &["t"], "TRUSTED")),
            (1, "tool.call.intent", leaf(r#"{"server":"s","tool":"t"}"#)),
            (2, "tool.call", call("s", "t", "allowed", 1)),
            // Another tool of the same server is not in the window.
            (3, "tool.call", call("s", "u", "allowed", 1)),
        ]);
        assert!(!c.holds());
        assert_eq!(c.violations.len(), 1);
        assert_eq!(c.violations[0].leaf_index, 2);
        assert_eq!(c.violations[0].window.closed_at, None);
    }

    #[test]
    fn regression_a_quarantined_server_covers_every_tool_and_plan_stage() {
        let c = claim(&[
            (0, "server.quarantined", held("s", &[], "QUARANTINED")),
            (1, "tool.call", call("s", "any", "standing_approval", 1)),
            (
                2,
                "stage.started",
                leaf(r#"{"plan_id":"p","action":"mcp.call_tool","target":"s"}"#),
            ),
            (3, "server.rejected", leaf(r#"{"server":"s"}"#)),
            (
                4,
                "stage.started",
                leaf(r#"{"plan_id":"q","action":"mcp.call_tool","target":"s"}"#),
            ),
        ]);
        // The stage after the rejection runs on a rejected server: reported too.
        assert_eq!(c.violations.len(), 3, "{c:?}");
        assert_eq!(c.violations[1].verdict, "stage");
        assert_eq!(c.violations[2].window.opened_at, 3);
    }

    #[test]
    fn regression_a_reviewer_block_outlives_the_servers_approval() {
        let blocked =
            leaf(r#"{"server":"s","tool":"t","status":"PENDING","blocked_tools":{"t":"block"}}"#);
        let approved = leaf(r#"{"server":"s","blocked_tools":{"t":"block"}}"#);
        let unblocked = leaf(r#"{"server":"s","tool":"t","status":"TRUSTED","blocked_tools":{}}"#);
        let c = claim(&[
            (0, "tool.blocked", blocked),
            (1, "server.approved", approved),
            (2, "tool.call", call("s", "t", "allowed", 2)),
            (3, "tool.approved", unblocked),
            (4, "tool.call", call("s", "t", "allowed", 4)),
        ]);
        assert_eq!(c.violations.len(), 1, "{c:?}");
        assert_eq!(c.violations[0].leaf_index, 2);
        assert_eq!(
            c.violations[0].window.closed_by.as_deref(),
            Some("tool.approved")
        );
    }

    #[test]
    fn a_reverted_drift_closes_its_window() {
        let c = claim(&[
            (0, "server.drift_held", held("s", &["t"], "TRUSTED")),
            (1, "server.drift", held("s", &[], "TRUSTED")),
            (2, "tool.call", call("s", "t", "allowed", 2)),
        ]);
        assert!(c.holds(), "{c:?}");
        assert_eq!(c.windows[0].closed_by.as_deref(), Some("server.drift"));
    }

    #[test]
    fn a_held_plan_is_placed_at_its_stage() {
        let approved = leaf(
            r#"{"server":"s","tool":"t","verdict":{"verdict":"approved_plan","plan_id":"p"}}"#,
        );
        let c = claim(&[
            (
                0,
                "stage.started",
                leaf(r#"{"plan_id":"p","action":"mcp.call_tool","target":"s"}"#),
            ),
            (1, "server.drift_held", held("s", &["t"], "TRUSTED")),
            (2, "tool.call", approved),
        ]);
        assert!(c.holds(), "{c:?}");
    }
}
