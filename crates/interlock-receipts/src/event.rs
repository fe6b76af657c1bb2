//! Verifying an alert event a SIEM kept (issue 21 item 6): the record an
//! event carries — the log's origin, the leaf index, the leaf hash and the
//! size of the signed checkpoint it was sent under — checked against a
//! receipts bundle, or against the live log's leaf, inclusion proof and signed
//! checkpoint of that size. Pure: the caller reads the files or the store.

use interlock_merkle::{Hash, NoteVerifier, leaf_hash, open_checkpoint, verify_inclusion};
use serde_json::Value;

use crate::bundle::Bundle;
use crate::verify::{VerifyOptions, verify_bundle};

/// The verifiable part of an alert event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    pub origin: String,
    pub index: u64,
    pub leaf_hash: Hash,
    pub checkpoint_size: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventError {
    #[error("not an alert event: {0}")]
    Malformed(String),
    #[error("the event names log {event:?}, but this is log {log:?}")]
    OriginMismatch { event: String, log: String },
    #[error("leaf {index} is not in the bundle (it holds other receipts)")]
    NotInBundle { index: u64 },
    #[error("the bundle does not verify: {0}")]
    Bundle(String),
    #[error(
        "leaf {index} hashes to {actual}, not {claimed} as the event says: the event or the log was altered"
    )]
    LeafHashMismatch {
        index: u64,
        claimed: String,
        actual: String,
    },
    #[error("the checkpoint of size {0} does not verify: {1}")]
    Checkpoint(u64, String),
    #[error("leaf {index} is not included in the signed tree of {size} leaves: {why}")]
    NotIncluded { index: u64, size: u64, why: String },
}

/// Where the event object sits in what a sink delivered: itself (webhook,
/// syslog MSG, OTLP body), or wrapped — Splunk's `event`, Datadog's
/// `interlock`, PagerDuty's `payload.custom_details`.
fn unwrap_event(v: &Value) -> &Value {
    for path in [
        &["event"][..],
        &["interlock"],
        &["payload", "custom_details"],
        &["custom_details"],
    ] {
        let mut at = v;
        let mut found = true;
        for k in path {
            match at.get(k) {
                Some(next) => at = next,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if found && at.get("schema").is_some() {
            return at;
        }
    }
    v
}

fn record_of(v: &Value) -> Result<EventRecord, EventError> {
    let v = unwrap_event(v);
    let bad = |m: &str| EventError::Malformed(m.to_owned());
    if v.get("schema").and_then(Value::as_str) != Some("interlock.alert/v1") {
        return Err(bad("no `schema: interlock.alert/v1`"));
    }
    let origin = v["origin"]
        .as_str()
        .ok_or_else(|| bad("`origin` is not a string"))?;
    let index = v["index"]
        .as_u64()
        .ok_or_else(|| bad("`index` is not a whole number"))?;
    let size = v["checkpoint_size"]
        .as_u64()
        .ok_or_else(|| bad("`checkpoint_size` is not a whole number"))?;
    if size <= index {
        return Err(bad("`checkpoint_size` must be more than `index`"));
    }
    let hash_hex = v["leaf_hash"]
        .as_str()
        .ok_or_else(|| bad("`leaf_hash` is not a string"))?;
    let mut leaf_hash = [0u8; 32];
    if hash_hex.len() != 64 || hex::decode_to_slice(hash_hex, &mut leaf_hash).is_err() {
        return Err(bad("`leaf_hash` is not 64 hex digits"));
    }
    Ok(EventRecord {
        origin: origin.to_owned(),
        index,
        leaf_hash,
        checkpoint_size: size,
    })
}

/// The records in an exported file: one event object, a JSON array of them,
/// or one per line (NDJSON); each may be wrapped as its sink delivered it.
pub fn parse_event_records(bytes: &[u8]) -> Result<Vec<EventRecord>, EventError> {
    let text = std::str::from_utf8(bytes).map_err(|_| EventError::Malformed("not UTF-8".into()))?;
    let values: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .map_err(|e| EventError::Malformed(format!("a line is not JSON: {e}")))
            })
            .collect::<Result<_, _>>()?,
    };
    if values.is_empty() {
        return Err(EventError::Malformed("no event in the file".into()));
    }
    values.iter().map(record_of).collect()
}

fn check_leaf(rec: &EventRecord, leaf: &[u8]) -> Result<(), EventError> {
    let actual = leaf_hash(leaf);
    if actual != rec.leaf_hash {
        return Err(EventError::LeafHashMismatch {
            index: rec.index,
            claimed: hex::encode(rec.leaf_hash),
            actual: hex::encode(actual),
        });
    }
    Ok(())
}

