//! The human-readable files of an export (issue 18: written by
//! `interlock receipts export` and returned by the reviewer API's export from
//! one code path): `report.html`, printable, and `summary.csv`, one line per
//! receipt — both from the [`VerifyReport`] of the bundle they accompany, so
//! they say what verifying it says, and both with the same columns: when
//! (UTC), who, what, subject, verdict and why ([`crate::reading`], issue 46),
//! then the event type and the verification.

use std::fmt::Write as _;

use crate::bundle::Bundle;
use crate::leaf::open_leaf_unverified;
use crate::reading::{Reading, approver_names, read};
use crate::verify::VerifyReport;

/// Each receipt of `bundle` read, by position (`None` for a leaf that does
/// not open: its verification line says why). Approvers are named by the
/// registrations of receipts that verified.
pub fn readings(bundle: &Bundle, report: &VerifyReport) -> Vec<Option<Reading>> {
    let opened: Vec<_> = bundle
        .receipts
        .iter()
        .map(|r| open_leaf_unverified(&r.leaf).ok())
        .collect();
    let verified = |position: usize| {
        report
            .receipts
            .iter()
            .any(|l| l.position == position && l.result.is_ok())
    };
    let names = approver_names(
        opened
            .iter()
            .enumerate()
            .filter(|(i, _)| verified(*i))
            .filter_map(|(_, o)| o.as_ref()),
    );
    opened
        .iter()
        .map(|o| o.as_ref().map(|o| read(o, &names)))
        .collect()
}

/// The columns both files carry, in order.
const COLUMNS: [&str; 9] = [
    "Index",
    "Time (UTC)",
    "Who",
    "What",
    "Subject",
    "Verdict",
    "Why",
    "Event",
    "Verification",
];

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `report.html`: the bundle's verdict, its log and key, one row per receipt,
/// and the command that verifies it offline. Everything from the bundle is
/// escaped: a receipt's text is data, never markup.
pub fn html_report(report: &VerifyReport, readings: &[Option<Reading>], log_key: &str) -> String {
    let mut rows = String::new();
    for r in &report.receipts {
        let (class, status) = match &r.result {
            Ok(()) => ("ok", "verified".to_owned()),
            Err(e) => ("bad", e.to_string()),
        };
        let read = readings
            .get(r.position)
            .cloned()
            .flatten()
            .unwrap_or_default();
        let cells = [
            r.index.to_string(),
            read.when,
            read.who,
            read.what,
            if read.subject.is_empty() {
                r.subjects.clone()
            } else {
                read.subject
            },
            read.verdict,
            read.why,
            r.kind.clone(),
            status,
        ];
        let cells: String = cells
            .iter()
            .map(|c| format!("<td>{}</td>", html_escape(c)))
            .collect();
        let _ = writeln!(rows, "<tr class=\"{class}\">{cells}</tr>");
    }
    let head: String = COLUMNS.iter().map(|c| format!("<th>{c}</th>")).collect();
    let problems: String = report
        .problems
        .iter()
        .map(|p| format!("<li>{}</li>", html_escape(&p.to_string())))
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Interlock receipts — {origin}</title>\n\
<style>body{{font:14px system-ui,sans-serif;margin:2em;color:#111}}table{{border-collapse:collapse;width:100%}}\
td,th{{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}}tr.bad td{{background:#fde8e8}}\
code{{word-break:break-all}}@media print{{body{{margin:0}}}}</style></head><body>\n\
<h1>Interlock receipts</h1>\n<p>Log <code>{origin}</code>, latest signed checkpoint at size {size}.<br>\
Log key <code>{key}</code>.<br>Result: <strong>{result}</strong> — {n} receipts, {failed} failed.</p>\n\
<ul>{problems}</ul>\n<table><thead><tr>{head}</tr></thead>\n\
<tbody>\n{rows}</tbody></table>\n<p>Verify offline: <code>interlock receipts verify bundle.json --log-key '{key}'</code></p>\n</body></html>\n",
        origin = html_escape(&report.origin),
        size = report
            .tree_size
            .map_or("unverified".to_owned(), |s| s.to_string()),
        key = html_escape(log_key),
        result = if report.is_ok() {
            "every receipt verified"
        } else {
            "FAILED"
        },
        n = report.receipts.len(),
        failed = report.failed().count(),
    )
}

/// One RFC 4180 field. A field a spreadsheet would run as a formula (`=`,
/// `+`, `-`, `@`, a tab or a carriage return first: an agent's tool name or
/// a reason is someone else's text) is prefixed with `'`, so opening the file
/// shows the text rather than running it.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// `summary.csv`: one line per receipt, the columns of `report.html` (the
/// verification split into `verified` and `error`), RFC 4180 quoting.
pub fn csv_summary(report: &VerifyReport, readings: &[Option<Reading>]) -> String {
    let mut out =
        String::from("index,time_utc,who,what,subject,verdict,why,event,verified,error\n");
    for r in &report.receipts {
        let err = r
            .result
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        let read = readings
            .get(r.position)
            .cloned()
            .flatten()
            .unwrap_or_default();
        let subject = if read.subject.is_empty() {
            r.subjects.clone()
        } else {
            read.subject
        };
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            r.index,
            csv_field(&read.when),
            csv_field(&read.who),
            csv_field(&read.what),
            csv_field(&subject),
            csv_field(&read.verdict),
            csv_field(&read.why),
            csv_field(&r.kind),
            r.result.is_ok(),
            csv_field(&err)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_issue_46_a_field_a_spreadsheet_would_run_is_text() {
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("-1+1"), "'-1+1");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn both_files_carry_the_same_columns() {
        let report = VerifyReport::default();
        let csv = csv_summary(&report, &[]);
        let html = html_report(&report, &[], "k");
        assert_eq!(
            csv.lines().next().unwrap().split(',').count(),
            COLUMNS.len() + 1,
            "the CSV splits verification into verified and error"
        );
        for c in COLUMNS {
            assert!(html.contains(&format!("<th>{c}</th>")), "{c}");
        }
    }
}
