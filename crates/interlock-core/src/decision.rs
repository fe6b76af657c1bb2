//! A reviewer's signed decision about one exact plan body.
//!
//! The statement binds everything an approval must not be moved away from: the
//! schema version, the plan hash and id, the decision, the approver's key, the
//! gateway it is meant for (its *audience*: the log's origin, so a statement made
//! for one gateway is refused by another that trusts the same key), when it was
//! issued (so a decision older than the subject's latest one is refused), a validity
//! window, a nonce (so two approvals of the same plan are distinct and each can be
//! consumed once) and the policy digest. It is signed as a DSSE envelope (the PAE of
//! its JCS bytes), so tools that know DSSE can check it without knowing Interlock.
//!
//! Signing goes through the [`Signer`] trait so that the key can live in the OS
//! keychain (the engine's signer) and never in this process's data structures.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, VerifyingKey};

use crate::canon::{self, Digest, Map, Value};

/// The statement schema this core writes and accepts for new decisions.
pub const APPROVAL_SCHEMA_VERSION: &str = "interlock.approval/v2";
/// The schema before statements named their audience and issue time. Still read
/// (receipts made with it verify offline), never accepted as a new decision.
pub const APPROVAL_SCHEMA_VERSION_V1: &str = "interlock.approval/v1";
/// The DSSE `payloadType` of an approval statement.
pub const APPROVAL_PAYLOAD_TYPE: &str = "application/vnd.interlock.approval+json";
/// The longest validity window an approval may have (30 days): an approval is a
/// decision about current state, not a standing permission.
pub const MAX_APPROVAL_WINDOW_SECS: i64 = 30 * 24 * 3600;
/// The largest reason accepted, in bytes.
pub const MAX_REASON_LEN: usize = 4096;

/// Approve or reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The identity of an approver key: SHA-256 of the 32-byte Ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub [u8; 32]);

impl KeyId {
    pub fn of(key: &VerifyingKey) -> KeyId {
        KeyId(*Digest::of_bytes(key.as_bytes()).as_bytes())
    }

    /// A short form for humans: the first 16 hex digits in groups of four.
    pub fn fingerprint(&self) -> String {
        let hex = hex::encode(&self.0[..8]);
        hex.as_bytes()
            .chunks(4)
            .map(|c| std::str::from_utf8(c).expect("hex is ascii"))
            .collect::<Vec<_>>()
            .join(":")
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ed25519:{}", hex::encode(self.0))
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for KeyId {
    type Err = DecisionError;
    fn from_str(s: &str) -> Result<KeyId, DecisionError> {
        let hex = s.strip_prefix("ed25519:").ok_or_else(|| {
            DecisionError::Malformed(format!("key id `{s}` must start with `ed25519:`"))
        })?;
        let mut out = [0u8; 32];
        if hex.len() != 64 || hex.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(DecisionError::Malformed(format!(
                "key id `{s}` must have 64 lowercase hex digits"
            )));
        }
        hex::decode_to_slice(hex, &mut out)
            .map_err(|_| DecisionError::Malformed(format!("key id `{s}` is not hex")))?;
        Ok(KeyId(out))
    }
}

/// Why a decision could not be made or accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    #[error("malformed statement: {0}")]
    Malformed(String),
    #[error("wrong payload type `{0}` (expected `{APPROVAL_PAYLOAD_TYPE}`)")]
    WrongPayloadType(String),
    #[error("the statement is for plan hash {signed}, but the plan's current hash is {current}")]
    PlanHashMismatch { signed: Digest, current: Digest },
    #[error("the statement is for plan `{signed}`, not `{expected}`")]
    PlanIdMismatch { signed: String, expected: String },
    #[error("the statement was made under policy {signed}, but the policy in force is {current}")]
    PolicyMismatch { signed: Digest, current: Digest },
    #[error("key {0} is not a trusted approver key")]
    UnknownKey(KeyId),
    #[error("the statement names approver key {named} but is signed by {signer}")]
    KeyMismatch { named: KeyId, signer: KeyId },
    #[error("bad signature by key {0}")]
    BadSignature(KeyId),
    #[error("the statement is not valid before {not_before} (now {now})")]
    NotYetValid { not_before: i64, now: i64 },
    #[error("the statement expired at {expires_at} (now {now})")]
    Expired { expires_at: i64, now: i64 },
    #[error(
        "the statement says it was issued at {issued_at}, more than {MAX_ISSUED_AT_SKEW_SECS} s after now ({now}): check the signing machine's clock and sign again"
    )]
    IssuedInTheFuture { issued_at: i64, now: i64 },
    #[error("invalid validity window: {0}")]
    BadWindow(String),
    #[error("signing failed: {0}")]
    Signing(String),
    #[error(
        "the statement is for the gateway whose log is `{signed}`, not this one (`{expected}`)"
    )]
    WrongAudience { signed: String, expected: String },
    #[error(
        "the statement uses schema {APPROVAL_SCHEMA_VERSION_V1}, which names no audience; sign it again ({APPROVAL_SCHEMA_VERSION})"
    )]
    NoAudience,
}

