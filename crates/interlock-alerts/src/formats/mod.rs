//! Each sink's wire format: events in, the requests a receiver expects out
//! (headers and body bytes). No I/O: the gateway's delivery loop sends them.
//!
//! A [`WireRequest`] covers a contiguous run of the batch's events
//! (`first_index..=last_index`); delivery advances the sink's cursor past
//! `last_index` only once the receiver accepted it, so a crash resends at
//! most the request (the batch) in flight, and each request carries its leaf
//! indices as idempotency keys for the receiver to drop a repeat.

use serde::{Deserialize, Serialize};

use crate::event::AlertEvent;

pub mod datadog;
pub mod elastic;
pub mod links;
pub mod otlp;
pub mod otlp_traces;
pub mod pagerduty;
pub mod slack;
pub mod splunk;
pub mod syslog;
pub mod webhook;

#[cfg(test)]
mod tests;

/// The kinds of sink (`kind = "..."` in `[[alerts.sinks]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SinkKind {
    /// Generic webhook: one JSON event per POST, HMAC-SHA256 signed.
    Webhook,
    /// Syslog, RFC 5424 over TLS (RFC 5425 octet counting): `tls://host:port`.
    Syslog,
    /// Slack incoming webhook (Block Kit message per event).
    Slack,
    /// Splunk HTTP Event Collector.
    SplunkHec,
    /// Datadog logs intake (v2).
    Datadog,
    /// Elasticsearch `_bulk`.
    Elastic,
    /// PagerDuty Events API v2 (trigger and resolve).
    Pagerduty,
    /// OpenTelemetry logs over OTLP/HTTP (protobuf).
    Otlp,
    /// OpenTelemetry traces over OTLP/HTTP (protobuf): a span per call.
    OtlpTraces,
}

impl SinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::Webhook => "webhook",
            SinkKind::Syslog => "syslog",
            SinkKind::Slack => "slack",
            SinkKind::SplunkHec => "splunk_hec",
            SinkKind::Datadog => "datadog",
            SinkKind::Elastic => "elastic",
            SinkKind::Pagerduty => "pagerduty",
            SinkKind::Otlp => "otlp",
            SinkKind::OtlpTraces => "otlp_traces",
        }
    }

    /// Whether the sink needs a secret (a signing key, a token).
    pub fn needs_secret(self) -> bool {
        match self {
            SinkKind::Syslog | SinkKind::Otlp | SinkKind::OtlpTraces => false,
            SinkKind::Webhook
            | SinkKind::Slack
            | SinkKind::SplunkHec
            | SinkKind::Datadog
            | SinkKind::Elastic
            | SinkKind::Pagerduty => true,
        }
    }

    /// Whether the receiver's answer (2xx already checked) accepted the
    /// request: Splunk and Elastic can refuse inside a 200.
    pub fn accepted(self, body: &[u8]) -> Result<(), String> {
        match self {
            SinkKind::SplunkHec => splunk::accepted(body),
            SinkKind::Elastic => elastic::accepted(body),
            _ => Ok(()),
        }
    }
}

/// What a format needs besides the events.
#[derive(Clone, Debug, Default)]
pub struct FormatContext {
    /// The sink's secret (HMAC key, token), resolved from the keychain or env.
    pub secret: Option<String>,
    /// Syslog: the facility (0-23); every format: this host's name.
    pub facility: u8,
    pub hostname: String,
    /// The review UI's base URL, for links in chat and pager messages.
    pub review_url: Option<String>,
    /// Elastic: the index; Splunk: the index (default: the token's).
    pub index: Option<String>,
}

/// One request for the receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRequest {
    /// The leaf indices it carries, first and last (inclusive).
    pub first_index: u64,
    pub last_index: u64,
    /// How many events it carries.
    pub events: usize,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Appended to the sink's URL (Slack: the webhook's secret path).
    pub url_suffix: Option<String>,
}

impl WireRequest {
    /// One request carrying all of `events` (in index order), or `None` for
    /// an empty batch.
    pub fn batch(
        events: &[AlertEvent],
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Option<WireRequest> {
        Some(WireRequest {
            first_index: events.first()?.record.index,
            last_index: events.last()?.record.index,
            events: events.len(),
            headers,
            body,
            url_suffix: None,
        })
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FormatError {
    #[error("the {0} sink needs a secret (secret_keychain or secret_env)")]
    MissingSecret(&'static str),
}

/// The requests carrying `events` (in index order) to a sink of `kind`.
pub fn encode(
    kind: SinkKind,
    events: &[AlertEvent],
    ctx: &FormatContext,
) -> Result<Vec<WireRequest>, FormatError> {
    let secret = || {
        ctx.secret
            .as_deref()
            .ok_or(FormatError::MissingSecret(kind.as_str()))
    };
    let review = ctx.review_url.as_deref();
    match kind {
        SinkKind::Webhook => {
            let secret = secret()?;
            Ok(events.iter().map(|e| webhook::request(e, secret)).collect())
        }
        SinkKind::Slack => {
            let secret = secret()?;
            Ok(events
                .iter()
                .map(|e| slack::request(e, secret, review))
                .collect())
        }
        SinkKind::SplunkHec => {
            Ok(
                splunk::request(events, secret()?, &ctx.hostname, ctx.index.as_deref())
                    .into_iter()
                    .collect(),
            )
        }
        SinkKind::Datadog => Ok(datadog::requests(events, secret()?, &ctx.hostname)),
        SinkKind::Elastic => Ok(elastic::request(
            events,
            secret()?,
            ctx.index.as_deref().unwrap_or(elastic::DEFAULT_INDEX),
        )
        .into_iter()
        .collect()),
        SinkKind::Pagerduty => {
            let secret = secret()?;
            Ok(events
                .iter()
                .map(|e| pagerduty::request(e, secret, &ctx.hostname, review))
                .collect())
        }
        SinkKind::Otlp => Ok(otlp::request(events, &ctx.hostname, ctx.secret.as_deref())
            .into_iter()
            .collect()),
        SinkKind::OtlpTraces => {
            Ok(
                otlp_traces::request(events, &ctx.hostname, ctx.secret.as_deref())
                    .into_iter()
                    .collect(),
            )
        }
        SinkKind::Syslog => Ok(syslog::request(events, ctx.facility, &ctx.hostname)
            .into_iter()
            .collect()),
    }
}
