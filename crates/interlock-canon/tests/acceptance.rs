//! What strict intake accepts, and how it resolves it.

use interlock_canon::{
    Format, MAX_DEPTH, Map, Number, Value, canonical_bytes, canonical_string, digest,
    from_serde_json, parse, parse_json, parse_yaml, to_serde_json,
};

fn yaml(s: &str) -> Value {
    parse_yaml(s.as_bytes()).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}
fn json(s: &str) -> Value {
    parse_json(s.as_bytes()).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}
fn num(i: i64) -> Value {
    Value::Number(Number::from_i64(i).unwrap())
}

#[test]
fn yaml_1_1_booleans_are_strings() {
    let v = yaml("a: yes\nb: no\nc: on\nd: off\ne: y\nf: Yes\n");
    for (k, s) in [
        ("a", "yes"),
        ("b", "no"),
        ("c", "on"),
        ("d", "off"),
        ("e", "y"),
        ("f", "Yes"),
    ] {
        assert_eq!(v.get(k), Some(&Value::from(s)), "{k}");
    }
    // Keys too: `on:` is the string "on", not true.
    assert_eq!(yaml("on: 1").get("on"), Some(&num(1)));
}

#[test]
fn core_schema_scalars() {
    let v = yaml(
        "dec: 014\nhex: 0x1F\noct: 0o17\nneg: -12\nplus: +3\nf: 1.5\ne: 1e3\n\
         t: true\nT: TRUE\nn: null\ntilde: ~\nempty:\nu: 1_000\nb: 0b1\nq: '12'\ndq: \"true\"\n",
    );
    assert_eq!(v.get("dec"), Some(&num(14)));
    assert_eq!(v.get("hex"), Some(&num(31)));
    assert_eq!(v.get("oct"), Some(&num(15)));
    assert_eq!(v.get("neg"), Some(&num(-12)));
    assert_eq!(v.get("plus"), Some(&num(3)));
    assert_eq!(
        v.get("f").and_then(Value::as_number).map(Number::as_f64),
        Some(1.5)
    );
    assert_eq!(v.get("e"), Some(&num(1000)));
    assert_eq!(v.get("t"), Some(&Value::Bool(true)));
    assert_eq!(v.get("T"), Some(&Value::Bool(true)));
    assert_eq!(v.get("n"), Some(&Value::Null));
    assert_eq!(v.get("tilde"), Some(&Value::Null));
    assert_eq!(v.get("empty"), Some(&Value::Null));
    assert_eq!(v.get("u"), Some(&Value::from("1_000")));
    assert_eq!(v.get("b"), Some(&Value::from("0b1")));
    assert_eq!(v.get("q"), Some(&Value::from("12")));
    assert_eq!(v.get("dq"), Some(&Value::from("true")));
}

#[test]
fn one_and_one_point_zero_canonicalize_alike() {
    for doc in ["1", "1.0", "1e0", "10e-1", "1.000"] {
        assert_eq!(canonical_bytes(&json(doc)), b"1", "json {doc}");
        assert_eq!(canonical_bytes(&yaml(doc)), b"1", "yaml {doc}");
    }
    assert_eq!(json("-0"), json("0"));
    assert_eq!(canonical_bytes(&json("-0.0")), b"0");
    assert_eq!(canonical_bytes(&json("1e30")), b"1e+30");
    assert_eq!(
        canonical_bytes(&json("[9007199254740991,-9007199254740991]")),
        b"[9007199254740991,-9007199254740991]"
    );
}

#[test]
fn yaml_and_json_of_one_document_share_a_digest() {
    let y = "\
# a plan
id: plan-7
stages:
  - id: s1
    action: deploy
    params: {replicas: 3, ratio: 0.25, canary: true}
    note: |
      multi
      line
  - id: s2
    action: 'noop'
    target: ~
";
    let j = r#"{"stages":[{"id":"s1","action":"deploy","params":{"ratio":0.25,"replicas":3.0,"canary":true},
        "note":"multi\nline\n"},{"target":null,"id":"s2","action":"noop"}],"id":"plan-7"}"#;
    let (y, j) = (yaml(y), json(j));
    assert_eq!(y, j);
    assert_eq!(digest(&y), digest(&j));
}