/// What a reviewer signs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalStatement {
    pub schema_version: String,
    pub plan_id: String,
    pub plan_hash: Digest,
    pub decision: Decision,
    pub reason: String,
    pub approver_key_id: KeyId,
    /// The origin of the log of the gateway the statement is for (v2; `None` in a
    /// v1 statement).
    pub audience: Option<String>,
    /// Unix seconds (UTC) when the approver signed (v2; `None` in v1). Decisions
    /// about one subject are ordered by it.
    pub issued_at: Option<i64>,
    /// Unix seconds (UTC).
    pub not_before: i64,
    /// Unix seconds (UTC), exclusive.
    pub expires_at: i64,
    /// 16 random bytes chosen by the signer, hex-encoded in the statement.
    pub nonce: [u8; 16],
    pub policy_digest: Digest,
}

impl ApprovalStatement {
    /// The statement as a value (what gets canonicalized and signed).
    pub fn to_value(&self) -> Value {
        let int =
            |i: i64| Value::Number(canon::Number::from_i64(i).expect("times are within 2^53"));
        let mut m = Map::new();
        m.insert("schema_version".into(), self.schema_version.as_str().into());
        m.insert("plan_id".into(), self.plan_id.as_str().into());
        m.insert("plan_hash".into(), self.plan_hash.to_string().into());
        m.insert("decision".into(), self.decision.name().into());
        m.insert("reason".into(), self.reason.as_str().into());
        m.insert(
            "approver_key_id".into(),
            self.approver_key_id.to_string().into(),
        );
        if let Some(audience) = &self.audience {
            m.insert("audience".into(), audience.as_str().into());
        }
        if let Some(issued_at) = self.issued_at {
            m.insert("issued_at".into(), int(issued_at));
        }
        m.insert("not_before".into(), int(self.not_before));
        m.insert("expires_at".into(), int(self.expires_at));
        m.insert("nonce".into(), hex::encode(self.nonce).into());
        m.insert(
            "policy_digest".into(),
            self.policy_digest.to_string().into(),
        );
        Value::Object(m)
    }

