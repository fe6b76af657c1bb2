//! `interlock`: the command-line face of Interlock. Thin by design: argument parsing
//! and printing live here; every decision is made in the library crates.
#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc malloc: a proxied tool call allocates and frees
/// hundreds of small JSON buffers across tokio's worker threads, and glibc's
/// arenas spent about a tenth of the gateway's CPU on them (docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            // One line, so scripts and humans both get a clear reason.
            eprintln!("interlock: {}", one_line(&format!("{err:#}")));
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}

fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).collect::<Vec<_>>().join(" ")
}
