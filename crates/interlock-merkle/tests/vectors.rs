//! transparency-dev/merkle test vectors (../shared/vectors/merkle) and RFC 6962 roots for sizes 0–8.

use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use interlock_merkle::*;
use serde_json::Value;

fn merkle_dir() -> PathBuf {
    match std::env::var_os("INTERLOCK_VECTORS_DIR") {
        Some(d) => PathBuf::from(d).join("merkle"),
        None => manifest_dir().join("../../../shared/vectors/merkle"),
    }
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn cases(kind: &str) -> Vec<(PathBuf, Value)> {
    let mut files = Vec::new();
    json_files(&merkle_dir().join("testdata").join(kind), &mut files);
    files
        .into_iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&fs::read_to_string(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, v)
        })
        .collect()
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("field {k} missing"))
}

fn b(v: &Value, k: &str) -> Vec<u8> {
    B64.decode(v[k].as_str().unwrap_or_else(|| panic!("field {k} missing")))
        .unwrap()
}

/// `proof` may be `null` (no proof).
fn proof(v: &Value) -> Vec<Vec<u8>> {
    match &v["proof"] {
        Value::Null => Vec::new(),
        Value::Array(a) => a
            .iter()
            .map(|h| B64.decode(h.as_str().unwrap()).unwrap())
            .collect(),
        other => panic!("bad proof {other}"),
    }
}