    /// Reads a statement back, strictly: every field of its schema present and
    /// typed, nothing else. Reads v1 statements too (for receipts made before v2);
    /// [`verify_decision`] accepts only v2.
    pub fn from_value(v: &Value) -> Result<ApprovalStatement, DecisionError> {
        let obj = v
            .as_object()
            .ok_or_else(|| DecisionError::Malformed("the statement must be an object".into()))?;
        const V1_FIELDS: [&str; 10] = [
            "schema_version",
            "plan_id",
            "plan_hash",
            "decision",
            "reason",
            "approver_key_id",
            "not_before",
            "expires_at",
            "nonce",
            "policy_digest",
        ];
        const V2_ONLY: [&str; 2] = ["audience", "issued_at"];
        let v2 = match obj.get("schema_version").and_then(Value::as_str) {
            Some(APPROVAL_SCHEMA_VERSION) => true,
            Some(APPROVAL_SCHEMA_VERSION_V1) => false,
            Some(other) => {
                return Err(DecisionError::Malformed(format!(
                    "unsupported schema_version `{other}`"
                )));
            }
            None => {
                return Err(DecisionError::Malformed(
                    "`schema_version` must be a string".into(),
                ));
            }
        };
        let known = |k: &str| V1_FIELDS.contains(&k) || (v2 && V2_ONLY.contains(&k));
        if let Some(extra) = obj.keys().find(|k| !known(k.as_str())) {
            return Err(DecisionError::Malformed(format!("unknown field `{extra}`")));
        }
        let s = |k: &str| {
            obj.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| DecisionError::Malformed(format!("`{k}` must be a string")))
        };
        let i = |k: &str| {
            obj.get(k)
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64())
                .ok_or_else(|| DecisionError::Malformed(format!("`{k}` must be an integer")))
        };
        let digest = |k: &str| {
            s(k)?
                .parse::<Digest>()
                .map_err(|_| DecisionError::Malformed(format!("`{k}` must be sha256:<64 hex>")))
        };
        let schema_version = s("schema_version")?.to_owned();
        let decision = match s("decision")? {
            "approve" => Decision::Approve,
            "reject" => Decision::Reject,
            other => {
                return Err(DecisionError::Malformed(format!(
                    "unknown decision `{other}`"
                )));
            }
        };
        let mut nonce = [0u8; 16];
        hex::decode_to_slice(s("nonce")?, &mut nonce)
            .map_err(|_| DecisionError::Malformed("`nonce` must be 32 hex digits".into()))?;
        Ok(ApprovalStatement {
            schema_version,
            plan_id: s("plan_id")?.to_owned(),
            plan_hash: digest("plan_hash")?,
            decision,
            reason: s("reason")?.to_owned(),
            approver_key_id: s("approver_key_id")?.parse()?,
            audience: if v2 {
                Some(s("audience")?.to_owned())
            } else {
                None
            },
            issued_at: if v2 { Some(i("issued_at")?) } else { None },
            not_before: i("not_before")?,
            expires_at: i("expires_at")?,
            nonce,
            policy_digest: digest("policy_digest")?,
        })
    }

    /// The statement `envelope` claims to carry, read before its signature is
    /// checked, to route it by subject ([`verify_decision`] checks it all).
    pub fn claimed_by(envelope: &Envelope) -> Result<ApprovalStatement, DecisionError> {
        let v = canon::parse_json(&envelope.payload)
            .map_err(|_| DecisionError::Malformed("not an approval statement".into()))?;
        ApprovalStatement::from_value(&v)
            .map_err(|_| DecisionError::Malformed("not an approval statement".into()))
    }

    /// The exact bytes the signature covers: DSSE PAE over the statement's JCS bytes.
    pub fn signing_input(&self) -> Vec<u8> {
        pae(
            APPROVAL_PAYLOAD_TYPE,
            &canon::canonical_bytes(&self.to_value()),
        )
    }
}

/// DSSE v1 pre-authentication encoding:
/// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

/// Something that can sign with an Ed25519 key it holds (in memory for tests and the
/// demo's throwaway key; in the OS keychain for real approvers).
pub trait Signer {
    fn public_key(&self) -> VerifyingKey;
    fn sign(&self, message: &[u8]) -> Result<Signature, DecisionError>;
}

impl Signer for ed25519_dalek::SigningKey {
    fn public_key(&self) -> VerifyingKey {
        self.verifying_key()
    }

    fn sign(&self, message: &[u8]) -> Result<Signature, DecisionError> {
        Ok(ed25519_dalek::Signer::sign(self, message))
    }
}

/// A DSSE envelope with one signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub payload_type: String,
    /// The statement's JCS bytes.
    pub payload: Vec<u8>,
    pub key_id: KeyId,
    pub signature: [u8; 64],
}

