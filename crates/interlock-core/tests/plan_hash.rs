//! The plan hash: pinned against the test vector in docs/SCHEMA.md (so another
//! implementation can check itself with the same bytes), and sensitive to any edit.

use interlock_core::canon::{self, Value};
use interlock_core::{Policy, validate};
use proptest::prelude::*;

/// The first fenced block of `lang` after `marker` in SCHEMA.md.
fn block_after(doc: &str, marker: &str, lang: &str) -> String {
    let from = doc
        .find(marker)
        .unwrap_or_else(|| panic!("SCHEMA.md lacks `{marker}`"));
    let fence = format!("```{lang}\n");
    let start = from + doc[from..].find(&fence).expect("fenced block") + fence.len();
    let end = start + doc[start..].find("```").expect("closing fence");
    doc[start..end].to_owned()
}

fn schema_md() -> String {
    std::fs::read_to_string(manifest_dir().join("../../docs/SCHEMA.md")).expect("docs/SCHEMA.md")
}

#[test]
fn schema_md_test_vector_hashes_as_documented() {
    let md = schema_md();
    let plan_json = block_after(&md, "## Test vector", "json");
    let canonical = block_after(&md, "\nCanonical body (JCS", "text");
    let hash = block_after(&md, "\nPlan hash:\n", "text");
    let doc = canon::parse_json(plan_json.as_bytes()).expect("the vector parses");
    let valid = validate(&doc, &Policy::default()).expect("the vector is a valid plan");
    let body = doc.get("body").unwrap();
    assert_eq!(
        String::from_utf8(canon::canonical_bytes(body)).unwrap(),
        canonical.trim_end_matches('\n')
    );
    assert_eq!(valid.hash.to_string(), hash.trim());
}

/// Issue 23 item 6: the second vector, which uses every new field, validates under
/// the policy printed beside it and hashes as documented.
#[test]
fn schema_md_second_test_vector_uses_every_new_field_and_hashes_as_documented() {
    let md = schema_md();
    let from = md
        .find("## Test vector 2")
        .expect("SCHEMA.md has the second vector");
    let section = &md[from..];
    let policy = block_after(section, "## Test vector 2", "yaml");
    let plan_json = block_after(section, "## Test vector 2", "json");
    let canonical = block_after(section, "\nCanonical body (JCS", "text");
    let hash = block_after(section, "\nPlan hash:\n", "text");
    let policy = Policy::from_value(&canon::parse_yaml(policy.as_bytes()).unwrap()).unwrap();
    let doc = canon::parse_json(plan_json.as_bytes()).expect("the vector parses");
    let valid = validate(&doc, &policy).expect("the vector is a valid plan");
    assert_eq!(
        String::from_utf8(canon::canonical_bytes(doc.get("body").unwrap())).unwrap(),
        canonical.trim_end_matches('\n')
    );
    assert_eq!(valid.hash.to_string(), hash.trim());
    // Every new field is there and read.
    let body = &valid.plan.body;
    assert!(body.rollback_of.is_some());
    let s0 = &body.stages[0];
    assert!(s0.target_object.is_some() && s0.preconditions[1].target_object.is_some());
    assert!(s0.preconditions.iter().all(|c| c.expect.is_some()));
    assert!(matches!(
        s0.rollback,
        Some(interlock_core::Rollback::Compensate(_))
    ));
    assert!(matches!(
        body.stages[1].rollback,
        Some(interlock_core::Rollback::Irreversible { .. })
    ));
    assert!(
        policy.registry.action(&body.stages[1].action).is_none(),
        "unknown_action: read"
    );
    // Under the built-in policy it is refused: the new fields need their declarations.
    assert!(validate(&doc, &Policy::default()).is_err());
}

fn small_body() -> Value {
    canon::parse_json(
        br#"{"stages":[{"id":"a","action":"fs.write_file","target":"/x","params":{"content":"hi"},
            "preconditions":[{"probe":"fs.path_absent"}],"rollback":"rm /x"}]}"#,
    )
    .unwrap()
}

/// Every leaf of `v`, as a path of keys/indices.
fn leaves(v: &Value, path: Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, c)| {
            let mut p = path.clone();
            p.push(k.clone());
            leaves(c, p, out)
        }),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| {
            let mut p = path.clone();
            p.push(i.to_string());
            leaves(c, p, out)
        }),
        _ => out.push(path),
    }
}

fn leaf_mut<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k).unwrap(),
        Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        _ => unreachable!(),
    })
}

proptest! {
    /// Changing any leaf of a body — to any other string — changes its hash.
    #[test]
    fn any_edit_changes_the_hash(pick in any::<prop::sample::Index>(), s in ".{0,12}") {
        let body = small_body();
        let mut paths = Vec::new();
        leaves(&body, Vec::new(), &mut paths);
        let path = &paths[pick.index(paths.len())];
        let mut edited = body.clone();
        let leaf = leaf_mut(&mut edited, path);
        prop_assume!(*leaf != Value::String(s.clone()));
        *leaf = Value::String(s);
        prop_assert_ne!(canon::digest(&body), canon::digest(&edited));
    }
}

/// The package's directory, read when the test runs (cargo and nextest set
/// `CARGO_MANIFEST_DIR`): a build cache shared between clones at different
/// paths may hand this binary over from another clone, whose compile-time
/// path need not exist.
fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("CARGO_MANIFEST_DIR (set by cargo and nextest)"),
    )
}
