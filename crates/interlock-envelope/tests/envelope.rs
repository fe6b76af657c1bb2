//! The envelope's rules: what was seen is inside, what is new is a typed
//! finding with its sentence, widening takes the held observation in, and
//! the canonical form round-trips and hashes independent of order.

use std::collections::{BTreeMap, BTreeSet};

use interlock_envelope::{
    ArgFacts, Bounds, Envelope, FindingKind, JsonType, OutputSchema, RecentErrors, ResultFacts,
    Stage,
};
use interlock_inspect::{DataClass, scan_response};
use proptest::prelude::*;

fn args(json: &str) -> ArgFacts {
    ArgFacts::of(&interlock_canon::parse_json(json.as_bytes()).unwrap())
}

fn result(text: &str, structured: Option<serde_json::Value>) -> ResultFacts {
    let mut r = serde_json::json!({"content": [{"type": "text", "text": text}]});
    if let Some(s) = structured {
        r["structuredContent"] = s;
    }
    let bytes = serde_json::to_vec(&r).unwrap().len();
    let scan = scan_response(text, &Default::default());
    ResultFacts::of(&r, bytes, &scan.findings)
}

fn learned() -> Envelope {
    let mut e = Envelope::default();
    for i in 0..20 {
        e.observe_arguments(&args(&format!(
            r#"{{"url": "https://api.example.com/items/{i}", "path": "/srv/data/{i}.json"}}"#
        )));
        e.observe_result(&result(
            &format!("item {i}: see https://cdn.example.com/{i}"),
            Some(serde_json::json!({"id": i, "name": "x"})),
        ));
    }
    e
}

#[test]
fn regression_a_tool_that_starts_returning_secrets_is_outside_its_envelope() {
    let e = learned();
    let r = result(
        "item 3: AKIAIOSFODNN7EXAMPLE and -----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----",
        Some(serde_json::json!({"id": 3, "name": "x"})),
    );
    let found = e.check_result(&r, Bounds::default());
    let kinds: BTreeSet<_> = found.iter().map(|f| (f.kind, f.subject.as_str())).collect();
    assert!(
        kinds.contains(&(FindingKind::NewDataClass, "private_key")),
        "{found:?}"
    );
    assert!(
        kinds.contains(&(FindingKind::NewDataClass, "secret_pattern")),
        "{found:?}"
    );
    let key = found.iter().find(|f| f.subject == "private_key").unwrap();
    assert_eq!(key.kind.stage(), Stage::Result);
    assert_eq!(
        key.explanation(),
        "this tool never returned private keys before"
    );
}