impl Envelope {
    /// The standard DSSE JSON form: `{payloadType, payload, signatures:[{keyid, sig}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "payloadType": self.payload_type,
            "payload": B64.encode(&self.payload),
            "signatures": [{ "keyid": self.key_id.to_string(), "sig": B64.encode(self.signature) }],
        })
    }

    /// Reads the DSSE JSON form; exactly one signature is expected.
    pub fn from_json(v: &serde_json::Value) -> Result<Envelope, DecisionError> {
        let m = |s: &str| DecisionError::Malformed(s.to_owned());
        let payload_type = v["payloadType"]
            .as_str()
            .ok_or_else(|| m("missing payloadType"))?;
        let payload = B64
            .decode(v["payload"].as_str().ok_or_else(|| m("missing payload"))?)
            .map_err(|_| m("payload is not base64"))?;
        let sigs = v["signatures"]
            .as_array()
            .ok_or_else(|| m("missing signatures"))?;
        let [sig] = sigs.as_slice() else {
            return Err(m("an approval envelope carries exactly one signature"));
        };
        let key_id = sig["keyid"]
            .as_str()
            .ok_or_else(|| m("missing keyid"))?
            .parse()?;
        let signature: [u8; 64] = B64
            .decode(sig["sig"].as_str().ok_or_else(|| m("missing sig"))?)
            .map_err(|_| m("sig is not base64"))?
            .try_into()
            .map_err(|_| m("sig must be 64 bytes"))?;
        Ok(Envelope {
            payload_type: payload_type.to_owned(),
            payload,
            key_id,
            signature,
        })
    }
}

/// What a signer decides: everything a statement binds except the signer's key.
#[derive(Clone, Debug)]
pub struct Terms<'a> {
    /// The log origin of the gateway the statement is for.
    pub audience: &'a str,
    /// A plan id, or `server:<name>` / `standing:<id>` for other subjects.
    pub subject: &'a str,
    /// The exact hash the reviewer was shown.
    pub subject_hash: Digest,
    pub decision: Decision,
    pub reason: &'a str,
    /// Unix seconds when the approver signs.
    pub issued_at: i64,
    pub not_before: i64,
    pub expires_at: i64,
    pub nonce: [u8; 16],
    pub policy_digest: Digest,
}

/// Builds and signs a statement. The time and the nonce come from the caller (the
/// core has no clock and no randomness).
pub fn sign_decision(
    signer: &dyn Signer,
    terms: &Terms<'_>,
) -> Result<(ApprovalStatement, Envelope), DecisionError> {
    check_window(terms.not_before, terms.expires_at)?;
    check_issued_at(terms.issued_at, terms.expires_at)?;
    let reason = terms.reason;
    if reason.trim().is_empty() || reason.len() > MAX_REASON_LEN {
        return Err(DecisionError::Malformed(format!(
            "a reason is required (1 to {MAX_REASON_LEN} bytes)"
        )));
    }
    if terms.audience.is_empty() {
        return Err(DecisionError::Malformed(
            "the audience (the gateway's log origin) is required".into(),
        ));
    }
    let key_id = KeyId::of(&signer.public_key());
    let statement = ApprovalStatement {
        schema_version: APPROVAL_SCHEMA_VERSION.into(),
        plan_id: terms.subject.to_owned(),
        plan_hash: terms.subject_hash,
        decision: terms.decision,
        reason: reason.to_owned(),
        approver_key_id: key_id,
        audience: Some(terms.audience.to_owned()),
        issued_at: Some(terms.issued_at),
        not_before: terms.not_before,
        expires_at: terms.expires_at,
        nonce: terms.nonce,
        policy_digest: terms.policy_digest,
    };
    let signature = signer.sign(&statement.signing_input())?;
    let envelope = Envelope {
        payload_type: APPROVAL_PAYLOAD_TYPE.into(),
        payload: canon::canonical_bytes(&statement.to_value()),
        key_id,
        signature: signature.to_bytes(),
    };
    Ok((statement, envelope))
}

/// A statement is issued before it expires (and an issue time is a real time).
fn check_issued_at(issued_at: i64, expires_at: i64) -> Result<(), DecisionError> {
    if issued_at >= expires_at {
        return Err(DecisionError::BadWindow(
            "issued_at must be before expires_at".into(),
        ));
    }
    Ok(())
}

fn check_window(not_before: i64, expires_at: i64) -> Result<(), DecisionError> {
    if expires_at <= not_before {
        return Err(DecisionError::BadWindow(
            "expires_at must be after not_before".into(),
        ));
    }
    if expires_at - not_before > MAX_APPROVAL_WINDOW_SECS {
        return Err(DecisionError::BadWindow(format!(
            "the window may be at most {MAX_APPROVAL_WINDOW_SECS} seconds"
        )));
    }
    Ok(())
}

/// The approver public keys a verifier trusts, by key id.
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys(BTreeMap<KeyId, VerifyingKey>);

impl TrustedKeys {
    pub fn new() -> TrustedKeys {
        TrustedKeys::default()
    }

