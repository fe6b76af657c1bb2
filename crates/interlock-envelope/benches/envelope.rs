//! The envelope's cost per call on the gateway's path (issue 16 item 2).
//! Target: ≤ 20 µs of CPU per call at p50.
//!
//! What one checked call costs the gateway, all measured together here:
//! reading the hosts and roots of typical (≤ 4 KB) arguments and checking
//! them; reading a typical ~4 KB tool result's facts (with
//! `structuredContent`) and checking them against a learned envelope; and
//! validating `structuredContent` against a compiled `outputSchema`. (The
//! response scan, which runs for every call anyway, finds the data classes
//! and parses the result: the envelope reads the document it parsed, so
//! neither is counted; `envelope/parse_result` shows what a second parse
//! would cost.) A p50 over single calls is printed first, then criterion's
//! figures per part.
//!
//! ```text
//! cargo bench -p interlock-envelope --bench envelope
//! ```

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use interlock_canon::{Value, parse_json};
use interlock_envelope::{ArgFacts, Bounds, Envelope, OutputSchema, ResultFacts};

fn args(i: usize) -> Value {
    let mut files = String::new();
    for f in 0..30 {
        files.push_str(&format!("\"/workspace/src/module_{f}/file_{i}.rs\","));
    }
    files.pop();
    let json = format!(
        r#"{{"url":"https://api.example.com/v1/items?page={i}","path":"/workspace/src/lib.rs","files":[{files}],"message":"Refactor the parser so that it accepts trailing commas; see https://docs.example.com/parser for the rules.","options":{{"depth":3,"follow":true}}}}"#
    );
    assert!(json.len() <= 4096, "{}", json.len());
    parse_json(json.as_bytes()).expect("bench args parse")
}

fn result(i: usize) -> String {
    let mut text = String::new();
    let mut row = 0;
    while text.len() < 3500 {
        text.push_str(&format!(
            "Row {row}: order #10{row:04} shipped to warehouse 7; tracking https://track.example.com/{i}/{row}.\n"
        ));
        row += 1;
    }
    serde_json::to_string(&serde_json::json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"rows": row, "page": i, "next": "/workspace/out/page.json", "ok": true},
    }))
    .unwrap()
}

fn schema() -> OutputSchema {
    OutputSchema::compile(
        &parse_json(
            br#"{"type":"object","properties":{"rows":{"type":"integer"},"page":{"type":"integer"},"next":{"type":"string"},"ok":{"type":"boolean"}},"required":["rows","page","ok"]}"#,
        )
        .unwrap(),
    )
    .unwrap()
}

fn learned() -> Envelope {
    let mut e = Envelope::default();
    for i in 0..20 {
        e.observe_arguments(&ArgFacts::of(&args(i)));
        let raw = result(i);
        let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
        e.observe_result(&ResultFacts::of(&v, raw.len(), &[]));
    }
    e
}

/// One call's whole envelope work, as the gateway does it: on the
/// arguments, and on the result document the response scan parsed.
fn one_call(e: &Envelope, s: &OutputSchema, a: &Value, raw: &str, v: &serde_json::Value) -> usize {
    let facts = ArgFacts::of(a);
    let mut n = e.check_arguments(&facts).len();
    n += usize::from(s.check(v).is_some());
    let r = ResultFacts::of(v, raw.len(), &[]);
    n + e.check_result(&r, Bounds::default()).len()
}

fn p50(label: &str, a: Value, raw: String) {
    let (e, s) = (learned(), schema());
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(
        one_call(&e, &s, &a, &raw, &v),
        0,
        "a call inside the envelope"
    );
    let mut times: Vec<u128> = (0..20_000)
        .map(|_| {
            let t = Instant::now();
            black_box(one_call(
                black_box(&e),
                &s,
                black_box(&a),
                black_box(&raw),
                black_box(&v),
            ));
            t.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    let at =
        |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)] as f64 / 1000.0;
    println!(
        "envelope per call, {label} (args {} B, result {} B): p50 {:.2} µs, p99 {:.2} µs (target ≤ 20 µs at p50)",
        interlock_canon::canonical_bytes(&a).len(),
        raw.len(),
        at(0.5),
        at(0.99)
    );
}

/// A small call, like the gateway_proxy bench's echo: one URL argument, a
/// short text result with structuredContent.
fn small() -> (Value, String) {
    let a = parse_json(br#"{"url":"https://api.example.com/v1/items?page=7","limit":20}"#).unwrap();
    let raw = serde_json::to_string(&serde_json::json!({
        "content": [{"type": "text", "text": "20 items on page 7; track https://track.example.com/7/1"}],
        "structuredContent": {"rows": 20, "page": 7, "ok": true},
    }))
    .unwrap();
    (a, raw)
}

fn bench(c: &mut Criterion) {
    let (a, raw) = small();
    p50("small", a, raw);
    p50("typical 4 KB", args(7), result(7));
    let (e, s) = (learned(), schema());
    let (a, raw) = (args(7), result(7));
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    c.bench_function("envelope/one_call", |b| {
        b.iter(|| {
            one_call(
                black_box(&e),
                &s,
                black_box(&a),
                black_box(&raw),
                black_box(&v),
            )
        })
    });
    c.bench_function("envelope/arguments", |b| {
        b.iter(|| e.check_arguments(&ArgFacts::of(black_box(&a))))
    });
    c.bench_function("envelope/result_facts_and_check", |b| {
        b.iter(|| {
            e.check_result(
                &ResultFacts::of(black_box(&v), raw.len(), &[]),
                Bounds::default(),
            )
        })
    });
    c.bench_function("envelope/output_schema", |b| {
        b.iter(|| s.check(black_box(&v)))
    });
    c.bench_function("envelope/parse_result", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&raw)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
