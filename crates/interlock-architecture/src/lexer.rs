//! Rust source as code only: comments and literals blanked, then tokens.
//!
//! Why a lexer and not a regex: a path such as `crate::calls` inside a doc
//! comment, a string or a raw string is no dependency, and a `//` inside a
//! string is no comment. Getting those wrong invents or hides edges, so the
//! few rules that matter (nested block comments, escapes, raw strings with
//! hashes, char literals versus lifetimes) are handled here and nowhere else.
//!
//! [`strip`] keeps every line break, so a token's line number is the line in
//! the file.

/// A token of code, after [`strip`]: what the import scanner needs, no more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// An identifier or keyword (`crate`, `mod`, `foo`); a raw identifier
    /// `r#type` is `type`.
    Ident(String),
    /// `::`
    PathSep,
    /// Any other single character of punctuation.
    Punct(char),
    /// A number literal (kept apart so that `1u8` is no identifier).
    Number,
}

/// A token and the 1-based line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned {
    pub token: Token,
    pub line: usize,
}

/// `source` with every comment (`//`, `///`, `//!`, nested `/* */`) and the
/// whole of every string, byte string, C string, raw string and char literal
/// replaced by spaces. Line breaks stay where they were; lifetimes and labels
/// (`'a`, `'outer:`) are code and stay.
pub fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = block_comment(&chars, i, &mut out);
        } else if c == '"' {
            i = quoted(&chars, i, &mut out);
        } else if c == '\'' {
            i = quote_mark(&chars, i, &mut out);
        } else if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_continue(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            i = after_word(&chars, start, i, &word, &mut out);
        } else if c.is_ascii_digit() {
            // A number with its suffix (`1u8`, `0x1F`, `1e10`): copied whole, so
            // its letters never start an identifier or a string prefix.
            while i < chars.len() && (is_ident_continue(chars[i]) || chars[i] == '.') {
                // `1..2` is a range: stop before the second dot.
                if chars[i] == '.' && chars.get(i + 1).is_some_and(|d| !d.is_ascii_digit()) {
                    break;
                }
                out.push(chars[i]);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// What follows an identifier `word` (at `start..end`): a string prefix
/// (`b"`, `c"`, `r"`, `r#"`, `br#"`, `b'`) makes it part of the literal;
/// otherwise the word is code. Returns where to go on.
fn after_word(chars: &[char], start: usize, end: usize, word: &str, out: &mut String) -> usize {
    let next = chars.get(end).copied();
    let raw_prefix = matches!(word, "r" | "br" | "cr");
    if raw_prefix && matches!(next, Some('"' | '#')) {
        let mut j = end;
        while chars.get(j) == Some(&'#') {
            j += 1;
        }
        if chars.get(j) == Some(&'"') {
            let hashes = j - end;
            return raw_string(chars, start, j, hashes, out);
        }
    }
    if matches!(word, "b" | "c") && next == Some('"') {
        blank_range(chars, start, end, out);
        return quoted(chars, end, out);
    }
    if word == "b" && next == Some('\'') {
        blank_range(chars, start, end, out);
        return quote_mark(chars, end, out);
    }
    out.extend(&chars[start..end]);
    end
}

/// A block comment from `i` (at `/*`), nested ones included; returns the index
/// after its `*/` (or the end of an unterminated one).
fn block_comment(chars: &[char], mut i: usize, out: &mut String) -> usize {
    let mut depth = 0usize;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            out.push_str("  ");
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            out.push_str("  ");
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            blank(out, chars[i]);
            i += 1;
        }
    }
    i
}

/// A string from `i` (at its opening `"`), escapes included; returns the
/// index after its closing `"`.
fn quoted(chars: &[char], mut i: usize, out: &mut String) -> usize {
    out.push(' ');
    i += 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                blank(out, chars[i]);
                if let Some(&escaped) = chars.get(i + 1) {
                    blank(out, escaped);
                }
                i += 2;
            }
            '"' => {
                out.push(' ');
                return i + 1;
            }
            other => {
                blank(out, other);
                i += 1;
            }
        }
    }
    i
}

/// A raw string whose prefix starts at `start` and whose opening `"` is at
/// `quote`, with `hashes` hashes; returns the index after its closing
/// `"` and hashes. No escapes inside.
fn raw_string(
    chars: &[char],
    start: usize,
    quote: usize,
    hashes: usize,
    out: &mut String,
) -> usize {
    blank_range(chars, start, quote + 1, out);
    let mut i = quote + 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            blank_range(chars, i, i + 1 + hashes, out);
            return i + 1 + hashes;
        }
        blank(out, chars[i]);
        i += 1;
    }
    i
}

/// A `'` at `i`: a char literal (`'x'`, `'\n'`, `'\u{1F600}'`, `'{'`) is
/// blanked; a lifetime or label (`'a`, `'static`) is code and kept.
fn quote_mark(chars: &[char], i: usize, out: &mut String) -> usize {
    let next = chars.get(i + 1).copied();
    if next == Some('\\') {
        // An escape: up to the closing quote, on this line.
        let mut j = i + 2;
        if j < chars.len() {
            j += 1; // the escaped character, which may itself be `'`
        }
        while j < chars.len() && chars[j] != '\'' && chars[j] != '\n' {
            j += 1;
        }
        let end = if chars.get(j) == Some(&'\'') {
            j + 1
        } else {
            j
        };
        blank_range(chars, i, end, out);
        return end;
    }
    if next.is_some_and(|n| n != '\'' && n != '\n') && chars.get(i + 2) == Some(&'\'') {
        blank_range(chars, i, i + 3, out);
        return i + 3;
    }
    out.push('\'');
    i + 1
}

