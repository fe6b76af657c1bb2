//! Content reads (`prompts/get`, `resources/read`) share the call's
//! inspect-and-record step: the upstream's answer scanned, its leaf written
//! before the content is handed back; and an upstream's failure inspected
//! like a call's.

use serde_json::json;
use serde_json::value::RawValue;

use super::leaf::{Disposition, ReadOutcome, ReadRecord};
use super::scan::{Scan, Scanned, response_policy, scan_content, scan_error};
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::upstream::UpstreamError;

/// An upstream's JSON-RPC error, scanned like a result: the answer to send
/// (its bytes, redacted, or a gateway error saying it was withheld), the
/// text to keep in the leaf (never the unredacted error), and the scan.
pub(crate) fn inspect_error(
    id: &RawValue,
    err: &str,
    rules: &super::scan::ScanPolicy,
    shadow: bool,
) -> (Vec<u8>, String, (Disposition, Scan)) {
    let scan = scan_error(err, rules);
    let disposition = Disposition::of(&scan, shadow);
    let (answer, kept) = match (&disposition, &scan.scanned) {
        (Disposition::Blocked(_), _) => {
            let text = scan.withheld_message("error").expect("withheld");
            (jsonrpc::error(Some(id), code::FORBIDDEN, &text), text)
        }
        (Disposition::Redacted, Scanned::Redacted(v)) => {
            let raw = serde_json::value::to_raw_value(v).expect("JSON");
            (jsonrpc::error_raw(id, &raw), raw.get().to_owned())
        }
        (Disposition::Forwarded, _) => {
            let raw = RawValue::from_string(err.to_owned()).expect("the upstream's JSON");
            (jsonrpc::error_raw(id, &raw), err.to_owned())
        }
        // Flagged (a shadow key, an `allow` policy): forwarded as sent, but
        // the leaf keeps only what was found, not the text.
        _ => {
            let raw = RawValue::from_string(err.to_owned()).expect("the upstream's JSON");
            let kept = format!(
                "an error with findings: {}",
                super::scan::categories(&scan.findings)
            );
            (jsonrpc::error_raw(id, &raw), kept)
        }
    };
    (answer, kept, (disposition, scan))
}

/// What a content read sends back once the upstream answered: the result as
/// inspected and logged (the leaf appended before the content is handed
/// back), or an error saying why not.
pub(crate) async fn deliver_read(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    outcome: Result<Box<RawValue>, UpstreamError>,
) -> Vec<u8> {
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            let (outcome, findings) = match &e {
                UpstreamError::Rpc(err) => {
                    let scan = scan_error(err.get(), &response_policy(gw.config()));
                    (ReadOutcome::UpstreamError, scan.findings)
                }
                _ => (ReadOutcome::Unavailable, Vec::new()),
            };
            // The read failed upstream; its leaf is evidence only, and the
            // agent gets the upstream's failure (inspected) either way.
            if let Err(log) = record.append(gw.engine(), outcome, &findings).await {
                tracing::warn!(error = %log, server = record.server, "a failed read was not logged");
            }
            return upstream_failure(gw, id, record.server, e);
        }
    };
    let scan = scan_content(result.get(), &response_policy(gw.config()));
    let disposition = Disposition::of(&scan, record.agent.shadow);
    if let Err(e) = record
        .append(
            gw.engine(),
            ReadOutcome::Scanned(disposition.clone()),
            &scan.findings,
        )
        .await
    {
        return jsonrpc::unlogged(id, "read", &e);
    }
    let member = record.kind.member();
    match (&disposition, &scan.scanned) {
        (Disposition::Blocked(_), _) => jsonrpc::error_with_data(
            Some(id),
            code::FORBIDDEN,
            &scan.withheld_message(record.kind.noun()).expect("withheld"),
            Some(&json!({"server": record.server, member: record.what})),
        ),
        (Disposition::Redacted, Scanned::Redacted(v)) => jsonrpc::result_value(id, v),
        _ => jsonrpc::result(id, &result),
    }
}

/// A read refused before it reached the upstream (a held or unlisted pinned
/// entry): its leaf first, as for every read, then the refusal saying why.
pub(crate) async fn refuse_read(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    why: String,
) -> Vec<u8> {
    if let Err(e) = record
        .append(gw.engine(), ReadOutcome::NotServed(why.clone()), &[])
        .await
    {
        return jsonrpc::unlogged(id, "read", &e);
    }
    jsonrpc::error(Some(id), code::FORBIDDEN, &why)
}

/// The answer to a request an upstream failed: its own JSON-RPC error as
/// inspected (redacted, or withheld by the response policy), or -32001
/// saying why it could not be reached.
pub(crate) fn upstream_failure(
    gw: &Gateway,
    id: &RawValue,
    server: &str,
    e: UpstreamError,
) -> Vec<u8> {
    match e {
        UpstreamError::Rpc(err) => {
            inspect_error(id, err.get(), &response_policy(gw.config()), false).0
        }
        e => jsonrpc::error(
            Some(id),
            code::UPSTREAM_UNAVAILABLE,
            &format!("upstream `{server}`: {e}"),
        ),
    }
}
