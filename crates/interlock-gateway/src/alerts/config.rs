//! `[alerts]` and `[[alerts.sinks]]` in `gateway.toml` (issue 21).
//!
//! A sink's secret (HMAC key, token) is never written in the file: it is a
//! reference to a keychain token (`secret_keychain`, resolved by the host like
//! an upstream's `headers_keychain`) or to an environment variable
//! (`secret_env`, read when the gateway starts).

use interlock_alerts::{Category, Filter, Severity, SinkKind};
use serde::Deserialize;

/// What is wrong with the `[alerts]` table, as one sentence; the configuration
/// shows it as its own error (`ConfigError::Invalid`). A type of its own so this
/// module needs nothing from the configuration that holds it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AlertsConfigError(pub String);

/// `[alerts]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlertsConfig {
    /// How often delivery reads the store for checkpoints nothing woke it
    /// for (another process signed them), in milliseconds.
    pub poll_ms: u64,
    /// Where delivery runs: in `interlock serve` (default) or in `interlock
    /// alerts run` beside it, off the gateway's CPU.
    pub process: Process,
    pub sinks: Vec<SinkConfig>,
}

/// Where alert delivery runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Process {
    /// In the gateway's process (`interlock serve`).
    #[default]
    Serve,
    /// In a process of its own (`interlock alerts run`), reading the same
    /// database; `serve` does not deliver.
    Separate,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        AlertsConfig {
            poll_ms: 200,
            process: Process::Serve,
            sinks: Vec::new(),
        }
    }
}

/// Where a new sink's cursor starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// The first leaf of the log: the sink receives the whole history.
    #[default]
    Beginning,
    /// The log's size when the sink is first seen: only what follows.
    End,
}

/// One `[[alerts.sinks]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SinkConfig {
    /// Unique; names the sink's cursor in the store (renaming a sink starts a
    /// new cursor).
    pub name: String,
    pub kind: SinkKind,
    /// Where requests go: `https://` (or `http://` to a loopback address only,
    /// since the body and the secret would cross the network in clear).
    pub url: String,
    /// The keychain token holding the secret.
    #[serde(default)]
    pub secret_keychain: Option<String>,
    /// The environment variable holding the secret.
    #[serde(default)]
    pub secret_env: Option<String>,
    /// The secret, once resolved (never read from the file).
    #[serde(skip)]
    pub secret: Option<String>,
    /// Categories sent (`call`, `hold`, `block`, `drift`, `quarantine`,
    /// `decision`, `plan`, `internal`, `other`); empty: all but `internal`.
    #[serde(default)]
    pub events: Vec<Category>,
    #[serde(default)]
    pub min_severity: Option<Severity>,
    #[serde(default)]
    pub servers: Vec<String>,
    #[serde(default)]
    pub agents: Vec<String>,
    /// Only the events of agent keys whose settings name this sink
    /// (`alert_sinks`, admin API); otherwise every event the filter passes.
    #[serde(default)]
    pub keys_only: bool,
    /// Leaves read from the log per batch.
    #[serde(default = "default_batch")]
    pub batch_size: u32,
    /// Tries of one request before it is dead-lettered.
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// The first retry's delay; each retry doubles it (with jitter) up to
    /// `backoff_max_ms`.
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    #[serde(default = "default_backoff_max")]
    pub backoff_max_ms: u64,
    /// A request's timeout (connect, send, answer).
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub start: Start,
    /// Syslog: PEM certificates of the CAs that may sign the collector's
    /// certificate, instead of the system's roots (a private CA).
    #[serde(default)]
    pub ca_file: Option<std::path::PathBuf>,
    /// Syslog: the facility (0-23); default 13, "log audit".
    #[serde(default = "default_facility")]
    pub facility: u8,
    /// Syslog: the HOSTNAME field (and Splunk's `host`, Datadog's
    /// `hostname`, PagerDuty's `source`); default this machine's name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// The review UI's base URL (`https://gw.example`), for the links in
    /// Slack and PagerDuty messages.
    #[serde(default)]
    pub review_url: Option<String>,
    /// Elastic: the index (default `interlock-alerts`); Splunk: the index
    /// (default: the HEC token's).
    #[serde(default)]
    pub index: Option<String>,
}

fn default_facility() -> u8 {
    13
}

fn default_batch() -> u32 {
    64
}
fn default_attempts() -> u32 {
    8
}
fn default_backoff() -> u64 {
    500
}
fn default_backoff_max() -> u64 {
    60_000
}
fn default_timeout() -> u64 {
    10_000
}