#[test]
fn parse_dispatches_on_format() {
    let y = parse(b"a: [1, 'x']", Format::Yaml).unwrap();
    let j = parse(br#" {"a":[1,"x"]} "#, Format::Json).unwrap();
    assert_eq!(y, j);
}

#[test]
fn strings_are_kept_exactly() {
    // No Unicode normalization: precomposed and decomposed stay distinct.
    let v = json(r#"{"a":"\u00e9","b":"e\u0301","c":"\ud83d\ude02"}"#);
    assert_ne!(v.get("a"), v.get("b"));
    assert_eq!(v.get("c"), Some(&Value::from("😂")));
    assert_eq!(
        canonical_string(&v),
        "{\"a\":\"é\",\"b\":\"e\u{301}\",\"c\":\"😂\"}"
    );
}

#[test]
fn depth_limit_is_inclusive() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    json(&ok);
    yaml(&ok);
    let obj = format!("{}1{}", "{\"a\":".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
    json(&obj);
    yaml(&obj);
}

#[test]
fn json_whitespace_around_the_value_is_fine() {
    assert_eq!(json(" \n\t{\"a\" : [ 1 , 2 ] }\r\n "), yaml("a: [1, 2]"));
}

#[test]
fn serde_json_bridge() {
    let v = json(r#"{"a":[1,2.5,"x",null,true],"b":{"c":-3}}"#);
    let sj = to_serde_json(&v);
    assert_eq!(
        sj,
        serde_json::json!({"a":[1,2.5,"x",null,true],"b":{"c":-3}})
    );
    assert_eq!(from_serde_json(&sj).unwrap(), v);
    // Plain serde_json prints integral numbers as integers.
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"a":[1,2.5,"x",null,true],"b":{"c":-3}}"#
    );
}

#[test]
fn accessors_and_number_rules() {
    let v = json(r#"{"s":"x","n":2,"b":false,"a":[],"o":{}}"#);
    assert_eq!(v.get("s").and_then(Value::as_str), Some("x"));
    assert_eq!(
        v.get("n")
            .and_then(Value::as_number)
            .and_then(Number::as_i64),
        Some(2)
    );
    assert_eq!(v.get("b").and_then(Value::as_bool), Some(false));
    assert_eq!(v.get("a").and_then(Value::as_array), Some(&[][..]));
    assert_eq!(v.get("o").and_then(Value::as_object), Some(&Map::new()));
    assert_eq!(v.get("missing"), None);
    assert_eq!(Value::from("x").get("s"), None);
    let kinds: Vec<_> = ["null", "true", "1", "\"s\"", "[]", "{}"]
        .iter()
        .map(|d| json(d).kind())
        .collect();
    assert_eq!(
        kinds,
        ["null", "boolean", "number", "string", "array", "object"]
    );

    assert_eq!(Number::from_f64(f64::NAN), None);
    assert_eq!(Number::from_f64(f64::INFINITY), None);
    assert_eq!(
        Number::from_f64(-0.0).unwrap().as_f64().to_bits(),
        0.0f64.to_bits()
    );
    assert_eq!(Number::from_i64(9_007_199_254_740_992), None);
    assert_eq!(Number::from_i64(-9_007_199_254_740_992), None);
    assert_eq!(Number::from_f64(2.5).unwrap().as_i64(), None);
    assert_eq!(Number::from_f64(1e21).unwrap().as_i64(), None);
    // Every finite double is a Number, whatever its magnitude.
    assert_eq!(Number::from_f64(1e16).unwrap().as_i64(), None);
    assert!(Value::try_from(1i64 << 53).is_err());
    assert_eq!(Value::try_from(5i64), Ok(num(5)));
}
