//! `interlock hook <client>`: the command hook of a coding agent (issue 40).
//! Reads the hook event on stdin, asks the running gateway, prints its
//! answer in the client's format. Fails closed: when the gateway cannot be
//! reached or refuses, it prints a deny — or, with `--on-unreachable ask`
//! (the owner's choice, written in the client's hook settings), lets the
//! client ask its own user.

use std::io::Read as _;
use std::process::ExitCode;

use interlock_hooks::{Answer, Client, Phase};

/// The largest hook event read from stdin.
const MAX_EVENT: u64 = 4 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The client whose hook this is: claude-code, cursor, codex, gemini-cli.
    client: Client,
    /// The gateway (its base URL).
    #[arg(
        long,
        env = "INTERLOCK_GATEWAY",
        default_value = "http://127.0.0.1:8717"
    )]
    gateway: String,
    /// The agent API key (prefer the environment variable: argv is visible to
    /// other users of the machine).
    #[arg(long, env = "INTERLOCK_API_KEY", hide_env_values = true)]
    key: Option<String>,
    /// How long a held use waits for a reviewer before the hook answers
    /// "held — retry when approved" (default: the client's hook timeout less
    /// five seconds; at most the gateway's `calls.hold_secs`).
    #[arg(long, value_name = "SECS")]
    wait: Option<u64>,
    /// When the gateway cannot answer: `deny` (the default) or `ask` (the
    /// client asks its user instead).
    #[arg(long, value_enum, default_value = "deny")]
    on_unreachable: Unreachable,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Unreachable {
    Deny,
    Ask,
}

pub async fn run(args: HookArgs) -> anyhow::Result<ExitCode> {
    let mut event = Vec::new();
    let read = std::io::stdin().take(MAX_EVENT + 1).read_to_end(&mut event);
    let (phase, name) = phase_of(&event);
    let fallback = |why: String| {
        let reason = format!("Interlock could not judge this tool use ({why})");
        let answer = match args.on_unreachable {
            Unreachable::Deny => Answer::Deny { reason },
            Unreachable::Ask => Answer::Ask { reason },
        };
        eprintln!("interlock hook: {why}");
        println!(
            "{}",
            interlock_hooks::answer(args.client, phase, &name, &answer)
        );
        Ok(ExitCode::SUCCESS)
    };
    if let Err(e) = read {
        return fallback(format!("stdin could not be read: {e}"));
    }
    if event.len() as u64 > MAX_EVENT {
        return fallback(format!("the event is larger than {MAX_EVENT} bytes"));
    }
    let Some(key) = args.key.as_deref() else {
        return fallback("no agent key: set INTERLOCK_API_KEY".into());
    };
    let wait = args
        .wait
        .unwrap_or(args.client.default_timeout_secs().saturating_sub(5));
    match interlock_gateway::hook_client::post_event(&args.gateway, key, args.client, event, wait)
        .await
    {
        Ok(answer) => {
            println!("{answer}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fallback(e.to_string()),
    }
}

/// The event's phase and name, to shape a fallback answer.
fn phase_of(event: &[u8]) -> (Phase, String) {
    let name = serde_json::from_slice::<serde_json::Value>(event)
        .ok()
        .and_then(|v| v["hook_event_name"].as_str().map(str::to_owned))
        .unwrap_or_default();
    (Phase::guess(&name), name)
}
