//! Content reads (`prompts/get`, `resources/read`, `completion/complete`)
//! take the tool call's stages that have a meaning for them (issue 39 items
//! 11 and 12): the key's limits ([`super::limit::admit`]: rate, quota, its
//! in-flight cap), argument inspection of what the request carries (the
//! prompt's arguments, the URI, a completion's argument and context:
//! [`super::inspect::inspect_read`]), and the answer scanned under the key's
//! own response settings, its leaf written before the content is handed
//! back; an upstream's failure is inspected like a call's.
//!
//! The tool's behavioural envelope does not apply: it is learned per tool
//! from the hosts and roots a call's arguments name and the shape its
//! results take, and a reviewer widens it per tool. A prompt or resource has
//! no such identity to learn under (a template's URIs are unbounded), its
//! listing is pinned by the surface a reviewer approved, and what an
//! envelope withholds from a result (secrets, PII, injected text) the
//! content scan already withholds under the key's policy.

use std::sync::OnceLock;

use interlock_canon::Value;
use serde_json::json;
use serde_json::value::RawValue;

use super::inspect::inspect_read;
use super::leaf::{Disposition, ReadInspection, ReadKind, ReadOutcome, ReadRecord};
use super::limit::{Refusal, limited_answer, unreadable};
use super::scan::{Scan, ScanPolicy, Scanned, response_policy, scan_content, scan_result};
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::sessions::limits::{InFlight, Limited};
use crate::upstream::UpstreamError;

/// A read admitted to its upstream: what its answer is scanned with and
/// what its leaf says of its request.
pub(crate) struct Admitted {
    /// The config's response policy with the key's own settings over it.
    pub rules: ScanPolicy,
    pub inspection: ReadInspection,
    /// The key's slot among its requests upstream, held until it is answered.
    _slot: InFlight,
}

/// A read's limit and inspect stages, before it reaches the upstream:
/// refused (its leaf written first) when the key is over its rate, quota or
/// in-flight cap, or when `request` carries what would stop or hold a tool
/// call (a read cannot be held: no plan runs it); else admitted. A shadow
/// key's read goes on, and its leaf says what would have refused it.
/// `limited` is set to the retry time of a limit's refusal (HTTP 429).
pub(crate) async fn admit(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    request: &Value,
    limited: Option<&OnceLock<u64>>,
) -> Result<Admitted, Vec<u8>> {
    let agent = record.agent;
    let settings = match super::limit::admit(gw, agent, false).await {
        Ok(s) => s,
        Err(Refusal::Unreadable(e)) => {
            return Err(jsonrpc::error(
                Some(id),
                code::INTERNAL_ERROR,
                &unreadable(&e),
            ));
        }
        Err(Refusal::Limited(l)) => return Err(refuse_limited(gw, id, record, l, limited).await),
    };
    let assessment = inspect_read(gw, agent, record.server, request);
    let mut inspection = ReadInspection {
        findings: assessment.findings,
        shadow_would_block: None,
    };
    let reasons: Vec<String> = assessment
        .block_reasons
        .into_iter()
        .chain(assessment.hold_reasons)
        .collect();
    if !reasons.is_empty() {
        let reasons = reasons.join("; ");
        if !agent.shadow {
            return Err(refuse_inspected(gw, id, record, &inspection, reasons).await);
        }
        inspection.shadow_would_block = Some(reasons);
    }
    let max = gw.config().limits.calls_in_flight_per_key;
    let slot = match gw.0.key_limits.enter(&agent.key_hash, max) {
        Ok(slot) => slot,
        Err(l) => return Err(refuse_limited(gw, id, record, l, limited).await),
    };
    Ok(Admitted {
        rules: response_policy(gw.config()).for_key(&settings),
        inspection,
        _slot: slot,
    })
}

/// A read over its key's limit: its leaf, then the refusal with the retry time.
async fn refuse_limited(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    l: Limited,
    limited: Option<&OnceLock<u64>>,
) -> Vec<u8> {
    let answer = limited_answer(id, &l);
    let secs = l.retry_after_secs;
    let outcome = ReadOutcome::Limited(l);
    if let Err(e) = record
        .append(gw.engine(), outcome, &ReadInspection::default(), &[])
        .await
    {
        return refused_unlogged(id, &e);
    }
    if let Some(cell) = limited {
        let _ = cell.set(secs);
    }
    answer
}

