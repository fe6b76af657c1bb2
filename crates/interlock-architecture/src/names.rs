//! The paths a file's code spells, and the ones a rule forbids.
//!
//! Why paths and not a text search: `std::fs` in a doc comment or a string is
//! no I/O, and `use std::{fs, io}` names `std::fs` although the text never
//! says it. The code is read through [`lexer`] (comments and literals
//! blanked) and use groups are expanded as [`imports`] expands them, so a
//! rule such as "the pure crates name no `std::fs`" sees what the compiler
//! sees.
//!
//! A pattern is a path (`std::fs`, `Gateway::prepare`) or one name
//! (`tokio`); it matches a path of code that holds its segments in a row,
//! anywhere (`interlock_gateway::gateway::Gateway::prepare` matches
//! `Gateway::prepare`; `NoteVerifier` does not match `Verifier`).

use crate::imports;
use crate::lexer::{self, Spanned, Token};

/// One path of code, its use groups expanded, and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spelled {
    pub line: usize,
    pub segments: Vec<String>,
}

impl Spelled {
    /// The path as written: `std::fs::read`.
    pub fn text(&self) -> String {
        self.segments.join("::")
    }
}

/// One match of a rule: where, what the code spells, and which pattern it hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit<'p> {
    pub line: usize,
    pub path: String,
    pub pattern: &'p str,
}

/// Every path of `source`'s code, in order. A keyword is a path of one
/// segment (`async`, `await`), like any other name.
pub fn paths(source: &str) -> Vec<Spelled> {
    let toks = lexer::tokens(source);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Token::Ident(word) = &toks[i].token else {
            i += 1;
            continue;
        };
        if !starts_path(&toks, i) {
            i += 1;
            continue;
        }
        if KEYWORDS.contains(&word.as_str()) {
            out.push(Spelled {
                line: toks[i].line,
                segments: vec![word.clone()],
            });
            i += 1;
            continue;
        }
        let mut found = Vec::new();
        let end = match imports::use_tree(&toks, i, Vec::new(), false, &mut found) {
            Some(end) => end,
            None => {
                // A group that is no use tree: keep its prefix, and read on
                // inside its braces.
                found.clear();
                found.push(imports::plain_path(&toks, i));
                i + 1
            }
        };
        for segments in found.into_iter().filter(|s| !s.is_empty()) {
            out.push(Spelled {
                line: toks[i].line,
                segments,
            });
        }
        i = end.max(i + 1);
    }
    out
}

/// Keywords that never stand inside a path: each is a path of its own, so
/// `use ::std::fs` names `std::fs` and `async fn` names `async`.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "static", "struct", "trait", "type", "unsafe", "use", "where", "while",
];

/// Whether the name at `i` begins a path: it does not follow a `::`, or the
/// `::` is a leading one (`::std::fs`, `use ::std`).
fn starts_path(toks: &[Spanned], i: usize) -> bool {
    if i == 0 || toks[i - 1].token != Token::PathSep {
        return true;
    }
    match toks.get(i.wrapping_sub(2)).map(|t| &t.token) {
        None => true,
        Some(Token::Ident(word)) => KEYWORDS.contains(&word.as_str()),
        Some(Token::Punct('>')) => false,
        Some(_) => true,
    }
}

/// Whether the segments of `pattern` (`a::b`) stand in a row in `segments`.
pub fn matches(pattern: &str, segments: &[String]) -> bool {
    let wanted: Vec<&str> = pattern.split("::").collect();
    !wanted.is_empty()
        && segments
            .windows(wanted.len())
            .any(|w| w.iter().zip(&wanted).all(|(s, p)| s == p))
}

/// Every path of `source` that one of `patterns` matches, in order (a path
/// that two patterns match is listed once, under the first).
pub fn forbidden<'p>(source: &str, patterns: &[&'p str]) -> Vec<Hit<'p>> {
    paths(source)
        .into_iter()
        .filter_map(|path| {
            let pattern = patterns.iter().find(|p| matches(p, &path.segments))?;
            Some(Hit {
                line: path.line,
                path: path.text(),
                pattern,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<String> {
        paths(source).iter().map(Spelled::text).collect()
    }

    #[test]
    fn paths_of_code_are_read_with_their_groups_expanded() {
        assert_eq!(
            texts("use std::{fs, net::{TcpStream, IpAddr}};\nasync fn f() { g().await }"),
            [
                "use",
                "std::fs",
                "std::net::TcpStream",
                "std::net::IpAddr",
                "async",
                "fn",
                "f",
                "g",
                "await"
            ]
        );
        assert_eq!(texts("use ::std::env;"), ["use", "std::env"]);
        assert_eq!(texts("Vec::<u8>::new()"), ["Vec", "u8"]);
    }

    #[test]
    fn comments_and_strings_name_nothing() {
        let source = "/// std::fs::read\n// tokio\nlet s = \"std::process\"; /* async */";
        assert_eq!(
            forbidden(source, &["std::fs", "tokio", "std::process", "async"]),
            []
        );
        assert_eq!(texts(source), ["let", "s"]);
    }

    #[test]
    fn a_pattern_matches_its_segments_in_a_row_and_whole() {
        let hits = forbidden(
            "use interlock_gateway::gateway::Gateway;\nfn f() { Gateway::prepare(c); x.verify_strict(m, s); }\nuse interlock_merkle::NoteVerifier;\nuse ed25519_dalek::Verifier as _;",
            &["Gateway::prepare", "Verifier"],
        );
        assert_eq!(
            hits,
            [
                Hit {
                    line: 2,
                    path: "Gateway::prepare".into(),
                    pattern: "Gateway::prepare"
                },
                Hit {
                    line: 4,
                    path: "ed25519_dalek::Verifier".into(),
                    pattern: "Verifier"
                },
            ]
        );
        assert!(matches(
            "std::fs",
            &["std".into(), "fs".into(), "read".into()]
        ));
        assert!(!matches("std::fs", &["std".into(), "fsx".into()]));
    }
}
