//! The leaf formats. Both carry an in-toto Statement v1 whose predicate is the
//! decision's facts, in canonical JCS bytes:
//!
//! * **statement leaves** (written since issue 17): the leaf *is* the statement.
//!   It carries no signature of its own: its integrity is its inclusion in the
//!   tree that a signed checkpoint commits to (the Certificate Transparency
//!   model), so a receipt is the leaf, its inclusion proof and a checkpoint.
//!   A human decision keeps its approver's own DSSE envelope inside the
//!   predicate, so an approval still carries its approver's signature.
//! * **signed leaves** (older logs): a DSSE envelope of the statement, signed
//!   by the log key. They stay verifiable; nothing writes them any more.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, VerifyingKey};
use interlock_canon::{self as canon, Map, Number, Value};
use interlock_core::decision::{KeyId, pae};

use crate::error::ReceiptError;

/// The in-toto Statement `_type`.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub use crate::format_names::PAYLOAD_TYPE;
/// Interlock's receipt predicate type.
pub const PREDICATE_TYPE: &str = "https://interlock.dev/receipt/v1";

/// How a leaf is protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeafSeal {
    /// A signed leaf: the log key's signature over the PAE of the payload.
    Signed { key_id: KeyId, signature: [u8; 64] },
    /// A statement leaf: only its inclusion in a signed checkpoint vouches for it.
    Tree,
}

/// A leaf, opened: the statement, its predicate's main facts and its seal.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenedLeaf {
    pub seal: LeafSeal,
    pub statement: Value,
    pub predicate: Map,
    pub seq: u64,
    pub kind: String,
    pub time: i64,
    /// The statement's JCS bytes (a signed leaf's DSSE payload; a statement
    /// leaf's whole bytes).
    pub payload: Vec<u8>,
}

/// The two leaf formats, told apart by their first member (JCS orders a
/// statement's `_type` first and an envelope's `payload` first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafFormat {
    Signed,
    Statement,
}

impl LeafFormat {
    pub fn of(leaf: &[u8]) -> LeafFormat {
        if leaf.starts_with(b"{\"_type\":") {
            LeafFormat::Statement
        } else {
            LeafFormat::Signed
        }
    }
}

fn subject(name: String, hex: String) -> Value {
    let mut digest = Map::new();
    digest.insert("sha256".into(), Value::String(hex));
    let mut m = Map::new();
    m.insert("name".into(), Value::String(name));
    m.insert("digest".into(), Value::Object(digest));
    Value::Object(m)
}

/// The statement's subjects, derived from the predicate's facts:
/// `plan_id` + `plan_hash` → `plan:<id>`; `key_id` → `approver-key:<key_id>`;
/// `statement` (an approver's envelope) → `approval`; otherwise `log-entry`
/// (the digest of the predicate's JCS bytes).
pub fn derive_subjects(predicate: &Map) -> Vec<Value> {
    derive_from(predicate, || {
        canon::digest(&Value::Object(predicate.clone()))
    })
}

/// [`derive_subjects`], with the predicate also at hand as a [`Value`] (no clone).
pub(crate) fn derive(predicate: &Map, whole: Option<&Value>) -> Vec<Value> {
    derive_from(predicate, || match whole {
        Some(v) => canon::digest(v),
        None => canon::digest(&Value::Object(predicate.clone())),
    })
}

/// The subjects of [`derive_subjects`]; `whole_digest` gives the digest of the
/// predicate's JCS bytes, asked for only when the subject is `log-entry`.
fn derive_from(predicate: &Map, whole_digest: impl FnOnce() -> canon::Digest) -> Vec<Value> {
    let mut out = Vec::new();
    if let (Some(Value::String(id)), Some(Value::String(h))) =
        (predicate.get("plan_id"), predicate.get("plan_hash"))
    {
        let hex = h.strip_prefix("sha256:").unwrap_or(h);
        out.push(subject(format!("plan:{id}"), hex.to_owned()));
    }
    if let Some(Value::String(k)) = predicate.get("key_id") {
        let hex = k.strip_prefix("ed25519:").unwrap_or(k);
        out.push(subject(format!("approver-key:{k}"), hex.to_owned()));
    }
    if let Some(st) = predicate.get("statement") {
        out.push(subject("approval".into(), canon::digest(st).hex()));
    }
    if out.is_empty() {
        out.push(subject("log-entry".into(), whole_digest().hex()));
    }
    out
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_number).and_then(Number::as_i64)
}