/// A read whose request inspection refuses: its leaf, then the refusal
/// saying why (the findings' categories, never the text).
async fn refuse_inspected(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    inspection: &ReadInspection,
    reasons: String,
) -> Vec<u8> {
    let message = format!(
        "the gateway refused this {} request: {reasons}; a read is not held for a reviewer, \
         so what would hold a tool call refuses it",
        record.kind.noun()
    );
    let data = json!({
        "blocked": true, "server": record.server, record.kind.member(): record.what,
        "categories": super::scan::categories(&inspection.findings),
    });
    let outcome = ReadOutcome::Blocked(reasons);
    if let Err(e) = record.append(gw.engine(), outcome, inspection, &[]).await {
        return refused_unlogged(id, &e);
    }
    jsonrpc::error_with_data(Some(id), code::FORBIDDEN, &message, Some(&data))
}

/// A read refused before it ran whose leaf could not be written.
fn refused_unlogged(id: &RawValue, e: &dyn std::fmt::Display) -> Vec<u8> {
    jsonrpc::error(
        Some(id),
        code::INTERNAL_ERROR,
        &format!("the gateway refused the read: the log append failed: {e}"),
    )
}

/// An upstream's JSON-RPC error, scanned like a result: the answer to send
/// (its bytes, redacted, or a gateway error saying it was withheld), the
/// text to keep in the leaf (never the unredacted error), and the scan.
pub(crate) fn inspect_error(
    id: &RawValue,
    err: &str,
    rules: &ScanPolicy,
    shadow: bool,
) -> (Vec<u8>, String, (Disposition, Scan)) {
    let scan = super::scan::scan_error(err, rules);
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
/// inspected under the key's response settings and logged (the leaf
/// appended before the content is handed back), or an error saying why not.
pub(crate) async fn deliver_read(
    gw: &Gateway,
    id: &RawValue,
    record: &ReadRecord<'_>,
    admitted: &Admitted,
    outcome: Result<Box<RawValue>, UpstreamError>,
) -> Vec<u8> {
    let rules = &admitted.rules;
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            let (outcome, findings) = match &e {
                UpstreamError::Rpc(err) => {
                    let scan = super::scan::scan_error(err.get(), rules);
                    (ReadOutcome::UpstreamError, scan.findings)
                }
                _ => (ReadOutcome::Unavailable, Vec::new()),
            };
            // The read failed upstream; its leaf is evidence only, and the
            // agent gets the upstream's failure (inspected) either way.
            if let Err(log) = record
                .append(gw.engine(), outcome, &admitted.inspection, &findings)
                .await
            {
                tracing::warn!(error = %log, server = record.server, "a failed read was not logged");
            }
            return upstream_failure(id, record.server, rules, e);
        }
    };
    let scan: Scan = match record.kind {
        // A completion's answer is suggestions (strings in `values`), not
        // content with `text` members: every string in it is scanned.
        ReadKind::Completion => scan_result(result.get(), rules),
        ReadKind::Prompt | ReadKind::Resource => scan_content(result.get(), rules),
    };
    let disposition = Disposition::of(&scan, record.agent.shadow);
    if let Err(e) = record
        .append(
            gw.engine(),
            ReadOutcome::Scanned(disposition.clone()),
            &admitted.inspection,
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
    let outcome = ReadOutcome::NotServed(why.clone());
    if let Err(e) = record
        .append(gw.engine(), outcome, &ReadInspection::default(), &[])
        .await
    {
        return refused_unlogged(id, &e);
    }
    jsonrpc::error(Some(id), code::FORBIDDEN, &why)
}

/// The answer to a request an upstream failed: its own JSON-RPC error as
/// inspected under `rules` (redacted, or withheld by the response policy),
/// or -32001 saying why it could not be reached.
pub(crate) fn upstream_failure(
    id: &RawValue,
    server: &str,
    rules: &ScanPolicy,
    e: UpstreamError,
) -> Vec<u8> {
    match e {
        UpstreamError::Rpc(err) => inspect_error(id, err.get(), rules, false).0,
        e => jsonrpc::error(
            Some(id),
            code::UPSTREAM_UNAVAILABLE,
            &format!("upstream `{server}`: {e}"),
        ),
    }
}
