//! Circles of files: sets of files that all reach each other through their
//! imports.
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
}
