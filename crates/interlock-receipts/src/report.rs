//! The human-readable files of an export (issue 18: written by
//! `interlock receipts export` and returned by the reviewer API's export from
//! one code path): `report.html`, printable, and `summary.csv`, one line per
//! receipt — both from the [`VerifyReport`] of the bundle they accompany, so
//! they say what verifying it says.

use std::fmt::Write as _;

use crate::verify::VerifyReport;

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `report.html`: the bundle's verdict, its log and key, one row per receipt,
/// and the command that verifies it offline. Everything from the bundle is
/// escaped: a receipt's text is data, never markup.
pub fn html_report(report: &VerifyReport, log_key: &str) -> String {
    let mut rows = String::new();
    for r in &report.receipts {
        let (class, status) = match &r.result {
            Ok(()) => ("ok", "verified".to_owned()),
            Err(e) => ("bad", e.to_string()),
        };
        let _ = writeln!(
            rows,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.index,
            html_escape(&r.kind),
            html_escape(&r.subjects),
            html_escape(&status)
        );
    }
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
<ul>{problems}</ul>\n<table><thead><tr><th>Index</th><th>Decision</th><th>Subjects</th><th>Verification</th></tr></thead>\n\
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

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// `summary.csv`: one line per receipt (index, kind, subjects, verified,
/// error), RFC 4180 quoting.
pub fn csv_summary(report: &VerifyReport) -> String {
    let mut out = String::from("index,kind,subjects,verified,error\n");
    for r in &report.receipts {
        let err = r
            .result
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{}",
            r.index,
            csv_field(&r.kind),
            csv_field(&r.subjects),
            r.result.is_ok(),
            csv_field(&err)
        );
    }
    out
}
