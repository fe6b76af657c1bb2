//! C2SP tlog-cosignature v1: known answers from a real witness and the
//! transparency-dev/formats tests, then our own signer against our verifier.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::SigningKey;
use interlock_merkle::*;

/// A checkpoint of the transparency.dev staging CT log `arche2025h1`, as
/// witnessed by five public witnesses (kept as a test vector by the Python
/// `tlog` checkpoint tests); `remora.n621.de` is one of them.
const ARCHE_NOTE: &str = "arche2025h1.staging.ct.transparency.dev\n\
1432088532\n\
U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n\
\n\
\u{2014} arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=\n\
\u{2014} arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=\n\
\u{2014} transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==\n\
\u{2014} witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==\n\
\u{2014} remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==\n\
\u{2014} witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg==\n";
const ARCHE_LOG_VKEY: &str =
    "arche2025h1.staging.ct.transparency.dev+ba2f06c0+AU0vHmlGCS/PdN8b2OaGmKprLI8HKM+dJ472xgFYh15f";
/// transparency-dev/formats `TestCoSigV1NewVerifier`: a native cosignature vkey.
const REMORA_VKEY: &str = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2";

#[test]
fn a_public_witness_cosignature_verifies_and_a_changed_checkpoint_does_not() {
    let remora = CosignatureVerifier::from_vkey(REMORA_VKEY).unwrap();
    assert_eq!(remora.to_vkey(), REMORA_VKEY);
    let note = SignedNote::parse(ARCHE_NOTE).unwrap();
    // The log's own Ed25519 signature is a plain note signature.
    let log = NoteVerifier::from_vkey(ARCHE_LOG_VKEY).unwrap();
    assert_eq!(note.verify(&[log]).unwrap().len(), 1);

    let (verdicts, unknown) = witness_report(&note, std::slice::from_ref(&remora));
    let [(name, WitnessVerdict::Cosigned { timestamp })] = verdicts.as_slice() else {
        panic!("{verdicts:?}");
    };
    assert_eq!(name, "remora.n621.de");
    assert_eq!(*timestamp, 0x6a12_2120);
    // The three other witnesses are cosignature-shaped lines we were given no key for.
    assert_eq!(unknown.len(), 3, "{unknown:?}");

    let mut forked = note.clone();
    forked.text = forked.text.replace("1432088532", "1432088533");
    let (verdicts, _) = witness_report(&forked, &[remora]);
    assert_eq!(
        verdicts[0].1,
        WitnessVerdict::Invalid {
            reason: "its cosignature does not verify"
        }
    );
}

#[test]
fn the_timestamp_is_read_as_transparency_dev_formats_reads_it() {
    // formats' TestCosignatureTimestamp: this signature's time is 1727964367.
    let raw = B64
        .decode("ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==")
        .unwrap();
    let foreign = ForeignSignature {
        name: "w".into(),
        key_id: raw[..4].try_into().unwrap(),
        signature: raw[4..].to_vec(),
    };
    assert_eq!(
        Cosignature::from_foreign(&foreign).unwrap().timestamp,
        1727964367
    );
}

#[test]
fn a_cosignature_key_is_not_a_note_key_and_the_other_way_round() {
    // formats' "convert from algEd25519" vkey is a 0x01 note key.
    let note_vkey = "TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6";
    assert!(NoteVerifier::from_vkey(note_vkey).is_ok());
    assert_eq!(
        CosignatureVerifier::from_vkey(note_vkey),
        Err(NoteError::UnsupportedKeyType(0x01))
    );
    assert_eq!(
        NoteVerifier::from_vkey(REMORA_VKEY),
        Err(NoteError::UnsupportedKeyType(0x04))
    );
    let wrong_id = REMORA_VKEY.replace("da77ade7", "da77ade8");
    assert!(matches!(
        CosignatureVerifier::from_vkey(&wrong_id),
        Err(NoteError::KeyIdMismatch { .. })
    ));
}

#[test]
fn our_cosignatures_verify_and_every_one_byte_edit_is_caught() {
    let key = SigningKey::from_bytes(&[9; 32]);
    let signer = CosignatureSigner::new("witness.example/w1", key.verifying_key(), &key).unwrap();
    let text = "interlock.local/log/abc\n7\nf+7CoKgXKE/tNys9TTXcr/ad6U/K3xvznmzew9y6SP0=\n";
    let c = signer.cosign(text, 1_700_000_000).unwrap();
    let line = c.to_line();
    assert_eq!(parse_cosignature_lines(&line).unwrap(), vec![c.clone()]);
    let w = signer.verifier().clone();
    assert_eq!(CosignatureVerifier::from_vkey(&w.to_vkey()).unwrap(), w);

    let mut note = SignedNote::new(text).unwrap();
    note.foreign.push(c.to_foreign());
    let good = note.to_string();
    let (v, _) = witness_report(&SignedNote::parse(&good).unwrap(), std::slice::from_ref(&w));
    assert_eq!(
        v[0].1,
        WitnessVerdict::Cosigned {
            timestamp: 1_700_000_000
        }
    );

    // Each byte of the base64 part of the cosignature line, changed.
    let start = good.rfind(' ').unwrap() + 1;
    for i in start..good.len() - 1 {
        let mut bytes = good.clone().into_bytes();
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let edited = String::from_utf8(bytes).unwrap();
        let Ok(parsed) = SignedNote::parse(&edited) else {
            continue; // no longer a note at all: refused before any check
        };
        let (v, _) = witness_report(&parsed, std::slice::from_ref(&w));
        assert!(
            !matches!(v[0].1, WitnessVerdict::Cosigned { .. }),
            "byte {i} edited still verifies"
        );
    }
}

#[test]
fn a_signer_with_the_wrong_key_is_refused() {
    let key = SigningKey::from_bytes(&[9; 32]);
    let other = SigningKey::from_bytes(&[8; 32]);
    assert!(matches!(
        CosignatureSigner::new("w", other.verifying_key(), &key),
        Err(NoteError::SignerKeyMismatch { .. })
    ));
}