impl SinkConfig {
    pub fn filter(&self) -> Filter {
        Filter {
            events: self.events.clone(),
            min_severity: self.min_severity,
            servers: self.servers.clone(),
            agents: self.agents.clone(),
        }
    }

    fn check(&self) -> Result<(), AlertsConfigError> {
        let err = |m: String| {
            Err(AlertsConfigError(format!(
                "alerts.sinks `{}`: {m}",
                self.name
            )))
        };
        if self.name.is_empty()
            || self.name.len() > 64
            || !self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        {
            return err("a sink name is 1-64 letters, digits, `-` and `_`".into());
        }
        match self.kind {
            SinkKind::Syslog => check_stream_url(&self.url).or_else(err)?,
            _ => crate::outbound_url::check(&self.url, "secret_keychain / secret_env")
                .or_else(err)?,
        }
        if self.facility > 23 {
            return err("facility is 0 to 23".into());
        }
        if self.secret_keychain.is_some() && self.secret_env.is_some() {
            return err("name the secret once: secret_keychain or secret_env".into());
        }
        if self.kind.needs_secret() && self.secret_keychain.is_none() && self.secret_env.is_none() {
            return err(format!(
                "a {} sink needs a secret: secret_keychain = \"TOKEN\" (the OS keychain) or \
                 secret_env = \"VAR\"",
                self.kind.as_str()
            ));
        }
        if self.batch_size == 0 || self.batch_size > 4096 {
            return err("batch_size is 1 to 4096".into());
        }
        if self.max_attempts == 0 {
            return err("max_attempts is at least 1".into());
        }
        if self.timeout_ms == 0 || self.backoff_ms == 0 || self.backoff_max_ms < self.backoff_ms {
            return err(
                "timeout_ms and backoff_ms are positive, backoff_max_ms ≥ backoff_ms".into(),
            );
        }
        Ok(())
    }
}

