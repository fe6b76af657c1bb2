//! Verification throughput of a 100,000-receipt bundle beside raw `verify_strict`
//! of the same signatures (same PAE bytes, same thread count), and bundle size.
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use ed25519_dalek::{Signature, VerifyingKey};
use interlock_canon::to_serde_json;
use interlock_core::decision::{Envelope, pae};
use interlock_receipts::{PAYLOAD_TYPE, VerifyOptions, open_leaf_unverified, verify_bundle};

const N: u64 = 100_000;
/// One approval (with its inner approver signature) every this many entries.
const DECISION_EVERY: u64 = 100;
const RUNS: usize = 3;

fn best(f: impl Fn()) -> Duration {
    (0..1)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn main() {
    let t = Instant::now();
    let log = common::Log::new(N, DECISION_EVERY);
    let bundle = log.full_bundle();
    let bytes = bundle.to_bytes();
    eprintln!("built a {N}-receipt bundle in {:.1?}", t.elapsed());

    let opts = VerifyOptions::default();
    let threads = opts.threads;
    let report = verify_bundle(&bytes, &opts);
    assert!(report.is_ok(), "the bench bundle must verify");

    // The same signatures, over the same PAE bytes.
    let log_key = log.key.verifying_key();
    let approver = log.approver.verifying_key();
    let mut sigs: Vec<(VerifyingKey, Vec<u8>, Signature)> = Vec::new();
    for leaf in &log.leaves {
        let o = open_leaf_unverified(leaf).unwrap();
        // A statement leaf has no signature of its own (an older log's
        // signed leaf has the log key's).
        if let interlock_receipts::LeafSeal::Signed { signature, .. } = &o.seal {
            sigs.push((
                log_key,
                pae(PAYLOAD_TYPE, &o.payload),
                Signature::from_bytes(signature),
            ));
        }
        if let Some(st) = o.predicate.get("statement") {
            let env = Envelope::from_json(&to_serde_json(st)).unwrap();
            sigs.push((
                approver,
                pae(&env.payload_type, &env.payload),
                Signature::from_bytes(&env.signature),
            ));
        }
    }
    let chunk = sigs.len().div_ceil(threads);
    let raw_once = || {
        std::thread::scope(|s| {
            for part in sigs.chunks(chunk) {
                s.spawn(move || {
                    for (k, m, sig) in part {
                        k.verify_strict(m, sig).unwrap();
                    }
                });
            }
        })
    };
    let verify_once = || {
        let r = verify_bundle(&bytes, &opts);
        assert!(r.is_ok());
    };
    if std::env::var_os("RECEIPTS_BENCH_PROFILE").is_some() {
        eprintln!("profiling: verify_bundle only");
        for _ in 0..RUNS {
            verify_once();
        }
        return;
    }
    // Interleaved, best of each: other load on the machine hits both alike.
    let (mut raw, mut verify) = (Duration::MAX, Duration::MAX);
    for _ in 0..RUNS {
        raw = raw.min(best(raw_once));
        verify = verify.min(best(verify_once));
    }
    let rate = |d: Duration| N as f64 / d.as_secs_f64();
    println!("threads: {threads}");
    println!(
        "raw verify_strict: {} signatures ({} receipts) in {:.3?}: {:.0} receipts/s",
        sigs.len(),
        N,
        raw,
        rate(raw)
    );
    println!(
        "verify_bundle: {N} receipts in {:.3?}: {:.0} receipts/s",
        verify,
        rate(verify)
    );
    println!(
        "verification vs raw verify_strict: {:.2}×",
        raw.as_secs_f64() / verify.as_secs_f64()
    );
    println!("bundle bytes: {}", bytes.len());
    println!("bundle bytes per receipt: {}", bytes.len() as u64 / N);
}
