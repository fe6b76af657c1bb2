//! docs/ARCHITECTURE.md held against the repository it describes.
//!
//! Each rule is a test of its own, named for what it holds, so a failure
//! says which promise broke; each lists every problem at once, so one run
//! tells the whole story. The checker is `interlock_architecture`; this file
//! holds only the repository's root, the rules' lists and their exceptions
//! (which crates, libraries and names; the exceptions that exist today),
//! and the messages.

use std::sync::OnceLock;

use interlock_architecture::circles;
use interlock_architecture::edges;
use interlock_architecture::repo::{ARCHITECTURE_MD, Named, Repo};

/// The crates that compute and check what is hashed, signed and verified:
/// their answer must be the same on any machine and at any time, so they do
/// no I/O, read no clock, draw no randomness and have no async.
const PURE_CRATES: &[&str] = &[
    "interlock-alerts",
    "interlock-canon",
    "interlock-core",
    "interlock-envelope",
    "interlock-hooks",
    "interlock-inspect",
    "interlock-llm",
    "interlock-merkle",
    "interlock-receipts",
    "interlock-surface",
];

/// What the pure crates' code may not name. `std::thread::scope` stays
/// allowed: the Merkle root and the bundle verifier hash on scoped threads,
/// which join before the function returns.
const IO_NAMES: &[&str] = &[
    "std::fs",
    "std::process",
    "std::env",
    "thread::spawn",
    "std::io::stdin",
    "std::io::stdout",
    "std::io::stderr",
    "TcpStream",
    "TcpListener",
    "UdpSocket",
    "UnixStream",
    "UnixListener",
    "ToSocketAddrs",
    "SystemTime",
    "Instant",
    "Timestamp::now",
    "Zoned::now",
    "tokio",
    "async",
    "await",
    "getrandom",
    "OsRng",
    "thread_rng",
];

/// Libraries that do I/O or draw randomness, which the pure crates may not
/// depend on.
const IO_LIBRARIES: &[&str] = &[
    "tokio*",
    "async-std",
    "smol",
    "mio",
    "socket2",
    "sqlx*",
    "rusqlite",
    "reqwest*",
    "hyper*",
    "axum*",
    "getrandom",
    "rand",
    "rand_core",
];

/// SQL drivers: only `interlock-store` may depend on one or name one.
const SQL_LIBRARIES: &[&str] = &[
    "sqlx*",
    "rusqlite",
    "libsqlite3-sys",
    "postgres",
    "tokio-postgres",
    "diesel*",
    "sea-orm*",
];
const SQL_NAMES: &[&str] = &["sqlx", "rusqlite"];

/// HTTP and MCP libraries: only `interlock-gateway` may depend on one.
const HTTP_LIBRARIES: &[&str] = &[
    "axum*",
    "hyper*",
    "reqwest*",
    "tower-http",
    "h2",
    "http-body-util",
    "rmcp*",
    "ureq",
    "isahc",
    "surf",
    "actix-web",
    "warp",
];

/// The exceptions to the HTTP rule that exist today, a ratchet (issue 37):
/// the CLI's stdio bridge (`src/cli/mcp_bridge.rs`) speaks MCP over HTTP to
/// the gateway, and `src/cli/admin.rs` calls the admin API, with `reqwest`
/// of their own. An exception no longer used fails the test until removed.
const HTTP_EXCEPTIONS: &[(&str, &str)] = &[("interlock-gateway", "*"), ("interlock", "reqwest")];

/// What starts a gateway: preparing it, and serving its HTTP listener and
/// its admin socket. Only `interlock-host` (`Host::start_gateway`) does,
/// outside the gateway itself.
const GATEWAY_START_NAMES: &[&str] = &["Gateway::prepare", "http::serve", "admin::serve"];

/// Ed25519 verification that is not `verify_strict` (which refuses
/// non-canonical and small-order encodings): the `Verifier` traits and the
/// non-strict inherent methods, and `ring`'s verifier.
const LAX_VERIFY_NAMES: &[&str] = &[
    "Verifier",
    "MultipartVerifier",
    "DigestVerifier",
    "StreamVerifier",
    "verify_prehashed",
    "verify_stream",
    "verify_batch",
    "UnparsedPublicKey",
];

/// What a name rule found, as failure messages.
fn described(found: Result<Vec<Named<'_>>, interlock_architecture::Error>) -> Vec<String> {
    found
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(Named::describe)
        .collect()
}

/// The repository, read once per test binary: `CARGO_MANIFEST_DIR/../..`,
/// read when the test runs (the compile-time value names whichever clone
/// built this binary: clones sharing a target directory hand it over).
fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(
                || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
                std::path::PathBuf::from,
            )
            .join("../..");
        Repo::load(&root).unwrap_or_else(|e| panic!("the repository at {}: {e}", root.display()))
    })
}

#[test]
fn crate_edges_are_the_documented_ones() {
    let repo = repo();
    let problems = repo.crate_edge_problems().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        problems.is_empty(),
        "{ARCHITECTURE_MD}'s \"# crate edges\" block and the code disagree:\n  - {}\n\n\
         The edges cargo sees today (normal and build dependencies), lowest layer first:\n{}",
        problems.join("\n  - "),
        edges::render(&repo.code_edges())
    );
}

