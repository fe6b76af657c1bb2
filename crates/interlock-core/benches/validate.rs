//! Benchmark (issue 23, Measure): `validate` of a 100-stage plan written as plans
//! were before issue 23 (string targets, described rollbacks, per-probe params)
//! beside one of the same size using every new field (object targets of a declared
//! kind, compensating and irreversible rollbacks, typed `expect` of every operator,
//! `rollback_of`, MCP-bound actions and probes, `unknown_action`), and a third in
//! today's format carrying the same load (as many checks, as long a rollback). The
//! ratios of the medians are what docs/BENCHMARKS.md reports (target ≤ 1.2×).
//! Run: `cargo bench -p interlock-core --bench validate`.

use criterion::{Criterion, criterion_group};
use interlock_core::canon::{self, Value};
use interlock_core::{Plan, PlanSchema, Policy, validate};
use serde_json::json;

const STAGES: usize = 100;

fn today() -> (Value, Policy) {
    let stages: Vec<_> = (0..STAGES)
        .map(|i| {
            json!({
                "id": format!("s{i}"), "action": "fs.write_file",
                "target": format!("/srv/app/conf-{i}.toml"),
                "params": { "content": format!("replicas = {i}\n"), "mode": 420 },
                "preconditions": [
                    { "probe": "fs.path_absent" },
                    { "probe": "fs.file_contains", "target": format!("/srv/app/base-{i}.toml"), "params": { "text": "ok" } }
                ],
                "verify": [ { "probe": "fs.file_contains", "params": { "text": "replicas" } } ],
                "rollback": format!("Delete /srv/app/conf-{i}.toml.")
            })
        })
        .collect();
    let doc = json!({
        "schema_version": "interlock.plan/v1", "plan_id": "bench-today", "title": "bench",
        "proposer": "agent:bench", "created_at": "2026-12-01T12:00:00Z",
        "body": { "stages": stages }
    });
    (canon::from_serde_json(&doc).unwrap(), Policy::default())
}

/// Today's format carrying as much as [`every_new_field`] does: as many checks per
/// stage (the compensating stage's two counted on its stage) and a described
/// rollback as long as the compensation's JSON — the same work, without the new
/// fields, so the difference is what the new fields themselves cost.
fn today_same_load() -> (Value, Policy) {
    let check = |i: usize, j: usize| {
        json!({ "probe": "fs.file_contains", "target": format!("/srv/app/state-{i}-{j}.txt"),
                "params": { "text": format!("ready-{j}") } })
    };
    let stages: Vec<_> = (0..STAGES)
        .map(|i| {
            let extra = if i % 2 == 0 { 2 } else { 0 };
            json!({
                "id": format!("s{i}"), "action": "fs.write_file",
                "target": format!("/srv/shop/services/svc-{i}/replicas"),
                "params": { "content": "4" },
                "preconditions": (0..2).map(|j| check(i, j)).collect::<Vec<_>>(),
                "verify": (2..5 + extra).map(|j| check(i, j)).collect::<Vec<_>>(),
                "rollback": if i % 2 == 0 {
                    format!("Scale service svc-{i} in namespace shop (tier web) back to 2 replicas with svc.scale, after checking that at least 1 replica is healthy; then verify that exactly 2 replicas are healthy.")
                } else {
                    "Irreversible: scaling down drains connections that cannot be restored.".to_owned()
                }
            })
        })
        .collect();
    let doc = json!({
        "schema_version": "interlock.plan/v1", "plan_id": "bench-today-load", "title": "bench",
        "proposer": "agent:bench", "created_at": "2026-12-01T12:00:00Z",
        "body": { "stages": stages }
    });
    (canon::from_serde_json(&doc).unwrap(), Policy::default())
}

