//! A receipt as an auditor reads it (issue 46 item 3): who decided or did
//! what, on which subject, when (UTC, said so), why, and the verdict in
//! words — with approvers named by the identities their `approver.registered`
//! receipts give, not by key ids. `report.html` and `summary.csv` carry these
//! same columns ([`crate::report`]).

use std::collections::BTreeMap;

use interlock_canon::{Map, Value};

use crate::leaf::OpenedLeaf;
use crate::summary::{ReceiptSummary, summarize};

/// One receipt, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// `2026-12-06 18:54:05 UTC`.
    pub when: String,
    /// Whose decision: `human:jane`, `the gateway's policy`, `sign-in link`.
    pub who: String,
    /// What happened: `agent ci called files/write_file`, `decided on plan deploy r2`.
    pub what: String,
    /// `plan deploy r2`, `tool files/write_file`, `server files`.
    pub subject: String,
    /// `Approved`, `Rejected`, `Held`, `Allowed · ran`.
    pub verdict: String,
    /// The reason given or found, if any.
    pub why: String,
}

/// Approver key ids (`ed25519:…`) and the identities their
/// `approver.registered` receipts give.
pub type ApproverNames = BTreeMap<String, String>;

/// The names of the approvers registered among `leaves`.
pub fn approver_names<'a>(leaves: impl IntoIterator<Item = &'a OpenedLeaf>) -> ApproverNames {
    leaves
        .into_iter()
        .filter(|o| o.kind == "approver.registered")
        .filter_map(|o| {
            Some((
                text(&o.predicate, "key_id")?,
                text(&o.predicate, "identity")?,
            ))
        })
        .collect()
}

