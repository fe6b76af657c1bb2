//! The real repository: its packages (the cargo workspace's members, the
//! desktop shell among them), their crates
//! of files, docs/ARCHITECTURE.md and its tests, and the checks run on them.
//!
//! Why one place: the checks themselves are pure functions over text
//! (tested on fixtures in their modules); only this module reads the disk
//! and runs cargo.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::circles::{Circle, FileGraph};
use crate::edges::{self, Edges};
use crate::invariants::{self, Invariant};
use crate::metadata::{self, Package};
use crate::modules::CrateTree;
use crate::{Error, deps, doc, faces, lints, names, test_fns};

/// Where the document is, from the repository root.
pub const ARCHITECTURE_MD: &str = "docs/ARCHITECTURE.md";
/// The marker lines of the document's machine-read blocks.
pub const EDGES_MARKER: &str = "# crate edges";
pub const FACES_MARKER: &str = "# faces";
/// The line that starts the block of each crate's joins (modules that join
/// its faces into one whole).
pub const JOINS_MARKER: &str = "# joins";

/// The repository, loaded.
#[derive(Debug, Clone)]
pub struct Repo {
    pub root: PathBuf,
    /// The workspace's packages (every member, default or not).
    pub packages: Vec<Package>,
    pub doc: String,
}

impl Repo {
    /// Reads the repository at `root`: the workspace's packages (one quick
    /// `cargo metadata` run) and the document.
    pub fn load(root: &Path) -> Result<Self, Error> {
        let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let mut packages = metadata::workspace_packages(&root)?;
        packages.sort_by(|a, b| a.name.cmp(&b.name));
        let doc_path = root.join(ARCHITECTURE_MD);
        let doc = fs::read_to_string(&doc_path).map_err(|e| Error::io(&doc_path, e))?;
        Ok(Repo {
            root,
            packages,
            doc,
        })
    }

    /// A path relative to the root, with `/`.
    fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Reads a repository-relative file, `None` if there is none.
    fn read(&self, relative: &str) -> Option<String> {
        fs::read_to_string(self.root.join(relative)).ok()
    }

    /// The edges between the packages, as cargo sees them.
    pub fn code_edges(&self) -> Edges {
        self.packages
            .iter()
            .map(|p| (p.name.clone(), p.internal.clone()))
            .collect()
    }

    /// Check 1: the edges cargo sees against the "# crate edges" block.
    pub fn crate_edge_problems(&self) -> Result<Vec<String>, Error> {
        let code = self.code_edges();
        let block = doc::fenced_block(&self.doc, EDGES_MARKER).map_err(Error::Doc)?;
        let (documented, mut problems) = doc::package_lines(&block);
        problems.extend(edges::differences(&code, &documented));
        Ok(problems)
    }

    /// Every crate of files: (package, tree), one per library or binary root
    /// under a package's `src/`.
    pub fn crates(&self) -> Result<Vec<(String, CrateTree)>, Error> {
        let mut out = Vec::new();
        for package in &self.packages {
            for root in &package.roots {
                let tree = CrateTree::load(&self.relative(root), &mut |p| self.read(p))?;
                out.push((package.name.clone(), tree));
            }
        }
        Ok(out)
    }

    /// Check 2's finding: every circle of more than two files, in every crate.
    pub fn circles(&self) -> Result<Vec<Circle>, Error> {
        let mut out = Vec::new();
        for (_, tree) in self.crates()? {
            out.extend(FileGraph::of(&tree).circles());
        }
        Ok(out)
    }

    /// Check 3: the "# faces" block read, and every import into a face from
    /// outside it. A line for an unknown package, or a face that is no
    /// top-level module of its crate, is a problem too (a typo must not make
    /// the rule hold vacuously).
    pub fn face_problems(&self) -> Result<Vec<String>, Error> {
        let block = doc::fenced_block(&self.doc, FACES_MARKER).map_err(Error::Doc)?;
        let (declared, mut problems) = doc::package_lines(&block);
        let block = doc::fenced_block(&self.doc, JOINS_MARKER).map_err(Error::Doc)?;
        let (joins, join_problems) = doc::package_lines(&block);
        problems.extend(join_problems);
        for package in joins.keys() {
            if !declared.contains_key(package) {
                problems.push(format!(
                    "the joins block has a line for {package}, which has no faces"
                ));
            }
        }
        let no_joins = BTreeSet::new();
        let crates = self.crates()?;
        for (package, faces) in &declared {
            let package_joins = joins.get(package).unwrap_or(&no_joins);
            let trees: Vec<&CrateTree> = crates
                .iter()
                .filter(|(p, _)| p == package)
                .map(|(_, t)| t)
                .collect();
            if trees.is_empty() {
                problems.push(format!(
                    "the faces block has a line for {package}, which is no package with a src/"
                ));
                continue;
            }
            for face in faces.iter().chain(package_joins) {
                let exists = trees
                    .iter()
                    .any(|t| t.by_module.contains_key(std::slice::from_ref(face)));
                if !exists {
                    problems.push(format!(
                        "the faces or joins block names `{face}` in {package}, which is no top-level module with a file of its own"
                    ));
                }
            }
            for tree in trees {
                problems.extend(faces::violations(tree, faces, package_joins));
            }
        }
        Ok(problems)
    }

