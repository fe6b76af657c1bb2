//! Whether a package forbids `unsafe` code, read from its Cargo manifest and
//! its workspace's.
//!
//! Why the manifest: `unsafe_code = "forbid"` is a lint level no attribute in
//! the code can lower, so a package whose manifest sets it (itself, or by
//! `[lints] workspace = true` from a workspace that sets it) has no `unsafe`
//! code that compiles. A `#![forbid(unsafe_code)]` line in a crate root would
//! say the same for that root only, and is easy to leave out of a new binary.
//!
//! The manifest is read as far as this question needs: tables, dotted keys
//! and `key = value` lines. Anything it does not understand reads as "not
//! forbidden", so a manifest this reader misreads fails the check rather than
//! passing it.

use std::collections::BTreeMap;

/// The manifest's keys, each with its table's name in front
/// (`[lints.rust]` + `unsafe_code = "forbid"` → `lints.rust.unsafe_code`),
/// and their values as written (comments dropped).
pub fn keys(manifest: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut table = String::new();
    for line in manifest.lines() {
        let line = without_comment(line).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            // `[[bin]]` (an array of tables) holds nothing asked here.
            table = header
                .trim_end_matches(']')
                .trim_matches('[')
                .trim()
                .to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        let full = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        out.insert(full, value.trim().to_string());
    }
    out
}

/// A line without its `#` comment (a `#` inside a string is kept).
fn without_comment(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Whether a lint level as written is `forbid` (`"forbid"`, or an inline
/// table `{ level = "forbid", priority = -1 }`).
fn is_forbid(value: &str) -> bool {
    let value = value.trim();
    value == "\"forbid\""
        || (value.starts_with('{')
            && value.trim_matches(['{', '}']).split(',').any(|part| {
                part.split_once('=')
                    .is_some_and(|(k, v)| k.trim() == "level" && v.trim() == "\"forbid\"")
            }))
}

/// Whether a package whose manifest is `package` (in the workspace whose root
/// manifest is `workspace`, which may be the same text) forbids `unsafe` code.
pub fn forbids_unsafe(package: &str, workspace: &str) -> bool {
    let own = keys(package);
    if own
        .get("lints.rust.unsafe_code")
        .is_some_and(|v| is_forbid(v))
    {
        return true;
    }
    let inherits = own.get("lints.workspace").map(String::as_str) == Some("true")
        || own
            .get("lints")
            .is_some_and(|v| v.replace(' ', "") == "{workspace=true}");
    inherits
        && keys(workspace)
            .get("workspace.lints.rust.unsafe_code")
            .is_some_and(|v| is_forbid(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKSPACE: &str = "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.lints.rust]\nunsafe_code = \"forbid\" # every crate\n";

    #[test]
    fn keys_carry_their_table() {
        let k =
            keys("name = \"x\" # a comment\n[lints]\nworkspace = true\n[[bin]]\npath = \"a#b\"\n");
        assert_eq!(k["name"], "\"x\"");
        assert_eq!(k["lints.workspace"], "true");
        assert_eq!(k["bin.path"], "\"a#b\"");
    }

    #[test]
    fn a_package_forbids_unsafe_itself_or_through_its_workspace() {
        assert!(forbids_unsafe("[lints]\nworkspace = true\n", WORKSPACE));
        assert!(forbids_unsafe("lints = { workspace = true }\n", WORKSPACE));
        assert!(forbids_unsafe(
            "[lints.rust]\nunsafe_code = \"forbid\"\n",
            "[workspace]\n"
        ));
        assert!(forbids_unsafe(
            "[lints.rust]\nunsafe_code = { level = \"forbid\", priority = -1 }\n",
            ""
        ));
    }

    #[test]
    fn no_lints_or_a_weaker_level_is_not_forbidding() {
        assert!(!forbids_unsafe("[package]\nname = \"x\"\n", WORKSPACE));
        assert!(!forbids_unsafe(
            "[lints]\nworkspace = true\n",
            "[workspace]\n"
        ));
        assert!(!forbids_unsafe(
            "[lints.rust]\nunsafe_code = \"deny\"\n",
            WORKSPACE
        ));
        // A commented-out line is no setting.
        assert!(!forbids_unsafe("[lints]\n# workspace = true\n", WORKSPACE));
    }
}
