//! `interlock canon` and `interlock plan check`: exact bytes on stdout, one-line
//! reasons on stderr, exit codes that scripts can rely on.

use crate::util::{interlock, stderr, vectors};

#[test]
fn canon_reproduces_every_jcs_vector_byte_for_byte() {
    let dir = vectors().join("jcs");
    let mut n = 0;
    for entry in std::fs::read_dir(dir.join("input")).unwrap() {
        let input = entry.unwrap().path();
        let name = input.file_name().unwrap().to_str().unwrap().to_owned();
        let expected = std::fs::read(dir.join("output").join(&name)).unwrap();
        let out = interlock(&["canon", input.to_str().unwrap()], None);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(out.stdout, expected, "{name}");
        // The same through stdin (JSON by default).
        let out = interlock(&["canon"], Some(&std::fs::read(&input).unwrap()));
        assert_eq!(out.stdout, expected, "{name} via stdin");
        n += 1;
    }
    assert!(n >= 6, "only {n} JCS vectors found");
}

#[test]
fn canon_hash_prints_the_digest_and_a_newline() {
    let out = interlock(
        &["canon", "--hash", "-"],
        Some(b"{\"b\": [1.0, true], \"a\": null}"),
    );
    assert!(out.status.success());
    let expected = {
        use std::fmt::Write as _;
        let digest = interlock_sha256(br#"{"a":null,"b":[1,true]}"#);
        let mut s = String::from("sha256:");
        for b in digest {
            write!(s, "{b:02x}").unwrap();
        }
        s + "\n"
    };
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

/// SHA-256 by way of the core crate's digest of raw bytes.
fn interlock_sha256(bytes: &[u8]) -> [u8; 32] {
    *interlock_core::canon::Digest::of_bytes(bytes).as_bytes()
}

#[test]
fn canon_rejects_bad_input_with_one_line_and_nothing_on_stdout() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("json", br#"{"a":1,"a":2}"#, "duplicate"),
        ("json", br#"{"a":NaN}"#, ""),
        ("json", b"[9007199254740993]", "9007199254740993"),
        ("json", br#"["\ud800"]"#, "surrogate"),
        ("json", b"[\"\xff\"]", "UTF-8"),
        ("yaml", b"a: 1\na: 2\n", "line 2"),
        ("yaml", b"a: &x 1\nb: *x\n", "line 1"),
        ("yaml", b"a: !!str 1\n", "tag"),
        ("yaml", b"<<: {a: 1}\n", "merge"),
        ("yaml", b"a: .nan\n", ""),
        ("yaml", b"--- 1\n--- 2\n", ""),
        ("yaml", b"1: a\n\"1\": b\n", "line 1"),
    ];
    for (format, input, needle) in cases {
        let out = interlock(&["canon", "--format", format], Some(input));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{format} {input:?}: {err}");
        assert!(out.stdout.is_empty(), "{format} {input:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(needle),
            "{format} {input:?}: `{err}` lacks `{needle}`"
        );
    }
    let deep = "[".repeat(100_000);
    let out = interlock(&["canon"], Some(deep.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn canon_takes_the_format_from_the_extension() {
    let yaml = interlock(&["canon", "examples/plans/write-config.yaml"], None);
    assert!(yaml.status.success(), "{}", stderr(&yaml));
    assert!(
        yaml.stdout
            .starts_with(br#"{"body":{"stages":[{"action":"fs.make_dir""#)
    );
    assert!(!yaml.stdout.ends_with(b"\n"));
    let unknown = interlock(&["canon", "Cargo.toml"], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("--format"));
    let missing = interlock(&["canon", "no/such/file.json"], None);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn plan_check_prints_the_hash_of_a_good_plan() {
    let out = interlock(&["plan", "check", "examples/plans/write-config.yaml"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap();
    let body_hash = interlock(
        &["canon", "--hash", "--format", "json"],
        Some(&interlock(&["canon", "examples/plans/write-config.yaml"], None).stdout),
    );
    assert!(body_hash.status.success());
    assert!(hash.starts_with("sha256:") && hash.len() == 72, "{hash}");
    // The plan hash is over the body only, so it differs from the whole document's.
    assert_ne!(hash, String::from_utf8(body_hash.stdout).unwrap());
}

#[test]
fn plan_check_lists_every_violation_and_fails() {
    let out = interlock(
        &["plan", "check", "examples/plans/leaks-a-secret.yaml"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    for needle in [
        "[mutating-has-rollback] stage `push`",
        "[mutating-has-preconditions] stage `push`",
        "[no-secrets] stage `push` at $.body.stages[0].params.headers.x-api-key",
    ] {
        assert!(err.contains(needle), "`{needle}` missing from:\n{err}");
    }
    assert!(
        !err.contains("AKIAIOSFODNN7EXAMPLE"),
        "the secret must not be echoed"
    );
}

#[test]
fn plan_check_json_output_for_scripts() {
    let out = interlock(
        &[
            "plan",
            "check",
            "--json",
            "--policy",
            "examples/policies/team.yaml",
            "examples/plans/write-config.yaml",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["violations"][0]["invariant"], "schema-valid");
    assert_eq!(v["violations"][0]["path"], "$.body.ticket");

    let out = interlock(
        &[
            "plan",
            "check",
            "--json",
            "examples/plans/write-config.yaml",
        ],
        None,
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["plan_id"], "write-app-config");
    assert_eq!(v["risk"], "medium");
}

#[test]
fn plan_check_reports_malformed_documents_and_policies() {
    let out = interlock(&["plan", "check", "-"], Some(b"{\"a\": 1, \"a\": 1}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("duplicate"), "{}", stderr(&out));
    let out = interlock(
        &[
            "plan",
            "check",
            "--policy",
            "Cargo.toml",
            "examples/plans/write-config.yaml",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_is_available_everywhere() {
    for args in [
        &["--help"][..],
        &["canon", "--help"],
        &["plan", "--help"],
        &["plan", "check", "--help"],
    ] {
        let out = interlock(args, None);
        assert!(out.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage:"),
            "{args:?}"
        );
    }
}