/// The predicate's `seq`, `type` and `time`, which every receipt must have.
fn predicate_facts(p: &Map) -> Result<(u64, &str, i64), String> {
    let seq = int(p.get("seq"))
        .and_then(|s| u64::try_from(s).ok())
        .ok_or("predicate.seq must be a non-negative integer")?;
    let kind = p
        .get("type")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .ok_or("predicate.type must be a non-empty string")?;
    let time = int(p.get("time")).ok_or("predicate.time must be an integer")?;
    Ok((seq, kind, time))
}

/// A receipt predicate with its JCS bytes, computed once.
///
/// Sealing needs the predicate's canonical bytes three times: the log bounds an
/// entry by their size, a `log-entry` subject is their digest, and the statement
/// embeds them. Computing them once per receipt is what this type is for.
#[derive(Clone, Debug)]
pub struct CanonicalPredicate {
    map: Map,
    jcs: Vec<u8>,
}

impl CanonicalPredicate {
    pub fn new(map: Map) -> CanonicalPredicate {
        let whole = Value::Object(map);
        let jcs = canon::canonical_bytes(&whole);
        let Value::Object(map) = whole else {
            unreachable!("built as an object above")
        };
        CanonicalPredicate { map, jcs }
    }

    /// The predicate's fields.
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// The predicate's JCS bytes.
    pub fn jcs(&self) -> &[u8] {
        &self.jcs
    }
}

/// Builds the statement for `predicate` (subjects from [`derive_subjects`]) and
/// returns the signed leaf bytes (JCS of the DSSE envelope). `sign` signs the
/// DSSE PAE bytes with the log key whose id is `key_id`.
pub fn seal(
    predicate: Map,
    key_id: &KeyId,
    sign: impl FnOnce(&[u8]) -> Result<Signature, ReceiptError>,
) -> Result<Vec<u8>, ReceiptError> {
    seal_canonical(&CanonicalPredicate::new(predicate), key_id, sign)
}

/// The statement leaf for `predicate` (subjects from [`derive_subjects`]): the
/// JCS bytes of the in-toto statement, unsigned — what the log writes.
pub fn seal_statement(predicate: &CanonicalPredicate) -> Result<Vec<u8>, ReceiptError> {
    predicate_facts(&predicate.map).map_err(ReceiptError::InvalidPredicate)?;
    let subjects = derive_from(&predicate.map, || canon::Digest::of_bytes(&predicate.jcs));
    Ok(statement_bytes(&predicate.jcs, subjects))
}

/// [`seal`] for a predicate whose JCS bytes are already computed.
pub fn seal_canonical(
    predicate: &CanonicalPredicate,
    key_id: &KeyId,
    sign: impl FnOnce(&[u8]) -> Result<Signature, ReceiptError>,
) -> Result<Vec<u8>, ReceiptError> {
    predicate_facts(&predicate.map).map_err(ReceiptError::InvalidPredicate)?;
    let subjects = derive_from(&predicate.map, || canon::Digest::of_bytes(&predicate.jcs));
    let payload = statement_bytes(&predicate.jcs, subjects);
    let sig = sign(&pae(PAYLOAD_TYPE, &payload))?;
    Ok(envelope_bytes(&payload, key_id, &sig.to_bytes()))
}