fn text(m: &Map, k: &str) -> Option<String> {
    m.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `2026-12-06T18:54:05Z` as `2026-12-06 18:54:05 UTC`.
pub fn utc(unix_secs: i64) -> String {
    let t = interlock_core::time::rfc3339(unix_secs);
    match t.strip_suffix('Z') {
        Some(t) => format!("{} UTC", t.replacen('T', " ", 1)),
        None => t,
    }
}

/// A word of the log (`reject`, `shadow_would_block`, `REJECTED`) in words.
pub fn words(word: &str) -> String {
    let w = word.trim().to_ascii_lowercase();
    let said = match w.as_str() {
        "approve" | "approved" => "Approved",
        "reject" | "rejected" => "Rejected",
        "allowed" | "allow" => "Allowed",
        "held" | "hold" => "Held",
        "blocked" | "block" => "Blocked",
        "shadow_would_block" => "Would have been blocked (shadow mode)",
        "shadow_would_hold" => "Would have been held (shadow mode)",
        "ok" => "Ran",
        "error" => "Failed",
        _ => "",
    };
    if !said.is_empty() {
        return said.to_owned();
    }
    let plain = w.replace(['_', '.'], " ");
    let mut chars = plain.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Reads one opened receipt.
pub fn read(opened: &OpenedLeaf, names: &ApproverNames) -> Reading {
    let s = summarize(opened);
    let p = &opened.predicate;
    let subject = subject(&s, p);
    Reading {
        when: utc(s.time),
        who: who(&s, p, names),
        what: what(&s, p, &subject),
        subject,
        verdict: verdict(&s),
        why: s
            .reasons
            .clone()
            .or_else(|| text(p, "detail").filter(|_| s.outcome.as_deref() != Some("ok")))
            .unwrap_or_default(),
    }
}

/// Who, when the receipt does not name anyone.
pub const UNRECORDED: &str = "unknown (the receipt does not say)";

/// Whose decision the receipt records (the review UI's rule, `receipt.ts`'s
/// `decider`): the approver, by name; the issuer a receipt names (`by`); the
/// gateway's policy for a call it judged; the proposer of a plan.
fn who(s: &ReceiptSummary, p: &Map, names: &ApproverNames) -> String {
    let named = |id: &str| names.get(id).cloned().unwrap_or_else(|| id.to_owned());
    if s.kind == "approver.registered" {
        // It names the key registered (its `identity`), not who registered it.
        return UNRECORDED.to_owned();
    }
    if let Some(approver) = &s.approver {
        return named(approver);
    }
    match p.get("by") {
        Some(Value::String(by)) if !by.is_empty() => return named(by),
        Some(Value::Object(o)) => {
            if let Some(n) = text(o, "name").or_else(|| text(o, "identity")) {
                return match text(o, "scope") {
                    Some(scope) => format!("admin token {n} ({scope})"),
                    None => format!("admin token {n}"),
                };
            }
        }
        _ => {}
    }
    let kind = s.kind.as_str();
    if CALLS.contains(&kind) {
        return "the gateway's policy".to_owned();
    }
    if kind == "plan.proposed" {
        return text(p, "proposer").unwrap_or_else(|| "the agent".into());
    }
    if kind.starts_with("server.") && !kind.contains("approved") && !kind.contains("rejected") {
        return "the gateway's drift check".to_owned();
    }
    if kind == "plan.transition" {
        return "the gateway (following the decisions and the run)".to_owned();
    }
    UNRECORDED.to_owned()
}

/// The receipts of an agent's call, judged by the gateway's policy.
const CALLS: [&str; 7] = [
    "tool.call",
    "hook.call",
    "llm.call",
    "tool.call.intent",
    "prompt.get",
    "resource.read",
    "completion.complete",
];

/// What happened, in a line that does not repeat the event type.
fn what(s: &ReceiptSummary, p: &Map, subject: &str) -> String {
    let agent = s
        .agent
        .as_ref()
        .map_or_else(|| "an agent".to_owned(), |a| format!("agent {a}"));
    let server = s.server.as_deref().unwrap_or("?");
    let field = |k: &str| text(p, k).unwrap_or_default();
    match s.kind.as_str() {
        "tool.call" | "tool.call.intent" => {
            format!(
                "{agent} called {server}/{}",
                s.tool.as_deref().unwrap_or("?")
            )
        }
        "hook.call" => format!(
            "{agent} used {} in {} ({})",
            s.tool.as_deref().unwrap_or("?"),
            field("client"),
            field("cwd")
        ),
        "llm.call" => format!(
            "{agent} asked model {} ({})",
            field("model"),
            field("provider")
        ),
        "llm.response" => format!(
            "the answer to {agent}'s model request (leaf {}) was scanned",
            match p.get("call_index") {
                Some(Value::Number(n)) => n.as_i64().map_or("?".to_owned(), |i| i.to_string()),
                _ => "?".to_owned(),
            }
        ),
        "prompt.get" => format!("{agent} got prompt {} of {server}", field("prompt")),
        "resource.read" => format!("{agent} read {} of {server}", field("uri")),
        "completion.complete" => format!("{agent} asked {server} for completions"),
        "plan.proposed" => {
            let mut line = format!("proposed {subject}");
            if let Some(title) = text(p, "title") {
                line.push_str(&format!(" “{title}”"));
            }
            if let Some(risk) = text(p, "risk") {
                line.push_str(&format!(" · {risk} risk"));
            }
            line
        }
        "plan.decision" => format!("decided on {subject}"),
        "plan.transition" => format!(
            "{subject}: {} → {}",
            text(p, "from").unwrap_or_else(|| "?".into()),
            text(p, "to").unwrap_or_else(|| "?".into())
        ),
        "apikey.issued" => match text(p, "role") {
            Some(role) => format!("issued {subject} (role {role})"),
            None => format!("issued {subject}"),
        },
        "approver.registered" => {
            let who = text(p, "identity").unwrap_or_else(|| "?".into());
            match text(p, "label") {
                Some(label) => format!("registered the approver key of {who} ({label})"),
                None => format!("registered the approver key of {who}"),
            }
        }
        kind => {
            let act = kind.split_once('.').map_or(kind, |(_, a)| a);
            let verb = [
                "approved",
                "rejected",
                "blocked",
                "granted",
                "revoked",
                "added",
                "removed",
                "requested",
            ];
            if !subject.is_empty() && verb.contains(&act) {
                format!("{act} {subject}")
            } else if subject.is_empty() {
                kind.replace(['.', '_'], " ")
            } else {
                format!("{subject}: {}", words(act).to_lowercase())
            }
        }
    }
}

fn subject(s: &ReceiptSummary, p: &Map) -> String {
    let revision = p
        .get("revision")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64());
    match (&s.plan_id, &s.server, &s.tool) {
        (Some(plan), _, _) if s.kind.starts_with("plan.") => match revision {
            Some(r) => format!("plan {plan} r{r}"),
            None => format!("plan {plan}"),
        },
        (_, Some(server), Some(tool)) => format!("tool {server}/{tool}"),
        (_, Some(server), None) => format!("server {server}"),
        (Some(plan), _, _) => format!("plan {plan}"),
        _ => match s.kind.as_str() {
            "apikey.issued" => format!(
                "{} key {}",
                text(p, "kind").unwrap_or_else(|| "API".into()),
                text(p, "name").unwrap_or_default()
            )
            .trim()
            .to_owned(),
            "approver.registered" => format!(
                "approver key of {}",
                text(p, "identity").unwrap_or_else(|| "?".into())
            ),
            _ => ["name", "client", "id"]
                .iter()
                .find_map(|k| text(p, k))
                .unwrap_or_default(),
        },
    }
}

fn verdict(s: &ReceiptSummary) -> String {
    let call = matches!(
        s.kind.as_str(),
        "tool.call" | "prompt.get" | "resource.read" | "completion.complete"
    );
    match (&s.verdict, &s.outcome) {
        (Some(v), Some(o)) if call && o != v && !(v == "allowed" && o == "ok") => {
            format!("{} · {}", words(v), words(o).to_lowercase())
        }
        (Some(v), _) => words(v),
        (None, Some(o)) => words(o),
        // The event's last part: `server.rejected` → Rejected.
        (None, None) => words(s.kind.rsplit('.').next().unwrap_or(&s.kind)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::opened_for_test as opened;

    #[test]
    fn a_plan_decision_names_its_approver_says_its_verdict_and_its_time_zone() {
        let registered = opened(
            r#"{"type":"approver.registered","key_id":"ed25519:b78f","identity":"human:jane"}"#,
            1,
        );
        let names = approver_names([&registered]);
        let decision = opened(
            r#"{"type":"plan.decision","plan_id":"deploy","revision":2,"decision":"reject",
               "approver":"ed25519:b78f","reason":"touches production on a Friday"}"#,
            1_796_583_245,
        );
        let r = read(&decision, &names);
        assert_eq!(r.who, "human:jane", "a name, not a key id");
        assert_eq!(r.verdict, "Rejected");
        assert_eq!(r.subject, "plan deploy r2");
        assert_eq!(r.what, "decided on plan deploy r2");
        assert_eq!(r.why, "touches production on a Friday");
        assert_eq!(r.when, "2026-12-06 18:54:05 UTC");
        assert_eq!(
            read(&registered, &names).subject,
            "approver key of human:jane"
        );
    }

    #[test]
    fn a_tool_call_says_who_called_what_and_what_came_of_it() {
        let call = opened(
            r#"{"type":"tool.call","agent":"ci","server":"files","tool":"write_file","outcome":"error",
               "verdict":{"verdict":"allowed"},"detail":"disk full"}"#,
            0,
        );
        let r = read(&call, &ApproverNames::new());
        assert_eq!(r.who, "the gateway's policy");
        assert_eq!(r.what, "agent ci called files/write_file");
        assert_eq!(r.subject, "tool files/write_file");
        assert_eq!(r.verdict, "Allowed · failed");
        assert_eq!(r.why, "disk full");
        let shadow = opened(
            r#"{"type":"tool.call","agent":"ci","server":"files","tool":"rm","outcome":"ok",
               "verdict":{"verdict":"shadow_would_block","block_reasons":"destructive"}}"#,
            0,
        );
        let r = read(&shadow, &ApproverNames::new());
        assert_eq!(r.verdict, "Would have been blocked (shadow mode) · ran");
        assert_eq!(r.why, "destructive");
    }

    #[test]
    fn a_model_request_says_who_asked_which_model_and_why_it_was_stopped() {
        let blocked = opened(
            r#"{"type":"llm.call","agent":"ci","model":"gpt-4o","provider":"openai","stream":true,
               "verdict":{"verdict":"blocked","layer":"rules","reason":"a secret in the user text"}}"#,
            0,
        );
        let r = read(&blocked, &ApproverNames::new());
        assert_eq!(r.who, "the gateway's policy");
        assert_eq!(r.what, "agent ci asked model gpt-4o (openai)");
        assert_eq!(r.verdict, "Blocked");
        assert_eq!(r.why, "a secret in the user text");
    }

    #[test]
    fn an_event_without_a_verdict_reads_its_own_name() {
        let issued = opened(
            r#"{"type":"apikey.issued","kind":"agent","name":"ci","role":"builder"}"#,
            0,
        );
        let r = read(&issued, &ApproverNames::new());
        assert_eq!(r.subject, "agent key ci");
        assert_eq!(r.verdict, "Issued");
        assert_eq!(r.what, "issued agent key ci (role builder)");
        assert_eq!(r.who, UNRECORDED, "an old receipt, without `by`");
        let issued = opened(
            r#"{"type":"apikey.issued","kind":"reviewer","name":"jane","by":"sign-in link"}"#,
            0,
        );
        assert_eq!(read(&issued, &ApproverNames::new()).who, "sign-in link");
    }
}
