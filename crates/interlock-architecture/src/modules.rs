//! A crate's files and the modules they are, found as rustc finds them: from
//! the crate root through its `mod` declarations.
//!
//! Why from the root and not by listing `src/`: a file no `mod` names is not
//! compiled and imports nothing; a crate root under `src/bin/` is a crate of
//! its own. Files are named by repository-relative paths with `/`, so the
//! same code runs on the real tree and on in-memory fixtures.

use std::collections::{BTreeMap, VecDeque};

use crate::Error;
use crate::imports::{self, Anchor, FileScan, PathRef};

/// A module path below the crate root (`[]` is the root, `["calls", "pipeline"]`
/// is `crate::calls::pipeline`).
pub type ModulePath = Vec<String>;

/// One file of a crate.
#[derive(Debug, Clone)]
pub struct File {
    pub module: ModulePath,
    pub scan: FileScan,
}

/// One crate (one root: a library, or one binary) and its files.
#[derive(Debug, Clone)]
pub struct CrateTree {
    /// The root file (`crates/x/src/lib.rs`).
    pub root: String,
    pub files: BTreeMap<String, File>,
    pub by_module: BTreeMap<ModulePath, String>,
}

impl CrateTree {
    /// Reads the crate whose root is `root`, following its `mod` declarations;
    /// `read` gives a file's text by its path, `None` if there is none.
    pub fn load(root: &str, read: &mut dyn FnMut(&str) -> Option<String>) -> Result<Self, Error> {
        let mut tree = CrateTree {
            root: root.to_string(),
            files: BTreeMap::new(),
            by_module: BTreeMap::new(),
        };
        let source = read(root)
            .ok_or_else(|| Error::Module(format!("{root}: the crate root cannot be read")))?;
        let mut queue = VecDeque::from([(root.to_string(), Vec::new(), source)]);
        while let Some((path, module, source)) = queue.pop_front() {
            let scan = imports::scan(&source);
            if let Some(line) = scan.path_attributes.first() {
                return Err(Error::Module(format!(
                    "{path}:{line}: a #[path] attribute; this checker does not follow them (teach modules.rs, or drop the attribute)"
                )));
            }
            if !scan.balanced {
                return Err(Error::Module(format!(
                    "{path}: its braces do not balance once comments and literals are removed; \
                     the lexer misread something here (see lexer.rs)"
                )));
            }
            let dir = module_dir(&path, path == tree.root);
            for decl in &scan.mods {
                let mut child: ModulePath = module.clone();
                child.extend(decl.inline.iter().cloned());
                child.push(decl.name.clone());
                let mut base = dir.clone();
                for part in &decl.inline {
                    base = format!("{base}/{part}");
                }
                let candidates = [
                    format!("{base}/{}.rs", decl.name),
                    format!("{base}/{}/mod.rs", decl.name),
                ];
                let found = candidates
                    .iter()
                    .find_map(|c| read(c).map(|text| (c.clone(), text)));
                let Some((file, text)) = found else {
                    return Err(Error::Module(format!(
                        "{path}:{}: `mod {};` has neither {} nor {}",
                        decl.line, decl.name, candidates[0], candidates[1]
                    )));
                };
                if tree.files.contains_key(&file)
                    || queue.iter().any(|(queued, ..)| *queued == file)
                {
                    continue;
                }
                queue.push_back((file, child, text));
            }
            tree.by_module.insert(module.clone(), path.clone());
            tree.files.insert(path, File { module, scan });
        }
        Ok(tree)
    }

    /// The file a path of `from` leads to: the file of the longest prefix of
    /// its absolute module path that is a module with a file of its own. `None`
    /// if the path climbs above the crate root or `from` is no file of this crate.
    pub fn resolve(&self, from: &str, path: &PathRef) -> Option<&str> {
        let file = self.files.get(from)?;
        let mut here: ModulePath = file.module.clone();
        here.extend(path.inline.iter().cloned());
        let mut absolute = match path.anchor {
            Anchor::Crate => Vec::new(),
            Anchor::SelfModule => here,
            Anchor::Super(n) => {
                let keep = here.len().checked_sub(n)?;
                here.truncate(keep);
                here
            }
        };
        absolute.extend(path.rest.iter().cloned());
        (0..=absolute.len())
            .rev()
            .find_map(|len| self.by_module.get(&absolute[..len]))
            .map(String::as_str)
    }
}

