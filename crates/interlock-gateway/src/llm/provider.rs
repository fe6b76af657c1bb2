//! The request to a provider: `POST <base_url>/chat/completions` (OpenAI's
//! format), `<base_url>/messages` (Anthropic's) or
//! `<base_url>/models/{model}:generateContent` (Gemini's;
//! `:streamGenerateContent?alt=sse` streamed) with the provider's key —
//! never the agent's — and the body the scan judged, byte for byte. Redirects are not followed (a redirect would carry the key
//! somewhere the configuration does not name).

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Bytes;

use super::config::{ProviderConfig, ProviderFormat};

/// The Messages API version the gateway speaks to Anthropic.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One client for every provider, so connections (and TLS sessions) are
/// reused across requests; built on first use.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("a TLS client builds")
    })
}

/// Why a provider gave no answer.
#[derive(Debug, thiserror::Error)]
#[error("the provider {provider} did not answer: {message}")]
pub struct ProviderError {
    pub provider: String,
    pub message: String,
    /// It did not answer within the time it was given.
    pub timed_out: bool,
}

/// Sends `body` to `provider`'s endpoint for its format (Gemini's names
/// the model, and whether it streams, in its path); the response is
/// relayed as it arrives (a streamed answer is not gathered first).
pub async fn send(
    name: &str,
    provider: &ProviderConfig,
    (model, stream): (&str, bool),
    body: Bytes,
    timeout: Duration,
) -> Result<reqwest::Response, ProviderError> {
    let base = provider.base_url.trim_end_matches('/');
    let path = match provider.format {
        ProviderFormat::Openai => "chat/completions".to_owned(),
        ProviderFormat::Anthropic => "messages".to_owned(),
        ProviderFormat::Gemini if stream => {
            format!("models/{model}:streamGenerateContent?alt=sse")
        }
        ProviderFormat::Gemini => format!("models/{model}:generateContent"),
    };
    let mut request = client()
        .post(format!("{base}/{path}"))
        .timeout(timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    match (provider.format, &provider.api_key) {
        (ProviderFormat::Openai, Some(key)) => request = request.bearer_auth(key),
        (ProviderFormat::Anthropic, key) => {
            request = request.header("anthropic-version", ANTHROPIC_VERSION);
            if let Some(key) = key {
                request = request.header("x-api-key", key);
            }
        }
        (ProviderFormat::Gemini, Some(key)) => request = request.header("x-goog-api-key", key),
        (ProviderFormat::Openai | ProviderFormat::Gemini, None) => {}
    }
    request.send().await.map_err(|e| ProviderError {
        provider: name.to_owned(),
        message: error_chain(&e),
        timed_out: e.is_timeout(),
    })
}

/// An error with its sources, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
