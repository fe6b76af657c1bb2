//! Team mode's two trust rules (issue 15, item 7), kept apart from the I/O so
//! they are tested as they are:
//!
//! - the team gateway's address: `https://`, or `http://` only to this machine
//!   (127.0.0.0/8, `::1`, `localhost`). The reviewer API key travels in every
//!   request's `Authorization` header and the window loads the gateway's page,
//!   which may ask the app to sign: over plain HTTP to another host, anyone on
//!   the path reads the key and can serve that page.
//! - which page may have `decide` sign silently: only the review UI this app
//!   serves itself (the in-process gateway's loopback origin, from the UI files
//!   built with the app). A page of any other origin — a team gateway's UI is
//!   the team gateway's own code — gets a native confirmation that names the
//!   subject and the exact hash first, so a compromised or malicious team
//!   gateway cannot make the app sign behind the reviewer's back.

use interlock_core::one_line::one_line;
use tauri::Url;
use url::Host;

/// Why a team gateway address is refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TeamUrlError {
    #[error("the team gateway address {0:?} is not a URL (like https://interlock.example:8717)")]
    NotAUrl(String),
    #[error("the team gateway address {0:?} is not an https:// URL")]
    Scheme(String),
    #[error(
        "refusing the team gateway {0:?}: plain http:// would send the reviewer API key and the \
         review page over the network unencrypted; use https:// (http:// is only for 127.0.0.1, \
         ::1 or localhost)"
    )]
    PlainHttp(String),
}

/// Checks a team gateway address (`$INTERLOCK_TEAM_GATEWAY` or `[team] url`):
/// `https://` to any host, or `http://` to a loopback host only.
pub fn check_team_url(raw: &str) -> Result<Url, TeamUrlError> {
    let url = Url::parse(raw.trim()).map_err(|_| TeamUrlError::NotAUrl(raw.to_owned()))?;
    let host = url
        .host()
        .ok_or_else(|| TeamUrlError::NotAUrl(raw.to_owned()))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&host) => Ok(url),
        "http" => Err(TeamUrlError::PlainHttp(raw.to_owned())),
        _ => Err(TeamUrlError::Scheme(raw.to_owned())),
    }
}

fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        // The URL parser lowercases domains; `localhost.` is the same name.
        Host::Domain(d) => matches!(*d, "localhost" | "localhost."),
    }
}

/// Whether a `decide` from the page at `page` needs the native confirmation:
/// yes unless the page is the app's own review UI, i.e. on `own_origin` (the
/// in-process gateway's origin; `None` in team mode, where no page is the
/// app's own).
pub fn needs_confirmation(own_origin: Option<&str>, page: &Url) -> bool {
    match own_origin {
        Some(own) => page.origin().ascii_serialization() != own,
        None => true,
    }
}

/// What the confirmation says: who asks, what is decided, and the exact hash
/// that will be signed (the only thing the signature covers).
pub struct Confirmation<'a> {
    pub page_origin: &'a str,
    pub decision: &'a str,
    pub subject_kind: &'a str,
    pub subject: &'a str,
    pub hash: &'a str,
    pub key_fingerprint: &'a str,
    /// The gateway log the statement is made for (its audience): the one
    /// this app pinned for the team address (issue 39 item 7).
    pub audience: &'a str,
}

impl Confirmation<'_> {
    pub fn title(&self) -> String {
        format!("Sign this {}?", self.decision_noun())
    }

    fn decision_noun(&self) -> &'static str {
        if self.decision == "approve" {
            "approval"
        } else {
            "rejection"
        }
    }

    pub fn message(&self) -> String {
        let what = if self.subject_kind == "server" {
            "the MCP server"
        } else {
            "the plan"
        };
        format!(
            "The page at {origin} asks this app to {decision} {what} \u{201c}{subject}\u{201d} \
             at the hash\n\n{hash}\n\nwith your approver key {fp}, for the gateway log\n\n\
             {audience}\n\n(only a gateway writing that log accepts it).\n\nSign only if this is \
             the hash you reviewed. The page is served by the team gateway, not by this app.",
            origin = one_line(self.page_origin, 200),
            decision = self.decision,
            subject = one_line(self.subject, 200),
            hash = one_line(self.hash, 100),
            fp = self.key_fingerprint,
            audience = one_line(self.audience, 200),
        )
    }

    /// The confirming button's label.
    pub fn ok_label(&self) -> &'static str {
        if self.decision == "approve" {
            "Sign the approval"
        } else {
            "Sign the rejection"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_team_gateway_refuses_plain_http_to_another_host() {
        for ok in [
            "https://interlock.example:8717",
            "https://10.0.0.5",
            "http://127.0.0.1:8717",
            "http://127.3.4.5:8717",
            "http://[::1]:8717",
            "http://localhost:8717",
            "http://LOCALHOST:8717/",
        ] {
            assert!(check_team_url(ok).is_ok(), "{ok}");
        }
        for plain in [
            "http://interlock.example:8717",
            "http://10.0.0.5:8717",
            "http://192.168.1.2",
            "http://[fe80::1]:8717",
            "http://0.0.0.0:8717",
            "http://localhost.evil.example",
        ] {
            assert_eq!(
                check_team_url(plain),
                Err(TeamUrlError::PlainHttp(plain.to_owned())),
                "{plain}"
            );
            let message = check_team_url(plain).unwrap_err().to_string();
            assert!(
                message.contains("use https://") && message.contains(plain),
                "{message}"
            );
        }
        assert_eq!(
            check_team_url("ftp://x.example"),
            Err(TeamUrlError::Scheme("ftp://x.example".to_owned()))
        );
        for bad in ["not a url", "file:///etc/passwd"] {
            assert!(check_team_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn regression_decide_from_a_page_the_app_did_not_serve_needs_confirmation() {
        let own = "http://127.0.0.1:8717";
        let page = |u: &str| Url::parse(u).unwrap();
        // The app's own review UI (the in-process gateway's origin) decides silently.
        assert!(!needs_confirmation(
            Some(own),
            &page("http://127.0.0.1:8717/#/plans/a")
        ));
        // Another origin, even on loopback, does not.
        assert!(needs_confirmation(
            Some(own),
            &page("http://127.0.0.1:9999/#/plans/a")
        ));
        assert!(needs_confirmation(
            Some(own),
            &page("http://localhost:8717/")
        ));
        // Team mode: no page is the app's own, the team gateway's included.
        assert!(needs_confirmation(
            None,
            &page("https://interlock.example:8717/#/plans/a")
        ));
        assert!(needs_confirmation(None, &page("http://127.0.0.1:8717/")));
    }

    #[test]
    fn regression_issue_39_the_confirmation_names_the_subject_the_hash_and_the_audience() {
        let c = Confirmation {
            page_origin: "https://gw.example",
            decision: "approve",
            subject_kind: "plan",
            subject: "deploy\n2",
            hash: "sha256:abcd",
            key_fingerprint: "fp:1234",
            audience: "interlock.local/log/0011223344556677",
        };
        let m = c.message();
        assert!(m.contains("interlock.local/log/0011223344556677"), "{m}");
        assert!(m.contains("\u{201c}deploy 2\u{201d}"), "{m}");
        assert!(m.contains("sha256:abcd") && m.contains("https://gw.example"));
        assert!(
            m.contains("approve the plan") && m.contains("fp:1234"),
            "{m}"
        );
        assert_eq!(c.title(), "Sign this approval?");
        assert_eq!(c.ok_label(), "Sign the approval");
    }
}
