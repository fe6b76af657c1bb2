//! `interlock admin …` (issue 20 item 3): the admin API's client — API keys
//! and their settings, admin tokens — with an admin token in
//! `$INTERLOCK_ADMIN_TOKEN`; and `admin token create`, which mints one
//! through the running gateway's admin socket (or, with none running, with
//! the keychain): how the first owner token comes to be.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use interlock_gateway::admin;
use interlock_store::AdminScope;
use serde_json::{Value, json};

use super::EXIT_REJECTED;
use super::context::Context;

#[derive(Debug, Args)]
pub struct AdminArgs {
    /// The gateway's base URL (default: its config's `listen`, on loopback).
    #[arg(long, env = "INTERLOCK_GATEWAY_URL", global = true)]
    gateway: Option<String>,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Mint an admin token through the running gateway's admin socket (or,
    /// with none running, with the keychain); printed once.
    #[command(subcommand)]
    Token(TokenCommand),
    /// The presented token's name, scope and permissions.
    Whoami,
    /// API keys and their settings (needs $INTERLOCK_ADMIN_TOKEN).
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Admin tokens over the API (owner tokens; needs $INTERLOCK_ADMIN_TOKEN).
    #[command(subcommand)]
    Tokens(TokensCommand),
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    Create {
        name: String,
        #[arg(long, value_parser = ["owner", "operator", "security_reviewer", "auditor"])]
        scope: String,
    },
}

/// A key's settings on the command line; `none` clears a limit.
#[derive(Debug, Args, Default)]
struct SettingsArgs {
    #[arg(long)]
    role: Option<String>,
    /// Shadow mode (what would be held or stopped is forwarded): an owner
    /// token's change, with `--reason`.
    #[arg(long, value_parser = ["on", "off"], requires = "reason")]
    shadow: Option<String>,
    /// Why shadow mode changes (logged with the change).
    #[arg(long)]
    reason: Option<String>,
    /// Calls per minute (a token bucket), or `none`.
    #[arg(long, value_name = "N|none")]
    rate: Option<String>,
    /// Calls per calendar month (UTC), or `none`.
    #[arg(long, value_name = "N|none")]
    quota: Option<String>,
    /// The largest tool result passed on, in bytes, or `none`.
    #[arg(long, value_name = "N|none")]
    max_response_bytes: Option<String>,
    /// The most items in any array of a tool result, or `none`.
    #[arg(long, value_name = "N|none")]
    max_array_items: Option<String>,
    /// `{"pii": "redact", "secrets": "block", "injection": "block"}`, or `none`.
    #[arg(long, value_name = "JSON|none")]
    response_policy: Option<String>,
    /// The alert sinks (names from gateway.toml, comma-separated) that
    /// receive this key's events, or `none`.
    #[arg(long, value_name = "SINK,...|none")]
    alert_sinks: Option<String>,
    /// The minimum severity of this key's events those sinks receive
    /// (info, low, medium, high, critical), or `none` (the sink's own).
    #[arg(long, value_name = "SEVERITY|none")]
    alert_min_severity: Option<String>,
    /// The key's limits on the LLM proxy: `{"models": [...],
    /// "rate_per_minute": N, "monthly_quota": N}`, or `none`.
    #[arg(long, value_name = "JSON|none")]
    llm_limits: Option<String>,
    /// The key's prompt policy on the LLM proxy: `{"blocked_keywords",
    /// "blocked_topics", "max_chars", "fail_mode", "on_hit",
    /// "keep_prompt_text"}`, or `none`.
    #[arg(long, value_name = "JSON|none")]
    llm_policy: Option<String>,
}

