//! Interlock's packages as cargo sees them (`cargo metadata --no-deps`).
//!
//! Why cargo and not a reading of the manifests: `workspace = true`
//! inheritance, renames, target-specific and build dependencies are cargo's
//! to interpret; `--no-deps --offline` answers from the manifests alone, in
//! milliseconds, without the network or a lock file change.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::Error;

/// Our own packages are named `interlock` or `interlock-*`.
pub const PREFIX: &str = "interlock";

/// One workspace package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    /// The directory of its Cargo.toml.
    pub dir: PathBuf,
    /// Its normal and build dependencies on `interlock*` packages (not its
    /// dev-dependencies: tests may reach anywhere).
    pub internal: BTreeSet<String>,
    /// Its normal and build dependencies on every other library, by package
    /// name (what the library rules of [`crate::deps`] read).
    pub external: BTreeSet<String>,
    /// The root directory of the workspace it belongs to (whose manifest
    /// holds the `[workspace.lints]` it may inherit).
    pub workspace_root: PathBuf,
    /// Its library and binary roots under `dir/src/` (each a crate of files).
    pub roots: Vec<PathBuf>,
}

/// The cargo to run: the one running the tests (`CARGO`), else `cargo`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs `cargo metadata --format-version 1 --no-deps --offline` in `dir` and
/// returns its workspace members (default or not: the desktop app is one).
pub fn workspace_packages(dir: &Path) -> Result<Vec<Package>, Error> {
    let mut command = Command::new(cargo());
    command.current_dir(dir).args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]);
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|e| Error::Cargo(format!("{shown}: {e}")))?;
    if !output.status.success() {
        return Err(Error::Cargo(format!(
            "{shown}: {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let json: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| Error::Cargo(format!("{shown}: {e}")))?;
    packages(&json).map_err(|e| Error::Cargo(format!("{shown}: {e}")))
}

/// The workspace members of a `cargo metadata` document.
pub fn packages(json: &Value) -> Result<Vec<Package>, String> {
    let members: BTreeSet<&str> = json["workspace_members"]
        .as_array()
        .ok_or("no workspace_members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let workspace_root = PathBuf::from(json["workspace_root"].as_str().ok_or("no workspace_root")?);
    let mut out = Vec::new();
    for package in json["packages"].as_array().ok_or("no packages")? {
        let id = package["id"].as_str().ok_or("a package without an id")?;
        if !members.contains(id) {
            continue;
        }
        let name = package["name"]
            .as_str()
            .ok_or("a package without a name")?
            .to_string();
        let manifest = package["manifest_path"]
            .as_str()
            .ok_or("a package without a manifest_path")?;
        let dir = Path::new(manifest)
            .parent()
            .ok_or("a manifest_path without a directory")?
            .to_path_buf();
        let (internal, external): (BTreeSet<String>, BTreeSet<String>) = package["dependencies"]
            .as_array()
            .ok_or("a package without dependencies")?
            .iter()
            .filter(|dep| dep["kind"].is_null() || dep["kind"] == "build")
            .filter_map(|dep| dep["name"].as_str())
            .map(str::to_string)
            .partition(|dep| dep.starts_with(PREFIX));
        let src = dir.join("src");
        let roots = package["targets"]
            .as_array()
            .ok_or("a package without targets")?
            .iter()
            .filter(|target| {
                target["kind"].as_array().is_some_and(|kinds| {
                    kinds
                        .iter()
                        .any(|k| matches!(k.as_str(), Some("lib" | "rlib" | "bin" | "proc-macro")))
                })
            })
            .filter_map(|target| target["src_path"].as_str().map(PathBuf::from))
            .filter(|path| path.starts_with(&src))
            .collect();
        out.push(Package {
            name,
            dir,
            internal,
            external,
            workspace_root: workspace_root.clone(),
            roots,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_their_internal_normal_and_build_dependencies_and_roots() {
        let json = serde_json::json!({
            "workspace_root": "/r",
            "workspace_members": ["path+file:///r#a@0.1.0", "path+file:///r/crates/b#0.1.0"],
            "packages": [
                {
                    "id": "path+file:///r#a@0.1.0",
                    "name": "interlock",
                    "manifest_path": "/r/Cargo.toml",
                    "dependencies": [
                        {"name": "interlock-b", "kind": null},
                        {"name": "interlock-c", "kind": "build"},
                        {"name": "interlock-d", "kind": "dev"},
                        {"name": "serde", "kind": null}
                    ],
                    "targets": [
                        {"kind": ["bin"], "src_path": "/r/src/main.rs"},
                        {"kind": ["test"], "src_path": "/r/tests/it.rs"},
                        {"kind": ["bench"], "src_path": "/r/benches/b.rs"},
                        {"kind": ["custom-build"], "src_path": "/r/build.rs"}
                    ]
                },
                {
                    "id": "path+file:///r/crates/b#0.1.0",
                    "name": "interlock-b",
                    "manifest_path": "/r/crates/b/Cargo.toml",
                    "dependencies": [],
                    "targets": [{"kind": ["lib"], "src_path": "/r/crates/b/src/lib.rs"}]
                },
                {
                    "id": "registry+https://x#serde@1",
                    "name": "serde",
                    "manifest_path": "/x/Cargo.toml",
                    "dependencies": [],
                    "targets": []
                }
            ]
        });
        let packages = packages(&json).unwrap();
        assert_eq!(packages.len(), 2);
        assert_eq!(packages[0].name, "interlock");
        assert_eq!(packages[0].dir, PathBuf::from("/r"));
        assert_eq!(
            packages[0]
                .internal
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["interlock-b", "interlock-c"]
        );
        assert_eq!(
            packages[0]
                .external
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["serde"]
        );
        assert_eq!(packages[0].workspace_root, PathBuf::from("/r"));
        assert_eq!(packages[0].roots, [PathBuf::from("/r/src/main.rs")]);
        assert_eq!(packages[1].roots, [PathBuf::from("/r/crates/b/src/lib.rs")]);
    }
}