/// Runs every case of `kind`, asserting `wantErr`; returns the number of cases.
fn run(kind: &str, check: impl Fn(&Value) -> Result<(), ProofError>) -> usize {
    let cases = cases(kind);
    let mut failures = Vec::new();
    for (path, case) in &cases {
        let want_err = case["wantErr"].as_bool().expect("wantErr");
        let got = check(case);
        if got.is_err() != want_err {
            failures.push(format!(
                "{}: wantErr={want_err}, got {got:?}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {kind} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn inclusion_vectors() {
    let n = run("inclusion", |c| {
        verify_inclusion_bytes(
            u(c, "leafIdx"),
            u(c, "treeSize"),
            &b(c, "leafHash"),
            &proof(c),
            &b(c, "root"),
        )
    });
    eprintln!("inclusion: {n} cases");
    assert!(n > 90, "only {n} inclusion cases found");
}

#[test]
fn consistency_vectors() {
    let n = run("consistency", |c| {
        verify_consistency_bytes(
            u(c, "size1"),
            u(c, "size2"),
            &proof(c),
            &b(c, "root1"),
            &b(c, "root2"),
        )
    });
    eprintln!("consistency: {n} cases");
    assert!(n > 90, "only {n} consistency cases found");
}

#[test]
fn subtree_inclusion_vectors() {
    let n = run("subtreeinclusion", |c| {
        verify_subtree_inclusion_bytes(
            u(c, "leafIdx"),
            u(c, "start"),
            u(c, "end"),
            &b(c, "leafHash"),
            &proof(c),
            &b(c, "root"),
        )
    });
    eprintln!("subtreeinclusion: {n} cases");
    assert!(n > 100, "only {n} subtree inclusion cases found");
}

#[test]
fn subtree_consistency_vectors() {
    let n = run("subtreeconsistency", |c| {
        verify_subtree_consistency_bytes(
            u(c, "start"),
            u(c, "end"),
            u(c, "size"),
            &proof(c),
            &b(c, "root1"),
            &b(c, "root2"),
        )
    });
    eprintln!("subtreeconsistency: {n} cases");
    assert!(n > 100, "only {n} subtree consistency cases found");
}

#[test]
fn total_vector_cases_over_100() {
    let total: usize = [
        "inclusion",
        "consistency",
        "subtreeinclusion",
        "subtreeconsistency",
    ]
    .iter()
    .map(|k| cases(k).len())
    .sum();
    assert!(
        total > 100,
        "only {total} vector cases found under {}",
        merkle_dir().display()
    );
}

fn rfc6962() -> (Vec<Hash>, Vec<Hash>) {
    let v: Value =
        serde_json::from_str(&fs::read_to_string(merkle_dir().join("rfc6962_roots.json")).unwrap())
            .unwrap();
    let leaves = v["leaf_inputs_hex"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| leaf_hash(&hex::decode(h.as_str().unwrap()).unwrap()))
        .collect();
    let roots = v["root_by_tree_size_hex"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            hex::decode(h.as_str().unwrap())
                .unwrap()
                .try_into()
                .unwrap()
        })
        .collect();
    (leaves, roots)
}

#[test]
fn rfc6962_roots_for_sizes_0_to_8() {
    let (leaves, roots) = rfc6962();
    assert_eq!(leaves.len(), 8);
    assert_eq!(roots.len(), 9);
    let tree = Tree::from_leaves(&leaves);
    for (size, want) in roots.iter().enumerate() {
        assert_eq!(&root(&leaves[..size]), want, "root at size {size}");
        assert_eq!(
            &tree.root_at(size as u64).unwrap(),
            want,
            "Tree::root_at({size})"
        );
    }
    assert_eq!(root(&[]), empty_root());
    assert_eq!(tree.root(), roots[8]);
}

#[test]
fn frontier_roots_for_sizes_0_to_8() {
    let (leaves, roots) = rfc6962();
    let mut f = Frontier::new();
    assert_eq!(f.root(), roots[0]);
    for (size, want) in roots.iter().enumerate().skip(1) {
        f.push(leaves[size - 1]);
        assert_eq!(&f.root(), want, "Frontier root at size {size}");
        let tree = Tree::from_leaves(&leaves[..size]);
        assert_eq!(
            &Frontier::of(&tree).root(),
            want,
            "Frontier::of at size {size}"
        );
    }
}

#[test]
fn generated_proofs_up_to_8_verify_and_match_tree() {
    let (leaves, roots) = rfc6962();
    let tree = Tree::from_leaves(&leaves);
    for size in 1..=8u64 {
        let prefix = &leaves[..size as usize];
        for index in 0..size {
            let p = inclusion_proof(prefix, index).unwrap();
            assert_eq!(
                p,
                tree.inclusion_proof(index, size).unwrap(),
                "inclusion ({index},{size})"
            );
            verify_inclusion(
                index,
                size,
                &leaves[index as usize],
                &p,
                &roots[size as usize],
            )
            .unwrap_or_else(|e| panic!("inclusion ({index},{size}): {e}"));
        }
        assert_eq!(
            inclusion_proof(prefix, size),
            Err(ProofError::IndexOutOfRange { index: size, size })
        );
        for m in 1..=size {
            let p = consistency_proof(prefix, m).unwrap();
            assert_eq!(
                p,
                tree.consistency_proof(m, size).unwrap(),
                "consistency ({m},{size})"
            );
            verify_consistency(m, size, &p, &roots[m as usize], &roots[size as usize])
                .unwrap_or_else(|e| panic!("consistency ({m},{size}): {e}"));
        }
        assert_eq!(consistency_proof(prefix, 0), Err(ProofError::EmptyOldTree));
    }
}

#[test]
fn rfc6962_known_proofs() {
    // transparency-dev/merkle testonly reference proof: leaf 0 in the size-8 tree.
    let (leaves, roots) = rfc6962();
    let p = inclusion_proof(&leaves, 0).unwrap();
    let hex: Vec<String> = p.iter().map(hex::encode).collect();
    assert_eq!(
        hex,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ]
    );
    assert_eq!(
        consistency_proof(&leaves[..7], 7).unwrap(),
        Vec::<Hash>::new()
    );
    verify_consistency(7, 7, &[], &roots[7], &roots[7]).unwrap();
}

#[test]
fn typed_error_variants() {
    let (leaves, roots) = rfc6962();
    let p = inclusion_proof(&leaves, 5).unwrap();
    assert!(matches!(
        verify_inclusion(5, 8, &leaves[4], &p, &roots[8]),
        Err(ProofError::RootMismatch { .. })
    ));
    assert_eq!(
        verify_inclusion(5, 8, &leaves[5], &p[..2], &roots[8]),
        Err(ProofError::WrongProofSize {
            expected: 3,
            got: 2
        })
    );
    assert_eq!(
        verify_inclusion(8, 8, &leaves[5], &p, &roots[8]),
        Err(ProofError::IndexOutOfRange { index: 8, size: 8 })
    );
    let c = consistency_proof(&leaves, 3).unwrap();
    assert!(matches!(
        verify_consistency(3, 8, &c, &roots[4], &roots[8]),
        Err(ProofError::OldRootMismatch { .. })
    ));
    assert!(matches!(
        verify_consistency(3, 8, &c, &roots[3], &roots[7]),
        Err(ProofError::RootMismatch { .. })
    ));
    assert_eq!(
        verify_consistency(4, 3, &c, &roots[3], &roots[8]),
        Err(ProofError::SizeOrder { size1: 4, size2: 3 })
    );
    assert_eq!(
        verify_consistency(0, 3, &[], &roots[0], &roots[3]),
        Err(ProofError::EmptyOldTree)
    );
    assert!(matches!(
        verify_inclusion_bytes(0, 1, &[0u8; 31], &[] as &[Hash], &roots[1]),
        Err(ProofError::WrongHashLength { len: 31, .. })
    ));
    let t = Tree::from_leaves(&leaves);
    assert_eq!(
        t.root_at(9),
        Err(ProofError::SizeBeyondTree { size: 9, len: 8 })
    );
}

#[test]
fn subtree_inclusion_matches_generated_proofs() {
    // A subtree inclusion proof is an inclusion proof within the subtree's leaves.
    let leaves: Vec<Hash> = (0u32..40).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    for start in 0..40u64 {
        for end in start + 1..=40 {
            if !is_valid_subtree(start, end) {
                continue;
            }
            let sub = &leaves[start as usize..end as usize];
            let sub_root = root(sub);
            for index in start..end {
                let p = inclusion_proof(sub, index - start).unwrap();
                verify_subtree_inclusion(index, start, end, &leaves[index as usize], &p, &sub_root)
                    .unwrap();
            }
        }
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
