//! Faces and lower rooms: the direction imports may run inside a crate.
//!
//! A face is a top-level module that faces someone outside the crate (the
//! gateway's agents, its reviewers, its upstream servers). Faces build on the
//! lower rooms (the crate's other modules); a lower room that imported a face
//! would tie everything below to one audience, and a face that imported
//! another face would tie two audiences together. So: a file outside a face
//! imports nothing from a face, and a face imports nothing from another face.
//! A face's own files import each other freely.
//!
//! A join is a top-level module that joins the faces into one whole (the
//! gateway's `http`, one server for every face): it may import the faces and
//! the lower rooms, and nothing imports it.

use std::collections::BTreeSet;

use crate::circles::FileGraph;
use crate::modules::CrateTree;

/// The face (or join) a file belongs to: the first segment of its module
/// path, if that is one of `names`.
fn face_of<'a>(tree: &CrateTree, file: &str, names: &'a BTreeSet<String>) -> Option<&'a str> {
    let first = tree.files.get(file)?.module.first()?;
    names.get(first).map(String::as_str)
}

/// Every import that runs into a face from outside it, or into a join, one
/// message each (with the paths that make it).
pub fn violations(
    tree: &CrateTree,
    faces: &BTreeSet<String>,
    joins: &BTreeSet<String>,
) -> Vec<String> {
    let graph = FileGraph::of(tree);
    let mut problems = Vec::new();
    for (from, tos) in &graph.edges {
        let from_face = face_of(tree, from, faces);
        let from_join = face_of(tree, from, joins);
        for (to, why) in tos {
            if let Some(join) = face_of(tree, to, joins)
                && from_join != Some(join)
            {
                problems.push(format!(
                    "a room imports the join `{join}` (nothing imports what joins the faces): {from} -> {to} ({})",
                    why.join("; ")
                ));
                continue;
            }
            if from_join.is_some() {
                continue;
            }
            let Some(to_face) = face_of(tree, to, faces) else {
                continue;
            };
            if from_face == Some(to_face) {
                continue;
            }
            let what = match from_face {
                Some(other) => format!("the face `{other}` imports the face `{to_face}`"),
                None => format!("a lower room imports the face `{to_face}`"),
            };
            problems.push(format!("{what}: {from} -> {to} ({})", why.join("; ")));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::tests::fixture;

    fn faces(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    fn gateway(extra: &str) -> CrateTree {
        fixture(
            "src/lib.rs",
            &[
                (
                    "src/lib.rs",
                    "pub mod agent; pub mod reviewer; mod views; mod auth;",
                ),
                (
                    "src/agent/mod.rs",
                    "mod calls; use crate::views::Plan; use crate::auth;",
                ),
                (
                    "src/agent/calls.rs",
                    "use super::Session; use crate::agent::mod_item;",
                ),
                ("src/reviewer.rs", "use crate::views::Plan;"),
                ("src/views.rs", extra),
                ("src/auth.rs", "use crate::views;"),
            ],
        )
    }

    #[test]
    fn faces_may_use_lower_rooms_and_their_own_files() {
        assert!(violations(&gateway(""), &faces(&["agent", "reviewer"]), &none()).is_empty());
    }

    #[test]
    fn a_lower_room_may_not_import_a_face() {
        let problems = violations(
            &gateway("use crate::agent::calls::Call;"),
            &faces(&["agent", "reviewer"]),
            &none(),
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with(
            "a lower room imports the face `agent`: src/views.rs -> src/agent/calls.rs"
        ));
        assert!(problems[0].contains("src/views.rs:1: crate::agent::calls::Call"));
    }

    #[test]
    fn a_face_may_not_import_another_face() {
        let tree = fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "pub mod agent; pub mod reviewer;"),
                ("src/agent.rs", "use crate::reviewer::Decision;"),
                ("src/reviewer.rs", ""),
            ],
        );
        let problems = violations(&tree, &faces(&["agent", "reviewer"]), &none());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("the face `agent` imports the face `reviewer`"));
        // Not a face: no rule.
        assert!(violations(&tree, &faces(&["agent"]), &none()).is_empty());
    }

    #[test]
    fn the_crate_root_is_a_lower_room() {
        let tree = fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "pub mod agent; pub use self::agent::Serve;"),
                ("src/agent.rs", ""),
            ],
        );
        assert_eq!(violations(&tree, &faces(&["agent"]), &none()).len(), 1);
    }

    #[test]
    fn a_join_may_import_the_faces_and_nothing_imports_it() {
        let tree = fixture(
            "src/lib.rs",
            &[
                (
                    "src/lib.rs",
                    "pub mod agent; pub mod reviewer; pub mod http; mod views;",
                ),
                ("src/agent.rs", "use crate::views::Plan;"),
                ("src/reviewer.rs", ""),
                (
                    "src/http.rs",
                    "use crate::agent::serve; use crate::reviewer::routes;",
                ),
                ("src/views.rs", "use crate::http::Peer;"),
            ],
        );
        let problems = violations(&tree, &faces(&["agent", "reviewer"]), &faces(&["http"]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with(
            "a room imports the join `http` (nothing imports what joins the faces): src/views.rs -> src/http.rs"
        ));
        // Without the join declared, http is a lower room importing faces.
        assert_eq!(
            violations(&tree, &faces(&["agent", "reviewer"]), &none()).len(),
            2
        );
    }
}
