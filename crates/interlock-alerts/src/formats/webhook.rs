//! The generic webhook: one event per `POST`, the body the event's JSON
//! ([`AlertEvent::to_json`]), signed so the receiver knows it came from this
//! gateway and was not altered:
//!
//! - `Content-Type: application/json`
//! - `X-Interlock-Signature: sha256=<hex HMAC-SHA256(secret, body)>` (the
//!   scheme GitHub's webhooks use, so existing verifiers apply)
//! - `Idempotency-Key: <leaf index>` (a redelivery after a crash repeats it)
//! - `X-Interlock-Event: <kind>`, `X-Interlock-Severity: <severity>`

use ring::hmac;

use super::WireRequest;
use crate::event::AlertEvent;

pub const SIGNATURE_HEADER: &str = "X-Interlock-Signature";
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// `sha256=<hex>` of `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(hmac::sign(&key, body).as_ref()))
}

/// Whether `header` is the signature of `body` under `secret` (constant time):
/// what a receiver runs.
pub fn verify(secret: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_sig) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else {
        return false;
    };
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hmac::verify(&key, body, &sig).is_ok()
}

pub fn request(event: &AlertEvent, secret: &str) -> WireRequest {
    let body = serde_json::to_vec(&event.to_json()).expect("JSON values serialize");
    WireRequest {
        first_index: event.record.index,
        last_index: event.record.index,
        events: 1,
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            (SIGNATURE_HEADER.into(), signature(secret, &body)),
            (IDEMPOTENCY_HEADER.into(), event.idempotency_key()),
            ("X-Interlock-Event".into(), event.kind.clone()),
            (
                "X-Interlock-Severity".into(),
                event.severity.as_str().into(),
            ),
        ],
        body,
        url_suffix: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231 test case 2: HMAC-SHA-256 with key "Jefe".
    #[test]
    fn the_signature_is_rfc_4231_hmac_sha256() {
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(verify(
            "Jefe",
            b"what do ya want for nothing?",
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ));
        assert!(!verify(
            "Jefe",
            b"what do ya want for nothing!",
            &signature("Jefe", b"what do ya want for nothing?")
        ));
        assert!(!verify("Jefe", b"x", "md5=00"));
    }
}
