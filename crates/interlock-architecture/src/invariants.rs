//! "Architecture invariant:" paragraphs of docs/ARCHITECTURE.md and the tests
//! they name.
//!
//! Why: an invariant no test holds is a wish. Each one must name, in
//! backticks, a test function that fails when the invariant breaks, so a
//! reader can go from the sentence to the proof and an editor who deletes
//! the test sees the doc go false.

use std::collections::BTreeSet;

/// What marks an invariant.
pub const MARKER: &str = "Architecture invariant:";

/// One invariant: the line its marker is on, and its text (from the marker
/// to the end of its paragraph, or to the next marker in the same paragraph).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant {
    pub line: usize,
    pub text: String,
}

/// The invariants of a Markdown document. Fenced code blocks are skipped;
/// a paragraph ends at a blank line, a heading, a fence or a new list item.
pub fn invariants(doc: &str) -> Vec<Invariant> {
    let mut out = Vec::new();
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let mut in_fence = false;
    for (n, line) in doc.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            flush(&mut paragraph, &mut out);
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            flush(&mut paragraph, &mut out);
            continue;
        }
        if starts_list_item(trimmed) {
            flush(&mut paragraph, &mut out);
        }
        paragraph.push((n + 1, line));
    }
    flush(&mut paragraph, &mut out);
    out
}

fn starts_list_item(line: &str) -> bool {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ") {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

/// Cuts a finished paragraph into its invariants.
fn flush(paragraph: &mut Vec<(usize, &str)>, out: &mut Vec<Invariant>) {
    let mut current: Option<Invariant> = None;
    for (number, line) in paragraph.drain(..) {
        let mut rest = line;
        while let Some(at) = rest.find(MARKER) {
            if let Some(inv) = current.as_mut() {
                inv.text.push_str(&rest[..at]);
            }
            out.extend(current.take());
            current = Some(Invariant {
                line: number,
                text: MARKER.to_string(),
            });
            rest = &rest[at + MARKER.len()..];
        }
        if let Some(inv) = current.as_mut() {
            inv.text.push_str(rest);
            inv.text.push(' ');
        }
    }
    out.extend(current);
}

/// The contents of the closed backtick spans of `text` (`` `a` `` → `a`).
pub fn backticked(text: &str) -> Vec<&str> {
    let parts: Vec<&str> = text.split('`').collect();
    (1..parts.len().saturating_sub(1))
        .step_by(2)
        .map(|i| parts[i])
        .collect()
}

/// Whether a backticked name is one of `tests`: the name itself, or the last
/// segment of a path (`tests::name`), with or without `()`.
pub fn names_a_test(span: &str, tests: &BTreeSet<String>) -> bool {
    let span = span.trim().trim_end_matches("()");
    let last = span.rsplit("::").next().unwrap_or(span);
    tests.contains(last)
}

/// The invariants that name no test of `tests`.
pub fn unheld<'a>(invariants: &'a [Invariant], tests: &BTreeSet<String>) -> Vec<&'a Invariant> {
    invariants
        .iter()
        .filter(|inv| {
            !backticked(&inv.text)
                .iter()
                .any(|span| names_a_test(span, tests))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
# Title

Prose. Architecture invariant: one line, held by `held_by_a_test`.

- a list item
  Architecture invariant: in an item, `not_a_test`.
- next item

Architecture invariant: over
two lines, held by
`tests::second_test()`. Architecture invariant: a second in the same paragraph.

```text
Architecture invariant: inside a fence, not an invariant.
```
## Heading
Architecture invariant: `unsafe` is forbidden.
";

    fn tests() -> BTreeSet<String> {
        ["held_by_a_test", "second_test"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn invariants_are_cut_by_paragraph_and_marker() {
        let found = invariants(DOC);
        let lines: Vec<usize> = found.iter().map(|i| i.line).collect();
        assert_eq!(lines, [3, 6, 9, 11, 17]);
        assert!(found[0].text.starts_with(MARKER));
        assert!(!found[0].text.contains("Prose"));
        assert!(found[2].text.contains("`tests::second_test()`"));
        assert!(!found[2].text.contains("a second"));
        assert!(found[3].text.contains("a second in the same paragraph"));
    }

    #[test]
    fn an_invariant_is_held_when_a_backticked_name_is_a_test() {
        let found = invariants(DOC);
        let unheld: Vec<usize> = unheld(&found, &tests()).iter().map(|i| i.line).collect();
        assert_eq!(unheld, [6, 11, 17]);
    }

    #[test]
    fn backticks_are_read_in_pairs() {
        assert_eq!(backticked("a `b` c `d::e` f `g"), ["b", "d::e"]);
        assert!(names_a_test(" tests::second_test() ", &tests()));
        assert!(!names_a_test("second", &tests()));
    }
}
