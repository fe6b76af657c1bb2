//! Signed notes, verifier keys and checkpoints.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{SigningKey, VerifyingKey};
use interlock_merkle::*;

// golang.org/x/mod/sumdb/note examples (ExampleSign / ExampleOpen).
const GO_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE: &str = "If you think cryptography is the answer to your problem,\n\
                       then you don't know what your problem is.\n\
                       \n\
                       \u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

fn go_signing_key() -> SigningKey {
    // PRIVATE+KEY+<name>+<id>+base64(0x01 ‖ 32-byte seed); the base64 contains '+'.
    let b64 = GO_SKEY.splitn(5, '+').nth(4).unwrap();
    let raw = B64.decode(b64).unwrap();
    assert_eq!(raw[0], 0x01);
    SigningKey::from_bytes(&raw[1..].try_into().unwrap())
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn sample_cp() -> Checkpoint {
    Checkpoint {
        origin: "interlock.example/log".into(),
        size: 42,
        root: leaf_hash(b"root"),
        extensions: vec!["ext one".into()],
    }
}

#[test]
fn go_sumdb_vkey_known_answer() {
    let v = NoteVerifier::from_vkey(GO_VKEY).unwrap();
    assert_eq!(v.name, "PeterNeumann");
    assert_eq!(v.key_id(), [0xc7, 0x4f, 0x20, 0xa3]);
    assert_eq!(v.to_vkey(), GO_VKEY);
    assert_eq!(go_signing_key().verifying_key(), v.key);
    // Other published verifier keys: Go's EnochRoot and the C2SP signed-note example key.
    for vkey in [
        "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop",
        "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
    ] {
        assert_eq!(NoteVerifier::from_vkey(vkey).unwrap().to_vkey(), vkey);
    }
}

#[test]
fn go_sumdb_note_known_answer() {
    let v = NoteVerifier::from_vkey(GO_VKEY).unwrap();
    let note = SignedNote::parse(GO_NOTE).unwrap();
    assert_eq!(note.text, GO_TEXT);
    assert_eq!(
        note.verify(std::slice::from_ref(&v)).unwrap(),
        vec!["PeterNeumann".to_string()]
    );
    assert_eq!(note.to_string(), GO_NOTE);
    // Ed25519 is deterministic: signing the text again reproduces the published note.
    let sk = go_signing_key();
    let signer = NoteSigner::new("PeterNeumann", sk.verifying_key(), &sk).unwrap();
    assert_eq!(signer.sign_note(GO_TEXT).unwrap().to_string(), GO_NOTE);
}

#[test]
fn c2sp_checkpoint_example_parses() {
    let s = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n\
             \u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";
    let note = SignedNote::parse(s).unwrap();
    assert_eq!(note.to_string(), s);
    let cp = Checkpoint::parse(&note.text).unwrap();
    assert_eq!(cp.origin, "example.com/behind-the-sofa");
    assert_eq!(cp.size, 20852163);
    assert!(cp.extensions.is_empty());
    assert_eq!(cp.to_text(), note.text);
    // We do not know that log's key: nothing verifies.
    let k = key(1);
    let v = NoteVerifier::new("example.com/behind-the-sofa", k.verifying_key()).unwrap();
    assert_eq!(open_checkpoint(s, &[v]), Err(NoteError::NoKnownSignature));
}

#[test]
fn sign_text_parse_verify_round_trip() {
    let k = key(7);
    let cp = sample_cp();
    let note = sign_checkpoint(&cp, "interlock.example/log", &k, &k.verifying_key()).unwrap();
    let text = note.to_string();
    assert!(text.starts_with("interlock.example/log\n42\n"));
    assert!(text.contains("\n\n\u{2014} interlock.example/log "));
    let v = NoteVerifier::new("interlock.example/log", k.verifying_key()).unwrap();
    assert_eq!(
        open_checkpoint(&text, std::slice::from_ref(&v)).unwrap(),
        cp
    );
    let parsed = SignedNote::parse(&text).unwrap();
    assert_eq!(parsed, note);
    assert_eq!(
        parsed.verify(std::slice::from_ref(&v)).unwrap(),
        vec!["interlock.example/log".to_string()]
    );
    // vkey round trip.
    assert_eq!(NoteVerifier::from_vkey(&v.to_vkey()).unwrap(), v);
}

#[test]
fn empty_tree_checkpoint() {
    let cp = Checkpoint {
        origin: "o".into(),
        size: 0,
        root: empty_root(),
        extensions: vec![],
    };
    assert_eq!(
        cp.to_text(),
        "o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
    );
    assert_eq!(Checkpoint::parse(&cp.to_text()).unwrap(), cp);
}

#[test]
fn tampering_any_byte_is_rejected() {
    let k = key(9);
    let v = NoteVerifier::new("log", k.verifying_key()).unwrap();
    let text = sign_checkpoint(&sample_cp(), "log", &k, &k.verifying_key())
        .unwrap()
        .to_string();
    let bytes = text.as_bytes();
    let mut checked = 0;
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x20, 0x80] {
            let mut t = bytes.to_vec();
            t[i] ^= flip;
            // A flip that breaks UTF-8 is already rejected by the &str type.
            let Ok(s) = String::from_utf8(t) else {
                continue;
            };
            checked += 1;
            assert!(
                open_checkpoint(&s, std::slice::from_ref(&v)).is_err(),
                "flipping byte {i} by {flip:#x} was accepted:\n{s}"
            );
        }
    }
    assert!(checked > text.len());
}

