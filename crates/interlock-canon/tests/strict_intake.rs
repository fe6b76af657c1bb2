//! One rejection per rule, for JSON and YAML where it applies. Each asserts
//! the error kind and that the one-line message names the line or JSON path.

use interlock_canon::{
    IntakeError, IntakeErrorKind as K, Location, MAX_DEPTH, from_serde_json, parse_json, parse_yaml,
};

#[track_caller]
fn check(err: IntakeError, doc: &str, kind: K, needle: &str) {
    let msg = err.to_string();
    let doc: String = doc.chars().take(60).collect();
    assert_eq!(err.kind, kind, "{doc:?}: {msg}");
    assert!(
        msg.contains(needle),
        "{doc:?}: message {msg:?} lacks {needle:?}"
    );
    assert!(
        !msg.contains('\n'),
        "{doc:?}: message is not one line: {msg:?}"
    );
}

#[track_caller]
fn json_rejects(doc: &str, kind: K, needle: &str) {
    let err = parse_json(doc.as_bytes()).expect_err(doc);
    check(err, doc, kind, needle);
}

#[track_caller]
fn yaml_rejects(doc: &str, kind: K, needle: &str) {
    let err = parse_yaml(doc.as_bytes()).expect_err(doc);
    check(err, doc, kind, needle);
}

fn syntax(e: &IntakeError) -> bool {
    matches!(e.kind, K::Syntax(_))
}

// ---- duplicate keys ----

