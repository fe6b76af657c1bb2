//! Property tests: canonicalization is idempotent, parse ∘ canon is the
//! identity on the value model, and any one-leaf change changes the digest.

use interlock_canon::{
    MAX_DEPTH, Map, Number, Value, canonical_bytes, digest, parse_canonical_json, parse_json,
};
use proptest::prelude::*;

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        (-interlock_canon::MAX_SAFE_INTEGER..=interlock_canon::MAX_SAFE_INTEGER)
            .prop_map(|i| Number::from_i64(i).unwrap()),
        (-1000i64..1000).prop_map(|i| Number::from_i64(i).unwrap()),
        // Any finite double the model accepts (bit patterns cover subnormals,
        // huge and tiny exponents).
        any::<u64>().prop_filter_map("not a Number", |b| Number::from_f64(f64::from_bits(b))),
        any::<f64>().prop_filter_map("not a Number", Number::from_f64),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z_]{0,8}",
        // Characters JCS treats specially: controls, quotes, non-BMP.
        proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('/'),
                Just('\u{7f}'),
                Just('\u{2028}'),
                Just('😂'),
                Just('\u{fb33}'),
                proptest::char::range('\0', '\u{1f}'),
            ],
            0..6
        )
        .prop_map(|v| v.into_iter().collect()),
    ]
}

fn arb_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number().prop_map(Value::Number),
        arb_string().prop_map(Value::String),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    arb_leaf().prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(arb_string(), inner, 0..6)
                .prop_map(|m: Map| Value::Object(m)),
        ]
    })
}

/// Paths to every leaf (indices into arrays, keys into objects).
#[derive(Clone, Debug)]
enum Step {
    Index(usize),
    Key(String),
}

fn leaves(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                path.push(Step::Index(i));
                leaves(item, path, out);
                path.pop();
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                path.push(Step::Key(k.clone()));
                leaves(item, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn leaf_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match (v, step) {
        (Value::Array(a), Step::Index(i)) => &mut a[*i],
        (Value::Object(m), Step::Key(k)) => m.get_mut(k).unwrap(),
        _ => unreachable!(),
    })
}

/// A different leaf: for each kind, a value guaranteed not to equal it.
fn mutate(leaf: &Value, salt: u8) -> Value {
    match leaf {
        Value::Null => Value::Bool(salt.is_multiple_of(2)),
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => {
            let f = n.as_f64();
            let g = if f == 0.0 {
                1.0
            } else if f.abs() < 1.0 {
                f * 2.0
            } else {
                -f
            };
            Value::Number(Number::from_f64(g).unwrap())
        }
        Value::String(s) => Value::String(format!("{s}{}", char::from(b'a' + salt % 26))),
        _ => unreachable!(),
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn parse_of_canonical_is_identity(v in arb_value()) {
        prop_assume!(depth(&v) <= MAX_DEPTH);
        let bytes = canonical_bytes(&v);
        let back = parse_json(&bytes).map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&bytes))))?;
        prop_assert_eq!(&back, &v);
    }

    #[test]
    fn canonicalization_is_idempotent(v in arb_value()) {
        let once = canonical_bytes(&v);
        let twice = canonical_bytes(&parse_json(&once).unwrap());
        prop_assert_eq!(&once, &twice);
        // Also from a non-canonical rendering (pretty serde_json output).
        let pretty = serde_json::to_vec_pretty(&v).unwrap();
        prop_assert_eq!(canonical_bytes(&parse_json(&pretty).unwrap()), once);
    }

    #[test]
    fn changing_any_leaf_changes_the_digest(v in arb_value(), pick in any::<prop::sample::Index>(), salt in any::<u8>()) {
        let mut paths = Vec::new();
        leaves(&v, &mut Vec::new(), &mut paths);
        prop_assume!(!paths.is_empty());
        let path = &paths[pick.index(paths.len())];
        let mut changed = v.clone();
        let leaf = leaf_mut(&mut changed, path);
        *leaf = mutate(leaf, salt);
        prop_assert_ne!(&changed, &v);
        prop_assert_ne!(digest(&changed), digest(&v));
    }

    #[test]
    fn writer_matches_serde_json_canonicalizer(v in arb_value()) {
        // The reference: the library serializing the whole value itself.
        let reference = serde_json_canonicalizer::to_vec(&v).unwrap();
        prop_assert_eq!(canonical_bytes(&v), reference);
    }

    #[test]
    fn digest_is_sha256_of_canonical_bytes(v in arb_value()) {
        prop_assert_eq!(digest(&v), interlock_canon::Digest::of_bytes(&canonical_bytes(&v)));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for v in [parse_json(&bytes), interlock_canon::parse_yaml(&bytes)].into_iter().flatten() {
            prop_assert_eq!(parse_json(&canonical_bytes(&v)).unwrap(), v);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The fast canonical reader agrees with the strict one: on a value's JCS
    /// bytes it gives that value (or declines, for a float it rounds
    /// differently), and on those bytes with one byte changed it accepts
    /// only what `parse_json` reads to the same value and is canonical.
    #[test]
    fn parse_canonical_json_agrees_with_parse_json(v in arb_value(), pos in any::<prop::sample::Index>(), x in 1u8..=255) {
        let bytes = canonical_bytes(&v);
        match parse_canonical_json(&bytes) {
            Some(read) => prop_assert_eq!(read, v.clone()),
            None => prop_assert_eq!(parse_json(&bytes).unwrap(), v.clone()),
        }
        let mut t = bytes.clone();
        let at = pos.index(t.len());
        t[at] ^= x;
        if let Some(read) = parse_canonical_json(&t) {
            prop_assert_eq!(parse_json(&t).unwrap(), read.clone());
            prop_assert_eq!(canonical_bytes(&read), t);
        }
    }
}

/// What the strict reader refuses, the fast one does not accept either.
#[test]
fn parse_canonical_json_refuses_what_parse_json_refuses() {
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse_json(at_limit.as_bytes()).is_ok());
    assert!(parse_canonical_json(at_limit.as_bytes()).is_some());
    // Refused by both.
    for bad in [
        r#"{"a":1,"a":1}"#,
        r#"{"a":9007199254740993}"#,
        r#"{"a":-9007199254740993}"#,
        r#"{"a":"\ud800"}"#,
        r#"{"a":1e400}"#,
        deep.as_str(),
    ] {
        assert!(parse_json(bad.as_bytes()).is_err(), "{bad}");
        assert!(parse_canonical_json(bad.as_bytes()).is_none(), "{bad}");
    }
    assert!(parse_canonical_json(&[b'"', 0xff, b'"']).is_none());
    // Read by the strict reader, but not canonical.
    for other in [
        r#"{"b":1,"a":2}"#,
        r#"{"a": 1}"#,
        r#"{"a":1.0}"#,
        r#"{"a":"\u0041"}"#,
    ] {
        assert!(parse_json(other.as_bytes()).is_ok(), "{other}");
        assert!(parse_canonical_json(other.as_bytes()).is_none(), "{other}");
    }
    // A big integer that is exactly a double's rendering is read by both.
    let big = r#"{"a":9007199254740992}"#;
    assert_eq!(
        parse_canonical_json(big.as_bytes()),
        Some(parse_json(big.as_bytes()).unwrap())
    );
}