fn blank(out: &mut String, c: char) {
    out.push(if c == '\n' { '\n' } else { ' ' });
}

fn blank_range(chars: &[char], from: usize, to: usize, out: &mut String) {
    for &c in &chars[from..to.min(chars.len())] {
        blank(out, c);
    }
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The tokens of `source`, comments and literals removed first.
pub fn tokens(source: &str) -> Vec<Spanned> {
    let code = strip(source);
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_continue(chars[i]) {
                i += 1;
            }
            let mut word: String = chars[start..i].iter().collect();
            // A raw identifier: `r#type` is the identifier `type`.
            if word == "r"
                && chars.get(i) == Some(&'#')
                && chars.get(i + 1).is_some_and(|&n| is_ident_start(n))
            {
                let from = i + 1;
                i = from;
                while i < chars.len() && is_ident_continue(chars[i]) {
                    i += 1;
                }
                word = chars[from..i].iter().collect();
            }
            out.push(Spanned {
                token: Token::Ident(word),
                line,
            });
        } else if c.is_ascii_digit() {
            while i < chars.len() && (is_ident_continue(chars[i]) || chars[i] == '.') {
                if chars[i] == '.' && chars.get(i + 1).is_some_and(|d| !d.is_ascii_digit()) {
                    break;
                }
                i += 1;
            }
            out.push(Spanned {
                token: Token::Number,
                line,
            });
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Spanned {
                token: Token::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Spanned {
                token: Token::Punct(c),
                line,
            });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `strip`, with runs of blanks folded so the tests read.
    fn code(source: &str) -> String {
        strip(source)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn line_comments_of_every_kind_go() {
        assert_eq!(
            code("a // crate::x\nb /// crate::y\n//! crate::z\nc"),
            "a b c"
        );
    }

    #[test]
    fn block_comments_go_and_nest() {
        assert_eq!(code("a /* crate::x /* inner */ still */ b"), "a b");
        assert_eq!(code("a /** doc crate::x */ b /*! inner */ c"), "a b c");
    }

    #[test]
    fn strings_go_with_their_escapes() {
        assert_eq!(code(r#"a "crate::x \" // not a comment" b"#), "a b");
        assert_eq!(code(r#"a "\\" crate::y"#), "a crate::y");
        assert_eq!(code("a b\"crate::x\" c\"y\" d"), "a d");
    }

    #[test]
    fn raw_strings_go_with_their_hashes() {
        assert_eq!(code(r###"a r#"crate::x " still"# b"###), "a b");
        assert_eq!(code(r####"a r##"one "# two"## b"####), "a b");
        assert_eq!(code(r#"a r"crate::x\" b"#), "a b");
        assert_eq!(code(r###"a br#"x"# cr"y" b"###), "a b");
    }

    #[test]
    fn a_word_ending_in_r_is_no_raw_string() {
        assert_eq!(code(r#"for"x" bar r#type"#), r#"for bar r#type"#);
    }

    #[test]
    fn char_literals_go_and_lifetimes_stay() {
        assert_eq!(code("a '{' '\\'' '\\n' '\\u{1F600}' b'x' b"), "a b");
        assert_eq!(
            code("fn f<'a>(x: &'a str) -> &'static str"),
            "fn f<'a>(x: &'a str) -> &'static str"
        );
        assert_eq!(
            code("'outer: loop { break 'outer; }"),
            "'outer: loop { break 'outer; }"
        );
        assert_eq!(code("'\"' crate::x"), "crate::x");
    }

    #[test]
    fn line_breaks_stay_where_they_were() {
        let source = "a /* one\ntwo */ b \"x\ny\" c // z\nd";
        assert_eq!(strip(source).lines().count(), source.lines().count());
        let lines: Vec<usize> = tokens(source).iter().map(|t| t.line).collect();
        assert_eq!(lines, [1, 2, 3, 4]);
    }

    #[test]
    fn tokens_split_paths_and_raw_identifiers() {
        let toks: Vec<Token> = tokens("crate::r#type::{a, b}; 1u8")
            .into_iter()
            .map(|t| t.token)
            .collect();
        assert_eq!(
            toks,
            [
                Token::Ident("crate".into()),
                Token::PathSep,
                Token::Ident("type".into()),
                Token::PathSep,
                Token::Punct('{'),
                Token::Ident("a".into()),
                Token::Punct(','),
                Token::Ident("b".into()),
                Token::Punct('}'),
                Token::Punct(';'),
                Token::Number,
            ]
        );
    }

    #[test]
    fn a_range_is_two_numbers() {
        let toks: Vec<Token> = tokens("0..10").into_iter().map(|t| t.token).collect();
        assert_eq!(
            toks,
            [
                Token::Number,
                Token::Punct('.'),
                Token::Punct('.'),
                Token::Number
            ]
        );
    }
}