    /// The names of every test function in the repository's Rust tests and
    /// sources: tests/, and each package's tests/ and src/.
    pub fn test_fns(&self) -> Result<BTreeSet<String>, Error> {
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::from([self.root.join("tests")]);
        for package in &self.packages {
            dirs.insert(package.dir.join("tests"));
            dirs.insert(package.dir.join("src"));
        }
        let mut names = BTreeSet::new();
        for dir in dirs {
            for file in rust_files(&dir)? {
                let source = fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
                names.extend(test_fns::test_fns(&source));
            }
        }
        Ok(names)
    }

    /// Check 4's finding: the document's invariants that name no test.
    pub fn unheld_invariants(&self) -> Result<Vec<Invariant>, Error> {
        let tests = self.test_fns()?;
        let all = invariants::invariants(&self.doc);
        Ok(invariants::unheld(&all, &tests)
            .into_iter()
            .cloned()
            .collect())
    }

    /// Each package's normal and build dependencies on other libraries.
    pub fn external_deps(&self) -> BTreeMap<String, BTreeSet<String>> {
        self.packages
            .iter()
            .map(|p| (p.name.clone(), p.external.clone()))
            .collect()
    }

    /// A library rule ([`deps::problems`]) on the packages `which` picks.
    pub fn library_problems(
        &self,
        which: impl Fn(&str) -> bool,
        libraries: &[&str],
        allowed: &[(&str, &str)],
    ) -> Vec<String> {
        let mut deps = self.external_deps();
        deps.retain(|package, _| which(package));
        deps::problems(&deps, libraries, allowed)
    }

    /// The package named `name`.
    fn package(&self, name: &str) -> Result<&Package, Error> {
        self.packages
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| Error::Cargo(format!("no workspace package is named {name}")))
    }

    /// Every `.rs` file under the `src/` of package `name`: its
    /// repository-relative path and its text.
    pub fn sources(&self, name: &str) -> Result<Vec<(String, String)>, Error> {
        let package = self.package(name)?;
        let mut out = Vec::new();
        for file in rust_files(&package.dir.join("src"))? {
            let text = fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
            out.push((self.relative(&file), text));
        }
        Ok(out)
    }

    /// Every path that one of `patterns` matches ([`names::forbidden`]) in
    /// the sources of the packages `which` picks.
    pub fn names_in<'p>(
        &self,
        which: impl Fn(&str) -> bool,
        patterns: &[&'p str],
    ) -> Result<Vec<Named<'p>>, Error> {
        let mut out = Vec::new();
        for package in self.packages.iter().filter(|p| which(&p.name)) {
            for (file, text) in self.sources(&package.name)? {
                for hit in names::forbidden(&text, patterns) {
                    out.push(Named {
                        package: package.name.clone(),
                        file: file.clone(),
                        hit,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Every package whose manifest does not forbid `unsafe` code
    /// ([`lints::forbids_unsafe`]), one message each.
    pub fn unsafe_problems(&self) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        for package in &self.packages {
            let manifest = package.dir.join("Cargo.toml");
            let workspace = package.workspace_root.join("Cargo.toml");
            let read = |p: &Path| fs::read_to_string(p).map_err(|e| Error::io(p, e));
            if !lints::forbids_unsafe(&read(&manifest)?, &read(&workspace)?) {
                out.push(format!(
                    "{} ({}) does not forbid unsafe code: `[lints] workspace = true` under a \
                     workspace with `unsafe_code = \"forbid\"`, or `[lints.rust] unsafe_code = \"forbid\"`",
                    package.name,
                    self.relative(&manifest)
                ));
            }
        }
        Ok(out)
    }
}

/// A forbidden name found in a package's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<'p> {
    pub package: String,
    /// The file, repository-relative.
    pub file: String,
    pub hit: names::Hit<'p>,
}

impl Named<'_> {
    /// `package file:line: path (pattern)`, for a failure message.
    pub fn describe(&self) -> String {
        format!(
            "{} {}:{}: `{}` (`{}`)",
            self.package, self.file, self.hit.line, self.hit.path, self.hit.pattern
        )
    }
}

/// Every `.rs` file under `dir` (none if it does not exist), skipping
/// dependency and build directories.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
            if kind.is_dir() {
                if !name.starts_with('.') && name != "node_modules" && name != "target" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
