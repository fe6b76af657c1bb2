//! Command definitions (clap) and dispatch.

mod canon;
mod input;
mod plan;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// The input was read but rejected (invalid document, violated invariant).
pub const EXIT_REJECTED: u8 = 1;
/// The command could not run (unreadable file, bad usage).
pub const EXIT_ERROR: u8 = 2;

/// Interlock: AI agents propose, a human countersigns the exact bytes, and every
/// decision leaves a receipt that can be verified offline.
///
/// Exit codes: 0 success; 1 the input was rejected (every reason is printed);
/// 2 the command could not run (unreadable file, bad arguments).
#[derive(Debug, Parser)]
#[command(name = "interlock", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the RFC 8785 (JCS) canonical form of a strict YAML 1.2 or JSON document.
    ///
    /// Writes exactly the canonical bytes to stdout, with no trailing newline; with
    /// --hash, writes `sha256:<64 lowercase hex>` and a newline instead. Rejected
    /// input (duplicate keys, anchors, tags, NaN, integers beyond 2^53−1, lone
    /// surrogates, invalid UTF-8, nesting deeper than 64, ...) exits 1 with a
    /// one-line reason naming the line or JSON path on stderr, and nothing on stdout.
    Canon(CanonArgs),
    /// Work with plans.
    #[command(subcommand)]
    Plan(PlanCommand),
}

#[derive(Debug, clap::Args)]
pub struct CanonArgs {
    /// The document to read; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// The input format. Default: from the file extension (.json, .yaml, .yml); JSON for stdin.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Print the SHA-256 of the canonical bytes instead of the bytes.
    #[arg(long)]
    hash: bool,
}

#[derive(Debug, Subcommand)]
enum PlanCommand {
    /// Validate a plan against the universal invariants and a policy.
    ///
    /// Prints the plan hash on success. Otherwise prints every violation, one per
    /// line, naming the invariant, the stage and the JSON path, and exits 1.
    Check(PlanCheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct PlanCheckArgs {
    /// The plan (YAML or JSON, by extension; `-` reads JSON from stdin).
    #[arg(value_name = "FILE|-")]
    file: PathBuf,
    /// A policy file (YAML or JSON). Default: the built-in policy.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    Yaml,
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Canon(args) => canon::run(args),
        Command::Plan(PlanCommand::Check(args)) => plan::check(args),
    }
}
