//! Circles of files: sets of files that all reach each other through their
//! imports, and the ratchet that holds them.
//!
//! Why files and not modules: a file is what a reader opens and what a
//! refactor moves. Two files that name each other (a parent and its child,
//! a type and its tests' helper) are tolerated; three or more files that all
//! depend on all the others cannot be understood, tested or split one at a
//! time, which is what the rooms of ARCHITECTURE.md are for.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::graph;
use crate::modules::CrateTree;

/// The largest circle that is tolerated: a pair of files.
pub const TOLERATED: usize = 2;

/// The files of one crate and the edges between them, each edge with the paths
/// that make it (`file:line: crate::a::b`).
#[derive(Debug, Clone, Default)]
pub struct FileGraph {
    pub edges: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    pub files: BTreeSet<String>,
}

impl FileGraph {
    /// Every edge of a crate's files; an edge from a file to itself is none.
    pub fn of(tree: &CrateTree) -> Self {
        let mut graph = FileGraph {
            files: tree.files.keys().cloned().collect(),
            ..FileGraph::default()
        };
        for (from, file) in &tree.files {
            for path in &file.scan.paths {
                let Some(to) = tree.resolve(from, path) else {
                    continue;
                };
                if to == from {
                    continue;
                }
                graph
                    .edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to.to_string())
                    .or_default()
                    .push(format!("{from}:{}: {}", path.line, path.text()));
            }
        }
        graph
    }

    /// The circles of more than [`TOLERATED`] files, each sorted, sorted.
    pub fn circles(&self) -> Vec<Circle> {
        let names: Vec<&String> = self.files.iter().collect();
        let number: BTreeMap<&String, usize> =
            names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let adjacency: Vec<Vec<usize>> = names
            .iter()
            .map(|from| {
                self.edges
                    .get(*from)
                    .map(|tos| {
                        tos.keys()
                            .filter_map(|to| number.get(to).copied())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        graph::strongly_connected(&adjacency)
            .into_iter()
            .filter(|component| component.len() > TOLERATED)
            .map(|component| {
                let files: Vec<String> = component.iter().map(|&i| names[i].clone()).collect();
                let members: BTreeSet<&String> = files.iter().collect();
                let mut ties = Vec::new();
                for from in &files {
                    for (to, why) in self.edges.get(from).into_iter().flatten() {
                        if members.contains(to) {
                            ties.push(Tie {
                                from: from.clone(),
                                to: to.clone(),
                                why: why.clone(),
                            });
                        }
                    }
                }
                Circle { files, ties }
            })
            .collect()
    }
}

/// One edge inside a circle, and the paths that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tie {
    pub from: String,
    pub to: String,
    pub why: Vec<String>,
}

/// A circle of files (a strongly connected component of more than two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// Its files, sorted.
    pub files: Vec<String>,
    pub ties: Vec<Tie>,
}

impl Circle {
    /// The circle for a reader: its files, then every edge between them with
    /// the first paths that make it.
    pub fn describe(&self) -> String {
        let mut out = format!("a circle of {} files:\n", self.files.len());
        for file in &self.files {
            let _ = writeln!(out, "    {file}");
        }
        out.push_str("  tied by:\n");
        for tie in &self.ties {
            let more = tie.why.len().saturating_sub(3);
            let shown: Vec<&str> = tie
                .why
                .iter()
                .take(3)
                .map(|w| w.rsplit_once(": ").map_or(w.as_str(), |(_, p)| p))
                .collect();
            let _ = write!(out, "    {} -> {}: {}", tie.from, tie.to, shown.join(", "));
            if more > 0 {
                let _ = write!(out, " (+{more} more)");
            }
            out.push('\n');
        }
        out
    }
}

/// The ratchet: every circle found must be listed exactly, and every listed
/// circle must still be found exactly. A circle that shrank fails too, until
/// the list is written as it is now, so each step of the refactor is recorded
/// and a shrunk circle cannot silently grow back to its old size. A circle
/// that is new, or larger than any listed, is refused outright. Returns one
/// message per problem.
pub fn ratchet(found: &[Circle], known: &[&[&str]]) -> Vec<String> {
    let known_sets: Vec<BTreeSet<&str>> = known
        .iter()
        .map(|files| files.iter().copied().collect())
        .collect();
    let found_sets: Vec<BTreeSet<&str>> = found
        .iter()
        .map(|c| c.files.iter().map(String::as_str).collect())
        .collect();
    let mut problems = Vec::new();
    for (circle, files) in found.iter().zip(&found_sets) {
        if known_sets.contains(files) {
            continue;
        }
        if known_sets.iter().any(|set| files.is_subset(set)) {
            problems.push(format!(
                "a known circle shrank to {} files: write it in KNOWN_CIRCLES as it is now \
                 (the list records every step): {}",
                files.len(),
                circle.describe()
            ));
        } else {
            problems.push(format!(
                "a new circle, or a known one that grew (no circle of KNOWN_CIRCLES holds all its files); \
                 break it: {}",
                circle.describe()
            ));
        }
    }
    for (files, set) in known.iter().zip(&known_sets) {
        if !found_sets.contains(set) {
            problems.push(format!(
                "the known circle of {} files starting with {} is no longer found as listed \
                 (it is gone, or shrank): remove it from KNOWN_CIRCLES, or write what it shrank to",
                files.len(),
                files.first().copied().unwrap_or("(nothing)")
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::tests::fixture;

    fn ring() -> CrateTree {
        fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "mod a; mod b; mod c; mod d;"),
                ("src/a.rs", "use crate::b::X;"),
                ("src/b.rs", "fn f() { super::c::g() }"),
                ("src/c.rs", "use crate::{a::Y, d};"),
                ("src/d.rs", "use crate::c; use self::inner::Z; mod inner {}"),
            ],
        )
    }

    #[test]
    fn a_ring_of_three_is_a_circle_and_a_pair_is_not() {
        let graph = FileGraph::of(&ring());
        let circles = graph.circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(
            circles[0].files,
            ["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs"]
        );
        let text = circles[0].describe();
        assert!(text.contains("src/b.rs -> src/c.rs: super::c::g"), "{text}");
    }

    #[test]
    fn a_pair_alone_is_tolerated() {
        let tree = fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "mod a; mod b;"),
                ("src/a.rs", "use crate::b;"),
                ("src/b.rs", "use crate::a;"),
            ],
        );
        assert!(FileGraph::of(&tree).circles().is_empty());
    }

    #[test]
    fn the_ratchet_wants_every_circle_listed_exactly() {
        let found = FileGraph::of(&ring()).circles();
        let exact: &[&[&str]] = &[&["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs"]];
        assert!(ratchet(&found, exact).is_empty());
        let wider: &[&[&str]] = &[&["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs", "src/e.rs"]];
        let problems = ratchet(&found, wider);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("shrank to 4 files"));
        assert!(problems[1].contains("remove it from KNOWN_CIRCLES"));
        let narrower: &[&[&str]] = &[&["src/a.rs", "src/b.rs", "src/c.rs"]];
        let problems = ratchet(&found, narrower);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("a new circle"));
        assert!(problems[1].contains("remove it from KNOWN_CIRCLES"));
    }

    #[test]
    fn a_known_circle_that_is_gone_must_be_removed() {
        let problems = ratchet(&[], &[&["src/x.rs", "src/y.rs", "src/z.rs"]]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("remove it from KNOWN_CIRCLES"));
    }
}
