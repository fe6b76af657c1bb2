//! Decisions typed beside a running gateway (issue 46): `servers approve|reject`
//! and `plans approve|reject` go to the gateway on this data directory, which
//! signs them with the approver key in its own keychain — a second terminal
//! may not reach that keychain (`scripts/run`'s private D-Bus session), as
//! `agents add` already may not. With no gateway running, the command signs
//! with the keychain itself, as before.

use std::process::ExitCode;

use interlock_gateway::admin::{self, AdminError, decisions::OwnerDecision};
use interlock_host::HostError;

use super::EXIT_REJECTED;
use super::context::Context;

/// Whether a gateway answers on this data directory's admin socket.
pub async fn gateway_runs(ctx: &Context) -> anyhow::Result<bool> {
    let data_dir = ctx.host().data_dir()?;
    Ok(matches!(
        admin::request(&data_dir, &admin::Request::Ping).await,
        Ok(Some(admin::Answer::Pong))
    ))
}

/// Sends `d` to the running gateway: `Some(exit)` when it answered (decided,
/// or refused with nothing signed), `None` when none runs any more.
pub async fn decide_beside(ctx: &Context, d: OwnerDecision) -> anyhow::Result<Option<ExitCode>> {
    match ctx.host().decide_beside_running_gateway(d).await {
        Ok(None) => Ok(None),
        Ok(Some(done)) => {
            println!("{done}");
            eprintln!(
                "interlock: signed by the running gateway with the approver key in its keychain"
            );
            Ok(Some(ExitCode::SUCCESS))
        }
        Err(HostError::Admin(AdminError::Refused(e))) => {
            eprintln!("interlock: refused: {e}");
            Ok(Some(ExitCode::from(EXIT_REJECTED)))
        }
        Err(e) => Err(e.into()),
    }
}