    pub fn add(&mut self, key: VerifyingKey) -> KeyId {
        let id = KeyId::of(&key);
        self.0.insert(id, key);
        id
    }

    pub fn get(&self, id: &KeyId) -> Option<&VerifyingKey> {
        self.0.get(id)
    }
}

/// How far ahead of the verifier's clock a statement's `issued_at` may be:
/// room for two machines' clocks, not for a date that outlives a veto.
pub const MAX_ISSUED_AT_SKEW_SECS: i64 = 300;

/// What the verifier expects the statement to be about.
#[derive(Clone, Debug)]
pub struct Expectation<'a> {
    /// This gateway's log origin: the statement's audience must be exactly it.
    pub audience: &'a str,
    pub plan_id: &'a str,
    /// The plan's *current* hash, recomputed from its stored body.
    pub plan_hash: Digest,
    pub policy_digest: Digest,
    /// Unix seconds (UTC).
    pub now: i64,
}

/// Verifies an envelope: payload type, a trusted key, a strict Ed25519 signature
/// over the PAE, the statement's own key id, and that the statement is for this
/// gateway (v2 audience), about this plan, this hash and this policy, now.
pub fn verify_decision(
    envelope: &Envelope,
    trusted: &TrustedKeys,
    expect: &Expectation<'_>,
) -> Result<ApprovalStatement, DecisionError> {
    if envelope.payload_type != APPROVAL_PAYLOAD_TYPE {
        return Err(DecisionError::WrongPayloadType(
            envelope.payload_type.clone(),
        ));
    }
    let key = trusted
        .get(&envelope.key_id)
        .ok_or(DecisionError::UnknownKey(envelope.key_id))?;
    let signature = Signature::from_bytes(&envelope.signature);
    key.verify_strict(&pae(&envelope.payload_type, &envelope.payload), &signature)
        .map_err(|_| DecisionError::BadSignature(envelope.key_id))?;
    let value = canon::parse_json(&envelope.payload)
        .map_err(|e| DecisionError::Malformed(e.to_string()))?;
    // The payload must be the canonical form, so one statement has one byte string.
    if canon::canonical_bytes(&value) != envelope.payload {
        return Err(DecisionError::Malformed(
            "the payload is not in canonical (JCS) form".into(),
        ));
    }
    let statement = ApprovalStatement::from_value(&value)?;
    if statement.approver_key_id != envelope.key_id {
        return Err(DecisionError::KeyMismatch {
            named: statement.approver_key_id,
            signer: envelope.key_id,
        });
    }
    match &statement.audience {
        None => return Err(DecisionError::NoAudience),
        Some(a) if a != expect.audience => {
            return Err(DecisionError::WrongAudience {
                signed: a.clone(),
                expected: expect.audience.to_owned(),
            });
        }
        Some(_) => {}
    }
    if statement.plan_id != expect.plan_id {
        return Err(DecisionError::PlanIdMismatch {
            signed: statement.plan_id,
            expected: expect.plan_id.to_owned(),
        });
    }
    if statement.plan_hash != expect.plan_hash {
        return Err(DecisionError::PlanHashMismatch {
            signed: statement.plan_hash,
            current: expect.plan_hash,
        });
    }
    if statement.policy_digest != expect.policy_digest {
        return Err(DecisionError::PolicyMismatch {
            signed: statement.policy_digest,
            current: expect.policy_digest,
        });
    }
    check_window(statement.not_before, statement.expires_at)?;
    if let Some(issued_at) = statement.issued_at {
        check_issued_at(issued_at, statement.expires_at)?;
        // A statement dated ahead would make every later decision about its
        // subject "stale" until then (a veto frozen out), issue 39 item 6.
        if issued_at > expect.now.saturating_add(MAX_ISSUED_AT_SKEW_SECS) {
            return Err(DecisionError::IssuedInTheFuture {
                issued_at,
                now: expect.now,
            });
        }
    }
    if expect.now < statement.not_before {
        return Err(DecisionError::NotYetValid {
            not_before: statement.not_before,
            now: expect.now,
        });
    }
    if expect.now >= statement.expires_at {
        return Err(DecisionError::Expired {
            expires_at: statement.expires_at,
            now: expect.now,
        });
    }
    Ok(statement)
}