/// The JCS bytes of the statement `{_type, predicate, predicateType, subject}`,
/// spliced around the predicate's own JCS bytes instead of re-serializing it.
///
/// JCS orders members by UTF-16 code units, and these four keys are ASCII:
/// `_type` < `predicate` < `predicateType` < `subject`. The two type strings are
/// ASCII that JCS never escapes. Tested against `canonical_bytes` of the whole
/// statement.
fn statement_bytes(predicate_jcs: &[u8], subjects: Vec<Value>) -> Vec<u8> {
    let subjects = canon::canonical_bytes(&Value::Array(subjects));
    let parts: [&[u8]; 7] = [
        b"{\"_type\":\"",
        STATEMENT_TYPE.as_bytes(),
        b"\",\"predicate\":",
        predicate_jcs,
        b",\"predicateType\":\"",
        PREDICATE_TYPE.as_bytes(),
        b"\",\"subject\":",
    ];
    let mut out =
        Vec::with_capacity(parts.iter().map(|p| p.len()).sum::<usize>() + subjects.len() + 1);
    for p in parts {
        out.extend_from_slice(p);
    }
    out.extend_from_slice(&subjects);
    out.push(b'}');
    out
}

/// The JCS bytes of the DSSE envelope.
///
/// A template, like [`read_leaf`]'s check: the members are in JCS order and every
/// string is ASCII that JCS never escapes (the payload type constant, base64,
/// `ed25519:` + hex). Tested against `canonical_bytes` of the envelope.
pub(crate) fn envelope_bytes(payload: &[u8], key_id: &KeyId, sig: &[u8; 64]) -> Vec<u8> {
    let payload = B64.encode(payload);
    let key_id = key_id.to_string();
    let sig = B64.encode(sig);
    let parts: [&[u8]; 9] = [
        b"{\"payload\":\"",
        payload.as_bytes(),
        b"\",\"payloadType\":\"",
        PAYLOAD_TYPE.as_bytes(),
        b"\",\"signatures\":[{\"keyid\":\"",
        key_id.as_bytes(),
        b"\",\"sig\":\"",
        sig.as_bytes(),
        b"\"}]}",
    ];
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(p);
    }
    out
}

/// The envelope's parts.
pub(crate) struct EnvelopeParts {
    pub payload: Vec<u8>,
    pub key_id: KeyId,
    pub signature: [u8; 64],
}

fn exact_keys(m: &Map, keys: &[&str], what: &str) -> Result<(), String> {
    if m.len() != keys.len() || !keys.iter().all(|k| m.contains_key(*k)) {
        let found: Vec<&str> = m.keys().map(String::as_str).collect();
        return Err(format!(
            "{what} must have exactly the fields {keys:?}, found {found:?}"
        ));
    }
    Ok(())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnvelope<'a> {
    #[serde(rename = "payloadType")]
    payload_type: &'a str,
    payload: &'a str,
    #[serde(borrow)]
    signatures: Vec<RawSignature<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignature<'a> {
    keyid: &'a str,
    sig: &'a str,
}

