//! What one file declares and names: its `mod` declarations and every path in
//! its code that starts at `crate::`, `self::` or `super::`.
//!
//! Why every path and not only `use` lines: `crate::pins::Pins::observe(..)`
//! in a function body ties two files as surely as a `use` does. Grouped use
//! trees (`use crate::{a::{b, c}, d::*};`) are expanded into one path per
//! leaf, so each names its own target. Paths are kept relative to the inline
//! modules (`mod tests { use super::*; }`) they sit in, because `super` there
//! is the file's own module, not its parent.

use crate::lexer::{self, Spanned, Token};

/// Where a path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// `crate::` (or `$crate::` in a macro of this crate).
    Crate,
    /// `self::`
    SelfModule,
    /// `super::` repeated this many times.
    Super(usize),
}

/// A `mod name;` declaration (a module in a file of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModDecl {
    /// The inline modules (`mod a { .. }`) the declaration sits in.
    pub inline: Vec<String>,
    pub name: String,
    pub line: usize,
}

/// One path of code, its use groups expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    /// The inline modules the path sits in.
    pub inline: Vec<String>,
    pub anchor: Anchor,
    /// The segments after the anchor (`crate::a::b` → `a`, `b`).
    pub rest: Vec<String>,
    pub line: usize,
}

impl PathRef {
    /// The path as written (its group expanded): `crate::a::b`, `super::super::c`.
    pub fn text(&self) -> String {
        let mut parts: Vec<&str> = match self.anchor {
            Anchor::Crate => vec!["crate"],
            Anchor::SelfModule => vec!["self"],
            Anchor::Super(n) => vec!["super"; n],
        };
        parts.extend(self.rest.iter().map(String::as_str));
        parts.join("::")
    }
}

/// What a file declares and names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileScan {
    pub mods: Vec<ModDecl>,
    pub paths: Vec<PathRef>,
    /// Lines with a `#[path = ..]` attribute, which this checker does not follow.
    pub path_attributes: Vec<usize>,
    /// Whether the braces of the code balance. They always do in a file that
    /// compiles, so `false` means the lexer misread a comment or literal.
    pub balanced: bool,
}

