//! Command definitions (clap) and dispatch.

mod admin;
mod agents;
mod alerts;
mod audit;
mod canon;
mod connect;
mod context;
mod demo;
mod hook;
mod hooks;
mod input;
mod keys;
mod log_key;
mod mcp_bridge;
mod owner;
mod plan;
mod plans;
mod receipts;
mod review;
mod serve;
mod servers;
mod standing;
mod witness;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// The input was read but rejected (invalid document, violated invariant, refused
/// decision or execution, failed audit).
pub const EXIT_REJECTED: u8 = 1;
/// The command could not run (unreadable file, bad usage, no keychain).
pub const EXIT_ERROR: u8 = 2;

/// Interlock: AI agents propose, a human countersigns the exact bytes, and every
/// decision leaves a receipt that can be verified offline.
///
/// Exit codes: 0 success; 1 the input was rejected or refused (every reason is
/// printed); 2 the command could not run (unreadable file, bad arguments, no keychain).
#[derive(Debug, Parser)]
#[command(name = "interlock", version, propagate_version = true)]
pub struct Cli {
    /// Where the database lives. Default: the platform's data directory
    /// (e.g. ~/.local/share/interlock), or $INTERLOCK_DATA_DIR.
    #[arg(long, global = true, value_name = "DIR", env = "INTERLOCK_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// The database: postgres://USER@HOST/DATABASE (a team's gateways
    /// share one; the database must exist) or sqlite:///PATH. Default: the
    /// gateway.toml `[store] url`, else the SQLite file in the data directory.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "INTERLOCK_DATABASE_URL"
    )]
    database: Option<String>,
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
    /// Check, propose and execute plans (the agent's side: nothing here can approve).
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Review held plans: list, show, approve, reject (the reviewer's side).
    #[command(subcommand)]
    Plans(plans::PlansCommand),
    /// The approver key in the OS keychain.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Check the tamper-evident log.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Receipts for auditors: show, export a bundle, verify a bundle offline.
    #[command(subcommand)]
    Receipts(receipts::ReceiptsCommand),
    /// Alert sinks (SIEM, chat, pager): their delivery state, a test event.
    #[command(subcommand)]
    Alerts(alerts::AlertsCommand),
    /// Run the whole loop once — propose, approve, execute, prove — with throwaway keys.
    ///
    /// Needs nothing but this binary (no keychain). With --data-dir DIR the demo's
    /// database is kept in DIR for `interlock audit verify --data-dir DIR`;
    /// otherwise it uses a temporary directory.
    Demo(demo::DemoArgs),
    /// Run the gateway headless: the MCP proxy for agents at /mcp and the
    /// reviewer API at /api/v1, on 127.0.0.1:8717 unless configured otherwise.
    Serve(serve::ServeArgs),
    /// A stdio MCP server bridging to a running gateway (for clients that
    /// spawn their servers). Needs an agent key in $INTERLOCK_API_KEY.
    Mcp(mcp_bridge::McpArgs),
    /// A coding agent's command hook (Cursor, Codex, Gemini CLI; Claude Code
    /// can post to the gateway itself): reads the hook event on stdin, prints
    /// the gateway's allow, deny or hold in the client's format. Needs an
    /// agent key in $INTERLOCK_API_KEY; denies when the gateway cannot answer.
    Hook(hook::HookArgs),
    /// Coding agents' hooks: install them in a client's settings (a diff
    /// first; --undo gives the file back byte for byte).
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// Put an AI client's MCP servers behind the gateway: each becomes a
    /// pending upstream, its secrets move into the OS keychain, and the
    /// client reaches the gateway with its own agent key.
    ///
    /// Shows what would change unless --yes; keeps a backup that --undo
    /// restores byte for byte. Without CLIENT, lists the known clients.
    Connect(connect::ConnectArgs),
    /// API keys for agents (the MCP endpoint); printed once, stored hashed.
    #[command(subcommand)]
    Agents(agents::AgentsCommand),
    /// API keys for reviewers' clients (the reviewer API).
    #[command(subcommand)]
    Reviewers(agents::ReviewersCommand),
    /// Print a one-time sign-in link to the running gateway's review UI: the
    /// browser that opens it within 15 minutes becomes a reviewer (it gets a
    /// reviewer key and registers its own signing key). Asks the gateway
    /// serving this data directory, through its admin socket.
    SigninLink,
    /// The admin API (issue 20): API keys and their settings (role, shadow
    /// mode, rate, quota, response caps and policy) and admin tokens, with
    /// an admin token in $INTERLOCK_ADMIN_TOKEN; `admin token create` mints
    /// one through the running gateway's admin socket.
    Admin(admin::AdminArgs),
    /// A witness (C2SP tlog-witness): cosigns logs' checkpoints only if each is
    /// consistent with every one it saw before, so no operator can show
    /// auditors two histories (issue 43).
    #[command(subcommand)]
    Witness(witness::WitnessCommand),
    /// Review upstream MCP servers: list, show, diff, approve, reject.
    #[command(subcommand)]
    Servers(servers::ServersCommand),
    /// Standing approvals: let a role make a class of tool call without review.
    #[command(subcommand)]
    Standing(standing::StandingCommand),
    /// Write `interlock.lock`: every approved server's surface, its hash and
    /// the approver's signed statement, for review in a diff and for CI.
    Lock(review::LockArgs),
    /// Review each configured upstream's surface read-only against a
    /// lockfile, the data directory or a team gateway, with the gateway's
    /// drift classifier (for CI; see docs/CI.md).
    ///
    /// Exit codes (stable): 0 no drift (or only below --fail-on); 10 drift the
    /// gateway would only monitor; 20 drift it would hold, or a server never
    /// approved; 30 drift it would quarantine; 2 a server could not be
    /// observed (whatever --fail-on says); 1 the lockfile was refused
    /// (malformed, a surface that does not hash to its recorded hash, or a
    /// statement that does not verify).
    Review(review::ReviewArgs),
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
    /// Propose a plan: validate it and hold it for review (state PROPOSED).
    Propose(plan::ProposeArgs),
    /// Execute an approved plan, once.
    Execute(plan::ExecuteArgs),
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
    let ctx = context::Context::new(cli.data_dir.clone(), cli.database.as_deref())?;
    match cli.command {
        Command::Canon(args) => canon::run(args),
        Command::Plan(PlanCommand::Check(args)) => plan::check(args),
        Command::Plan(PlanCommand::Propose(args)) => context::block_on(plan::propose(&ctx, args)),
        Command::Plan(PlanCommand::Execute(args)) => context::block_on(plan::execute(&ctx, args)),
        Command::Plans(cmd) => context::block_on(plans::run(&ctx, cmd)),
        Command::Keys(cmd) => context::block_on(keys::run(&ctx, cmd)),
        Command::Audit(cmd) => context::block_on(audit::run(&ctx, cmd)),
        Command::Receipts(cmd) => context::block_on(receipts::run(&ctx, cmd)),
        Command::Alerts(cmd) => context::block_on(alerts::run(&ctx, cmd)),
        Command::Demo(args) => context::block_on(demo::run(cli.data_dir, args)),
        Command::Serve(args) => context::block_on(serve::run(&ctx, args)),
        Command::Mcp(args) => context::block_on(mcp_bridge::run(args)),
        // Run once per tool use by the agent's client: one thread, no pool.
        Command::Hook(args) => context::block_on_current_thread(hook::run(args)),
        Command::Hooks(command) => context::block_on(hooks::run(&ctx, command)),
        Command::Connect(args) => context::block_on(connect::run(&ctx, args)),
        Command::Agents(cmd) => context::block_on(agents::agents(&ctx, cmd)),
        Command::Reviewers(cmd) => context::block_on(agents::reviewers(&ctx, cmd)),
        Command::SigninLink => context::block_on(agents::signin_link(&ctx)),
        Command::Servers(cmd) => context::block_on(servers::run(&ctx, cmd)),
        Command::Admin(args) => context::block_on(admin::run(&ctx, args)),
        Command::Witness(cmd) => context::block_on(witness::run(&ctx, cmd)),
        Command::Standing(cmd) => context::block_on(standing::run(&ctx, cmd)),
        Command::Lock(args) => context::block_on(review::lock(&ctx, args)),
        Command::Review(args) => context::block_on(review::run(&ctx, args)),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks its own invariants (unique flags, ...) only when a subcommand is
    /// parsed; this checks every subcommand at once.
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