/// Parses leaf bytes into the envelope's parts; the bytes must be exactly the
/// envelope's JCS form.
///
/// The envelope's shape is fixed and every string in it is ASCII that JCS never
/// escapes (the payload type constant, base64, `ed25519:` + hex), so its JCS form
/// is a template: the leaf is read with a typed, borrowing, unknown-field-refusing
/// parse, and its canonicity checked by comparing it to the template filled with
/// what was read. This is the same check as `canonical_bytes(parse(leaf)) == leaf`
/// (tested against it), at a fraction of the cost on 100,000-receipt bundles.
pub(crate) fn read_leaf(leaf: &[u8]) -> Result<EnvelopeParts, ReceiptError> {
    let bad = ReceiptError::MalformedLeaf;
    let raw: RawEnvelope<'_> = serde_json::from_slice(leaf).map_err(|e| {
        // Escaped strings cannot be borrowed; they are never canonical here.
        match canon::parse_json(leaf) {
            Ok(_) if e.to_string().contains("borrowed") => ReceiptError::NonCanonicalLeaf,
            Ok(_) => bad(e.to_string()),
            Err(e) => bad(e.to_string()),
        }
    })?;
    if raw.payload_type != PAYLOAD_TYPE {
        return Err(ReceiptError::WrongPayloadType(raw.payload_type.to_owned()));
    }
    let payload = B64
        .decode(raw.payload)
        .map_err(|_| bad("payload is not standard base64".into()))?;
    let [sig] = raw.signatures.as_slice() else {
        return Err(bad("the envelope must carry exactly one signature".into()));
    };
    let key_id: KeyId = sig
        .keyid
        .parse()
        .map_err(|e: interlock_core::decision::DecisionError| bad(e.to_string()))?;
    let signature: [u8; 64] = B64
        .decode(sig.sig)
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| bad("sig is not 64 bytes of standard base64".into()))?;
    let parts = [
        &b"{\"payload\":\""[..],
        raw.payload.as_bytes(),
        b"\",\"payloadType\":\"",
        PAYLOAD_TYPE.as_bytes(),
        b"\",\"signatures\":[{\"keyid\":\"",
        sig.keyid.as_bytes(),
        b"\",\"sig\":\"",
        sig.sig.as_bytes(),
        b"\"}]}",
    ];
    let canonical = parts.iter().map(|p| p.len()).sum::<usize>() == leaf.len() && {
        let mut rest = leaf;
        parts.iter().all(|p| {
            let (head, tail) = rest.split_at(p.len());
            rest = tail;
            head == *p
        })
    };
    if !canonical {
        return Err(ReceiptError::NonCanonicalLeaf);
    }
    Ok(EnvelopeParts {
        payload,
        key_id,
        signature,
    })
}

/// Checks the outer signature: by `log_key` (whose id is `log_id`), strict.
pub(crate) fn check_signature(
    parts: &EnvelopeParts,
    log_key: &VerifyingKey,
    log_id: &KeyId,
) -> Result<(), ReceiptError> {
    check_signed(
        &parts.key_id,
        &parts.signature,
        &parts.payload,
        log_key,
        log_id,
    )
}

/// A signed leaf's seal: signed by the log key (`log_id` names it), over
/// the PAE of `payload`, `verify_strict`.
fn check_signed(
    key_id: &KeyId,
    signature: &[u8; 64],
    payload: &[u8],
    log_key: &VerifyingKey,
    log_id: &KeyId,
) -> Result<(), ReceiptError> {
    if key_id != log_id {
        return Err(ReceiptError::WrongLogKey {
            signer: *key_id,
            log: *log_id,
        });
    }
    log_key
        .verify_strict(
            &pae(PAYLOAD_TYPE, payload),
            &Signature::from_bytes(signature),
        )
        .map_err(|_| ReceiptError::BadLogSignature)
}

impl OpenedLeaf {
    /// Checks the seal of a leaf opened with [`open_leaf_unverified`] against
    /// the log key without reading the leaf again (the audit's way: it reads
    /// ten million): a signed leaf's signature; a statement leaf has none,
    /// its inclusion in a signed checkpoint vouches for it.
    pub fn check_seal(&self, log_key: &VerifyingKey) -> Result<(), ReceiptError> {
        match &self.seal {
            LeafSeal::Tree => Ok(()),
            LeafSeal::Signed { key_id, signature } => check_signed(
                key_id,
                signature,
                &self.payload,
                log_key,
                &KeyId::of(log_key),
            ),
        }
    }
}

/// Checks that `leaf` is a well-formed leaf of either format, in canonical form.
pub(crate) fn check_form(leaf: &[u8]) -> Result<(), ReceiptError> {
    match LeafFormat::of(leaf) {
        LeafFormat::Statement => read_statement(leaf).map(drop),
        LeafFormat::Signed => read_leaf(leaf).map(drop),
    }
}

