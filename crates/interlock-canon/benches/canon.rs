//! Canonicalize-and-hash (`digest`) against plain `serde_json::to_vec` of the
//! same plan-shaped value, at ~10 KB and ~1 MB of canonical JSON.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use interlock_canon::{Digest, Map, Number, Value, canonical_bytes, digest};

fn s(x: &str) -> Value {
    Value::from(x)
}
fn n(i: i64) -> Value {
    Value::Number(Number::from_i64(i).unwrap())
}
fn f(x: f64) -> Value {
    Value::Number(Number::from_f64(x).unwrap())
}
fn obj<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map>(),
    )
}

fn stage(i: usize) -> Value {
    obj([
        ("id", s(&format!("stage-{i:05}"))),
        (
            "action",
            s(["deploy", "scale", "migrate", "restart"][i % 4]),
        ),
        (
            "target",
            s(&format!(
                "cluster/prod-eu-{}/svc/payments-{}",
                i % 3,
                i % 17
            )),
        ),
        (
            "params",
            obj([
                (
                    "image",
                    s(&format!(
                        "registry.example.com/payments:{}.{}.{}",
                        i % 5,
                        i % 11,
                        i
                    )),
                ),
                ("replicas", n((i % 12) as i64 + 1)),
                ("max_surge", f(0.25)),
                ("timeout_s", n(300)),
                (
                    "env",
                    obj([
                        ("REGION", s("eu-west-1")),
                        ("LOG_LEVEL", s("info")),
                        ("FEATURE_X", s("on")),
                    ]),
                ),
                (
                    "labels",
                    Value::Array(vec![
                        s("tier=backend"),
                        s("team=payments"),
                        s(&format!("rev={i}")),
                    ]),
                ),
            ]),
        ),
        (
            "preconditions",
            Value::Array(vec![
                obj([
                    ("probe", s("http")),
                    ("url", s("https://status.example.com/health")),
                    ("expect", n(200)),
                ]),
                obj([
                    ("probe", s("metric")),
                    ("query", s("error_rate{svc=\"payments\"}")),
                    ("max", f(0.015)),
                ]),
            ]),
        ),
        (
            "verify",
            obj([
                ("probe", s("http")),
                ("url", s("https://payments.example.com/ready")),
                ("retries", n(5)),
                ("latency_p99_ms", f(187.5)),
            ]),
        ),
        (
            "rollback",
            obj([
                ("action", s("deploy")),
                (
                    "image",
                    s(&format!(
                        "registry.example.com/payments:{}",
                        i.saturating_sub(1)
                    )),
                ),
                (
                    "reason",
                    s("verify failed — roll back to previous revision"),
                ),
            ]),
        ),
    ])
}

fn plan(stages: usize) -> Value {
    obj([
        ("schema_version", n(1)),
        ("plan_id", s("3f0c6a1e-8d7b-4e52-9a4b-0f3f9c1d2e77")),
        ("title", s("Roll out payments 4.2 to EU clusters")),
        (
            "risk",
            obj([
                ("score", f(0.42)),
                ("blast_radius", s("eu")),
                ("reversible", Value::Bool(true)),
            ]),
        ),
        ("stages", Value::Array((0..stages).map(stage).collect())),
    ])
}

/// The plan with about `target` bytes of canonical JSON.
fn plan_of_size(target: usize) -> Value {
    let one = canonical_bytes(&plan(1)).len();
    let two = canonical_bytes(&plan(2)).len();
    let per_stage = two - one;
    plan(((target.saturating_sub(one)) / per_stage).max(1) + 1)
}

const SIZES: [(&str, usize); 2] = [("10KB", 10 * 1024), ("1MB", 1024 * 1024)];

fn bench(c: &mut Criterion) {
    for (name, size) in SIZES {
        let v = plan_of_size(size);
        let len = canonical_bytes(&v).len() as u64;
        let mut group = c.benchmark_group(format!("canon/{name}"));
        group.throughput(Throughput::Bytes(len));
        group.bench_function("digest (canonicalize+sha256)", |b| {
            b.iter(|| digest(black_box(&v)))
        });
        group.bench_function("serde_json::to_vec", |b| {
            b.iter(|| serde_json::to_vec(black_box(&v)).unwrap())
        });
        group.finish();
    }
}

/// Throughput of `f` over `bytes` per call, in MB/s, over ~`budget`.
fn measure(bytes: usize, budget: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm up
    let start = Instant::now();
    let mut iters = 0u64;
    while start.elapsed() < budget {
        f();
        iters += 1;
    }
    (bytes as f64 * iters as f64) / start.elapsed().as_secs_f64() / 1e6
}

fn ratio_lines() {
    for (name, size) in SIZES {
        let v = plan_of_size(size);
        let len = canonical_bytes(&v).len();
        let budget = Duration::from_secs(2);
        let canon = measure(len, budget, || {
            black_box(digest(black_box(&v)));
        });
        let to_vec = measure(len, budget, || {
            black_box(serde_json::to_vec(black_box(&v)).unwrap());
        });
        // Where the time goes: canonicalization alone, and SHA-256 alone.
        let bytes = canonical_bytes(&v);
        let canon_only = measure(len, budget, || {
            black_box(canonical_bytes(black_box(&v)));
        });
        let sha_only = measure(len, budget, || {
            black_box(Digest::of_bytes(black_box(&bytes)));
        });
        println!(
            "{name} ({len} bytes): canon+hash {canon:.1} MB/s, to_vec {to_vec:.1} MB/s \
             (canonical_bytes alone {canon_only:.1} MB/s, sha256 alone {sha_only:.1} MB/s)"
        );
        println!(
            "{name}: canon+hash vs to_vec throughput ratio: {:.2}",
            canon / to_vec
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratio_lines();
}
