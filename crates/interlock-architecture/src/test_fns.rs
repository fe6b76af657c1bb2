//! The names of the test functions in a file: `fn`s under a `#[test]`-like
//! attribute (`#[test]`, `#[tokio::test]`, `#[tokio::test(flavor = ..)]`).
//!
//! Why only tests: an invariant is held by a test that fails when it breaks;
//! naming the function that implements the rule is not the same promise.

use crate::lexer::{self, Spanned, Token};

/// The test functions of `source`, in order.
pub fn test_fns(source: &str) -> Vec<String> {
    let toks = lexer::tokens(source);
    let mut names = Vec::new();
    let mut pending = false;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].token {
            Token::Punct('#')
                if matches!(toks.get(i + 1).map(|t| &t.token), Some(Token::Punct('['))) =>
            {
                let (is_test, end) = attribute(&toks, i + 1);
                pending |= is_test;
                i = end;
                continue;
            }
            Token::Ident(word) if word == "fn" => {
                if pending && let Some(Token::Ident(name)) = toks.get(i + 1).map(|t| &t.token) {
                    names.push(name.clone());
                }
                pending = false;
            }
            // What may stand between the attributes and `fn`.
            Token::Ident(word)
                if matches!(
                    word.as_str(),
                    "pub"
                        | "async"
                        | "const"
                        | "unsafe"
                        | "extern"
                        | "crate"
                        | "in"
                        | "super"
                        | "self"
                ) => {}
            Token::Punct('(' | ')') | Token::PathSep => {}
            _ => pending = false,
        }
        i += 1;
    }
    names
}

/// The attribute whose `[` is at `open`: whether its path ends in `test`,
/// and the index after its `]`.
fn attribute(toks: &[Spanned], open: usize) -> (bool, usize) {
    let mut path = Vec::new();
    let mut i = open + 1;
    while let Some(t) = toks.get(i) {
        match &t.token {
            Token::Ident(s) => path.push(s.as_str()),
            Token::PathSep => {}
            _ => break,
        }
        i += 1;
    }
    let is_test = path.last() == Some(&"test");
    let mut depth = 0usize;
    let mut j = open;
    while let Some(t) = toks.get(j) {
        match t.token {
            Token::Punct('[') => depth += 1,
            Token::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return (is_test, j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    (is_test, j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_attributes_of_every_kind_name_their_fn() {
        let source = r#"
            #[test]
            fn plain() {}
            #[tokio::test(flavor = "multi_thread")]
            #[ignore = "slow"]
            async fn asynchronous() {}
            #[cfg(test)]
            fn helper() {}
            fn not_a_test() {}
            #[test]
            pub(crate) fn visible() {}
            // #[test] fn commented() {}
            proptest! { #[test] fn generated(x in 0..1u8) {} }
        "#;
        assert_eq!(
            test_fns(source),
            ["plain", "asynchronous", "visible", "generated"]
        );
    }

    #[test]
    fn an_attribute_on_something_else_does_not_carry_over() {
        assert_eq!(
            test_fns("#[test]\nstruct S;\nfn after() {}"),
            Vec::<String>::new()
        );
    }
}
