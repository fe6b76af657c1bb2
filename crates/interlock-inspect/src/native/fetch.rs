//! A URL the agent fetches: an internal address (SSRF), a local file, a
//! host made for collecting data, or a secret carried in the URL itself.

use super::findings::Findings;
use crate::args::{ArgContext, has_secret, host_of_authority};
use crate::ssrf::{HostClass, classify_host};
use crate::{Category, Severity};

/// Hosts whose purpose is to receive what is sent to them: request
/// catchers, paste and file drops, tunnels, out-of-band test collectors.
const COLLECTORS: &[&str] = &[
    "webhook.site",
    "requestbin.com",
    "requestbin.net",
    "pipedream.net",
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "transfer.sh",
    "file.io",
    "0x0.st",
    "termbin.com",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "interact.sh",
    "oast.fun",
    "oast.pro",
    "oast.live",
    "oast.site",
    "oast.online",
    "oast.me",
    "burpcollaborator.net",
    "oastify.com",
    "canarytokens.com",
    "dnslog.cn",
    "beeceptor.com",
    "hookbin.com",
];

/// The scheme and host of `url`, lowercased (`None` if it is not a URL).
pub(crate) fn scheme_and_host(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    Some((
        scheme.to_ascii_lowercase(),
        host_of_authority(authority).to_ascii_lowercase(),
    ))
}

/// Whether `host` is (under) a data collector.
pub(crate) fn collector(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    COLLECTORS
        .iter()
        .any(|c| host == *c || host.ends_with(&format!(".{c}")))
}

/// A web fetch of `url` (the agent's fetch tool, where an internal address
/// is never what a web page lives at).
pub(crate) fn inspect(url: &str, out: &mut Findings) {
    let Some((scheme, host)) = scheme_and_host(url) else {
        return;
    };
    if scheme == "file" {
        out.add(Category::Ssrf, "fetch-local-file", Severity::High);
        return;
    }
    match classify_host(&host) {
        HostClass::Public => {}
        HostClass::Metadata => out.add(
            Category::Ssrf,
            HostClass::Metadata.rule(),
            Severity::Critical,
        ),
        class => out.add(Category::Ssrf, class.rule(), Severity::High),
    }
    if collector(&host) {
        out.add(
            Category::Exfiltration,
            "exfiltration-collector-host",
            Severity::High,
        );
    }
    if has_secret(url, &ArgContext::default()) {
        out.add(Category::Secret, "secret-in-url", Severity::High);
    }
}
