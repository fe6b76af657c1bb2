//! Which libraries a package may depend on: the rules that keep SQL in the
//! store and HTTP in the gateway, checked on cargo's list of each package's
//! normal and build dependencies.
//!
//! Why the manifest and not the code: a package that cannot name `sqlx`
//! cannot run SQL, whatever its code says; and the list is what a reviewer of
//! a `Cargo.toml` change sees. Exceptions are written out, one
//! `(package, library)` pair each, and an exception no longer used is a
//! problem too, so the list only shrinks.

use std::collections::{BTreeMap, BTreeSet};

/// Whether `name` is the library `pattern` names: the name itself, or, for a
/// pattern ending in `*`, any name it begins (`sqlx*` is `sqlx`, `sqlx-core`).
pub fn is(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Every dependency of a package on one of `libraries` that `allowed` does
/// not list, and every exception of `allowed` no package uses any more. An
/// exception `(package, "*")` lets the package depend on all of them (the
/// crate the rule is for).
pub fn problems(
    deps: &BTreeMap<String, BTreeSet<String>>,
    libraries: &[&str],
    allowed: &[(&str, &str)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (package, names) in deps {
        for name in names {
            let Some(library) = libraries.iter().find(|l| is(l, name)) else {
                continue;
            };
            let excepted = allowed
                .iter()
                .any(|(p, l)| p == package && (*l == "*" || is(l, name)));
            if !excepted {
                problems.push(format!(
                    "{package} depends on {name} ({library}), which only the crates this rule names may"
                ));
            }
        }
    }
    for (package, library) in allowed.iter().filter(|(_, l)| *l != "*") {
        let used = deps
            .get(*package)
            .is_some_and(|names| names.iter().any(|n| is(library, n)));
        if !used {
            problems.push(format!(
                "the exception for {package} -> {library} is no longer used: remove it (the list only shrinks)"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(lines: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        lines
            .iter()
            .map(|(p, d)| (p.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_prefix_pattern_names_a_family() {
        assert!(is("sqlx*", "sqlx") && is("sqlx*", "sqlx-core"));
        assert!(is("reqwest", "reqwest") && !is("reqwest", "reqwest-middleware"));
    }

    #[test]
    fn a_dependency_outside_the_exceptions_is_a_problem_and_so_is_an_unused_exception() {
        let d = deps(&[
            ("store", &["sqlx", "tokio"]),
            ("log", &["sqlx-core"]),
            ("cli", &["reqwest"]),
        ]);
        assert!(problems(&d, &["sqlx*"], &[("store", "*"), ("log", "sqlx*")]).is_empty());
        assert_eq!(
            problems(&d, &["sqlx*"], &[("store", "*")]),
            ["log depends on sqlx-core (sqlx*), which only the crates this rule names may"]
        );
        assert_eq!(
            problems(
                &d,
                &["reqwest"],
                &[("cli", "reqwest"), ("store", "reqwest")]
            ),
            [
                "the exception for store -> reqwest is no longer used: remove it (the list only shrinks)"
            ]
        );
    }
}