#[test]
fn regression_an_argument_host_outside_the_envelope_is_found_before_the_call() {
    let e = learned();
    let a = args(r#"{"url": "https://evil.example/collect?d=1", "path": "/srv/data/9.json"}"#);
    let found = e.check_arguments(&a);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, FindingKind::NewArgumentHost);
    assert_eq!(found[0].kind.stage(), Stage::Call);
    assert_eq!(
        found[0].explanation(),
        "first call to a host outside the approved set: evil.example"
    );
    // A result's link is not an approved argument host.
    let a = args(r#"{"url": "https://cdn.example.com/1"}"#);
    assert_eq!(e.check_arguments(&a)[0].kind, FindingKind::NewArgumentHost);
}

#[test]
fn a_path_outside_the_learned_roots_and_a_traversal_out_of_one_are_found() {
    let e = learned();
    for p in ["/etc/passwd", "/srv/data/../../etc/shadow", "/srv/other/x"] {
        let found = e.check_arguments(&args(&format!(r#"{{"path": "{p}"}}"#)));
        assert_eq!(found.len(), 1, "{p}: {found:?}");
        assert_eq!(found[0].kind, FindingKind::NewArgumentRoot);
    }
    assert!(
        e.check_arguments(&args(r#"{"path": "/srv/data/a/b/c.json"}"#))
            .is_empty()
    );
}

#[test]
fn structured_members_types_and_size_are_bounded() {
    let e = learned();
    let r = result(
        "item",
        Some(serde_json::json!({"id": "7", "name": "x", "token": "t"})),
    );
    let found = e.check_result(&r, Bounds::default());
    let kinds: Vec<_> = found.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&FindingKind::NewStructuredKey));
    assert!(kinds.contains(&FindingKind::StructuredTypeChanged));
    let big = result(
        &"a ".repeat(10_000),
        Some(serde_json::json!({"id": 1, "name": "x"})),
    );
    let found = e.check_result(&big, Bounds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, FindingKind::ResultTooLarge);
    // A bigger factor takes it in.
    assert!(
        e.check_result(
            &big,
            Bounds {
                size_factor: 1000.0
            }
        )
        .is_empty()
    );
}

#[test]
fn widening_takes_the_held_observation_in_and_changes_the_hash() {
    let e = learned();
    let a = args(r#"{"url": "https://evil.example/x"}"#);
    let r = result("AKIAIOSFODNN7EXAMPLE", None);
    let w = e.widened(&a, Some(&r));
    assert!(w.check_arguments(&a).is_empty());
    assert!(w.check_result(&r, Bounds::default()).is_empty());
    assert_ne!(w.hash(), e.hash());
    assert!(w.classes.contains(&DataClass::SecretPattern));
    // Nothing the old envelope held is lost.
    assert!(e.arg_hosts.is_subset(&w.arg_hosts));
}

#[test]
fn output_schema_violations_and_a_missing_structured_content_are_found() {
    let schema = interlock_canon::parse_json(
        br#"{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}"#,
    )
    .unwrap();
    let s = OutputSchema::compile(&schema).unwrap();
    assert!(
        s.check(&serde_json::json!({"content": [], "structuredContent": {"id": 3}}))
            .is_none()
    );
    let bad = s
        .check(&serde_json::json!({"content": [], "structuredContent": {"id": "3", "extra": 1}}))
        .unwrap();
    assert_eq!(bad.kind, FindingKind::OutputSchemaViolation);
    assert!(bad.subject.contains("/id"), "{}", bad.subject);
    let missing = s.check(&serde_json::json!({"content": []})).unwrap();
    assert_eq!(missing.subject, "the result has no structuredContent");
    // An error result is not held to the schema.
    assert!(
        s.check(&serde_json::json!({"content": [], "isError": true}))
            .is_none()
    );
    // A schema that needs a remote reference is refused, never fetched.
    let remote =
        interlock_canon::parse_json(br#"{"$ref":"https://schemas.example/x.json"}"#).unwrap();
    assert!(OutputSchema::compile(&remote).is_err());
}

#[test]
fn an_error_rate_far_above_the_learned_one_is_reported_but_not_enforced() {
    let mut w = RecentErrors::default();
    let mut found = None;
    for i in 0..12 {
        found = w.record(i % 3 != 0, 0.05).or(found);
    }
    let f = found.expect("8 of 12 failing against a 5% rate");
    assert_eq!(f.kind, FindingKind::ErrorRateRose);
    assert!(!f.kind.enforced());
    let mut w = RecentErrors::default();
    assert!((0..20).all(|i| w.record(i % 4 == 0, 0.25).is_none()));
}

#[test]
fn every_kind_has_a_distinct_name_and_a_sentence() {
    let names: BTreeSet<_> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names.len(), FindingKind::ALL.len());
    for k in FindingKind::ALL {
        let f = interlock_envelope::EnvelopeFinding::new(k, "x");
        assert!(f.explanation().len() > 10);
    }
}

fn arb_facts() -> impl Strategy<Value = (ArgFacts, ResultFacts)> {
    let name = "[a-z]{1,6}";
    (
        proptest::collection::btree_set(name, 0..4),
        proptest::collection::btree_set(name, 0..4),
        proptest::collection::btree_set(name, 0..4),
        proptest::collection::btree_set(0usize..DataClass::ALL.len(), 0..3),
        0u64..100_000,
        proptest::option::of(proptest::collection::btree_map(name, 0usize..6, 0..4)),
        any::<bool>(),
    )
        .prop_map(
            |(hosts, roots, rhosts, classes, bytes, structured, is_error)| {
                (
                    ArgFacts {
                        hosts: hosts.iter().map(|h| format!("{h}.example")).collect(),
                        roots: roots.iter().map(|r| format!("/{r}")).collect(),
                    },
                    ResultFacts {
                        is_error,
                        bytes,
                        hosts: rhosts,
                        roots: BTreeSet::new(),
                        classes: classes.into_iter().map(|i| DataClass::ALL[i]).collect(),
                        structured: structured.map(|m| {
                            m.into_iter()
                                .map(|(k, t)| (k, JsonType::ALL[t]))
                                .collect::<BTreeMap<_, _>>()
                        }),
                    },
                )
            },
        )
}

proptest! {
    #[test]
    fn widening_by_the_recorded_findings_takes_in_what_they_found(
        (a, r) in arb_facts(),
        calls in proptest::collection::vec(arb_facts(), 1..6),
    ) {
        let mut e = Envelope::default();
        for (a, r) in &calls {
            e.observe_arguments(a);
            e.observe_result(r);
        }
        let mut found = e.check_arguments(&a);
        found.extend(e.check_result(&r, Bounds::default()));
        match e.widened_by(&found) {
            Ok(w) => {
                prop_assert!(w.check_arguments(&a).is_empty());
                prop_assert!(w.check_result(&r, Bounds::default()).is_empty());
                prop_assert_ne!(w.hash(), e.hash());
            }
            Err(interlock_envelope::WidenError::NothingToWiden) => prop_assert!(found.is_empty()),
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn what_was_observed_is_always_inside(calls in proptest::collection::vec(arb_facts(), 1..12)) {
        let mut e = Envelope::default();
        for (a, r) in &calls {
            e.observe_arguments(a);
            e.observe_result(r);
        }
        for (a, r) in &calls {
            prop_assert!(e.check_arguments(a).is_empty());
            prop_assert!(e.check_result(r, Bounds::default()).is_empty());
        }
        prop_assert_eq!(e.calls, calls.len() as u64);
    }

    #[test]
    fn the_canonical_form_round_trips_and_ignores_order(calls in proptest::collection::vec(arb_facts(), 0..8)) {
        let mut forward = Envelope::default();
        let mut backward = Envelope::default();
        for (a, r) in &calls {
            forward.observe_arguments(a);
            forward.observe_result(r);
        }
        for (a, r) in calls.iter().rev() {
            backward.observe_arguments(a);
            backward.observe_result(r);
        }
        prop_assert_eq!(forward.hash(), backward.hash());
        let bytes = interlock_canon::canonical_bytes(&forward.to_value());
        let back = Envelope::from_value(&interlock_canon::parse_json(&bytes).unwrap()).unwrap();
        prop_assert_eq!(&back, &forward);
        prop_assert_eq!(back.hash(), forward.hash());
    }

    #[test]
    fn widening_is_monotone((a, r) in arb_facts(), calls in proptest::collection::vec(arb_facts(), 0..6)) {
        let mut e = Envelope::default();
        for (a, r) in &calls {
            e.observe_arguments(a);
            e.observe_result(r);
        }
        let w = e.widened(&a, Some(&r));
        prop_assert!(w.check_arguments(&a).is_empty());
        prop_assert!(w.check_result(&r, Bounds::default()).is_empty());
        for (a, r) in &calls {
            prop_assert!(w.check_arguments(a).is_empty());
            prop_assert!(w.check_result(r, Bounds::default()).is_empty());
        }
    }
}
