//! Interlock's architecture test: docs/ARCHITECTURE.md held against the code.
//!
//! Why a crate: an architecture document drifts unless a test fails when the
//! code leaves it. This library is the checker; `tests/architecture.rs` runs
//! it on the real repository, one `#[test]` per rule:
//!
//! - crate edges: the dependencies between Interlock's packages are exactly
//!   the ones the document's `# crate edges` block lists;
//! - circles: no set of more than two files of a crate all import each other
//!   (with a ratchet for the circles that exist today, issue 37);
//! - faces: inside a crate, no import runs from a lower room into a face, or
//!   from one face into another (the document's `# faces` block);
//! - invariants: every "Architecture invariant:" names the test that holds it;
//! - rules the invariants name, each a test of its own: which packages may
//!   depend on which libraries (SQL, HTTP, I/O), which names a package's code
//!   may not spell, and that every package forbids `unsafe` code.
//!
//! Modules, one job each:
//! - [`lexer`]: code without comments and literals, as tokens.
//! - [`imports`]: a file's `mod` declarations and its `crate::`/`self::`/`super::` paths.
//! - [`modules`]: a crate's files and the modules they are; a path's target file.
//! - [`graph`]: strongly connected components.
//! - [`circles`]: the file graph, its circles, and the ratchet.
//! - [`faces`]: the face rule.
//! - [`doc`]: the document's marked blocks.
//! - [`edges`]: crate edges compared.
//! - [`metadata`]: packages as `cargo metadata` reports them.
//! - [`test_fns`]: the test functions of a file.
//! - [`invariants`]: the document's invariants and the tests they name.
//! - [`names`]: the paths a file's code spells, and the ones a rule forbids.
//! - [`deps`]: which libraries a package may depend on.
//! - [`lints`]: whether a package's manifest forbids `unsafe` code.
//! - [`repo`]: the real repository, read from disk.
#![forbid(unsafe_code)]

pub mod circles;
pub mod deps;
pub mod doc;
pub mod edges;
pub mod faces;
pub mod graph;
pub mod imports;
pub mod invariants;
pub mod lexer;
pub mod lints;
pub mod metadata;
pub mod modules;
pub mod names;
pub mod repo;
pub mod test_fns;

use std::path::Path;

/// Why the checker could not run (as opposed to what it found wrong, which
/// each check returns as a list of messages).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cargo metadata: {0}")]
    Cargo(String),
    #[error("docs/ARCHITECTURE.md: {0}")]
    Doc(String),
    #[error("modules: {0}")]
    Module(String),
}

impl Error {
    fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