/// A parsed, well-formed statement.
pub(crate) struct Statement {
    pub value: Value,
    pub seq: u64,
    pub kind: String,
    pub time: i64,
}

impl Statement {
    pub fn predicate(&self) -> &Map {
        self.value
            .get("predicate")
            .and_then(Value::as_object)
            .expect("checked")
    }
    pub fn subjects(&self) -> &[Value] {
        self.value
            .get("subject")
            .and_then(Value::as_array)
            .expect("checked")
    }
    /// Whether the subjects are those derived from the predicate.
    pub fn check_subjects(&self) -> Result<(), ReceiptError> {
        let derived = derive(self.predicate(), self.value.get("predicate"));
        if derived.as_slice() != self.subjects() {
            return Err(ReceiptError::SubjectMismatch);
        }
        Ok(())
    }
    /// `name, name, …` of the subjects, for a report line.
    pub fn subject_summary(&self) -> String {
        self.subjects()
            .iter()
            .filter_map(|s| s.get("name").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Parses the payload (strict intake, must be exactly JCS) as a statement.
pub(crate) fn read_statement(payload: &[u8]) -> Result<Statement, ReceiptError> {
    let bad = ReceiptError::MalformedStatement;
    // A leaf is canonical or refused, so the fast canonical reader takes every
    // good one; the strict reader names what is wrong with the others.
    let value = match canon::parse_canonical_json(payload) {
        Some(v) => v,
        None => {
            let v = canon::parse_json(payload).map_err(|e| bad(format!("payload: {e}")))?;
            if canon::canonical_bytes(&v) != payload {
                return Err(ReceiptError::NonCanonicalPayload);
            }
            v
        }
    };
    let m = value
        .as_object()
        .ok_or_else(|| bad("the statement is not an object".into()))?;
    exact_keys(
        m,
        &["_type", "subject", "predicateType", "predicate"],
        "the statement",
    )
    .map_err(bad)?;
    if m["_type"].as_str() != Some(STATEMENT_TYPE) {
        return Err(bad(format!("_type must be `{STATEMENT_TYPE}`")));
    }
    if m["predicateType"].as_str() != Some(PREDICATE_TYPE) {
        return Err(bad(format!("predicateType must be `{PREDICATE_TYPE}`")));
    }
    if m["subject"].as_array().is_none_or(<[Value]>::is_empty) {
        return Err(bad("subject must be a non-empty array".into()));
    }
    let p = m["predicate"]
        .as_object()
        .ok_or_else(|| bad("predicate is not an object".into()))?;
    let (seq, kind, time) = predicate_facts(p).map_err(bad)?;
    let kind = kind.to_owned();
    Ok(Statement {
        value,
        seq,
        kind,
        time,
    })
}

fn open(leaf: &[u8], log_key: Option<&VerifyingKey>) -> Result<OpenedLeaf, ReceiptError> {
    let (payload, seal) = match LeafFormat::of(leaf) {
        LeafFormat::Statement => (leaf.to_vec(), LeafSeal::Tree),
        LeafFormat::Signed => {
            let parts = read_leaf(leaf)?;
            if let Some(k) = log_key {
                check_signature(&parts, k, &KeyId::of(k))?;
            }
            let seal = LeafSeal::Signed {
                key_id: parts.key_id,
                signature: parts.signature,
            };
            (parts.payload, seal)
        }
    };
    let st = read_statement(&payload)?;
    st.check_subjects()?;
    let predicate = st.predicate().clone();
    Ok(OpenedLeaf {
        seal,
        statement: st.value,
        predicate,
        seq: st.seq,
        kind: st.kind,
        time: st.time,
        payload,
    })
}

/// Parses leaf bytes (which must be exactly canonical JCS) and checks the
/// statement is well-formed with the subjects derived from its predicate; for a
/// signed leaf, also the envelope's signature with the log key (`verify_strict`).
///
/// A statement leaf has no signature to check here: the caller vouches for it
/// by its inclusion in a signed checkpoint (the log's tree, a bundle's proof).
pub fn open_leaf(leaf: &[u8], log_key: &VerifyingKey) -> Result<OpenedLeaf, ReceiptError> {
    open(leaf, Some(log_key))
}

/// [`open_leaf`] without the signature check (for the audit's structure checks).
pub fn open_leaf_unverified(leaf: &[u8]) -> Result<OpenedLeaf, ReceiptError> {
    open(leaf, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// The statement as a value, canonicalized whole: what the splice must equal.
    fn statement_value(predicate: &Map) -> Value {
        let mut st = Map::new();
        st.insert("_type".into(), string(STATEMENT_TYPE));
        st.insert("subject".into(), Value::Array(derive_subjects(predicate)));
        st.insert("predicateType".into(), string(PREDICATE_TYPE));
        st.insert("predicate".into(), Value::Object(predicate.clone()));
        Value::Object(st)
    }

    fn envelope_value(payload: &[u8], key_id: &KeyId, sig: &[u8; 64]) -> Value {
        let mut s = Map::new();
        s.insert("keyid".into(), string(key_id.to_string()));
        s.insert("sig".into(), string(B64.encode(sig)));
        let mut e = Map::new();
        e.insert("payloadType".into(), string(PAYLOAD_TYPE));
        e.insert("payload".into(), string(B64.encode(payload)));
        e.insert("signatures".into(), Value::Array(vec![Value::Object(s)]));
        Value::Object(e)
    }

    fn predicate_from(json: &str) -> Map {
        canon::parse_json(json.as_bytes())
            .expect("test JSON")
            .as_object()
            .expect("an object")
            .clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Spliced statement and templated envelope are byte for byte the JCS of
        /// the values they stand for, whatever the predicate holds (escapes,
        /// non-ASCII and astral keys that JCS orders by UTF-16, numbers), and
        /// whichever subjects it derives.
        #[test]
        fn splice_and_template_equal_full_canonicalization(
            extra in proptest::collection::btree_map("[a-z\u{e9}\u{e000}\u{1f600}\"\\\\]{0,6}", "[ -~\u{e9}\u{2028}\n\"]{0,12}", 0..6),
            number in any::<i32>(),
            subject_kind in 0u8..4,
            sig in proptest::collection::vec(any::<u8>(), 64),
        ) {
            let mut p = predicate_from(r#"{"seq":3,"type":"tool.call","time":1700000000}"#);
            for (k, v) in extra {
                p.insert(k, Value::String(v));
            }
            p.insert("n".into(), Value::Number(Number::from_i64(number.into()).unwrap()));
            match subject_kind {
                1 => {
                    p.insert("plan_id".into(), string("p-1"));
                    p.insert("plan_hash".into(), string(format!("sha256:{}", "ab".repeat(32))));
                }
                2 => {
                    p.insert("key_id".into(), string(format!("ed25519:{}", "cd".repeat(32))));
                }
                3 => {
                    p.insert("statement".into(), Value::Object(predicate_from(r#"{"a":[1,2,{"b":"é"}]}"#)));
                }
                _ => {}
            }
            let cp = CanonicalPredicate::new(p.clone());
            let whole = canon::canonical_bytes(&Value::Object(p.clone()));
            prop_assert_eq!(cp.jcs(), whole.as_slice());
            let subjects = derive_from(cp.map(), || canon::Digest::of_bytes(cp.jcs()));
            prop_assert_eq!(&subjects, &derive_subjects(&p));
            let spliced = statement_bytes(cp.jcs(), subjects);
            prop_assert_eq!(&spliced, &canon::canonical_bytes(&statement_value(&p)));

            let sig: [u8; 64] = sig.try_into().unwrap();
            let key_id = KeyId::of(&ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key());
            prop_assert_eq!(
                envelope_bytes(&spliced, &key_id, &sig),
                canon::canonical_bytes(&envelope_value(&spliced, &key_id, &sig))
            );
        }
    }
}