#[test]
fn no_circle_of_modules_larger_than_two_files() {
    let found = repo().circles().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        found.is_empty(),
        "circles of more than {} files: break each (a type both sides need goes to a room \
         below both; a state the runtime holds goes below the code that acts on it):\n{}",
        circles::TOLERATED,
        found
            .iter()
            .map(|c| c.describe())
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

#[test]
fn no_import_runs_from_a_lower_room_into_a_face() {
    let problems = repo().face_problems().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        problems.is_empty(),
        "imports against {ARCHITECTURE_MD}'s \"# faces\" block (a file outside a face imports nothing \
         from it; a face imports no other face):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn every_invariant_names_the_test_that_holds_it() {
    let unheld = repo().unheld_invariants().unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<String> = unheld
        .iter()
        .map(|inv| {
            let words = inv.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text: String = words.chars().take(100).collect();
            format!("{ARCHITECTURE_MD}:{}: {text}…", inv.line)
        })
        .collect();
    assert!(
        unheld.is_empty(),
        "every \"Architecture invariant:\" paragraph names, in backticks, a test function that \
         holds it; these name none (write the test, or state the rule without the label):\n  - {}",
        listed.join("\n  - ")
    );
}

#[test]
fn the_pure_crates_do_no_io() {
    let repo = repo();
    let pure = |p: &str| PURE_CRATES.contains(&p);
    let mut problems = repo.library_problems(pure, IO_LIBRARIES, &[]);
    problems.extend(described(repo.names_in(pure, IO_NAMES)));
    let known: Vec<&str> = repo.packages.iter().map(|p| p.name.as_str()).collect();
    for crate_name in PURE_CRATES.iter().filter(|c| !known.contains(c)) {
        problems.push(format!(
            "PURE_CRATES names {crate_name}, which is no workspace package"
        ));
    }
    assert!(
        problems.is_empty(),
        "the pure crates ({}) do no I/O, read no clock, draw no randomness and have no async \
         ({ARCHITECTURE_MD}):\n  - {}",
        PURE_CRATES.join(", "),
        problems.join("\n  - ")
    );
}

#[test]
fn only_the_store_speaks_sql() {
    let repo = repo();
    let mut problems = repo.library_problems(|_| true, SQL_LIBRARIES, &[("interlock-store", "*")]);
    problems.extend(described(
        repo.names_in(|p| p != "interlock-store", SQL_NAMES),
    ));
    assert!(
        problems.is_empty(),
        "only interlock-store depends on or names a SQL driver ({ARCHITECTURE_MD}):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn only_the_gateway_speaks_http_and_mcp() {
    let problems = repo().library_problems(|_| true, HTTP_LIBRARIES, HTTP_EXCEPTIONS);
    assert!(
        problems.is_empty(),
        "only interlock-gateway depends on an HTTP or MCP library, but for the exceptions in \
         HTTP_EXCEPTIONS ({ARCHITECTURE_MD}):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn only_the_host_starts_a_gateway() {
    let repo = repo();
    let outside = |p: &str| p != "interlock-gateway" && p != "interlock-host";
    let mut problems = described(repo.names_in(outside, GATEWAY_START_NAMES));
    // The rule must not hold because the names changed: the host spells each.
    let in_host = repo
        .names_in(|p| p == "interlock-host", GATEWAY_START_NAMES)
        .unwrap_or_else(|e| panic!("{e}"));
    for name in GATEWAY_START_NAMES {
        if !in_host.iter().any(|found| found.hit.pattern == *name) {
            problems.push(format!(
                "interlock-host no longer names `{name}`: write GATEWAY_START_NAMES as the gateway is started now"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "a gateway is started only by interlock-host's `Host::start_gateway` ({ARCHITECTURE_MD}):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn every_crate_forbids_unsafe_code() {
    let problems = repo().unsafe_problems().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        problems.is_empty(),
        "every package forbids unsafe code ({ARCHITECTURE_MD}):\n  - {}",
        problems.join("\n  - ")
    );
}

#[test]
fn every_signature_check_is_strict() {
    let problems = described(repo().names_in(|_| true, LAX_VERIFY_NAMES));
    assert!(
        problems.is_empty(),
        "signatures are checked with `verify_strict` only ({ARCHITECTURE_MD}):\n  - {}",
        problems.join("\n  - ")
    );
}

/// The longest docs/ARCHITECTURE.md may grow (issue 37): an architecture
/// document stays true only while a reader can hold all of it, so it names
/// directories, boundaries and invariants, not every file; detail belongs in
/// the module headers and the other documents it links.
const ARCHITECTURE_MD_MAX_LINES: usize = 300;

#[test]
fn the_architecture_document_stays_short() {
    let lines = repo().doc.lines().count();
    assert!(
        lines <= ARCHITECTURE_MD_MAX_LINES,
        "{ARCHITECTURE_MD} has {lines} lines, more than {ARCHITECTURE_MD_MAX_LINES}: move detail \
         to the module headers or the documents it links"
    );
}
