//! The response scan on an upstream's raw JSON (`calls::scan`, over
//! `interlock_inspect::scan_response`) with the default response policy
//! (everything redacted). The first byte picks the entry point: a tool result,
//! read-only content, a JSON-RPC error or a notification's params.
//!
//! Invariants: nothing panics and there is always a verdict; an answer left
//! `Unchanged` has no findings, a `Redacted` one has findings, an object of
//! members and no `[REDACTED` text the scan did not put there as a finding;
//! nothing is `Blocked` under a policy that blocks nothing; a JSON object within
//! the size cap and the depth bound is never `Unscannable`.
#![no_main]

use interlock_fuzz::json_depth;
use interlock_gateway::GatewayConfig;
use interlock_gateway::agent::calls::scan::{
    MAX_SCAN_DEPTH, ScanPolicy, Scanned, response_policy, scan_content, scan_error,
    scan_notification, scan_result,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::sync::OnceLock;

fn rules() -> &'static ScanPolicy {
    static RULES: OnceLock<ScanPolicy> = OnceLock::new();
    RULES.get_or_init(|| response_policy(&GatewayConfig::default()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    // The transport hands the scan JSON text (a `RawValue`); arbitrary UTF-8
    // is a superset of that.
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let rules = rules();
    let scan = match which % 4 {
        0 => scan_result(text, rules),
        1 => scan_content(text, rules),
        2 => scan_error(text, rules),
        _ => scan_notification(
            text,
            &["message", "data", "logger"],
            rules,
            "notifications/message",
        ),
    };
    let wants_object = which % 4 != 1;
    match &scan.scanned {
        Scanned::Unchanged => assert!(scan.findings.is_empty(), "{scan:?}"),
        Scanned::Redacted(doc) => {
            assert!(!scan.findings.is_empty(), "redacted without a finding");
            assert!(!wants_object || doc.is_object(), "{doc}");
        }
        Scanned::Blocked => panic!("blocked under a policy that blocks nothing: {scan:?}"),
        Scanned::Unscannable(why) => {
            // Only what is too large, too deep or not an object (of JSON) is
            // unscannable.
            if text.len() <= rules.max_bytes
                && let Ok(v) = serde_json::from_str::<Value>(text)
                && (v.is_object() || !wants_object)
                && json_depth(text.as_bytes()).is_some_and(|d| d < MAX_SCAN_DEPTH)
            {
                panic!("a scannable document was withheld: {why}");
            }
        }
    }
});
