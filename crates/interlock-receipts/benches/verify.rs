//! Offline verification of a 100,000-receipt bundle, and what each bundle
//! form costs on the wire (issue 17 part 4).
//!
//! `cargo bench -p interlock-receipts --bench verify` (a plain binary: the
//! figures are one verification of a large bundle and its size). Prints:
//!
//! * the contiguous (unfiltered) v2 bundle — leaves and a range proof, no
//!   proof per receipt: verification time (best of `RUNS`, interleaved with
//!   the others so machine load hits all alike) and bytes per receipt;
//! * the same receipts as a v1 bundle (a proof inline per receipt), for
//!   comparison;
//! * raw `verify_strict` of the approvals' inner signatures (the floor no
//!   bundle form changes);
//! * filtered exports (every 10th, 100th, 1,000th receipt): proof bytes per
//!   receipt with the shared node table vs inline per-receipt proofs.
//!
//! Targets: ≤ 0.5 s on 2 cores and ≤ 800 bytes per receipt for the contiguous
//! bundle. `RECEIPTS_BENCH_N` changes the size (default 100,000).
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use ed25519_dalek::{Signature, VerifyingKey};
use interlock_canon::to_serde_json;
use interlock_core::decision::{Envelope, pae};
use interlock_receipts::{Bundle, VerifyOptions, open_leaf_unverified, verify_bundle};

/// The allocator of the `interlock` binary, whose `receipts verify` this models.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One approval (with its inner approver signature) every this many entries.
const DECISION_EVERY: u64 = 100;
const RUNS: usize = 5;

/// This process's user + system CPU time so far (`/proc/self/stat`, clock
/// ticks of 10 ms; `utime` and `stime` are the 12th and 13th fields after the
/// command name's closing parenthesis). CPU time is what load on a shared
/// machine does not inflate: wall time on 2 idle cores is at least half of it.
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    let after = &stat[stat.rfind(')').expect("stat has a command name") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    ticks as f64 / 100.0
}

/// The 1-minute load average, to print beside the figures.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn timed(f: impl Fn()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

/// The bytes a bundle spends on proofs: everything but the leaves.
fn proof_bytes(b: &Bundle) -> usize {
    b.to_bytes().len() - b.receipts.iter().map(|r| r.leaf.len()).sum::<usize>()
}

fn main() {
    let n: u64 = std::env::var("RECEIPTS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let t = Instant::now();
    let log = common::Log::new(n, DECISION_EVERY);
    let contiguous = log.full_bundle();
    let v1 = log.full_bundle_v1();
    let (bytes, bytes_v1) = (contiguous.to_bytes(), v1.to_bytes());
    let leaf_bytes: usize = log.leaves.iter().map(Vec::len).sum();
    eprintln!(
        "built a {n}-receipt log and its bundles in {:.1?}",
        t.elapsed()
    );

    let opts = VerifyOptions::default();
    let threads = opts.threads;
    for b in [&bytes, &bytes_v1] {
        let report = verify_bundle(b, &opts);
        assert!(report.is_ok(), "the bench bundle must verify");
        assert_eq!(report.receipts.len() as u64, n);
    }

    // The approvals' inner signatures, over the same PAE bytes.
    let approver = log.approver.verifying_key();
    let mut sigs: Vec<(VerifyingKey, Vec<u8>, Signature)> = Vec::new();
    for leaf in &log.leaves {
        let o = open_leaf_unverified(leaf).unwrap();
        if let Some(st) = o.predicate.get("statement") {
            let env = Envelope::from_json(&to_serde_json(st)).unwrap();
            sigs.push((
                approver,
                pae(&env.payload_type, &env.payload),
                Signature::from_bytes(&env.signature),
            ));
        }
    }
    let chunk = sigs.len().div_ceil(threads).max(1);
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
    let verify_once = |b: &[u8]| {
        let r = verify_bundle(b, &opts);
        assert!(r.is_ok());
    };
    if std::env::var_os("RECEIPTS_BENCH_PROFILE").is_some() {
        eprintln!("profiling: verify_bundle of the contiguous bundle only");
        for _ in 0..RUNS {
            verify_once(&bytes);
        }
        return;
    }
    println!("load average before: {}", loadavg());
    let (mut raw, mut v2t, mut v1t) = (Duration::MAX, Duration::MAX, Duration::MAX);
    let mut v2_all = Vec::new();
    let mut v2_cpu = 0.0;
    for _ in 0..RUNS {
        raw = raw.min(timed(raw_once));
        let cpu = process_cpu_secs();
        let d = timed(|| verify_once(&bytes));
        v2_cpu += process_cpu_secs() - cpu;
        v2_all.push(d);
        v2t = v2t.min(d);
        v1t = v1t.min(timed(|| verify_once(&bytes_v1)));
    }
    v2_all.sort();
    let one = VerifyOptions {
        threads: 1,
        ..VerifyOptions::default()
    };
    let single = (0..3)
        .map(|_| timed(|| assert!(verify_bundle(&bytes, &one).is_ok())))
        .min()
        .unwrap();
    let per = |len: usize| len as f64 / n as f64;
    println!("threads: {threads}");
    println!(
        "receipts: {n}, leaves {:.0} bytes per receipt on average",
        per(leaf_bytes)
    );
    println!(
        "contiguous v2 bundle: verify {:.3?} (best of {RUNS}; median {:.3?}), {} bytes, {:.1} bytes per receipt ({} range-proof hashes)",
        v2t,
        v2_all[RUNS / 2],
        bytes.len(),
        per(bytes.len()),
        contiguous.range_proof.len()
    );
    println!(
        "contiguous v2 bundle: {:.3} s of CPU per verification (all threads); one thread: {:.3?}",
        v2_cpu / RUNS as f64,
        single
    );
    // The part no thread count shortens: reading the outer JSON (one pass).
    let scan = (0..3)
        .map(|_| {
            timed(|| {
                serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).unwrap();
            })
        })
        .min()
        .unwrap();
    println!(
        "contiguous v2 bundle: one sequential pass over its JSON (serde_json, IgnoredAny): {scan:.3?}"
    );
    println!(
        "same receipts as v1 (a proof inline per receipt): verify {:.3?}, {} bytes, {:.1} bytes per receipt",
        v1t,
        bytes_v1.len(),
        per(bytes_v1.len())
    );
    println!(
        "raw verify_strict of the {} approvals' inner signatures: {:.3?}",
        sigs.len(),
        raw
    );
    for every in [10u64, 100, 1000] {
        let picked: Vec<u64> = (0..n).filter(|i| i % every == 0).collect();
        let k = picked.len();
        let shared = log.bundle(&picked, None, None);
        let inline = log.bundle_v1(&picked, None, None);
        let (table, _) = shared.node_table();
        let shared_bytes = shared.to_bytes();
        let t = timed(|| verify_once(&shared_bytes));
        println!(
            "filtered, every {every}th ({k} receipts): non-leaf bytes per receipt (proofs and framing) {:.1} with the shared node table ({} nodes) vs {:.1} inline; whole bundle {:.1} vs {:.1} bytes per receipt; verify {:.3?}",
            proof_bytes(&shared) as f64 / k as f64,
            table.len(),
            proof_bytes(&inline) as f64 / k as f64,
            shared_bytes.len() as f64 / k as f64,
            inline.to_bytes().len() as f64 / k as f64,
            t
        );
    }
    println!("load average after: {}", loadavg());
}
