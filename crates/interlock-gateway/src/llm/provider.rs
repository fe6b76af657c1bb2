//! The request to a provider: `POST <base_url>/chat/completions` with the
//! provider's key — never the agent's — and the body the scan judged, byte
//! for byte. Redirects are not followed (a redirect would carry the key
//! somewhere the configuration does not name).

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Bytes;

use super::config::ProviderConfig;

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

/// Sends `body` to `provider`'s chat completions endpoint; the response is
/// relayed as it arrives (a streamed answer is not gathered first).
pub async fn chat_completions(
    name: &str,
    provider: &ProviderConfig,
    body: Bytes,
    timeout: Duration,
) -> Result<reqwest::Response, ProviderError> {
    let url = format!(
        "{}/chat/completions",
        provider.base_url.trim_end_matches('/')
    );
    let mut request = client()
        .post(url)
        .timeout(timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    if let Some(key) = &provider.api_key {
        request = request.bearer_auth(key);
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
