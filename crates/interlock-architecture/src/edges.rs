//! Crate edges: the dependencies between Interlock's own packages, as cargo
//! sees them, against the list docs/ARCHITECTURE.md allows.
//!
//! Why both directions: an edge the doc does not allow is a layering break;
//! an edge the doc lists that the code lacks makes the doc lie, and a reader
//! trusts the doc to say what may depend on what.

use std::collections::{BTreeMap, BTreeSet};

/// Package name → the internal packages it depends on.
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// Every difference between the edges in the code and the documented ones,
/// one message each, in a stable order.
pub fn differences(code: &Edges, documented: &Edges) -> Vec<String> {
    let mut problems = Vec::new();
    for package in code.keys().filter(|p| !documented.contains_key(*p)) {
        problems.push(format!(
            "{package} is a workspace package, but the crate edges block has no line for it"
        ));
    }
    for package in documented.keys().filter(|p| !code.contains_key(*p)) {
        problems.push(format!(
            "the crate edges block has a line for {package}, which is no workspace package"
        ));
    }
    for (package, deps) in code {
        let Some(allowed) = documented.get(package) else {
            continue;
        };
        for dep in deps.difference(allowed) {
            problems.push(format!(
                "{package} depends on {dep}, which the crate edges block does not allow"
            ));
        }
        for dep in allowed.difference(deps) {
            problems.push(format!(
                "the crate edges block allows {package} -> {dep}, but {package} does not depend on {dep}: \
                 take it out, the doc must stay true"
            ));
        }
    }
    problems
}

/// The block's lines for `edges`, lowest layer first: a package's layer is
/// one more than its highest dependency's (none: layer 0); within a layer, by
/// name; dependencies by name. What the failure message offers for pasting.
pub fn render(edges: &Edges) -> String {
    let mut layers: BTreeMap<&str, usize> = BTreeMap::new();
    // Relaxation terminates on a DAG; a cycle (cargo refuses one) stops at the bound.
    for _ in 0..=edges.len() {
        let mut changed = false;
        for (package, deps) in edges {
            let layer = deps
                .iter()
                .map(|d| layers.get(d.as_str()).map_or(1, |l| l + 1))
                .max()
                .unwrap_or(0);
            if layers.insert(package, layer) != Some(layer) {
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut order: Vec<(&usize, &&str)> = layers.iter().map(|(p, l)| (l, p)).collect();
    order.sort();
    let mut out = String::new();
    for (_, package) in order {
        let deps: Vec<&str> = edges[*package].iter().map(String::as_str).collect();
        let line = format!("{package}: {}", deps.join(", "));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(lines: &[(&str, &[&str])]) -> Edges {
        lines
            .iter()
            .map(|(p, deps)| (p.to_string(), deps.iter().map(|d| d.to_string()).collect()))
            .collect()
    }

    #[test]
    fn the_same_edges_agree() {
        let e = edges(&[("a", &["b"]), ("b", &[])]);
        assert!(differences(&e, &e).is_empty());
    }

    #[test]
    fn the_block_is_rendered_lowest_layer_first() {
        let e = edges(&[
            ("top", &["mid", "base"]),
            ("mid", &["base"]),
            ("base", &[]),
            ("also", &[]),
        ]);
        assert_eq!(render(&e), "also:\nbase:\nmid: base\ntop: base, mid\n");
    }

    #[test]
    fn every_difference_is_listed_at_once() {
        let code = edges(&[("a", &["b", "c"]), ("b", &[]), ("c", &[]), ("new", &[])]);
        let doc = edges(&[
            ("a", &["b", "old"]),
            ("b", &["c"]),
            ("c", &[]),
            ("gone", &[]),
        ]);
        let problems = differences(&code, &doc);
        assert_eq!(
            problems,
            [
                "new is a workspace package, but the crate edges block has no line for it",
                "the crate edges block has a line for gone, which is no workspace package",
                "a depends on c, which the crate edges block does not allow",
                "the crate edges block allows a -> old, but a does not depend on old: take it out, the doc must stay true",
                "the crate edges block allows b -> c, but b does not depend on c: take it out, the doc must stay true",
            ]
        );
    }
}
