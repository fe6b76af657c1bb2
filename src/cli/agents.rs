//! `interlock agents …` and `interlock reviewers …`: API keys for the gateway's
//! two HTTP surfaces. A key is printed once; only its SHA-256 is stored.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use interlock_gateway::roles::{DEFAULT_ROLE, Roles};
use interlock_gateway::{admin, keys};
use interlock_store::ApiKeyKind;

use super::context::Context;

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Create an API key for an agent; prints the key once.
    Add {
        /// The agent's name (its identity is `agent:NAME`).
        name: String,
        /// The role: which tools it may see and call (roles are in the gateway config).
        #[arg(long, default_value = DEFAULT_ROLE)]
        role: String,
        /// The gateway config the role must exist in (default `<data dir>/gateway.toml`).
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
        /// Shadow mode: decide, score and log every call, hold and block nothing.
        #[arg(long)]
        shadow: bool,
    },
    /// Turn shadow mode on or off for an agent's keys.
    Shadow {
        name: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    /// List agent keys (names, roles, hashes' prefixes; never the keys).
    List,
    /// Revoke every key of an agent.
    Revoke { name: String },
}

#[derive(Debug, Subcommand)]
pub enum ReviewersCommand {
    /// Create an API key for a reviewer's client (the web UI, scripts); prints
    /// it once. It can read and submit signed decisions, never sign them.
    ///
    /// With --scope review, the key can only ask for a boundary review
    /// (`POST /api/v1/servers/{name}/review`, `interlock review --gateway`):
    /// CI's key, which can neither read the inbox nor submit a decision.
    Add {
        name: String,
        #[arg(long, value_enum, default_value = "full")]
        scope: ReviewerScope,
    },
    /// List reviewer keys.
    List,
    /// Revoke every key of a reviewer.
    Revoke { name: String },
}

pub async fn agents(ctx: &Context, cmd: AgentsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AgentsCommand::Shadow { name, state } => {
            let shadow = state == "on";
            let active = ctx
                .store()
                .await?
                .api_keys(ApiKeyKind::Agent)
                .await?
                .into_iter()
                .any(|k| k.name == name && k.revoked_at.is_none());
            if !active {
                eprintln!("interlock: no active agent key named `{name}`");
                return Ok(ExitCode::from(super::EXIT_REJECTED));
            }
            let n = set_shadow(ctx, &name, shadow).await?;
            println!(
                "shadow mode {state} for `{name}` ({n} key(s) changed, each with its receipt)"
            );
            Ok(ExitCode::SUCCESS)
        }
        AgentsCommand::Add {
            name,
            role,
            config,
            shadow,
        } => {
            let config = super::serve::load_config(ctx, config.as_ref())?;
            let roles = Roles::new(&config.roles);
            if !roles.knows(&role) {
                bail!(
                    "unknown role `{role}`; the config defines: {}",
                    roles.names().collect::<Vec<_>>().join(", ")
                );
            }
            let code = add(ctx, ApiKeyKind::Agent, &name, &role, shadow).await?;
            if shadow && code == ExitCode::SUCCESS {
                eprintln!("shadow mode on: calls are decided and logged, never held or blocked");
            }
            Ok(code)
        }
        AgentsCommand::List => list(ctx, ApiKeyKind::Agent).await,
        AgentsCommand::Revoke { name } => revoke(ctx, ApiKeyKind::Agent, &name).await,
    }
}

/// What a reviewer key may do.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReviewerScope {
    /// The whole reviewer API.
    Full,
    /// Only `POST /api/v1/servers/{name}/review` (issue 22).
    Review,
    /// Only `GET /metrics` (issue 21): a Prometheus scraper's key.
    Metrics,
}

pub async fn reviewers(ctx: &Context, cmd: ReviewersCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ReviewersCommand::Add { name, scope } => {
            let role = match scope {
                ReviewerScope::Full => "reviewer",
                ReviewerScope::Review => interlock_gateway::roles::REVIEW_ONLY_ROLE,
                ReviewerScope::Metrics => interlock_gateway::roles::METRICS_ONLY_ROLE,
            };
            add(ctx, ApiKeyKind::Reviewer, &name, role, false).await
        }
        ReviewersCommand::List => list(ctx, ApiKeyKind::Reviewer).await,
        ReviewersCommand::Revoke { name } => revoke(ctx, ApiKeyKind::Reviewer, &name).await,
    }
}