fn every_new_field() -> (Value, Policy) {
    let policy = canon::parse_yaml(
        br#"
policy_version: interlock.policy/v1
unknown_action: mutating
actions:
  - { name: svc.scale, mutating: true, risk: medium, mcp: { server: ops, tool: scale },
      params: [{ name: replicas, type: integer }] }
probes:
  - { name: svc.healthy_replicas, returns: number, mcp: { server: ops, tool: healthy_replicas } }
  - { name: svc.version, returns: version, mcp: { server: ops, tool: version } }
  - { name: svc.status, returns: string, mcp: { server: ops, tool: status } }
  - { name: svc.regions, returns: list, mcp: { server: ops, tool: regions } }
target_kinds:
  - kind: service
    fields:
      - { name: namespace, type: string, required: true, pattern: "[a-z][a-z0-9-]*" }
      - { name: tier, type: string, enum: [web, worker] }
forbidden:
  objects: [{ kind: service, id: "prod-*" }]
"#,
    )
    .unwrap();
    let policy = Policy::from_value(&policy).unwrap();
    let target = |i: usize| json!({ "kind": "service", "id": format!("svc-{i}"), "namespace": "shop", "tier": "web" });
    let stages: Vec<_> = (0..STAGES)
        .map(|i| {
            let rollback = if i % 2 == 0 {
                json!({ "action": "svc.scale", "target": target(i), "params": { "replicas": 2 },
                        "preconditions": [{ "probe": "svc.healthy_replicas", "expect": { "op": "at_least", "value": 1 } }],
                        "verify": [{ "probe": "svc.healthy_replicas", "expect": { "op": "equals", "value": 2 } }] })
            } else {
                json!({ "irreversible": true, "justification": "scaling down drains connections that cannot be restored" })
            };
            json!({
                "id": format!("s{i}"), "action": if i == 7 { "svc.unregistered" } else { "svc.scale" },
                "target": target(i),
                "params": { "replicas": 4 },
                "preconditions": [
                    { "probe": "svc.healthy_replicas", "expect": { "op": "at_least", "value": 2 } },
                    { "probe": "svc.version", "target": target(i + 1000), "expect": { "op": "at_most", "value": "2.1" } }
                ],
                "verify": [
                    { "probe": "svc.status", "expect": { "op": "matches", "value": "^(ready|serving)$" } },
                    { "probe": "svc.regions", "expect": { "op": "contains", "value": "eu-1" } },
                    { "probe": "svc.status", "expect": { "op": "not_equals", "value": "down" } }
                ],
                "rollback": rollback
            })
        })
        .collect();
    let doc = json!({
        "schema_version": "interlock.plan/v1", "plan_id": "bench-new", "title": "bench",
        "proposer": "agent:bench", "created_at": "2026-12-01T12:00:00Z",
        "body": { "stages": stages, "rollback_of": { "plan_id": "bench-halted", "revision": 1,
            "plan_hash": "sha256:921070a82a6d48263fdae879a0e1dae564713f4741e2e95dbceea7d0ae542e0e" } }
    });
    (canon::from_serde_json(&doc).unwrap(), policy)
}

fn bench(c: &mut Criterion) {
    let (old, old_policy) = today();
    let (new, new_policy) = every_new_field();
    let (load, load_policy) = today_same_load();
    validate(&old, &old_policy).expect("today's plan validates");
    validate(&load, &load_policy).expect("today's same-load plan validates");
    for (name, doc) in [
        ("today", &old),
        ("today_same_load", &load),
        ("every_new_field", &new),
    ] {
        eprintln!(
            "{name}: {} canonical body bytes",
            canon::canonical_bytes(doc.get("body").unwrap()).len()
        );
    }
    validate(&new, &new_policy).expect("the plan with every new field validates");
    let mut g = c.benchmark_group("validate_100_stages");
    g.bench_function("today", |b| b.iter(|| validate(&old, &old_policy).unwrap()));
    g.bench_function("today_same_load", |b| {
        b.iter(|| validate(&load, &load_policy).unwrap())
    });
    g.bench_function("every_new_field", |b| {
        b.iter(|| validate(&new, &new_policy).unwrap())
    });
    g.finish();
    // Where the time goes: the secret scan (proportional to the body's strings)
    // and the schema read, each alone.
    let mut g = c.benchmark_group("validate_100_stages_parts");
    for (name, doc, policy) in [
        ("today", &old, &old_policy),
        ("today_same_load", &load, &load_policy),
        ("every_new_field", &new, &new_policy),
    ] {
        let body = doc.get("body").unwrap();
        g.bench_function(format!("{name}/secret_scan"), |b| {
            b.iter(|| policy.secrets.scan_value(body, "$.body"))
        });
        g.bench_function(format!("{name}/read"), |b| {
            b.iter(|| Plan::read(doc, PlanSchema::of(policy)).unwrap())
        });
        g.bench_function(format!("{name}/canonical_bytes"), |b| {
            b.iter(|| canon::canonical_bytes(body).len())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

/// `VALIDATE_ONLY=today|today_same_load|every_new_field` runs just 20 validations of
/// that plan, for an instruction count that a loaded machine does not distort:
/// `VALIDATE_ONLY=every_new_field valgrind --tool=callgrind <this bench binary>`.
fn main() {
    if let Ok(which) = std::env::var("VALIDATE_ONLY") {
        let (doc, policy) = match which.as_str() {
            "today" => today(),
            "today_same_load" => today_same_load(),
            "every_new_field" => every_new_field(),
            other => {
                panic!("VALIDATE_ONLY={other}: one of today, today_same_load, every_new_field")
            }
        };
        for _ in 0..20 {
            std::hint::black_box(validate(&doc, &policy).unwrap());
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