#[test]
fn wrong_key_and_unknown_signatures() {
    let (a, b) = (key(1), key(2));
    let va = NoteVerifier::new("log", a.verifying_key()).unwrap();
    let vb_same_name = NoteVerifier::new("log", b.verifying_key()).unwrap();
    let note = NoteSigner::new("log", a.verifying_key(), &a)
        .unwrap()
        .sign_note("hello\n")
        .unwrap();
    // Same name, different key => different key ID => unknown => nothing verified.
    assert_eq!(
        note.verify(std::slice::from_ref(&vb_same_name)),
        Err(NoteError::NoKnownSignature)
    );
    assert_eq!(note.verify(&[]), Err(NoteError::NoKnownSignature));

    // An extra signature by an unknown key (and a foreign-sized one) is ignored.
    let mut two = note.clone();
    NoteSigner::new("witness", b.verifying_key(), &b)
        .unwrap()
        .sign_into(&mut two)
        .unwrap();
    two.foreign.push(ForeignSignature {
        name: "other".into(),
        key_id: [1, 2, 3, 4],
        signature: vec![7; 72],
    });
    let s = two.to_string();
    let reparsed = SignedNote::parse(&s).unwrap();
    assert_eq!(reparsed, two);
    assert_eq!(
        reparsed.verify(std::slice::from_ref(&va)).unwrap(),
        vec!["log".to_string()]
    );
    // Both known: both names, in signature order.
    let vw = NoteVerifier::new("witness", b.verifying_key()).unwrap();
    assert_eq!(
        reparsed.verify(&[vw.clone(), va.clone()]).unwrap(),
        vec!["log".to_string(), "witness".to_string()]
    );

    // A known key whose signature fails rejects the whole note, even if another verifies.
    let mut bad = reparsed.clone();
    bad.signatures[1].signature[10] ^= 1;
    assert!(
        matches!(bad.verify(&[va.clone(), vw.clone()]), Err(NoteError::InvalidSignature { ref name, .. }) if name == "witness")
    );
    // ... but is ignored when that key is unknown.
    assert!(bad.verify(std::slice::from_ref(&va)).is_ok());

    // A known key signing twice is rejected.
    let dup = format!("{s}{}", s.lines().find(|l| l.contains(" log ")).unwrap());
    let dup = SignedNote::parse(&(dup + "\n")).unwrap();
    assert!(matches!(
        dup.verify(std::slice::from_ref(&va)),
        Err(NoteError::DuplicateSignature { .. })
    ));

    // A foreign-sized signature line claiming a known key is an error.
    let mut claim = note.clone();
    claim.foreign.push(ForeignSignature {
        name: "log".into(),
        key_id: va.key_id(),
        signature: vec![0; 72],
    });
    assert!(matches!(
        claim.verify(std::slice::from_ref(&va)),
        Err(NoteError::InvalidSignature { .. })
    ));
}

#[test]
fn signer_key_mismatch_is_refused_at_construction() {
    let (a, b) = (key(1), key(2));
    // A signer whose key is not the one its verifier names is never built, so
    // it cannot sign anything.
    assert_eq!(
        NoteSigner::new("log", b.verifying_key(), &a).unwrap_err(),
        NoteError::SignerKeyMismatch {
            key_name: "log".into()
        }
    );
    assert!(matches!(
        sign_checkpoint(&sample_cp(), "log", &a, &b.verifying_key()),
        Err(NoteError::SignerKeyMismatch { .. })
    ));
    // A matching one signs, and (checked once, at construction) every
    // signature it makes verifies.
    let signer = NoteSigner::new("log", a.verifying_key(), &a).unwrap();
    let verifier = signer.verifier();
    for text in ["x\n", "y\nz\n"] {
        let note = signer.sign_note(text).unwrap();
        assert!(note.verify(std::slice::from_ref(&verifier)).is_ok());
    }
    assert!(sign_checkpoint_with(&sample_cp(), &signer).is_ok());
}