/// Checks `rec` against a receipts bundle: the bundle verifies (every
/// signature and proof, with `opts`' pinned key if any), it is the event's
/// log, it holds the leaf at the event's index, and that leaf hashes to the
/// event's leaf hash. The tree size the bundle proves inclusion under.
pub fn verify_event_in_bundle(
    rec: &EventRecord,
    bundle: &[u8],
    opts: &VerifyOptions,
) -> Result<u64, EventError> {
    let report = verify_bundle(bundle, opts);
    if !report.problems.is_empty() {
        return Err(EventError::Bundle(
            report
                .problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    let parsed = Bundle::parse(bundle).map_err(|e| EventError::Bundle(e.to_string()))?;
    if parsed.origin != rec.origin {
        return Err(EventError::OriginMismatch {
            event: rec.origin.clone(),
            log: parsed.origin,
        });
    }
    let receipt = parsed
        .receipts
        .iter()
        .find(|r| r.index == rec.index)
        .ok_or(EventError::NotInBundle { index: rec.index })?;
    if let Some(line) = report.receipts.iter().find(|l| l.index == rec.index)
        && let Err(e) = &line.result
    {
        return Err(EventError::Bundle(format!("receipt {}: {e}", rec.index)));
    }
    check_leaf(rec, &receipt.leaf)?;
    report
        .tree_size
        .ok_or_else(|| EventError::Bundle("no verified checkpoint".into()))
}

/// Checks `rec` against the live log's evidence: `checkpoint` (a signed
/// note) verifies with `verifier`, is the event's log and has exactly the
/// event's checkpoint size, the leaf hashes to the event's leaf hash, and
/// `proof` includes it in that checkpoint's tree.
pub fn verify_event_with_proof(
    rec: &EventRecord,
    leaf: &[u8],
    proof: &[Hash],
    checkpoint: &str,
    verifier: &NoteVerifier,
) -> Result<(), EventError> {
    let cp = open_checkpoint(checkpoint, std::slice::from_ref(verifier))
        .map_err(|e| EventError::Checkpoint(rec.checkpoint_size, e.to_string()))?;
    if cp.origin != rec.origin {
        return Err(EventError::OriginMismatch {
            event: rec.origin.clone(),
            log: cp.origin,
        });
    }
    if cp.size != rec.checkpoint_size {
        return Err(EventError::Checkpoint(
            rec.checkpoint_size,
            format!("the checkpoint given has size {}", cp.size),
        ));
    }
    check_leaf(rec, leaf)?;
    verify_inclusion(rec.index, cp.size, &rec.leaf_hash, proof, &cp.root).map_err(|e| {
        EventError::NotIncluded {
            index: rec.index,
            size: cp.size,
            why: e.to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(extra: &str) -> String {
        format!(
            r#"{{"schema":"interlock.alert/v1","origin":"o","index":3,"leaf_hash":"{}","checkpoint_size":4{extra}}}"#,
            "ab".repeat(32)
        )
    }

    #[test]
    fn records_are_read_bare_wrapped_in_arrays_or_by_line() {
        let bare = event("");
        assert_eq!(parse_event_records(bare.as_bytes()).unwrap()[0].index, 3);
        let wrapped = format!(r#"{{"time":1,"event":{bare}}}"#);
        assert_eq!(parse_event_records(wrapped.as_bytes()).unwrap().len(), 1);
        let pd = format!(r#"{{"payload":{{"custom_details":{bare}}}}}"#);
        assert_eq!(parse_event_records(pd.as_bytes()).unwrap().len(), 1);
        let lines = format!("{bare}\n{bare}\n");
        assert_eq!(parse_event_records(lines.as_bytes()).unwrap().len(), 2);
        let array = format!("[{bare},{bare}]");
        assert_eq!(parse_event_records(array.as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn a_record_that_claims_an_index_its_checkpoint_does_not_cover_is_refused() {
        let e = event("").replace(r#""checkpoint_size":4"#, r#""checkpoint_size":3"#);
        assert!(matches!(
            parse_event_records(e.as_bytes()),
            Err(EventError::Malformed(_))
        ));
        let e = event("").replace(&"ab".repeat(32), "zz");
        assert!(matches!(
            parse_event_records(e.as_bytes()),
            Err(EventError::Malformed(_))
        ));
        assert!(parse_event_records(br#"{"index":1}"#).is_err());
    }

    #[test]
    fn a_leaf_that_does_not_hash_to_the_claim_is_named() {
        let rec = parse_event_records(event("").as_bytes()).unwrap().remove(0);
        let e = check_leaf(&rec, b"some other leaf").unwrap_err();
        assert!(
            matches!(e, EventError::LeafHashMismatch { index: 3, .. }),
            "{e}"
        );
    }
}
