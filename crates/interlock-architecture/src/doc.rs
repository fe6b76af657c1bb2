//! The machine-read parts of docs/ARCHITECTURE.md: fenced `text` blocks
//! marked by their first line, holding one package per line.
//!
//! Why a marker line and not a heading: the prose around a block will be
//! rewritten; the marker (`# crate edges`, `# faces`) is what the test looks
//! for, so headings can move freely and a reader sees what the block is.

use std::collections::{BTreeMap, BTreeSet};

/// One line of a block and its 1-based line number in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    pub number: usize,
    pub text: &'a str,
}

/// The lines inside the one fenced block that opens with a "```text" line
/// immediately followed by the line `marker`, the marker excluded. An error
/// if there is no such block, more than one, or it is not closed.
pub fn fenced_block<'a>(doc: &'a str, marker: &str) -> Result<Vec<Line<'a>>, String> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() == "```text"
            && lines.get(i + 1).map(|l| l.trim_end()) == Some(marker)
        {
            let start = i + 2;
            let Some(len) = lines[start..].iter().position(|l| l.trim_end() == "```") else {
                return Err(format!(
                    "line {}: the \"{marker}\" block is never closed",
                    i + 1
                ));
            };
            blocks.push(
                (start..start + len)
                    .map(|n| Line {
                        number: n + 1,
                        text: lines[n],
                    })
                    .collect::<Vec<_>>(),
            );
            i = start + len;
        }
        i += 1;
    }
    match blocks.len() {
        1 => Ok(blocks.remove(0)),
        0 => Err(format!(
            "no fenced block opens with a \"```text\" line followed by the line \"{marker}\""
        )),
        n => Err(format!(
            "{n} fenced blocks are marked \"{marker}\"; there must be one"
        )),
    }
}

/// A block of `package: a, b, c` lines: each package and the names after it.
/// Blank lines and `#` comment lines are skipped; a line with no package, no
/// colon, or a package named twice is a problem (listed, all of them).
pub fn package_lines(lines: &[Line<'_>]) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let mut packages = BTreeMap::new();
    let mut problems = Vec::new();
    for line in lines {
        let text = line.text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let Some((name, rest)) = text.split_once(':') else {
            problems.push(format!(
                "line {}: \"{text}\" names no package (`package: a, b`)",
                line.number
            ));
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            problems.push(format!(
                "line {}: \"{text}\" names no package (`package: a, b`)",
                line.number
            ));
            continue;
        }
        let names: BTreeSet<String> = rest
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if packages.insert(name.to_string(), names).is_some() {
            problems.push(format!("line {}: {name} has a line already", line.number));
        }
    }
    (packages, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\n```text\n# crate edges\na: b, c\n\nb:\n# a comment\nc: b,\n```\n\n```text\n# faces\n```\n";

    #[test]
    fn the_marked_block_is_found_with_its_line_numbers() {
        let block = fenced_block(DOC, "# crate edges").unwrap();
        assert_eq!(
            block.first(),
            Some(&Line {
                number: 5,
                text: "a: b, c"
            })
        );
        assert_eq!(block.len(), 5);
        assert!(fenced_block(DOC, "# faces").unwrap().is_empty());
    }

    #[test]
    fn a_missing_doubled_or_open_block_is_an_error() {
        assert!(
            fenced_block(DOC, "# other")
                .unwrap_err()
                .contains("no fenced block")
        );
        let twice = format!("{DOC}{DOC}");
        assert!(
            fenced_block(&twice, "# faces")
                .unwrap_err()
                .contains("2 fenced blocks")
        );
        assert!(
            fenced_block("```text\n# faces\na:\n", "# faces")
                .unwrap_err()
                .contains("never closed")
        );
        // The marker must be the very next line.
        assert!(fenced_block("```text\n\n# faces\n```\n", "# faces").is_err());
    }

    #[test]
    fn package_lines_are_read_and_bad_ones_listed() {
        let block = fenced_block(DOC, "# crate edges").unwrap();
        let (packages, problems) = package_lines(&block);
        assert!(problems.is_empty(), "{problems:?}");
        let read: Vec<(&str, Vec<&str>)> = packages
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            read,
            [("a", vec!["b", "c"]), ("b", vec![]), ("c", vec!["b"])]
        );

        let bad = [
            Line {
                number: 1,
                text: "no colon here",
            },
            Line {
                number: 2,
                text: ": b",
            },
            Line {
                number: 3,
                text: "a: b",
            },
            Line {
                number: 4,
                text: "a: c",
            },
        ];
        let (_, problems) = package_lines(&bad);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("line 1:"));
        assert!(problems[1].starts_with("line 2:"));
        assert!(problems[2].contains("a has a line already"));
    }
}
