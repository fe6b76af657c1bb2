//! Sealing one receipt the way the log does for every proxied tool call, beside
//! the same receipt built by canonicalizing whole values (what `seal` did before
//! `CanonicalPredicate`: the log measured the entry, the `log-entry` subject
//! digested a clone of it, the statement and the envelope were canonicalized
//! whole). Same predicate, same key, same run; prints both and the ratio.
//!
//! ```text
//! cargo bench -p interlock-receipts --bench seal
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer as _, SigningKey};
use interlock_canon::{self as canon, Map, Value};
use interlock_core::decision::{KeyId, pae};
use interlock_receipts::{
    CanonicalPredicate, PAYLOAD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE, derive_subjects, open_leaf,
    seal_canonical,
};

/// Rounds alternate between the ways, and each way's best round counts: on a
/// shared machine the minimum is the figure least disturbed by others.
const ROUNDS: usize = 15;
const PER_ROUND: usize = 2_000;

/// A `tool.call` predicate as the gateway records it.
fn predicate(seq: i64) -> Map {
    let v = canon::parse_json(
        br#"{"type":"tool.call","time":1764480000,"agent":"builder","role":"default",
            "server":"fast","tool":"echo",
            "arguments_hash":"sha256:9f2c5e0b7d4a1c3e8f6b2a9d0c7e5f3a1b8d6c4e2f0a9b7c5d3e1f2a4b6c8d0e",
            "outcome":"ok","detail":"112 \u00b5s",
            "verdict":{"risk":"low","tool_risk":"low","score":0,"findings":[],"shadow":false,
                       "verdict":"allowed","response":"forwarded","response_findings":[]}}"#,
    )
    .unwrap();
    let mut m = v.as_object().unwrap().clone();
    m.insert(
        "seq".into(),
        Value::Number(canon::Number::from_i64(seq).unwrap()),
    );
    m
}

/// The receipt built from whole values, as before.
fn seal_whole(p: Map, key: &SigningKey, key_id: &KeyId) -> Vec<u8> {
    let whole = Value::Object(p);
    black_box(canon::canonical_bytes(&whole).len()); // the log's size bound
    let Value::Object(p) = whole else {
        unreachable!()
    };
    let subjects = derive_subjects(&p); // digests a clone of the predicate
    let mut st = Map::new();
    st.insert("_type".into(), Value::String(STATEMENT_TYPE.into()));
    st.insert("subject".into(), Value::Array(subjects));
    st.insert("predicateType".into(), Value::String(PREDICATE_TYPE.into()));
    st.insert("predicate".into(), Value::Object(p));
    let payload = canon::canonical_bytes(&Value::Object(st));
    let sig = key.sign(&pae(PAYLOAD_TYPE, &payload));
    let mut s = Map::new();
    s.insert("keyid".into(), Value::String(key_id.to_string()));
    s.insert("sig".into(), Value::String(B64.encode(sig.to_bytes())));
    let mut e = Map::new();
    e.insert("payloadType".into(), Value::String(PAYLOAD_TYPE.into()));
    e.insert("payload".into(), Value::String(B64.encode(&payload)));
    e.insert("signatures".into(), Value::Array(vec![Value::Object(s)]));
    canon::canonical_bytes(&Value::Object(e))
}

fn seal_once(p: Map, key: &SigningKey, key_id: &KeyId) -> Vec<u8> {
    let p = CanonicalPredicate::new(p);
    black_box(p.jcs().len()); // the log's size bound
    seal_canonical(&p, key_id, |m| Ok(key.sign(m))).unwrap()
}

fn round(f: &dyn Fn(i64) -> Vec<u8>) -> Duration {
    let t = Instant::now();
    for i in 0..PER_ROUND {
        black_box(f(i as i64));
    }
    t.elapsed() / PER_ROUND as u32
}

/// Each function's best per-call time over [`ROUNDS`] alternating rounds.
fn best_of(fs: &[&dyn Fn(i64) -> Vec<u8>]) -> Vec<Duration> {
    let mut best = vec![Duration::MAX; fs.len()];
    for _ in 0..ROUNDS {
        for (b, f) in best.iter_mut().zip(fs) {
            *b = (*b).min(round(*f));
        }
    }
    best
}

fn main() {
    let key = SigningKey::from_bytes(&[42; 32]);
    let key_id = KeyId::of(&key.verifying_key());
    // Both build the very same leaf.
    let (a, b) = (
        seal_whole(predicate(7), &key, &key_id),
        seal_once(predicate(7), &key, &key_id),
    );
    assert_eq!(a, b, "both ways must produce the same leaf");

    // The `cargo test --benches` smoke run stops here.
    if !std::env::args().any(|a| a == "--bench") {
        println!("seal: the two ways agree; run with `cargo bench` for timings");
        return;
    }
    // The signature over a PAE of this leaf's size (Ed25519 hashes the message twice).
    let opened = open_leaf(&b, &key.verifying_key()).unwrap();
    let message = pae(PAYLOAD_TYPE, &opened.payload);
    let sign_leaf = |_| key.sign(&message).to_bytes().to_vec();
    let whole = |i| seal_whole(predicate(i), &key, &key_id);
    let once = |i| seal_once(predicate(i), &key, &key_id);
    let build = |i| {
        black_box(predicate(i));
        Vec::new()
    };
    let [sign, whole, once, build] = best_of(&[&sign_leaf, &whole, &once, &build])[..] else {
        unreachable!()
    };
    let (w, o) = (whole - build, once - build);
    println!(
        "seal a tool.call receipt ({} B leaf), best of {ROUNDS} rounds of {PER_ROUND}:",
        b.len()
    );
    println!(
        "  whole values (before)   {:>7.1} µs",
        w.as_secs_f64() * 1e6
    );
    println!(
        "  canonical once (now)    {:>7.1} µs",
        o.as_secs_f64() * 1e6
    );
    println!(
        "  of which Ed25519 sign   {:>7.1} µs",
        sign.as_secs_f64() * 1e6
    );
    println!(
        "  now/before {:.2}x; without the signature {:.2}x",
        o.as_secs_f64() / w.as_secs_f64(),
        (o.as_secs_f64() - sign.as_secs_f64()) / (w.as_secs_f64() - sign.as_secs_f64())
    );
}
