//! Faces and lower rooms: the direction imports may run inside a crate.
//!
//! A face is a top-level module that faces someone outside the crate (the
//! gateway's agents, its reviewers, its upstream servers). Faces build on the
//! lower rooms (the crate's other modules); a lower room that imported a face
//! would tie everything below to one audience, and a face that imported
//! another face would tie two audiences together. So: a file outside a face
//! imports nothing from a face, and a face imports nothing from another face.
//! A face's own files import each other freely.

use std::collections::BTreeSet;

use crate::circles::FileGraph;
use crate::modules::CrateTree;

/// The face a file belongs to: the first segment of its module path, if that
/// is a face.
fn face_of<'a>(tree: &CrateTree, file: &str, faces: &'a BTreeSet<String>) -> Option<&'a str> {
    let first = tree.files.get(file)?.module.first()?;
    faces.get(first).map(String::as_str)
}

/// Every import that runs into a face from outside it, one message each
/// (with the paths that make it).
pub fn violations(tree: &CrateTree, faces: &BTreeSet<String>) -> Vec<String> {
    let graph = FileGraph::of(tree);
    let mut problems = Vec::new();
    for (from, tos) in &graph.edges {
        let from_face = face_of(tree, from, faces);
        for (to, why) in tos {
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
        assert!(violations(&gateway(""), &faces(&["agent", "reviewer"])).is_empty());
    }

    #[test]
    fn a_lower_room_may_not_import_a_face() {
        let problems = violations(
            &gateway("use crate::agent::calls::Call;"),
            &faces(&["agent", "reviewer"]),
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
        let problems = violations(&tree, &faces(&["agent", "reviewer"]));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("the face `agent` imports the face `reviewer`"));
        // Not a face: no rule.
        assert!(violations(&tree, &faces(&["agent"])).is_empty());
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
        assert_eq!(violations(&tree, &faces(&["agent"])).len(), 1);
    }
}
