//! The RFC 8785 reference vectors (cyberphone/json-canonicalization testdata),
//! read from the shared vectors directory at test time.

use std::path::PathBuf;

use interlock_canon::{Digest, canonical_bytes, canonical_string, digest, parse_json};

/// `$INTERLOCK_VECTORS_DIR/jcs` (the shared `vectors` directory), else
/// `../shared/vectors/jcs` beside the repository.
fn vectors_dir() -> PathBuf {
    match std::env::var_os("INTERLOCK_VECTORS_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("jcs"),
        None => manifest_dir().join("../../../shared/vectors/jcs"),
    }
}

fn decode_hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).unwrap_or_else(|e| panic!("bad hex {h:?}: {e}")))
        .collect()
}

#[test]
fn every_vector_canonicalizes_byte_for_byte() {
    let dir = vectors_dir();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir.join("input"))
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.join("input").display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 6,
        "expected at least 6 vectors in {}, found {}",
        dir.display(),
        inputs.len()
    );

    for input in &inputs {
        let name = input.file_stem().unwrap().to_str().unwrap();
        let bytes = std::fs::read(input).unwrap();
        let value = parse_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = canonical_bytes(&value);

        let expected = std::fs::read(dir.join("output").join(format!("{name}.json"))).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{name}: output/"
        );
        assert_eq!(got, expected, "{name}: output/ bytes");

        let hex = std::fs::read_to_string(dir.join("outhex").join(format!("{name}.txt"))).unwrap();
        assert_eq!(got, decode_hex(&hex), "{name}: outhex/");

        // The string and digest forms agree with the bytes.
        assert_eq!(
            canonical_string(&value).as_bytes(),
            &got[..],
            "{name}: canonical_string"
        );
        assert_eq!(
            digest(&value),
            Digest::of_bytes(&expected),
            "{name}: digest"
        );
    }
}

/// The package's directory, read when the test runs (cargo and nextest set
/// `CARGO_MANIFEST_DIR`): a build cache shared between clones at different
/// paths may hand this binary over from another clone, whose compile-time
/// path need not exist.
fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("CARGO_MANIFEST_DIR (set by cargo and nextest)"),
    )
}
