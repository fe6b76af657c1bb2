//! Where the gateway itself sends requests with a secret in them (an alert
//! sink, an LLM provider): `https://`, or plain `http://` only to this
//! machine, and never with credentials in the URL.

/// An `https://` URL, or `http://` to a loopback host (a local collector or
/// model server). `credentials_hint` names the settings that hold a secret
/// instead of the URL.
pub(crate) fn check(url: &str, credentials_hint: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("url {url:?}: {e}"))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "url: no credentials in the URL (use {credentials_hint})"
        ));
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => {
            if loopback(parsed.host()) {
                Ok(())
            } else {
                Err(format!(
                    "url {url:?}: plain http only to a loopback address (what is sent and the \
                     secret would cross the network in clear); use https://"
                ))
            }
        }
        other => Err(format!("url {url:?}: scheme {other} is not http(s)")),
    }
}

/// Whether `host` is this machine.
pub(crate) fn loopback(host: Option<url::Host<&str>>) -> bool {
    match host {
        // A non-special scheme (`tcp://`) keeps an IP address as an opaque host.
        Some(url::Host::Domain(d)) => {
            d == "localhost"
                || d.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}