/// A syslog collector: `tls://host:port` (RFC 5425), or `tcp://` to a
/// loopback host only (a local relay).
fn check_stream_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("url {url:?}: {e}"))?;
    if parsed.host().is_none() || parsed.port().is_none() {
        return Err(format!("url {url:?}: a syslog url is tls://HOST:PORT"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || parsed.path().len() > 1 {
        return Err(format!(
            "url {url:?}: a syslog url is tls://HOST:PORT, nothing more"
        ));
    }
    match parsed.scheme() {
        "tls" => Ok(()),
        "tcp" if crate::outbound_url::loopback(parsed.host()) => Ok(()),
        "tcp" => Err(format!(
            "url {url:?}: plain tcp only to a loopback address (records would cross the \
             network in clear); use tls://"
        )),
        other => Err(format!(
            "url {url:?}: scheme {other} is not tls (or tcp to loopback)"
        )),
    }
}

impl AlertsConfig {
    pub fn check(&self) -> Result<(), AlertsConfigError> {
        if self.poll_ms == 0 {
            return Err(AlertsConfigError("alerts.poll_ms is positive".into()));
        }
        let mut names = std::collections::BTreeSet::new();
        for s in &self.sinks {
            s.check()?;
            if !names.insert(s.name.as_str()) {
                return Err(AlertsConfigError(format!(
                    "alerts.sinks: two sinks are named `{}`",
                    s.name
                )));
            }
        }
        Ok(())
    }

    /// Whether any sink's secret is in the keychain.
    pub fn has_keychain_references(&self) -> bool {
        self.sinks.iter().any(|s| s.secret_keychain.is_some())
    }

    /// Fills each sink's secret: keychain references through `lookup` (the
    /// host's keychain), environment references from this process's
    /// environment. A missing secret is an error naming the sink.
    pub fn resolve_secrets(
        &mut self,
        lookup: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<(), AlertsConfigError> {
        for s in &mut self.sinks {
            if let Some(token) = &s.secret_keychain {
                let value = lookup(token)
                    .map_err(|e| {
                        AlertsConfigError(format!(
                            "alerts.sinks `{}`: the secret from the keychain (token {token}): {e}",
                            s.name
                        ))
                    })?
                    .ok_or_else(|| {
                        AlertsConfigError(format!(
                            "alerts.sinks `{}`: the keychain has no token {token}",
                            s.name
                        ))
                    })?;
                s.secret = Some(value);
            }
        }
        Ok(())
    }

    /// Reads `secret_env` references (at start, so a missing variable is an
    /// error then, not a silent unsigned delivery).
    pub fn resolve_env(&mut self) -> Result<(), AlertsConfigError> {
        for s in &mut self.sinks {
            if let Some(var) = &s.secret_env
                && s.secret.is_none()
            {
                let value = std::env::var(var).map_err(|_| {
                    AlertsConfigError(format!(
                        "alerts.sinks `{}`: the environment variable {var} (secret_env) is not set",
                        s.name
                    ))
                })?;
                if value.is_empty() {
                    return Err(AlertsConfigError(format!(
                        "alerts.sinks `{}`: the environment variable {var} is empty",
                        s.name
                    )));
                }
                s.secret = Some(value);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<AlertsConfig, String> {
        let c: AlertsConfig = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        c.check().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn a_webhook_sink_parses_with_its_filters() {
        let c = parse(
            "[[sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"https://siem.example/hook\"\n\
             secret_env = \"SIEM_KEY\"\nevents = [\"block\", \"hold\"]\nmin_severity = \"medium\"\n\
             servers = [\"files\"]\n",
        )
        .unwrap();
        let f = c.sinks[0].filter();
        assert_eq!(f.events, vec![Category::Block, Category::Hold]);
        assert_eq!(f.min_severity, Some(Severity::Medium));
    }

    #[test]
    fn a_secret_written_in_clear_is_refused() {
        let e = parse(
            "[[sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"https://siem.example/\"\nsecret = \"hunter2\"\n",
        )
        .unwrap_err();
        assert!(e.contains("unknown field `secret`"), "{e}");
    }

    #[test]
    fn a_webhook_without_a_secret_is_refused() {
        let e = parse(
            "[[sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"https://siem.example/\"\n",
        )
        .unwrap_err();
        assert!(e.contains("needs a secret"), "{e}");
    }

    #[test]
    fn plain_http_to_a_remote_host_leaks_the_events_and_is_refused() {
        for url in [
            "http://siem.example/hook",
            "http://10.0.0.5/hook",
            "ftp://siem.example/",
            "https://user:pw@siem.example/",
        ] {
            let e = parse(&format!(
                "[[sinks]]\nname = \"s\"\nkind = \"webhook\"\nurl = {url:?}\nsecret_env = \"K\"\n"
            ))
            .unwrap_err();
            assert!(e.contains("url"), "{url}: {e}");
        }
        parse("[[sinks]]\nname = \"s\"\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/\"\nsecret_env = \"K\"\n")
            .unwrap();
    }

    #[test]
    fn a_syslog_sink_is_tls_or_loopback_tcp() {
        let sink = |url: &str| {
            parse(&format!(
                "[[sinks]]\nname = \"s\"\nkind = \"syslog\"\nurl = {url:?}\n"
            ))
        };
        sink("tls://logs.example:6514").unwrap();
        sink("tcp://127.0.0.1:514").unwrap();
        for bad in [
            "tcp://logs.example:514",
            "tls://logs.example",
            "https://logs.example:6514",
        ] {
            assert!(sink(bad).unwrap_err().contains("url"), "{bad}");
        }
    }

    #[test]
    fn a_keychain_secret_is_resolved_and_a_missing_one_names_the_sink() {
        let mut c = parse(
            "[[sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"https://a.example/\"\nsecret_keychain = \"alerts.siem\"\n",
        )
        .unwrap();
        assert!(c.has_keychain_references());
        let mut missing = |_: &str| Ok(None);
        let e = c
            .clone()
            .resolve_secrets(&mut missing)
            .unwrap_err()
            .to_string();
        assert!(e.contains("siem") && e.contains("alerts.siem"), "{e}");
        let mut found = |t: &str| Ok((t == "alerts.siem").then(|| "s3cret".to_owned()));
        c.resolve_secrets(&mut found).unwrap();
        assert_eq!(c.sinks[0].secret.as_deref(), Some("s3cret"));
        // The whole gateway config resolves sinks with its upstreams.
        let mut g = crate::config::GatewayConfig::parse(
            "[[alerts.sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"https://a.example/\"\nsecret_keychain = \"alerts.siem\"\n",
        )
        .unwrap();
        assert!(g.has_keychain_references());
        g.resolve_secrets(|t| Ok((t == "alerts.siem").then(|| "s3cret".to_owned())))
            .unwrap();
        assert_eq!(g.alerts.sinks[0].secret.as_deref(), Some("s3cret"));
    }

    #[test]
    fn two_sinks_of_one_name_would_share_a_cursor_and_are_refused() {
        let one = "[[sinks]]\nname = \"s\"\nkind = \"webhook\"\nurl = \"https://a.example/\"\nsecret_env = \"K\"\n";
        let e = parse(&format!("{one}{one}")).unwrap_err();
        assert!(e.contains("two sinks"), "{e}");
    }
}
