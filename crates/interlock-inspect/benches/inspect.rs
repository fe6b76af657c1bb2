//! Inspection + response scan on typical (≤ 4 KB) payloads. Target (issues 5
//! and 24): inspection + response scan ≤ 0.05 ms per call at p50, with every
//! category issue 24 added and normalisation before each. Also prints the
//! labelled corpus's per-category precision and recall (tuned and held-out), the
//! same table `tests/corpus.rs` asserts on.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};

/// The corpus test's tables (the same files and counting), printed here too.
#[path = "../tests/corpus.rs"]
#[allow(dead_code)]
mod corpus;
use interlock_canon::{Value, parse_json};
use interlock_inspect::{ArgContext, ResponsePolicy, inspect_arguments, scan_response};

fn args_4k() -> Value {
    let mut files = String::new();
    for i in 0..40 {
        files.push_str(&format!("\"/workspace/src/module_{i}/file_{i}.rs\","));
    }
    files.pop();
    let body = "Refactor the parser so that it accepts trailing commas; keep the error messages. "
        .repeat(20);
    let json = format!(
        r#"{{"query":"SELECT id, name FROM users WHERE team = 'core' ORDER BY name","path":"/workspace/src/lib.rs","url":"https://api.example.com/v1/items?page=2","files":[{files}],"message":"{body}","options":{{"depth":3,"follow":true,"pattern":"**/*.rs"}}}}"#
    );
    assert!(json.len() <= 4096, "{}", json.len());
    parse_json(json.as_bytes()).expect("bench args parse")
}

fn response_4k() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 3900 {
        s.push_str(&format!(
            "Row {i}: order #10{i:04} shipped 2024-01-15T10:30:00Z to warehouse 7; status ok, id 123e4567-e89b-12d3-a456-42661417{i:04}.\n"
        ));
        i += 1;
    }
    s.push_str("Contact ops@example.com.");
    s
}

fn bench(c: &mut Criterion) {
    // `INSPECT_PROFILE_CALLS=N`: only N calls of the 4 KB + 4 KB case, nothing
    // else, for `valgrind --tool=callgrind` (instruction counts do not depend on
    // what else the machine runs; see docs/BENCHMARKS.md).
    if let Some(n) = std::env::var("INSPECT_PROFILE_CALLS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        let (args, resp) = (args_4k(), response_4k());
        let ctx = ArgContext::with_roots(["/workspace"]);
        let policy = ResponsePolicy::default();
        for _ in 0..n {
            black_box(inspect_arguments(black_box(&args), &ctx));
            black_box(scan_response(black_box(&resp), &policy));
        }
        return;
    }
    println!("labelled corpus (tuned):");
    corpus::print(&corpus::evaluate(corpus::ARG_FILES, corpus::RESP_FILES));
    println!("\nlabelled corpus (HELD-OUT, written after tuning, never tuned against):");
    corpus::print(&corpus::evaluate(
        corpus::HOLDOUT_ARG_FILES,
        corpus::HOLDOUT_RESP_FILES,
    ));
    let args = args_4k();
    let ctx = ArgContext::with_roots(["/workspace"]);
    let resp = response_4k();
    let policy = ResponsePolicy::default();
    c.bench_function("inspect_arguments_4k", |b| {
        b.iter(|| inspect_arguments(black_box(&args), black_box(&ctx)))
    });
    c.bench_function("scan_response_4k", |b| {
        b.iter(|| scan_response(black_box(&resp), black_box(&policy)))
    });

    // A plain per-call figure, printed for the closing note: the mean, and the
    // median and 90th percentile of calls timed one by one.
    let n = 2000;
    let start = Instant::now();
    for _ in 0..n {
        black_box(inspect_arguments(black_box(&args), &ctx));
        black_box(scan_response(black_box(&resp), &policy));
    }
    let per_call = start.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    let mut each: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            black_box(inspect_arguments(black_box(&args), &ctx));
            black_box(scan_response(black_box(&resp), &policy));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    each.sort_by(f64::total_cmp);
    println!(
        "inspect + scan per call (4 KB each): mean {per_call:.1} µs, p50 {:.1} µs, p90 {:.1} µs (target p50 ≤ 50 µs)",
        each[each.len() / 2],
        each[each.len() * 9 / 10]
    );

    // The same response with non-ASCII text in it (a name with an accent, an
    // emoji): the case a Unicode-aware word boundary would send to a slower
    // engine, so it is measured on its own.
    let accented = response_4k().replace("shipped", "expédié ✓");
    let start = Instant::now();
    for _ in 0..n {
        black_box(scan_response(black_box(&accented), &policy));
    }
    let per_scan = start.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    let start = Instant::now();
    for _ in 0..n {
        black_box(scan_response(black_box(&resp), &policy));
    }
    let per_ascii = start.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    println!(
        "response scan per call (4 KB): ASCII {per_ascii:.1} µs, with non-ASCII text {per_scan:.1} µs ({:.2}x)",
        per_scan / per_ascii
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
