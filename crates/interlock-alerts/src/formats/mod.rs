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

pub mod syslog;
pub mod webhook;

/// The kinds of sink (`kind = "..."` in `[[alerts.sinks]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SinkKind {
    /// Generic webhook: one JSON event per POST, HMAC-SHA256 signed.
    Webhook,
    /// Syslog, RFC 5424 over TLS (RFC 5425 octet counting): `tls://host:port`.
    Syslog,
}

impl SinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::Webhook => "webhook",
            SinkKind::Syslog => "syslog",
        }
    }

    /// Whether the sink needs a secret (a signing key, a token).
    pub fn needs_secret(self) -> bool {
        match self {
            SinkKind::Webhook => true,
            SinkKind::Syslog => false,
        }
    }
}

/// What a format needs besides the events.
#[derive(Clone, Debug, Default)]
pub struct FormatContext {
    /// The sink's secret (HMAC key, token), resolved from the keychain or env.
    pub secret: Option<String>,
    /// Syslog: the facility (0-23) and this host's name.
    pub facility: u8,
    pub hostname: String,
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
    match kind {
        SinkKind::Webhook => {
            let secret = ctx
                .secret
                .as_deref()
                .ok_or(FormatError::MissingSecret(kind.as_str()))?;
            Ok(events.iter().map(|e| webhook::request(e, secret)).collect())
        }
        SinkKind::Syslog => Ok(syslog::request(events, ctx.facility, &ctx.hostname)
            .into_iter()
            .collect()),
    }
}