/// A signer that fails (a locked keychain, an HSM error) is refused at
/// construction too, with its own error.
#[test]
fn failing_signer_is_refused_at_construction() {
    struct Broken;
    impl ed25519_dalek::Signer<ed25519_dalek::Signature> for Broken {
        fn try_sign(
            &self,
            _: &[u8],
        ) -> Result<ed25519_dalek::Signature, ed25519_dalek::SignatureError> {
            Err(ed25519_dalek::SignatureError::new())
        }
    }
    let k = key(1);
    assert!(matches!(
        NoteSigner::new("log", k.verifying_key(), &Broken),
        Err(NoteError::Signing(_))
    ));
}

#[test]
fn malformed_notes() {
    let k = key(3);
    let good = NoteSigner::new("n", k.verifying_key(), &k)
        .unwrap()
        .sign_note("t\n")
        .unwrap()
        .to_string();
    let sig_line = good.lines().nth(2).unwrap().to_string();
    let sig_b64 = sig_line.rsplit(' ').next().unwrap().to_string();
    let cases: Vec<(String, NoteError)> = vec![
        ("t\n".into(), NoteError::MissingSignatureBlock),
        ("t\n\n".into(), NoteError::MalformedSignatureBlock),
        (
            good.trim_end_matches('\n').into(),
            NoteError::MalformedSignatureBlock,
        ),
        (
            good.replace('\u{2014}', "-"),
            NoteError::MalformedSignatureLine {
                line: 1,
                reason: "does not start with an em dash and a space",
            },
        ),
        (
            good.replace("\u{2014} n ", "\u{2014} n+x "),
            NoteError::MalformedSignatureLine {
                line: 1,
                reason: "invalid key name",
            },
        ),
        (
            good.replace(&sig_b64, &sig_b64.replace('=', "")),
            NoteError::MalformedSignatureLine {
                line: 1,
                reason: "signature is not valid standard base64",
            },
        ),
        (
            "t\n\n\u{2014} n AAAA\n".to_string(),
            NoteError::MalformedSignatureLine {
                line: 1,
                reason: "signature is shorter than a key ID and one byte",
            },
        ),
        (
            good.replace("t\n", "t\r\n"),
            NoteError::ControlCharacter(0x0d),
        ),
        (format!("t\n{sig_line}\n"), NoteError::MissingSignatureBlock),
        (
            format!("t\n\n{sig_line}\nt\n"),
            NoteError::MalformedSignatureLine {
                line: 2,
                reason: "does not start with an em dash and a space",
            },
        ),
        (
            format!("t\n\n{sig_line}\n\n"),
            NoteError::MalformedSignatureBlock,
        ),
    ];
    for (s, want) in cases {
        assert_eq!(SignedNote::parse(&s), Err(want), "parsing {s:?}");
    }
    // Too many signature lines.
    let many = format!(
        "t\n\n{}",
        format!("{sig_line}\n").repeat(MAX_SIGNATURES + 1)
    );
    assert_eq!(
        SignedNote::parse(&many),
        Err(NoteError::TooManySignatures {
            max: MAX_SIGNATURES
        })
    );
    // Text rules when signing.
    let signer = NoteSigner::new("n", k.verifying_key(), &k).unwrap();
    assert_eq!(
        signer.sign_note("no newline"),
        Err(NoteError::TextMissingNewline)
    );
    assert_eq!(signer.sign_note(""), Err(NoteError::EmptyText));
    assert!(NoteSigner::new("bad name", k.verifying_key(), &k).is_err());
}

#[test]
fn malformed_vkeys() {
    let v = NoteVerifier::from_vkey(GO_VKEY).unwrap();
    let vkey = v.to_vkey();
    assert!(matches!(
        NoteVerifier::from_vkey(&vkey.replace("c74f20a3", "c74f20a4")),
        Err(NoteError::KeyIdMismatch { .. })
    ));
    assert!(matches!(
        NoteVerifier::from_vkey(&vkey.replace("c74f20a3", "C74F20A3")),
        Err(NoteError::MalformedVerifierKey(_))
    ));
    assert!(matches!(
        NoteVerifier::from_vkey("PeterNeumann+c74f20a3"),
        Err(NoteError::MalformedVerifierKey(_))
    ));
    let mut raw = vec![0x02];
    raw.extend_from_slice(v.key.as_bytes());
    let other_alg = format!("PeterNeumann+c74f20a3+{}", B64.encode(raw));
    assert_eq!(
        NoteVerifier::from_vkey(&other_alg),
        Err(NoteError::UnsupportedKeyType(2))
    );
    assert!(matches!(
        NoteVerifier::from_vkey(&format!("Peter Neumann+{}", &vkey[13..])),
        Err(NoteError::InvalidKeyName(_))
    ));
    // A small-order (weak) public key: the identity point.
    let mut ident = [0u8; 32];
    ident[0] = 1;
    let weak = VerifyingKey::from_bytes(&ident).unwrap();
    let weak_vkey = NoteVerifier {
        name: "w".into(),
        key: weak,
    }
    .to_vkey();
    assert_eq!(
        NoteVerifier::from_vkey(&weak_vkey),
        Err(NoteError::InvalidPublicKey)
    );
}

