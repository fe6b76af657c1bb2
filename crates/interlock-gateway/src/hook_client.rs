//! The command hook's client (issue 40): `interlock hook <client>` is what a
//! coding agent without an HTTP hook type (Cursor, Codex, Gemini CLI) runs;
//! it posts the event it reads on stdin to a running gateway's
//! `/hooks/v1/{client}` and prints the answer. Here because this crate alone
//! speaks HTTP; the CLI only reads, prints and falls back.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};

/// The largest answer read (answers are a few hundred bytes).
const MAX_ANSWER: usize = 64 * 1024;

/// Why the gateway could not answer a hook event.
#[derive(Debug, thiserror::Error)]
pub enum HookClientError {
    #[error("the gateway address {0:?} is not an http:// URL")]
    BadUrl(String),
    #[error("the agent key is not a valid header value")]
    BadKey,
    #[error("cannot reach the gateway: {0}")]
    Unreachable(String),
    #[error("the gateway answered {status}: {body}")]
    Refused { status: u16, body: String },
    #[error("the gateway's answer is not a JSON object")]
    Malformed,
}

/// Posts `event` for `client` to the gateway at `base` (`http://host:port`)
/// and returns its answer; a held use may wait up to `wait_secs` there.
pub async fn post_event(
    base: &str,
    key: &str,
    client: interlock_hooks::Client,
    event: Vec<u8>,
    wait_secs: u64,
) -> Result<serde_json::Value, HookClientError> {
    let base = base.trim_end_matches('/');
    let url = reqwest::Url::parse(&format!(
        "{base}/hooks/v1/{}?wait={wait_secs}",
        client.slug()
    ))
    .map_err(|_| HookClientError::BadUrl(base.to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(HookClientError::BadUrl(base.to_owned()));
    }
    let auth =
        HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| HookClientError::BadKey)?;
    // A plain-HTTP gateway (loopback, the default) needs no certificates:
    // loading the OS's roots is most of a client's start, paid per event.
    let mut builder = reqwest::Client::builder()
        .timeout(Duration::from_secs(wait_secs + 10))
        .tls_built_in_native_certs(url.scheme() == "https");
    // This machine's gateway is never reached through a proxy.
    if matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")) {
        builder = builder.no_proxy();
    }
    let http = builder
        .build()
        .map_err(|e| HookClientError::Unreachable(e.to_string()))?;
    let response = http
        .post(url)
        .header(AUTHORIZATION, auth)
        .header(CONTENT_TYPE, "application/json")
        .body(event)
        .send()
        .await
        .map_err(|e| HookClientError::Unreachable(e.to_string()))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| HookClientError::Unreachable(e.to_string()))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body[..body.len().min(512)]).into_owned();
        return Err(HookClientError::Refused {
            status: status.as_u16(),
            body: text,
        });
    }
    if body.len() > MAX_ANSWER {
        return Err(HookClientError::Malformed);
    }
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(v) if v.is_object() => Ok(v),
        _ => Err(HookClientError::Malformed),
    }
}