/// Scans one file's source.
pub fn scan(source: &str) -> FileScan {
    let toks = lexer::tokens(source);
    let mut scan = FileScan::default();
    // Open inline modules: their names and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut underflow = false;
    let mut i = 0;
    while i < toks.len() {
        let names = || inline.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        match &toks[i].token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                underflow |= depth == 0;
                depth = depth.saturating_sub(1);
            }
            Token::Punct('#') if is_path_attribute(&toks, i) => {
                scan.path_attributes.push(toks[i].line)
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(Token::Ident(name)), Some(after)) =
                    (tok(&toks, i + 1), tok(&toks, i + 2))
                {
                    match after {
                        Token::Punct(';') => scan.mods.push(ModDecl {
                            inline: names(),
                            name: name.clone(),
                            line: toks[i].line,
                        }),
                        Token::Punct('{') => {
                            depth += 1;
                            inline.push((name.clone(), depth));
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "self" | "super")
                    && tok(&toks, i + 1) == Some(&Token::PathSep)
                    && (i == 0 || toks[i - 1].token != Token::PathSep) =>
            {
                let mut found = Vec::new();
                let end = match use_tree(&toks, i, Vec::new(), false, &mut found) {
                    Some(end) => end,
                    None => {
                        // A malformed group: keep its prefix, and let the main
                        // loop walk its braces.
                        found.clear();
                        found.push(plain_path(&toks, i));
                        i + 1
                    }
                };
                for segments in found {
                    if let Some(path) = anchored(segments, names(), toks[i].line) {
                        scan.paths.push(path);
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan.balanced = depth == 0 && !underflow;
    scan
}

fn tok(toks: &[Spanned], i: usize) -> Option<&Token> {
    toks.get(i).map(|t| &t.token)
}

fn is_path_attribute(toks: &[Spanned], i: usize) -> bool {
    tok(toks, i + 1) == Some(&Token::Punct('['))
        && tok(toks, i + 2) == Some(&Token::Ident("path".into()))
        && tok(toks, i + 3) == Some(&Token::Punct('='))
}

/// A use tree (or a plain path of code) from `i`, appended to `prefix`; each
/// leaf's full path goes to `out`. Returns the index after the tree, or
/// `None` for a group that does not parse. In a group, a leaf `self` is the
/// group's prefix itself.
pub(crate) fn use_tree(
    toks: &[Spanned],
    mut i: usize,
    prefix: Vec<String>,
    in_group: bool,
    out: &mut Vec<Vec<String>>,
) -> Option<usize> {
    let mut path = prefix;
    let mut first = true;
    loop {
        match tok(toks, i) {
            Some(Token::Ident(s)) => {
                if !(in_group && first && s == "self") {
                    path.push(s.clone());
                }
                i += 1;
            }
            Some(Token::Punct('*')) => {
                out.push(path);
                return Some(i + 1);
            }
            Some(Token::Punct('{')) if !first => {
                i += 1;
                loop {
                    if tok(toks, i) == Some(&Token::Punct('}')) {
                        return Some(i + 1);
                    }
                    i = use_tree(toks, i, path.clone(), true, out)?;
                    match tok(toks, i) {
                        Some(Token::Punct(',')) => i += 1,
                        Some(Token::Punct('}')) => return Some(i + 1),
                        _ => return None,
                    }
                }
            }
            // A path of code that goes on with generics (`crate::a::<T>`) or
            // a group that is not a use tree: the path ends here.
            _ => {
                if in_group && first {
                    return None;
                }
                out.push(path);
                return Some(i);
            }
        }
        first = false;
        if tok(toks, i) == Some(&Token::PathSep) {
            i += 1;
            continue;
        }
        if tok(toks, i) == Some(&Token::Ident("as".into())) {
            i += 2;
        }
        out.push(path);
        return Some(i);
    }
}

/// The identifiers of a path from `i`, as far as they go.
pub(crate) fn plain_path(toks: &[Spanned], mut i: usize) -> Vec<String> {
    let mut path = Vec::new();
    while let Some(Token::Ident(s)) = tok(toks, i) {
        path.push(s.clone());
        if tok(toks, i + 1) != Some(&Token::PathSep) {
            break;
        }
        i += 2;
    }
    path
}

/// Splits a path's anchor (`crate`, `self`, `super::super`) from its rest.
fn anchored(segments: Vec<String>, inline: Vec<String>, line: usize) -> Option<PathRef> {
    let first = segments.first()?.as_str();
    let (anchor, skip) = match first {
        "crate" => (Anchor::Crate, 1),
        "self" => (Anchor::SelfModule, 1),
        "super" => {
            let n = segments.iter().take_while(|s| *s == "super").count();
            (Anchor::Super(n), n)
        }
        _ => return None,
    };
    Some(PathRef {
        inline,
        anchor,
        rest: segments[skip..].to_vec(),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<String> {
        scan(source).paths.iter().map(PathRef::text).collect()
    }

    #[test]
    fn plain_paths_in_code_and_in_use() {
        assert_eq!(
            texts("use crate::a::B;\nfn f() { crate::c::d(); super::e::F::new(); self::g::H }"),
            [
                "crate::a::B",
                "crate::c::d",
                "super::e::F::new",
                "self::g::H"
            ]
        );
    }

    #[test]
    fn groups_are_expanded_leaf_by_leaf() {
        assert_eq!(
            texts("use crate::{a::{b, c as d}, e::*, f::{self, g}};"),
            [
                "crate::a::b",
                "crate::a::c",
                "crate::e",
                "crate::f",
                "crate::f::g"
            ]
        );
        assert_eq!(
            texts("pub(crate) use super::{x, y::{z}};"),
            ["super::x", "super::y::z"]
        );
    }

    #[test]
    fn super_chains_and_macro_crate() {
        let scan = scan("use super::super::a::b;\nmacro_rules! m { () => { $crate::c::D } }");
        assert_eq!(scan.paths[0].anchor, Anchor::Super(2));
        assert_eq!(scan.paths[0].rest, ["a", "b"]);
        assert_eq!(scan.paths[1].text(), "crate::c::D");
    }

    #[test]
    fn paths_in_comments_and_strings_are_not_code() {
        assert!(
            texts("/// see [`crate::a`]\n// crate::b\nlet s = \"crate::c\"; /* crate::d */")
                .is_empty()
        );
    }

    #[test]
    fn visibility_and_foreign_groups_are_not_paths() {
        assert!(
            texts("pub(crate) fn f() {} pub(super) struct S; use std::io::{self, Write};")
                .is_empty()
        );
        assert_eq!(
            texts("let x = crate::a::<u8>(); let y = crate::b::C { d: 1 };"),
            ["crate::a", "crate::b::C"]
        );
    }

    #[test]
    fn inline_modules_are_remembered() {
        let scan = scan(
            "mod a;\npub mod b { mod c; use super::x; }\nuse self::y;\n#[cfg(test)]\nmod tests { use super::*; }",
        );
        assert_eq!(scan.mods.len(), 2);
        assert_eq!(scan.mods[0].name, "a");
        assert!(scan.mods[0].inline.is_empty());
        assert_eq!(
            (scan.mods[1].name.as_str(), scan.mods[1].inline.clone()),
            ("c", vec!["b".to_string()])
        );
        let inline: Vec<(String, Vec<String>)> = scan
            .paths
            .iter()
            .map(|p| (p.text(), p.inline.clone()))
            .collect();
        assert_eq!(
            inline,
            [
                ("super::x".to_string(), vec!["b".to_string()]),
                ("self::y".to_string(), vec![]),
                ("super".to_string(), vec!["tests".to_string()]),
            ]
        );
    }

    #[test]
    fn lines_are_the_lines_of_the_file() {
        let scan = scan("//! doc\n\nuse crate::{\n    a,\n};\nfn f() { crate::b() }\n");
        let lines: Vec<usize> = scan.paths.iter().map(|p| p.line).collect();
        assert_eq!(lines, [3, 6]);
    }

    #[test]
    fn braces_in_comments_and_literals_do_not_count() {
        assert!(scan("fn f() { let c = '{'; let s = \"}}\"; /* { */ } // }").balanced);
        assert!(!scan("fn f() { ").balanced);
        assert!(!scan("} {").balanced);
    }

    #[test]
    fn path_attributes_are_noticed() {
        assert_eq!(scan("#[path = \"x.rs\"]\nmod x;").path_attributes, [1]);
        assert!(scan("#[cfg(test)]\nmod x;").path_attributes.is_empty());
    }
}