impl SettingsArgs {
    fn body(&self) -> anyhow::Result<serde_json::Map<String, Value>> {
        let mut m = serde_json::Map::new();
        if let Some(r) = &self.role {
            m.insert("role".into(), json!(r));
        }
        if let Some(s) = &self.shadow {
            m.insert("shadow".into(), json!(s == "on"));
        }
        if let Some(r) = &self.reason {
            m.insert("reason".into(), json!(r));
        }
        for (field, v) in [
            ("rate_per_minute", &self.rate),
            ("monthly_quota", &self.quota),
            ("max_response_bytes", &self.max_response_bytes),
            ("max_array_items", &self.max_array_items),
        ] {
            if let Some(v) = v {
                let n = if v == "none" {
                    Value::Null
                } else {
                    json!(
                        v.parse::<i64>()
                            .with_context(|| format!("--{field}: a number or none"))?
                    )
                };
                m.insert(field.into(), n);
            }
        }
        for (field, flag, v) in [
            (
                "response_policy",
                "--response-policy",
                &self.response_policy,
            ),
            ("llm_limits", "--llm-limits", &self.llm_limits),
            ("llm_policy", "--llm-policy", &self.llm_policy),
        ] {
            if let Some(p) = v {
                let v = if p == "none" {
                    Value::Null
                } else {
                    serde_json::from_str(p).with_context(|| format!("{flag}: JSON"))?
                };
                m.insert(field.into(), v);
            }
        }
        if let Some(list) = &self.alert_sinks {
            let v = if list == "none" {
                Value::Null
            } else {
                json!(
                    list.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                )
            };
            m.insert("alert_sinks".into(), v);
        }
        if let Some(s) = &self.alert_min_severity {
            let v = if s == "none" { Value::Null } else { json!(s) };
            m.insert("alert_min_severity".into(), v);
        }
        Ok(m)
    }
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    List,
    /// A new key, printed once.
    Create {
        name: String,
        #[arg(long, value_parser = ["agent", "reviewer"], default_value = "agent")]
        kind: String,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// Change a key's role, shadow mode and settings (ID: `keys list`).
    Update {
        id: String,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// A new key for the same name, role and settings; the old one revoked.
    Rotate {
        id: String,
    },
    Revoke {
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum TokensCommand {
    List,
    Create {
        name: String,
        #[arg(long, value_parser = ["owner", "operator", "security_reviewer", "auditor"])]
        scope: String,
    },
    Revoke {
        id: String,
    },
}

pub async fn run(ctx: &Context, args: AdminArgs) -> anyhow::Result<ExitCode> {
    let (method, path, body) = match args.command {
        AdminCommand::Token(TokenCommand::Create { name, scope }) => {
            return mint(ctx, &name, &scope).await;
        }
        AdminCommand::Whoami => ("GET", "/api/v1/admin/whoami".to_owned(), None),
        AdminCommand::Keys(KeysCommand::List) => ("GET", "/api/v1/admin/keys".into(), None),
        AdminCommand::Keys(KeysCommand::Create {
            name,
            kind,
            settings,
        }) => {
            let mut b = settings.body()?;
            b.insert("name".into(), json!(name));
            b.insert("kind".into(), json!(kind));
            ("POST", "/api/v1/admin/keys".into(), Some(Value::Object(b)))
        }
        AdminCommand::Keys(KeysCommand::Update { id, settings }) => (
            "PATCH",
            format!("/api/v1/admin/keys/{id}"),
            Some(Value::Object(settings.body()?)),
        ),
        AdminCommand::Keys(KeysCommand::Rotate { id }) => (
            "POST",
            format!("/api/v1/admin/keys/{id}/rotate"),
            Some(json!({})),
        ),
        AdminCommand::Keys(KeysCommand::Revoke { id }) => (
            "POST",
            format!("/api/v1/admin/keys/{id}/revoke"),
            Some(json!({})),
        ),
        AdminCommand::Tokens(TokensCommand::List) => ("GET", "/api/v1/admin/tokens".into(), None),
        AdminCommand::Tokens(TokensCommand::Create { name, scope }) => (
            "POST",
            "/api/v1/admin/tokens".into(),
            Some(json!({"name": name, "scope": scope})),
        ),
        AdminCommand::Tokens(TokensCommand::Revoke { id }) => (
            "POST",
            format!("/api/v1/admin/tokens/{id}/revoke"),
            Some(json!({})),
        ),
    };
    let Ok(token) = std::env::var("INTERLOCK_ADMIN_TOKEN") else {
        bail!("set $INTERLOCK_ADMIN_TOKEN to an admin token (`interlock admin token create`)");
    };
    let base = match args.gateway {
        Some(g) => g.trim_end_matches('/').to_owned(),
        None => {
            let mut at = ctx.host().gateway_config(None)?.listen;
            if at.ip().is_unspecified() {
                at.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
            }
            format!("http://{at}")
        }
    };
    let client = reqwest::Client::new();
    let mut req = client
        .request(method.parse()?, format!("{base}{path}"))
        .bearer_auth(token);
    if let Some(b) = body {
        req = req
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&b)?);
    }
    let resp = req
        .send()
        .await
        .with_context(|| format!("the gateway at {base}"))?;
    let status = resp.status();
    let answer: Value = serde_json::from_slice(&resp.bytes().await?).unwrap_or(Value::Null);
    if !status.is_success() {
        eprintln!(
            "refused ({status}): {}",
            answer["error"]["message"]
                .as_str()
                .unwrap_or("no reason given")
        );
        return Ok(ExitCode::from(EXIT_REJECTED));
    }
    println!("{}", serde_json::to_string_pretty(&answer)?);
    Ok(ExitCode::SUCCESS)
}

/// `admin token create`: through the admin socket, else with the keychain.
async fn mint(ctx: &Context, name: &str, scope: &str) -> anyhow::Result<ExitCode> {
    let scope = AdminScope::parse(scope).expect("clap checked it");
    let request = admin::Request::IssueAdminToken {
        name: name.to_owned(),
        scope,
    };
    let (token, by) = match admin::request(&ctx.host().data_dir()?, &request).await {
        Ok(Some(admin::Answer::Key { key, .. })) => (key, " by the running gateway"),
        Ok(Some(other)) => bail!("the gateway minted no token: {other:?}"),
        Err(admin::AdminError::Refused(e)) => {
            eprintln!("refused: {e}");
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
        Err(e) => return Err(e.into()),
        Ok(None) => {
            let engine = ctx.engine().await?;
            let (token, _) = interlock_gateway::admin::api::issue_token(
                &engine,
                name,
                scope,
                json!({"cli_with_keychain": true}),
            )
            .await?;
            engine.log().close().await;
            (token, "")
        }
    };
    eprintln!(
        "admin token `{name}` ({}), stored hashed{by}. It is shown once:",
        scope.as_str()
    );
    println!("{token}");
    Ok(ExitCode::SUCCESS)
}
