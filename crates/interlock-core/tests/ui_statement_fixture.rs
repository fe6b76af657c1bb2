//! The web UI signs approval statements itself (WebCrypto Ed25519, `ui/src/lib/statement.ts`)
//! and its unit tests compare them byte for byte with fixtures made here, by
//! `sign_decision` with the RFC 8032 test-1 key. This test keeps the fixtures true:
//! it re-signs `ui/tests/unit/fixtures/statement.json` and checks the canonical bytes
//! (`statement.jcs`), the PAE and the envelope (`rust-signed-statement.json`). Run it
//! with `INTERLOCK_WRITE_UI_FIXTURES=1` after a statement schema change to rewrite them.

use std::path::PathBuf;

use ed25519_dalek::SigningKey;
use interlock_core::canon;
use interlock_core::decision::{ApprovalStatement, Terms, pae, sign_decision};

const RFC8032_TEST1_SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";

/// The manifest directory as the test runner says it is now (cargo and nextest
/// set it), not as compiled: a build cache shared between clones at different
/// paths may hand this binary over from another clone.
fn fixtures() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.join("../../ui/tests/unit/fixtures")
}

#[test]
fn the_ui_statement_fixtures_are_what_sign_decision_makes() {
    let dir = fixtures();
    let shown = std::fs::read(dir.join("statement.json")).expect("statement.json");
    let value = canon::parse_json(&shown).expect("statement.json parses");
    let statement = ApprovalStatement::from_value(&value).expect("a statement");
    let mut seed = [0u8; 32];
    hex::decode_to_slice(RFC8032_TEST1_SEED, &mut seed).unwrap();
    let key = SigningKey::from_bytes(&seed);
    let (signed, envelope) = sign_decision(
        &key,
        &Terms {
            audience: statement.audience.as_deref().expect("a v2 fixture"),
            subject: &statement.plan_id,
            subject_hash: statement.plan_hash,
            decision: statement.decision,
            reason: &statement.reason,
            issued_at: statement.issued_at.expect("a v2 fixture"),
            not_before: statement.not_before,
            expires_at: statement.expires_at,
            nonce: statement.nonce,
            policy_digest: statement.policy_digest,
        },
    )
    .expect("signs");
    assert_eq!(
        signed, statement,
        "statement.json is exactly a signed statement"
    );
    let jcs = String::from_utf8(envelope.payload.clone()).unwrap();
    let public = key.verifying_key();
    let made = serde_json::json!({
        "_comment": "Made by the Rust side: interlock_core::decision::sign_decision with the RFC 8032 test-1 key (seed 9d61b19d…7f60), the statement in statement.json; statement.jcs is `interlock canon statement.json`. Kept true by crates/interlock-core/tests/ui_statement_fixture.rs.",
        "seed_hex": RFC8032_TEST1_SEED,
        "public_key": hex::encode(public.as_bytes()),
        "key_id": envelope.key_id.to_string(),
        "fingerprint": envelope.key_id.fingerprint(),
        "pae_hex": hex::encode(pae(&envelope.payload_type, &envelope.payload)),
        "envelope": envelope.to_json(),
    });
    if std::env::var_os("INTERLOCK_WRITE_UI_FIXTURES").is_some() {
        std::fs::write(dir.join("statement.jcs"), &jcs).unwrap();
        let text = serde_json::to_string_pretty(&made).unwrap() + "\n";
        std::fs::write(dir.join("rust-signed-statement.json"), text).unwrap();
    }
    let on_disk_jcs = std::fs::read_to_string(dir.join("statement.jcs")).expect("statement.jcs");
    assert_eq!(on_disk_jcs, jcs, "statement.jcs");
    let on_disk: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("rust-signed-statement.json")).expect("rust-signed-statement.json"),
    )
    .unwrap();
    for k in ["public_key", "key_id", "fingerprint", "pae_hex", "envelope"] {
        assert_eq!(on_disk[k], made[k], "rust-signed-statement.json: {k}");
    }
}
