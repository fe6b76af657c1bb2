//! The screen a call's relayed notifications pass through
//! ([`crate::upstream::relay::Screen`]): each is scanned like the call's
//! result — redacted, or withheld by policy or when it cannot be scanned — and
//! what the scans found is kept for the call's `tool.call` leaf.

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

use super::leaf::NotificationRecord;
use super::scan::{ScanPolicy, Scanned, scan_notification};
use crate::upstream::relay::Screen;

/// One call's notification scan and what it found so far.
pub struct NotificationScan {
    /// The response policy the call's result is scanned with.
    rules: Arc<ScanPolicy>,
    record: Mutex<NotificationRecord>,
}

impl NotificationScan {
    pub fn new(rules: Arc<ScanPolicy>) -> NotificationScan {
        NotificationScan {
            rules,
            record: Mutex::new(NotificationRecord::default()),
        }
    }

    /// What the scans of the call's notifications found so far.
    pub fn record(&self) -> NotificationRecord {
        self.record.lock().expect("record lock").clone()
    }
}

impl Screen for NotificationScan {
    fn screen(&self, method: &str, params: &str, texts: &[&str]) -> Option<Box<RawValue>> {
        let scan = scan_notification(params, texts, &self.rules, method);
        let mut record = self.record.lock().expect("record lock");
        record.findings.extend(scan.findings);
        let raw = match scan.scanned {
            Scanned::Unchanged => RawValue::from_string(params.to_owned()).ok(),
            Scanned::Redacted(v) => serde_json::value::to_raw_value(&v).ok(),
            Scanned::Blocked | Scanned::Unscannable(_) => None,
        };
        if raw.is_none() {
            record.withheld += 1;
        }
        raw
    }
}
