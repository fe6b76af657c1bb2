//! `interlock lock` and `interlock review` (issue 22): the lockfile of
//! approved surfaces, and the read-only boundary review CI runs on every
//! pull request. Parsing and printing only; the work is
//! `interlock_gateway::review`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::ValueEnum;
use interlock_core::TrustedKeys;
use interlock_gateway::review::{self, Baselines};
use interlock_trust::review::{Gate, lockfile::Lockfile, report, sarif};

use super::context::Context;
use super::{EXIT_ERROR, EXIT_REJECTED};

#[derive(Debug, clap::Args)]
pub struct LockArgs {
    /// Lock only this server (repeatable). Default: every approved server.
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
    /// Where to write the lockfile.
    #[arg(long, short, default_value = "interlock.lock")]
    output: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReviewFormat {
    Text,
    Json,
    Markdown,
    Sarif,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FailOn {
    Monitor,
    Hold,
    Quarantine,
}

impl From<FailOn> for Gate {
    fn from(f: FailOn) -> Gate {
        match f {
            FailOn::Monitor => Gate::Monitor,
            FailOn::Hold => Gate::Hold,
            FailOn::Quarantine => Gate::Quarantine,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// Review only this server (repeatable). Default: every configured server.
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
    /// Classify against this lockfile (default: the data directory's approved
    /// baselines).
    #[arg(long, value_name = "FILE", conflicts_with = "gateway")]
    lock: Option<PathBuf>,
    /// Classify against a team gateway's baselines through its reviewer API
    /// (`POST /api/v1/servers/{name}/review`), with the key in
    /// $INTERLOCK_REVIEW_KEY (a review-only key: `interlock reviewers add
    /// NAME --scope review`).
    #[arg(long, value_name = "URL")]
    gateway: Option<String>,
    /// The gateway configuration whose `[servers]` are reviewed (default:
    /// `<data dir>/gateway.toml`). Its `[drift]` policy is part of what is
    /// reviewed, so it is not what judges the review: the policy is the
    /// `--drift-from` file's, else the built-in one.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A trusted gateway configuration (the base branch's, the deployed
    /// one) whose `[drift]` policy classifies the review (default: the data
    /// directory's `gateway.toml` when `--config` is not given, else the
    /// built-in policy).
    #[arg(long, value_name = "FILE")]
    drift_from: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: ReviewFormat,
    /// The weakest drift that fails the review (exits non-zero).
    #[arg(long, value_enum, default_value = "monitor")]
    fail_on: FailOn,
    /// Also write the Markdown summary here (a pull-request comment).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Also write SARIF 2.1.0 here (code scanning).
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
    /// Also write the JSON review here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// An approver public key (64 hex digits) the lockfile's statements may be
    /// signed by (repeatable, or comma-separated in $INTERLOCK_APPROVER_KEYS).
    /// Default: the approver keys the data directory trusts.
    #[arg(
        long = "approver-key",
        value_name = "HEX",
        env = "INTERLOCK_APPROVER_KEYS",
        value_delimiter = ','
    )]
    approver_keys: Vec<String>,
}

/// `interlock lock`.
pub async fn lock(ctx: &Context, args: LockArgs) -> anyhow::Result<ExitCode> {
    let engine = ctx.engine().await?;
    let made = Lockfile::from_engine(&engine, &args.servers).await;
    engine.log().close().await;
    let (lock, skipped) = match made {
        Ok(made) => made,
        Err(e) => {
            eprintln!("interlock: {e}");
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
    };
    let text = lock.to_text();
    let tmp = args.output.with_extension("lock.tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    for (name, s) in &lock.servers {
        println!("locked {name:<20} {}", s.surface_hash);
    }
    for name in skipped {
        eprintln!("interlock: not locked: `{name}` has no approved surface");
    }
    println!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

/// The approver keys a lockfile's statements are checked against.
async fn trusted_keys(ctx: &Context, given: &[String]) -> anyhow::Result<TrustedKeys> {
    let mut trusted = TrustedKeys::new();
    if !given.is_empty() {
        for hex_key in given {
            let mut bytes = [0u8; 32];
            hex::decode_to_slice(hex_key.trim(), &mut bytes)
                .with_context(|| format!("--approver-key {hex_key:?} is not 64 hex digits"))?;
            let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                .with_context(|| format!("--approver-key {hex_key:?} is not an Ed25519 key"))?;
            trusted.add(key);
        }
        return Ok(trusted);
    }
    let engine = ctx.engine().await.context(
        "no --approver-key given and no data directory to take trusted approver keys from",
    )?;
    let found = engine.trusted_approvers().await;
    engine.log().close().await;
    Ok(found?.0)
}

/// `lock`, unless a data directory holds later decisions that supersede one
/// of its statements (issue 39 item 14). With `--approver-key` (CI, no data
/// directory) there is nothing to check against: said on stderr, and
/// `--gateway URL` is the review against a gateway's current decisions.
async fn superseded(
    ctx: &Context,
    approver_keys: &[String],
    lock: Lockfile,
) -> anyhow::Result<Result<Lockfile, interlock_trust::review::lockfile::LockError>> {
    if !approver_keys.is_empty() {
        eprintln!(
            "interlock: the lockfile's statements are checked by signature only (no data directory \
             with later decisions); `--gateway URL` reviews against a gateway's current approvals"
        );
        return Ok(Ok(lock));
    }
    let engine = ctx.engine().await?;
    let checked = lock.check_not_superseded(&engine).await;
    engine.log().close().await;
    Ok(checked.map(|()| lock))
}

/// The drift policy that classifies a review (issue 39 item 14): never the
/// reviewed config's own `[drift]` — a pull request setting `monitor_below
/// = "critical"` beside a destructive tool made its own gate pass.
fn judging_policy(
    ctx: &Context,
    args: &ReviewArgs,
    reviewed: &interlock_gateway::GatewayConfig,
) -> anyhow::Result<interlock_gateway::config::DriftConfig> {
    let trusted = match (&args.drift_from, &args.config) {
        (Some(path), _) => ctx.host().gateway_config(Some(path))?.drift,
        // The data directory's own config: the deployed one.
        (None, None) => reviewed.drift.clone(),
        (None, Some(_)) => Default::default(),
    };
    if args.config.is_some() && reviewed.drift != trusted {
        eprintln!(
            "interlock: the reviewed config's [drift] is not used to judge it (it is part of what is reviewed); \
             classified with {}; pass --drift-from a trusted gateway.toml to use another",
            if args.drift_from.is_some() {
                "the --drift-from file's policy"
            } else {
                "the built-in policy"
            }
        );
    }
    Ok(trusted)
}

/// `interlock review`.
pub async fn run(ctx: &Context, args: ReviewArgs) -> anyhow::Result<ExitCode> {
    let config = ctx
        .host()
        .gateway_config_with_secrets(args.config.as_deref())?;
    let policy = judging_policy(ctx, &args, &config)?.policy()?;
    let mut lock_text = None;
    let baselines = if let Some(path) = &args.lock {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let verified = match Lockfile::parse(&bytes) {
            Ok(lock) => match trusted_keys(ctx, &args.approver_keys).await {
                Ok(trusted) => match lock.verify(&trusted) {
                    Ok(()) => superseded(ctx, &args.approver_keys, lock).await,
                    Err(e) => Ok(Err(e)),
                },
                Err(e) => Err(e),
            },
            Err(e) => Ok(Err(e)),
        };
        let lock = match verified? {
            Ok(lock) => lock,
            Err(e) => {
                eprintln!("interlock: {}: refused: {e}", path.display());
                return Ok(ExitCode::from(EXIT_REJECTED));
            }
        };
        lock_text = Some(String::from_utf8_lossy(&bytes).into_owned());
        Baselines::Local {
            kind: "lockfile",
            location: path.display().to_string(),
            surfaces: lock
                .servers
                .into_iter()
                .map(|(n, s)| (n, s.surface))
                .collect(),
        }
    } else if let Some(url) = &args.gateway {
        let key = std::env::var("INTERLOCK_REVIEW_KEY")
            .context("--gateway needs a review key in $INTERLOCK_REVIEW_KEY")?;
        Baselines::Gateway(interlock_gateway::client::ReviewerClient::new(url, &key)?)
    } else {
        let store = ctx.store().await?;
        let mut surfaces = std::collections::BTreeMap::new();
        for r in store.servers().await? {
            if let Some(s) = interlock_trust::pins::decode_surface(&r.name, r.baseline.as_deref())?
            {
                surfaces.insert(r.name, s);
            }
        }
        Baselines::Local {
            kind: "data_dir",
            location: ctx.host().data_dir()?.display().to_string(),
            surfaces,
        }
    };
    let confiner = ctx.host().confiner(args.config.as_deref())?;
    let review = match review::review(&config, &args.servers, &baselines, &policy, &confiner).await
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("interlock: {e}");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let fail_on = Gate::from(args.fail_on);
    let artifact = args
        .lock
        .as_ref()
        .map(|p| p.display().to_string())
        .or_else(|| args.config.as_ref().map(|p| p.display().to_string()))
        .unwrap_or_else(|| "gateway.toml".into());
    let render = |format: ReviewFormat| match format {
        ReviewFormat::Text => report::text(&review, fail_on),
        ReviewFormat::Markdown => report::markdown(&review, fail_on),
        ReviewFormat::Json => {
            serde_json::to_string_pretty(&review).expect("JSON serializes") + "\n"
        }
        ReviewFormat::Sarif => {
            serde_json::to_string_pretty(&sarif::sarif(&review, &artifact, lock_text.as_deref()))
                .expect("JSON serializes")
                + "\n"
        }
    };
    for (path, format) in [
        (&args.markdown, ReviewFormat::Markdown),
        (&args.sarif, ReviewFormat::Sarif),
        (&args.json, ReviewFormat::Json),
    ] {
        if let Some(path) = path {
            std::fs::write(path, render(format))
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    print!("{}", render(args.format));
    Ok(ExitCode::from(review.exit_code(fail_on)))
}
