//! The review as a person reads it: plain text for a terminal, Markdown for
//! a pull-request comment, and JSON (the [`Review`] itself) for scripts.

use std::fmt::Write as _;

use super::{Gate, Review, Status};

fn verdict(s: &super::ServerReview) -> String {
    match (s.status, s.gate) {
        (Status::Clean, _) => "clean".into(),
        (Status::Drift, Some(g)) => format!("drift ({})", g.name()),
        (Status::Drift, None) => "drift".into(),
        (Status::NotApproved, _) => "not approved (hold)".into(),
        (Status::Removed, _) => "removed (monitor)".into(),
        (Status::NotObserved, _) => "not observed".into(),
    }
}

/// What the exit code means, in words.
pub fn outcome(review: &Review, fail_on: Gate) -> String {
    let code = review.exit_code(fail_on);
    let what = match code {
        super::EXIT_CLEAN => match review.worst() {
            None => "no drift".to_owned(),
            Some(g) => format!(
                "drift at most {} (below --fail-on {})",
                g.name(),
                fail_on.name()
            ),
        },
        super::EXIT_NOT_OBSERVED => "a server could not be observed".to_owned(),
        _ => format!(
            "drift the gateway would {}",
            review.worst().map_or("?", Gate::name)
        ),
    };
    format!("exit {code}: {what}")
}

/// Plain text, one block per server.
pub fn text(review: &Review, fail_on: Gate) -> String {
    let mut out = String::new();
    for s in &review.servers {
        let _ = writeln!(out, "{:<20} {}", s.server, verdict(s));
        if let (Some(b), Some(o)) = (&s.baseline_hash, &s.observed_hash)
            && b != o
        {
            let _ = writeln!(out, "  approved {b}\n  observed {o}");
        }
        if let Some(e) = &s.error {
            let _ = writeln!(out, "  {e}");
        }
        for d in &s.drift {
            let _ = writeln!(out, "  [{}→{}] {}", d.severity, d.action, d.summary);
        }
    }
    let _ = writeln!(
        out,
        "{} server(s) against the {} ({}) in {:.0} ms; {}",
        review.servers.len(),
        review.baseline.replace('_', " "),
        review.baseline_location,
        review.total_ms,
        outcome(review, fail_on)
    );
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown summary for a pull-request comment: a table of servers, then
/// every drift with its severity and what the gateway would do.
pub fn markdown(review: &Review, fail_on: Gate) -> String {
    let mut out = String::new();
    let code = review.exit_code(fail_on);
    let icon = match code {
        super::EXIT_CLEAN => "✅",
        super::EXIT_MONITOR => "ℹ️",
        _ => "❌",
    };
    let _ = writeln!(out, "## {icon} Interlock boundary review\n");
    let _ = writeln!(
        out,
        "Against the {} `{}`: **{}**.\n",
        review.baseline.replace('_', " "),
        cell(&review.baseline_location),
        outcome(review, fail_on)
    );
    let _ = writeln!(out, "| Server | Result | Drifts | Approved | Observed |");
    let _ = writeln!(out, "| --- | --- | ---: | --- | --- |");
    let short = |h: &Option<String>| {
        h.as_deref()
            .map_or("—".to_owned(), |h| format!("`{}`", &h[..h.len().min(19)]))
    };
    for s in &review.servers {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            cell(&s.server),
            verdict(s),
            s.drift.len(),
            short(&s.baseline_hash),
            short(&s.observed_hash)
        );
    }
    for s in &review.servers {
        if s.drift.is_empty() && s.error.is_none() {
            continue;
        }
        let _ = writeln!(out, "\n### `{}`\n", cell(&s.server));
        if let Some(e) = &s.error {
            let _ = writeln!(out, "- could not be observed: {}", cell(e));
        }
        for d in &s.drift {
            let _ = writeln!(
                out,
                "- **{}** → {}: {}",
                d.severity,
                d.action,
                cell(&d.summary)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n<sub>{} server(s) in {:.0} ms (classifier {:.1} ms).</sub>",
        review.servers.len(),
        review.total_ms,
        review.classify_ms()
    );
    out
}
