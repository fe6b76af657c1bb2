//! The tool-call path's own cost per call: argument inspection + role/risk
//! policy (`calls::assess::assess`) and the response scan (`calls::scan::scan_result`)
//! on typical ≤ 4 KB arguments and results, against the cost of only parsing
//! them (what the bare proxy path does anyway). Prints p50/p99 per call.
//!
//!     cargo bench -p interlock-gateway --bench callpath

use std::hint::black_box;
use std::time::Instant;

use interlock_canon as canon;
use interlock_gateway::GatewayConfig;
use interlock_gateway::agent::calls::assess::assess;
use interlock_gateway::agent::calls::scan::{response_policy, scan_result};

fn percentiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[v.len() * 99 / 100])
}

fn time(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..200 {
        f();
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    percentiles(samples)
}

fn main() {
    let config = GatewayConfig::default();
    let prose = "The quarterly report covers revenue, churn and the migration plan. ".repeat(70);
    let args = format!(
        r#"{{"path":"/srv/reports/q3.md","content":{},"mode":"overwrite","tags":["finance","q3","draft"]}}"#,
        serde_json::to_string(&prose[..3600]).unwrap()
    );
    let result = format!(
        r#"{{"content":[{{"type":"text","text":{}}}],"isError":false}}"#,
        serde_json::to_string(&format!(
            "Wrote 3600 bytes. Order 12345 shipped on 2026-11-30 10:00. {}",
            &prose[..3600]
        ))
        .unwrap()
    );
    assert!(args.len() <= 4096 && result.len() <= 4096);
    let policy = response_policy(&config);
    let n = 5000;

    let (parse50, parse99) = time(n, || {
        let v = canon::parse_json(black_box(args.as_bytes())).unwrap();
        black_box(canon::digest(&v));
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&result)).unwrap());
    });
    let args_v = canon::parse_json(args.as_bytes()).unwrap();
    let (a50, a99) = time(n, || {
        black_box(assess(
            &config,
            "files",
            "default",
            None,
            black_box(&args_v),
        ));
    });
    let (s50, s99) = time(n, || {
        black_box(scan_result(black_box(&result), &policy));
    });
    let (t50, t99) = time(n, || {
        let v = canon::parse_json(black_box(args.as_bytes())).unwrap();
        black_box(assess(&config, "files", "default", None, &v));
        black_box(scan_result(black_box(&result), &policy));
    });
    println!(
        "tool-call path, {} B arguments, {} B result, {n} calls",
        args.len(),
        result.len()
    );
    println!("  parse + hash only (baseline) p50 {parse50:8.1} µs  p99 {parse99:8.1} µs");
    println!("  inspection + role/risk       p50 {a50:8.1} µs  p99 {a99:8.1} µs");
    println!("  response scan                p50 {s50:8.1} µs  p99 {s99:8.1} µs");
    println!(
        "  whole path (parse+inspect+scan) p50 {t50:8.1} µs  p99 {t99:8.1} µs  ({:.1}× the parse baseline)",
        t50 / parse50
    );
}