/// The directory a file's `mod x;` looks in: a crate root's and a `mod.rs`'s
/// own directory, otherwise `dir/stem` (`a/b.rs` → `a/b`).
fn module_dir(path: &str, is_root: bool) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    if is_root || name == "mod.rs" {
        dir.to_string()
    } else {
        format!("{dir}/{}", name.trim_end_matches(".rs"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A crate in memory: `(path, source)` pairs.
    pub(crate) fn fixture(root: &str, files: &[(&str, &str)]) -> CrateTree {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        CrateTree::load(root, &mut |p| files.get(p).cloned()).expect("the fixture loads")
    }

    #[test]
    fn modules_come_from_declarations_in_both_layouts() {
        let tree = fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "pub mod a; mod b;"),
                ("src/a.rs", "mod c;"),
                ("src/a/c.rs", ""),
                ("src/b/mod.rs", "pub mod d; mod inline { mod e; }"),
                ("src/b/d.rs", ""),
                ("src/b/inline/e.rs", ""),
                ("src/orphan.rs", "use crate::a;"),
            ],
        );
        let modules: Vec<(&str, String)> = tree
            .files
            .iter()
            .map(|(p, f)| (p.as_str(), f.module.join("::")))
            .collect();
        assert_eq!(
            modules,
            [
                ("src/a.rs", "a".to_string()),
                ("src/a/c.rs", "a::c".to_string()),
                ("src/b/d.rs", "b::d".to_string()),
                ("src/b/inline/e.rs", "b::inline::e".to_string()),
                ("src/b/mod.rs", "b".to_string()),
                ("src/lib.rs", String::new()),
            ]
        );
    }

    #[test]
    fn a_binary_root_looks_beside_itself() {
        let tree = fixture(
            "src/bin/tool.rs",
            &[
                ("src/bin/tool.rs", "mod helper;"),
                ("src/bin/helper.rs", ""),
            ],
        );
        assert!(tree.files.contains_key("src/bin/helper.rs"));
    }

    #[test]
    fn a_missing_module_file_and_a_path_attribute_are_errors() {
        let files = BTreeMap::from([("src/lib.rs".to_string(), "mod gone;".to_string())]);
        let err = CrateTree::load("src/lib.rs", &mut |p| files.get(p).cloned()).unwrap_err();
        assert!(err.to_string().contains("src/gone.rs"), "{err}");
        let files = BTreeMap::from([
            (
                "src/lib.rs".to_string(),
                "#[path = \"x.rs\"]\nmod y;".to_string(),
            ),
            ("src/x.rs".to_string(), String::new()),
        ]);
        let err = CrateTree::load("src/lib.rs", &mut |p| files.get(p).cloned()).unwrap_err();
        assert!(err.to_string().contains("#[path]"), "{err}");
    }

    #[test]
    fn paths_resolve_to_the_longest_module_with_a_file() {
        let tree = fixture(
            "src/lib.rs",
            &[
                ("src/lib.rs", "mod a; mod b;"),
                ("src/a/mod.rs", "mod c; mod inner { }"),
                (
                    "src/a/c.rs",
                    "use super::super::b::X; use self::Y; use crate::a::inner::Z; use super::super::super::W;",
                ),
                (
                    "src/b.rs",
                    "use crate::Top; use super::a::c::f; mod tests { use super::*; }",
                ),
            ],
        );
        let resolved = |from: &str| -> Vec<Option<String>> {
            let file = &tree.files[from];
            file.scan
                .paths
                .iter()
                .map(|p| tree.resolve(from, p).map(str::to_string))
                .collect()
        };
        assert_eq!(
            resolved("src/a/c.rs"),
            [
                Some("src/b.rs".into()),
                Some("src/a/c.rs".into()),
                Some("src/a/mod.rs".into()),
                None
            ]
        );
        assert_eq!(
            resolved("src/b.rs"),
            [
                Some("src/lib.rs".into()),
                Some("src/a/c.rs".into()),
                Some("src/b.rs".into())
            ]
        );
    }
}