#[test]
fn duplicate_keys_json() {
    json_rejects(
        "{\"a\": {\"b\": 1,\n  \"x\": 1, \"x\": 2}}",
        K::DuplicateKey("x".into()),
        "at $.a.x (line 2",
    );
    let e = parse_json(b"{\"stages\":[{\"id\":1,\"id\":2}]}").unwrap_err();
    check(e, "stages", K::DuplicateKey("id".into()), "$.stages[0].id");
    // Escapes are decoded before comparing: "\u0061" is "a".
    json_rejects(r#"{"a":1,"\u0061":2}"#, K::DuplicateKey("a".into()), "$.a");
}

#[test]
fn duplicate_keys_yaml() {
    yaml_rejects(
        "a: 1\nb:\n  c: 1\n  c: 2\n",
        K::DuplicateKey("c".into()),
        "line 4",
    );
    yaml_rejects("a: 1\n'a': 2\n", K::DuplicateKey("a".into()), "line 2");
    yaml_rejects("{x: 1, \"x\": 2}", K::DuplicateKey("x".into()), "line 1");
}

// ---- non-string and complex keys ----

#[test]
fn one_beside_quoted_one_cannot_collide() {
    // The plain `1` is an integer key: rejected before any collision.
    yaml_rejects("\"1\": a\n1: b\n", K::NonStringKey, "line 2");
    yaml_rejects("1: a\n", K::NonStringKey, "line 1");
    // Quoted, it is an ordinary string key.
    let v = parse_yaml(b"'1': a\n").unwrap();
    assert_eq!(v.get("1").and_then(|v| v.as_str()), Some("a"));
}

#[test]
fn non_string_keys_yaml() {
    for (doc, line) in [
        ("a: 1\ntrue: x\n", "line 2"),
        ("a: 1\nnull: x\n", "line 2"),
        ("a: 1\n~: x\n", "line 2"),
        ("a: 1\n1.5: x\n", "line 2"),
        ("a: 1\n0x10: x\n", "line 2"),
        ("{a: 1, : x}", "line 1"),
    ] {
        yaml_rejects(doc, K::NonStringKey, line);
    }
}

#[test]
fn complex_keys_yaml() {
    yaml_rejects("a: 1\n? [a, b]\n: x\n", K::ComplexKey, "line 2");
    yaml_rejects("a: 1\n? {k: v}\n: x\n", K::ComplexKey, "line 2");
    yaml_rejects("{[a]: 1}", K::ComplexKey, "line 1");
}

// ---- merge keys, anchors, aliases, tags ----

#[test]
fn merge_key_yaml() {
    yaml_rejects("a: 1\n<<: {b: 2}\n", K::MergeKey, "line 2");
}

#[test]
fn anchors_and_aliases_yaml() {
    yaml_rejects("a: 1\nb: &x 2\nc: *x\n", K::Anchor, "line 2");
    yaml_rejects("a: 1\nb: &x\n  c: 2\n", K::Anchor, "line 2");
    yaml_rejects("a: 1\nb: &x [1]\n", K::Anchor, "line 2");
    // An alias without an anchor is an error too, naming the line.
    yaml_rejects("a: 1\nb: *x\n", K::Alias, "line 2");
    yaml_rejects("a: 1\nb: [*x]\n", K::Alias, "line 2");
}

#[test]
fn tags_yaml() {
    yaml_rejects("a: 1\nb: !!str 2\n", K::Tag("!!str".into()), "line 2");
    let err = parse_yaml(b"a: 1\nb: !foo 2\n").unwrap_err();
    assert!(
        matches!(err.kind, K::Tag(_)) && err.to_string().contains("line 2"),
        "{err}"
    );
    let err = parse_yaml(b"a: 1\nb: ! 2\n").unwrap_err();
    assert!(
        matches!(err.kind, K::Tag(_)) && err.to_string().contains("line 2"),
        "{err}"
    );
    let err = parse_yaml(b"a: 1\nb: !!map {c: 1}\n").unwrap_err();
    assert!(
        matches!(err.kind, K::Tag(_)) && err.to_string().contains("line 2"),
        "{err}"
    );
    let err = parse_yaml(b"a: 1\nb: !!seq [1]\n").unwrap_err();
    assert!(
        matches!(err.kind, K::Tag(_)) && err.to_string().contains("line 2"),
        "{err}"
    );
}

// ---- documents ----

#[test]
fn multiple_documents_yaml() {
    yaml_rejects("a: 1\n---\nb: 2\n", K::MultipleDocuments, "line 2");
    yaml_rejects("--- 1\n--- 2\n", K::MultipleDocuments, "line 2");
}

#[test]
fn multiple_values_json() {
    let err = parse_json(b"{\"a\":1}\n{\"b\":2}").unwrap_err();
    assert!(syntax(&err) && err.to_string().contains("line 2"), "{err}");
}

#[test]
fn empty_input() {
    for doc in ["", "  \n", "# only a comment\n"] {
        yaml_rejects(doc, K::Empty, "document");
    }
    for doc in ["", " \n\t"] {
        json_rejects(doc, K::Empty, "document");
    }
}

// ---- numbers ----

#[test]
fn non_finite_yaml() {
    for doc in [
        "a: .inf",
        "a: -.Inf",
        "a: +.INF",
        "a: .nan",
        "a: .NaN",
        "a: 1e400",
        "a: -1e999",
    ] {
        let doc = format!("x: 0\n{doc}\n");
        yaml_rejects(&doc, K::NonFinite, "line 2");
    }
    // Quoted they are just strings.
    assert!(parse_yaml(b"a: '.inf'").is_ok());
}

#[test]
fn non_finite_json() {
    json_rejects("{\"a\": [0,\n 1e400]}", K::NonFinite, "$.a[1]");
    json_rejects("{\"a\": -1E+309}", K::NonFinite, "$.a");
    // NaN/Infinity are not JSON at all.
    for doc in ["NaN", "[Infinity]", "{\"a\": -Infinity}"] {
        let err = parse_json(doc.as_bytes()).unwrap_err();
        assert!(syntax(&err) && err.to_string().contains("line 1"), "{err}");
    }
}

#[test]
fn integers_out_of_range_json() {
    // Not the canonical text of the double it rounds to (…996).
    json_rejects(
        "{\"n\": 9007199254740995}",
        K::IntegerOutOfRange("9007199254740995".into()),
        "$.n",
    );
    json_rejects(
        "[-10000000000000001]",
        K::IntegerOutOfRange("-10000000000000001".into()),
        "$[0]",
    );
    // 2^60 written exactly: JCS writes that double as 1152921504606847000.
    json_rejects(
        "[1152921504606846976]",
        K::IntegerOutOfRange("1152921504606846976".into()),
        "$[0]",
    );
    // Would round *into* range as a double; the literal is what counts.
    json_rejects(
        "{\"n\": 9007199254740993}",
        K::IntegerOutOfRange("9007199254740993".into()),
        "$.n",
    );
    let long = format!("[{}]", "9".repeat(500));
    let err = parse_json(long.as_bytes()).unwrap_err();
    assert!(matches!(err.kind, K::IntegerOutOfRange(_)), "{err}");
    // Twenty-two digits: JCS writes such doubles with an exponent.
    json_rejects(
        "[1000000000000000000000]",
        K::IntegerOutOfRange("1000000000000000000000".into()),
        "$[0]",
    );
    // The edges are fine, and so is an integer literal that is exactly the
    // canonical text of a double (what JCS writes for 2^53, 1e16, 2^60).
    assert!(parse_json(b"[9007199254740991, -9007199254740991, -0, 1e21, 1e300, 1e-300]").is_ok());
    assert_eq!(
        parse_json(b"[9007199254740992, -10000000000000000, 1152921504606847000]").unwrap(),
        parse_json(b"[9007199254740992.0, -1e16, 1152921504606846976.0]").unwrap()
    );
}

#[test]
fn integers_out_of_range_yaml() {
    yaml_rejects(
        "a: 1\nn: 9007199254740993\n",
        K::IntegerOutOfRange("9007199254740993".into()),
        "line 2",
    );
    yaml_rejects(
        "a: 1\nn: -9007199254740993\n",
        K::IntegerOutOfRange("-9007199254740993".into()),
        "line 2",
    );
    yaml_rejects(
        "a: 1\nn: 0x20000000000000\n",
        K::IntegerOutOfRange("0x20000000000000".into()),
        "line 2",
    );
    yaml_rejects(
        "a: 1\nn: 0o400000000000000000\n",
        K::IntegerOutOfRange("0o400000000000000000".into()),
        "line 2",
    );
    yaml_rejects(
        "a: 1\nn: +10000000000000000\n",
        K::IntegerOutOfRange("+10000000000000000".into()),
        "line 2",
    );
    // A fraction or exponent makes a double, whatever its magnitude.
    assert!(parse_yaml(b"[1.0e16, -4.25e+20, 1.5e300]").is_ok());
    assert!(parse_yaml(b"[9007199254740991, -9007199254740991, 0x1FFFFFFFFFFFFF, 000000000000000000000000000001]").is_ok());
}

#[test]
fn from_serde_json_applies_the_same_rules() {
    let v = serde_json::json!({"a": {"b": [1, u64::MAX]}});
    let err = from_serde_json(&v).unwrap_err();
    assert!(matches!(err.kind, K::IntegerOutOfRange(_)), "{err}");
    assert_eq!(err.location, Location::Path("$.a.b[1]".into()));
    assert!(err.to_string().starts_with("at $.a.b[1]: "), "{err}");
    let v = serde_json::json!({"x": [9_007_199_254_740_993i64]});
    assert!(matches!(
        from_serde_json(&v).unwrap_err().kind,
        K::IntegerOutOfRange(_)
    ));
    let mut deep = serde_json::json!(1);
    for _ in 0..=MAX_DEPTH {
        deep = serde_json::json!([deep]);
    }
    assert_eq!(
        from_serde_json(&deep).unwrap_err().kind,
        K::TooDeep { limit: MAX_DEPTH }
    );
}

// ---- strings and encoding ----

#[test]
fn lone_surrogates_json() {
    json_rejects("{\"a\":\n \"\\ud800\"}", K::LoneSurrogate, "line 2");
    json_rejects("{\"a\": \"x\\udc00y\"}", K::LoneSurrogate, "$.a");
    json_rejects("[\"\\ud800\\u0041\"]", K::LoneSurrogate, "$[0]");
    json_rejects("{\"\\ud83d\": 1}", K::LoneSurrogate, "line 1");
}

#[test]
fn lone_surrogates_yaml() {
    // YAML's "\uXXXX" escape cannot produce a lone surrogate either.
    let err = parse_yaml(b"a: 1\nb: \"\\ud800\"\n").unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn invalid_utf8() {
    let err = parse_json(b"{\"a\":\n \"\xff\"}").unwrap_err();
    check(err, "json", K::InvalidUtf8, "line 2, column 3");
    let err = parse_yaml(b"a: 1\nb: \xc3\x28\n").unwrap_err();
    check(err, "yaml", K::InvalidUtf8, "line 2, column 4");
    // Overlong encoding and encoded surrogate (CESU-8) are invalid too.
    assert_eq!(
        parse_json(b"\"\xc0\xaf\"").unwrap_err().kind,
        K::InvalidUtf8
    );
    assert_eq!(
        parse_yaml(b"a: \xed\xa0\x80").unwrap_err().kind,
        K::InvalidUtf8
    );
}

// ---- nesting ----

#[test]
fn too_deep_json() {
    let doc = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    json_rejects(&doc, K::TooDeep { limit: MAX_DEPTH }, "$[0]");
    // 100,000 levels must not overflow the stack.
    let hostile = "[".repeat(100_000);
    json_rejects(&hostile, K::TooDeep { limit: MAX_DEPTH }, "line 1");
    let hostile = "{\"a\":".repeat(100_000);
    json_rejects(&hostile, K::TooDeep { limit: MAX_DEPTH }, "$.a.a");
}

#[test]
fn too_deep_yaml() {
    let doc = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    yaml_rejects(&doc, K::TooDeep { limit: MAX_DEPTH }, "line 1");
    let hostile = "[".repeat(100_000);
    yaml_rejects(&hostile, K::TooDeep { limit: MAX_DEPTH }, "line 1");
    let hostile = "{a: ".repeat(100_000);
    yaml_rejects(&hostile, K::TooDeep { limit: MAX_DEPTH }, "line 1");
    // Block nesting, one level per line.
    let block: String = (0..100_000)
        .map(|i| format!("{}a:\n", " ".repeat(i % 1000)))
        .take(200)
        .collect();
    let err = parse_yaml(block.as_bytes()).unwrap_err();
    assert_eq!(err.kind, K::TooDeep { limit: MAX_DEPTH }, "{err}");
    assert!(err.to_string().contains("line 65"), "{err}");
}

// ---- JSON syntax strictness ----

#[test]
fn json_syntax_is_rfc_8259() {
    for (doc, needle) in [
        ("{\"a\": 1,}", "line 1"),
        ("[1,\n2,]", "line 2"),
        ("// c\n{}", "line 1"),
        ("{\"a\": /* c */ 1}", "line 1"),
        ("{'a': 1}", "line 1"),
        ("{a: 1}", "line 1"),
        ("[01]", "line 1"),
        ("[+1]", "line 1"),
        ("[.5]", "line 1"),
        ("[1.]", "line 1"),
        ("[0x10]", "line 1"),
        ("\"\\x41\"", "line 1"),
        ("[\"a\tb\"]", "line 1"),
        ("{\"a\":\n[1, 2}", "line 2"),
        ("[1] x", "line 1"),
        ("\u{feff}[1]", "line 1"),
    ] {
        let err = parse_json(doc.as_bytes()).expect_err(doc);
        let msg = err.to_string();
        assert!(syntax(&err), "{doc:?}: {msg}");
        assert!(msg.contains(needle), "{doc:?}: {msg}");
        assert!(!msg.contains('\n'), "{doc:?}: {msg}");
    }
}

#[test]
fn yaml_syntax_errors_name_the_line() {
    let err = parse_yaml(b"a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
    assert!(syntax(&err), "{err}");
    assert!(err.to_string().starts_with("line "), "{err}");
    assert!(!err.to_string().contains('\n'), "{err}");
}
