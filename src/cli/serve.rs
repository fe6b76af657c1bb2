//! `interlock serve`: the headless gateway.

use std::path::PathBuf;
use std::process::ExitCode;

use interlock_core::one_line::one_line;
use interlock_gateway::GatewayConfig;
use interlock_gateway::reviewer::route::route;
use interlock_host::GatewayOptions;
use interlock_trust::{EventType, GatewayEvent, SubjectKind};

use super::context::Context;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The gateway's TOML config. Default: `<data dir>/gateway.toml` if it exists.
    #[arg(long, value_name = "FILE", env = "INTERLOCK_CONFIG")]
    config: Option<PathBuf>,
    /// Address to bind, overriding the config (default 127.0.0.1:8717; loopback
    /// unless you say otherwise).
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// Serve a built review UI (`ui/dist`) at `/` for reviewers in a browser.
    #[arg(long, value_name = "DIR")]
    ui: Option<PathBuf>,
}

pub fn load_config(ctx: &Context, path: Option<&PathBuf>) -> anyhow::Result<GatewayConfig> {
    Ok(ctx.host().gateway_config(path.map(PathBuf::as_path))?)
}

/// A long-running command's own log (upstreams' stderr, reconnects, drift;
/// a witness's submissions) on stderr; RUST_LOG overrides the level. Colours
/// only on a terminal: a journal, a file or a container's log gets plain text
/// (issue 46).
pub fn log_to_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
}

pub async fn run(ctx: &Context, args: ServeArgs) -> anyhow::Result<ExitCode> {
    log_to_stderr();
    let running = ctx
        .host()
        .start_gateway(GatewayOptions {
            config: args.config,
            listen: args.listen,
            ui_dir: args.ui,
        })
        .await?;
    let (bound, gw) = (running.bound(), running.gateway());
    // One line on stdout a machine can read (tests and scripts wait for it; a
    // reader that then closes the pipe must not stop the gateway), the rest on stderr.
    {
        use std::io::Write as _;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "interlock gateway listening on http://{bound}");
        let _ = out.flush();
    }
    eprintln!(
        "  agents:    http://{bound}/mcp   (Authorization: Bearer <agent key>; `interlock agents add`)"
    );
    eprintln!(
        "  reviewers: http://{bound}/api/v1  (`interlock reviewers add`; OpenAPI at /api/v1/openapi.json)"
    );
    // What a team member's desktop pins (`[team] audience`, issue 39 item 7).
    eprintln!(
        "  log:       {}   (the audience of every decision made here)",
        gw.engine().log().origin()
    );
    for up in gw.upstreams() {
        eprintln!("  upstream {}: {}", up.name, up.transport.describe());
    }
    // The headless first run: no reviewer yet, so the owner gets a one-time
    // link that makes a browser one. On a terminal it is printed; anywhere
    // else (a container's log, a journal, a pipe) only the path of an
    // owner-only file holding it is (issue 39 item 15). Both on stdout, after
    // the line above, so a script can read them.
    if let Some(link) = running.first_run_signin_link().await? {
        use std::io::{IsTerminal as _, Write as _};
        eprintln!(
            "  no reviewer yet: open this link once, within 15 min, to make that browser one \
             (`interlock signin-link` prints another):"
        );
        let mut out = std::io::stdout();
        if out.is_terminal() {
            let _ = writeln!(out, "sign in: {link}");
        } else {
            let path = interlock_host::write_signin_link(&ctx.host().data_dir()?, &link)?;
            let _ = writeln!(out, "sign in: file {}", path.display());
        }
        let _ = out.flush();
    } else if running.gateway().config().ui_dir.is_none() {
        eprintln!("  review UI: not served (`--ui ui/dist`)");
    }
    // What waits for a reviewer, said in this terminal too (issue 46): the
    // owner who started the gateway learns of a quarantine or a held call
    // without a browser open.
    let review_at = running
        .gateway()
        .config()
        .ui_dir
        .is_some()
        .then(|| format!("http://{bound}/"));
    let mut events = running.events().subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) => {
                    if let Some(line) = announcement(&e, review_at.as_deref()) {
                        eprintln!("{line}");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    eprintln!("  review: {n} events missed here; see the inbox");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let shutdown = async {
        let ctrl_c = tokio::signal::ctrl_c();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    };
    running.serve_until(shutdown).await?;
    Ok(ExitCode::SUCCESS)
}

/// The line a terminal gets for an event that puts an item on hold for a
/// reviewer, or `None`. Its text comes from agents and upstreams: control
/// characters (a terminal's escape sequences) are replaced and it is bounded.
fn announcement(e: &GatewayEvent, review_at: Option<&str>) -> Option<String> {
    if !e.kind.holds_for_review() {
        return None;
    }
    let what = match e.kind {
        EventType::PlanProposed => "held",
        EventType::ServerPending => "new server",
        EventType::ServerQuarantined => "QUARANTINED",
        _ => "drift held",
    };
    let subject = one_line(&e.subject, 80);
    let whereto = match (review_at, e.subject_kind) {
        (Some(base), kind) => format!("{base}{}", route(kind, &e.subject)),
        (None, SubjectKind::Server) => format!("`interlock servers show {subject}`"),
        (None, SubjectKind::Plan) => format!("`interlock plans show {subject}`"),
        (None, SubjectKind::Standing) => "`interlock standing list`".to_owned(),
    };
    Some(format!(
        "  review: {what} — {} (risk {}): {whereto}",
        one_line(&e.title, 160),
        one_line(&e.risk, 12),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_issue_46_a_hold_is_announced_without_the_agents_escape_codes() {
        let e = GatewayEvent::server(
            EventType::ServerQuarantined,
            "fs\u{1b}[2J",
            "MCP server `fs` quarantined: its surface drifted\u{1b}]0;pwned\u{7}".into(),
            "high",
            "sha256:00",
            Some(3),
        );
        let line = announcement(&e, Some("http://127.0.0.1:8717/")).unwrap();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(
            line.contains("QUARANTINED") && line.contains("risk high"),
            "{line}"
        );
        assert!(
            line.ends_with("http://127.0.0.1:8717/#/servers/fs%1B%5B2J"),
            "{line}"
        );
        let line = announcement(&e, None).unwrap();
        assert!(line.contains("`interlock servers show fs [2J`"), "{line}");
        let approved = GatewayEvent::server(
            EventType::ServerApproved,
            "fs",
            "Approved".into(),
            "info",
            "sha256:00",
            None,
        );
        assert_eq!(announcement(&approved, None), None);
    }
}