/// Issues a key (in shadow mode from its first request if `shadow`: row,
/// shadow flag and receipt in one transaction).
async fn add(
    ctx: &Context,
    kind: ApiKeyKind,
    name: &str,
    role: &str,
    shadow: bool,
) -> anyhow::Result<ExitCode> {
    // Beside a running gateway, it issues the key (it holds the log key, which
    // this process may not reach: its keychain can be the gateway's alone).
    let request = admin::Request::IssueKey {
        kind,
        name: name.to_owned(),
        role: role.to_owned(),
        first_free: false,
        shadow,
    };
    let (key, key_hash, by) = match admin::request(&ctx.host().data_dir()?, &request).await? {
        Some(admin::Answer::Key { key, key_hash, .. }) => {
            (key, key_hash, " by the running gateway")
        }
        Some(other) => anyhow::bail!("the gateway issued no key: {other:?}"),
        None => {
            let engine = ctx.engine().await?;
            // An agent's name is its identity; a reviewer key's is not (the
            // admin socket applies the same rule).
            if kind == ApiKeyKind::Agent
                && let Some(taken) = keys::name_taken(&engine, kind, name).await?
            {
                engine.log().close().await;
                eprintln!("interlock: {}", taken.message(kind, name));
                return Ok(ExitCode::from(super::EXIT_REJECTED));
            }
            let (key, record) = keys::issue_key(
                &engine,
                kind,
                name,
                role,
                keys::IssuedBy::OwnerWithKeychain,
                shadow,
            )
            .await?;
            engine.log().close().await;
            (key, record.key_hash, "")
        }
    };
    eprintln!(
        "{} key for `{name}` (role {role}), stored{by} as {}. It is shown once:",
        kind.as_str(),
        &key_hash[..19]
    );
    println!("{key}");
    Ok(ExitCode::SUCCESS)
}

/// `interlock signin-link`: the running gateway prints it (it holds the
/// outstanding tokens; a link from any other process would not redeem).
pub async fn signin_link(ctx: &Context) -> anyhow::Result<ExitCode> {
    let data_dir = ctx.host().data_dir()?;
    match admin::request(&data_dir, &admin::Request::SigninLink).await? {
        Some(admin::Answer::SigninLink {
            url,
            expires_in_secs,
        }) => {
            eprintln!(
                "Open this link in the browser that will review (once, within {} min):",
                expires_in_secs / 60
            );
            println!("{url}");
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => bail!("the gateway printed no link: {other:?}"),
        None => bail!(
            "no gateway is running on {}; start one with `interlock serve --ui ui/dist`",
            data_dir.display()
        ),
    }
}

async fn list(ctx: &Context, kind: ApiKeyKind) -> anyhow::Result<ExitCode> {
    let store = ctx.store().await?;
    for k in store.api_keys(kind).await? {
        println!(
            "{:<20} {:<12} {}…  {}",
            k.name,
            k.role,
            &k.key_hash[..19],
            if k.revoked_at.is_some() {
                "revoked"
            } else {
                "active"
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Revokes `name`'s keys, each with its receipt: beside a running gateway,
/// it does (it holds the log key, and its key cache forgets them at once).
async fn revoke(ctx: &Context, kind: ApiKeyKind, name: &str) -> anyhow::Result<ExitCode> {
    let request = admin::Request::RevokeKeys {
        kind,
        name: name.to_owned(),
    };
    let (n, by) = match admin::request(&ctx.host().data_dir()?, &request).await? {
        Some(admin::Answer::KeysChanged(n)) => (n, " by the running gateway"),
        Some(admin::Answer::Error(e)) => bail!("the gateway revoked nothing: {e}"),
        Some(other) => bail!("the gateway revoked nothing: {other:?}"),
        None => {
            let engine = ctx.engine().await?;
            let n = keys::revoke_keys(&engine, kind, name, keys::IssuedBy::OwnerWithKeychain).await;
            engine.log().close().await;
            (n?, "")
        }
    };
    if n == 0 {
        eprintln!("interlock: no active {} key named `{name}`", kind.as_str());
        return Ok(ExitCode::from(super::EXIT_REJECTED));
    }
    println!("revoked {n} key(s) of `{name}`{by}, each with its receipt");
    Ok(ExitCode::SUCCESS)
}

/// Shadow mode for `name`'s agent keys, each change with its receipt (beside
/// a running gateway, by it). Returns how many keys changed.
async fn set_shadow(ctx: &Context, name: &str, shadow: bool) -> anyhow::Result<u64> {
    let request = admin::Request::SetShadow {
        name: name.to_owned(),
        shadow,
    };
    Ok(
        match admin::request(&ctx.host().data_dir()?, &request).await? {
            Some(admin::Answer::KeysChanged(n)) => n,
            Some(admin::Answer::Error(e)) => bail!("the gateway changed nothing: {e}"),
            Some(other) => bail!("the gateway changed nothing: {other:?}"),
            None => {
                let engine = ctx.engine().await?;
                let n = keys::set_shadow(&engine, name, shadow, keys::IssuedBy::OwnerWithKeychain)
                    .await;
                engine.log().close().await;
                n?
            }
        },
    )
}