#[test]
fn malformed_checkpoints() {
    let root = B64.encode(leaf_hash(b"x"));
    let short_root = B64.encode([0u8; 31]);
    let cp = |s: &str| Checkpoint::parse(s);
    let err = |e: CheckpointError| Err(NoteError::Checkpoint(e));
    assert!(cp(&format!("o\n5\n{root}\n")).is_ok());
    assert_eq!(
        cp(&format!("o\n05\n{root}\n")),
        err(CheckpointError::SizeLeadingZero("05".into()))
    );
    assert_eq!(
        cp(&format!("o\n00\n{root}\n")),
        err(CheckpointError::SizeLeadingZero("00".into()))
    );
    assert_eq!(
        cp(&format!("o\n+5\n{root}\n")),
        err(CheckpointError::InvalidSize("+5".into()))
    );
    assert_eq!(
        cp(&format!("o\n-5\n{root}\n")),
        err(CheckpointError::InvalidSize("-5".into()))
    );
    assert_eq!(
        cp(&format!("o\n 5\n{root}\n")),
        err(CheckpointError::InvalidSize(" 5".into()))
    );
    assert_eq!(
        cp(&format!("o\n18446744073709551616\n{root}\n")),
        err(CheckpointError::SizeOverflow("18446744073709551616".into()))
    );
    assert_eq!(
        cp("o\n5\nnot base64!\n"),
        err(CheckpointError::InvalidRootBase64("not base64!".into()))
    );
    let unpadded = root.trim_end_matches('=').to_string();
    assert_eq!(
        cp(&format!("o\n5\n{unpadded}\n")),
        err(CheckpointError::InvalidRootBase64(unpadded.clone()))
    );
    assert_eq!(
        cp(&format!("o\n5\n{short_root}\n")),
        err(CheckpointError::WrongRootLength(31))
    );
    assert_eq!(
        cp(&format!("o\n5\n{root}")),
        err(CheckpointError::MissingFinalNewline)
    );
    assert_eq!(cp("o\n5\n"), err(CheckpointError::TooFewLines(2)));
    assert_eq!(cp(""), err(CheckpointError::MissingFinalNewline));
    assert_eq!(cp("\n"), err(CheckpointError::TooFewLines(0)));
    assert_eq!(
        cp(&format!("\n5\n{root}\n")),
        err(CheckpointError::EmptyLine(1))
    );
    assert_eq!(
        cp(&format!("o\n5\n{root}\n\next\n")),
        err(CheckpointError::EmptyLine(4))
    );
    assert_eq!(
        cp(&format!("o\n5\n{root}\r\n")),
        err(CheckpointError::ControlCharacter(0x0d))
    );
    // Extension lines survive a round trip.
    let c = cp(&format!("o\n5\n{root}\na\nb c\n")).unwrap();
    assert_eq!(c.extensions, vec!["a".to_string(), "b c".to_string()]);
    assert_eq!(c.to_text(), format!("o\n5\n{root}\na\nb c\n"));
    // Unserializable checkpoints are refused at signing time.
    let k = key(4);
    let mut bad = sample_cp();
    bad.origin = "two\nlines".into();
    assert!(sign_checkpoint(&bad, "log", &k, &k.verifying_key()).is_err());
    let mut bad = sample_cp();
    bad.extensions.push(String::new());
    assert_eq!(
        sign_checkpoint(&bad, "log", &k, &k.verifying_key()),
        Err(NoteError::Checkpoint(CheckpointError::EmptyLine(5)))
    );
}

#[test]
fn open_checkpoint_rejects_signed_non_checkpoint() {
    let k = key(5);
    let v = NoteVerifier::new("log", k.verifying_key()).unwrap();
    let note = NoteSigner::new("log", k.verifying_key(), &k)
        .unwrap()
        .sign_note("just text\n")
        .unwrap();
    assert_eq!(
        open_checkpoint(&note.to_string(), &[v]),
        Err(NoteError::Checkpoint(CheckpointError::TooFewLines(1)))
    );
}
