//! docs/ARCHITECTURE.md held against the repository it describes.
//!
//! Each rule is a test of its own, named for what it holds, so a failure
//! says which promise broke; each lists every problem at once, so one run
//! tells the whole story. The checker is `interlock_architecture`; this file
//! holds only the repository's root, the ratchet, and the messages.

use std::path::Path;
use std::sync::OnceLock;

use interlock_architecture::circles;
use interlock_architecture::edges;
use interlock_architecture::repo::{ARCHITECTURE_MD, Repo};

/// How many "Architecture invariant:" paragraphs of docs/ARCHITECTURE.md name
/// no test today. A ratchet: issue 37 brings it to 0 (each invariant naming,
/// in backticks, the test that holds it). More fails (a new invariant must
/// name its test); fewer fails too, until this number is lowered to match.
const INVARIANT_LINES_WITHOUT_A_TEST: usize = 28;

/// The repository, read once per test binary: `CARGO_MANIFEST_DIR/../..`.
fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Repo::load(&root).unwrap_or_else(|e| panic!("the repository at {}: {e}", root.display()))
    })
}

#[test]
fn crate_edges_are_the_documented_ones() {
    let repo = repo();
    let problems = repo.crate_edge_problems().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        problems.is_empty(),
        "{ARCHITECTURE_MD}'s \"# crate edges\" block and the code disagree:\n  - {}\n\n\
         The edges cargo sees today (normal and build dependencies), lowest layer first:\n{}",
        problems.join("\n  - "),
        edges::render(&repo.code_edges())
    );
}

#[test]
fn no_circle_of_modules_larger_than_two_files() {
    let found = repo().circles().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        found.is_empty(),
        "circles of more than {} files: break each (a type both sides need goes to a room \
         below both; a state the runtime holds goes below the code that acts on it):\n{}",
        circles::TOLERATED,
        found
            .iter()
            .map(|c| c.describe())
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

#[test]
fn no_import_runs_from_a_lower_room_into_a_face() {
    let problems = repo().face_problems().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        problems.is_empty(),
        "imports against {ARCHITECTURE_MD}'s \"# faces\" block (a file outside a face imports nothing \
         from it; a face imports no other face):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn every_invariant_names_the_test_that_holds_it() {
    let unheld = repo().unheld_invariants().unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<String> = unheld
        .iter()
        .map(|inv| {
            let words = inv.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text: String = words.chars().take(100).collect();
            format!("{ARCHITECTURE_MD}:{}: {text}…", inv.line)
        })
        .collect();
    assert!(
        unheld.len() <= INVARIANT_LINES_WITHOUT_A_TEST,
        "{} \"Architecture invariant:\" paragraphs name no test (a test function, in backticks), \
         more than the {INVARIANT_LINES_WITHOUT_A_TEST} tolerated (issue 37); a new invariant must name \
         the test that holds it:\n  - {}",
        unheld.len(),
        listed.join("\n  - ")
    );
    assert!(
        unheld.len() >= INVARIANT_LINES_WITHOUT_A_TEST,
        "only {} \"Architecture invariant:\" paragraphs name no test now: lower \
         INVARIANT_LINES_WITHOUT_A_TEST in {} from {INVARIANT_LINES_WITHOUT_A_TEST} to {} (the ratchet \
         only goes down). Those left:\n  - {}",
        unheld.len(),
        file!(),
        unheld.len(),
        listed.join("\n  - ")
    );
}
