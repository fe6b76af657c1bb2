//! One-time sign-in links (issue 19, the headless first run).
//!
//! Why: on a fresh machine a headless gateway has no reviewer yet, and the
//! only way to make one was a CLI command that needs the gateway's keychain,
//! which a second terminal may not reach. So the gateway prints a link,
//! `http://127.0.0.1:8717/#/signin/<token>`, on its first start (and on
//! `interlock signin-link`, through the admin socket). The browser that opens
//! it makes its own non-extractable Ed25519 signing key and trades the token
//! for a reviewer API key and the registration of that key as an approver
//! (`POST /api/v1/signin`).
//!
//! The token is the whole authority, so it is treated as a password:
//! - 32 random bytes, kept here only as their SHA-256 (in memory: a link dies
//!   with the gateway that printed it), and its issuance is a log leaf;
//! - in the URL's fragment, which browsers never send to a server (no access
//!   logs, no `Referer`), and the UI drops it from its history once used;
//! - single use: redeeming removes it under a lock, so of two browsers (or a
//!   replay) racing with the same token exactly one wins;
//! - short-lived ([`LINK_TTL`]); at most [`MAX_OUTSTANDING`] at once;
//! - compared in constant time against every outstanding hash;
//! - guessing is counted per link (issue 39 item 15): a token's first
//!   [`LINK_ID_CHARS`] characters name its link, and after
//!   [`MAX_FAILURES_PER_LINK`] wrong tokens for one link that link is spent.
//!   A guess naming no outstanding link counts against nothing, so nobody
//!   can keep sign-in locked for everyone (a single global window let any
//!   local process do that); the rest of the token is 208 random bits;
//! - a cross-origin `POST` is refused by the HTTP guard's `Origin` check
//!   before it reaches the handler, so a web page cannot burn or use a token.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use interlock_engine::Engine;
use subtle::ConstantTimeEq as _;

use interlock_trust::events::EventType;

/// How long a printed link stays usable.
pub const LINK_TTL: Duration = Duration::from_secs(15 * 60);

/// How many links may wait at once; a newer one pushes out the oldest.
pub const MAX_OUTSTANDING: usize = 4;

/// Wrong tokens for one link before that link is spent.
pub const MAX_FAILURES_PER_LINK: u32 = 5;

/// How many characters after [`TOKEN_PREFIX`] name the link (6 of the 32
/// random bytes, base64url).
pub const LINK_ID_CHARS: usize = 8;

/// The prefix of a sign-in token (a scanner can tell it from an API key).
pub const TOKEN_PREFIX: &str = "ils_";

/// The route of the review UI that redeems a token (a hash route).
pub const UI_ROUTE: &str = "#/signin/";

/// Why a token was not redeemed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SigninError {
    /// Unknown, already used or expired: one answer for all three, so a
    /// guesser learns nothing.
    #[error(
        "this sign-in link is unknown, already used or expired; print a new one with `interlock signin-link`"
    )]
    Invalid,
    /// Too many wrong tokens for this link: it no longer works.
    #[error(
        "this sign-in link was tried with wrong tokens too often and no longer works; print a new one with `interlock signin-link`"
    )]
    RateLimited,
}

struct Pending {
    hash: [u8; 32],
    /// The token's first [`LINK_ID_CHARS`] characters after the prefix.
    id: String,
    expires: Instant,
    /// Wrong tokens presented for this link.
    failures: u32,
}

#[derive(Default)]
struct State {
    pending: Vec<Pending>,
}

/// The outstanding sign-in tokens of one gateway.
pub struct SigninLinks {
    ttl: Duration,
    state: Mutex<State>,
}

impl Default for SigninLinks {
    fn default() -> Self {
        SigninLinks::with_ttl(LINK_TTL)
    }
}

fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    d.as_ref().try_into().expect("SHA-256 is 32 bytes")
}

impl SigninLinks {
    /// Links that live `ttl` (tests use a short one).
    pub fn with_ttl(ttl: Duration) -> SigninLinks {
        SigninLinks {
            ttl,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new token (returned once; only its hash is kept) and how long it
    /// lives. Its issuance is a log leaf (`signin.issued`, with the token's
    /// hash): who could become a reviewer is itself worth a receipt.
    pub async fn issue(
        &self,
        engine: &Engine,
    ) -> Result<(String, Duration), interlock_engine::EngineError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the OS random source works");
        let token = format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
        let hash = digest(&token);
        let mut m = interlock_canon::Map::new();
        m.insert(
            "token_hash".into(),
            format!("sha256:{}", hex::encode(hash)).into(),
        );
        let expires_at = engine.now().saturating_add(self.ttl.as_secs() as i64);
        m.insert(
            "expires_at".into(),
            interlock_canon::Number::from_i64(expires_at)
                .expect("a time fits in 2^53")
                .into(),
        );
        engine.record(EventType::SigninIssued.as_str(), m).await?;
        let mut s = self.lock();
        let now = Instant::now();
        s.pending.retain(|p| p.expires > now);
        if s.pending.len() >= MAX_OUTSTANDING {
            s.pending.remove(0);
        }
        s.pending.push(Pending {
            hash,
            id: link_id(&token).unwrap_or_default().to_owned(),
            expires: now + self.ttl,
            failures: 0,
        });
        Ok((token, self.ttl))
    }

    /// Consumes `token` if it is outstanding and unexpired; returns its hash
    /// (`sha256:<hex>`, for the redemption's log leaf). Every outstanding
    /// hash is compared, each in constant time.
    pub fn redeem(&self, token: &str) -> Result<String, SigninError> {
        self.check(token, true)
    }

    /// Whether `token` would redeem now, without consuming it (a wrong one
    /// counts against its link all the same): the sign-in checks the rest of
    /// the request before it spends the link.
    pub fn verify(&self, token: &str) -> Result<(), SigninError> {
        self.check(token, false).map(|_| ())
    }

    fn check(&self, token: &str, consume: bool) -> Result<String, SigninError> {
        let now = Instant::now();
        let mut s = self.lock();
        s.pending.retain(|p| p.expires > now);
        let Some(id) = link_id(token) else {
            return Err(SigninError::Invalid);
        };
        let Some(i) = s.pending.iter().position(|p| p.id == id) else {
            // Names no outstanding link: nothing to count it against.
            return Err(SigninError::Invalid);
        };
        let presented = digest(token);
        if bool::from(s.pending[i].hash.ct_eq(&presented)) {
            if consume {
                s.pending.remove(i);
            }
            return Ok(format!("sha256:{}", hex::encode(presented)));
        }
        s.pending[i].failures += 1;
        if s.pending[i].failures >= MAX_FAILURES_PER_LINK {
            s.pending.remove(i);
            return Err(SigninError::RateLimited);
        }
        Err(SigninError::Invalid)
    }
}

/// The link a token names: its first [`LINK_ID_CHARS`] characters after
/// [`TOKEN_PREFIX`].
fn link_id(token: &str) -> Option<&str> {
    token.strip_prefix(TOKEN_PREFIX)?.get(..LINK_ID_CHARS)
}

/// The link a browser opens: the gateway's UI at `base` (`http://host:port`)
/// with the token in the fragment.
pub fn link(base: &str, token: &str) -> String {
    format!("{}/{UI_ROUTE}{token}", base.trim_end_matches('/'))
}

/// Whether `name` may name a reviewer signing in (`human:NAME`): 1–64 of
/// letters, digits, `.`, `_`, `-`, `@`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn engine(dir: &std::path::Path) -> Engine {
        Engine::open(
            interlock_engine::EngineConfig::new(dir.join("db")),
            std::sync::Arc::new(ed25519_dalek::SigningKey::from_bytes(&[7; 32])),
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn signin_token_replayed_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path()).await;
        let links = SigninLinks::default();
        let (token, ttl) = links.issue(&engine).await.unwrap();
        assert_eq!(ttl, LINK_TTL);
        assert!(token.starts_with(TOKEN_PREFIX) && token.len() == 4 + 43);
        let hash = links.redeem(&token).unwrap();
        assert_eq!(hash, format!("sha256:{}", hex::encode(digest(&token))));
        assert_eq!(links.redeem(&token), Err(SigninError::Invalid));
        engine.log().close().await;
    }

    #[tokio::test]
    async fn signin_token_expired_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path()).await;
        let links = SigninLinks::with_ttl(Duration::from_millis(50));
        let (token, _) = links.issue(&engine).await.unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(links.redeem(&token), Err(SigninError::Invalid));
        engine.log().close().await;
    }

    /// Issue 39 item 15: one global failure window let anyone keep sign-in
    /// locked for everyone with ten wrong tokens a minute. Guesses naming no
    /// link now count against nothing; guesses at one link spend that link.
    #[tokio::test]
    async fn regression_issue_39_guesses_cannot_lock_sign_in_only_spend_their_link() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path()).await;
        let links = SigninLinks::default();
        let (token, _) = links.issue(&engine).await.unwrap();
        let (other, _) = links.issue(&engine).await.unwrap();
        for i in 0..100 {
            assert_eq!(
                links.redeem(&format!("{TOKEN_PREFIX}guess{i:0>39}")),
                Err(SigninError::Invalid)
            );
        }
        // Checked without being spent, then redeemed: nobody locked it.
        links.verify(&token).unwrap();
        assert!(links.redeem(&token).is_ok());
        // Wrong tokens naming one link spend that link, and only it.
        let id = &other[..TOKEN_PREFIX.len() + LINK_ID_CHARS];
        for _ in 1..MAX_FAILURES_PER_LINK {
            assert_eq!(
                links.redeem(&format!("{id}{}", "A".repeat(35))),
                Err(SigninError::Invalid)
            );
        }
        assert_eq!(
            links.redeem(&format!("{id}{}", "B".repeat(35))),
            Err(SigninError::RateLimited)
        );
        assert_eq!(links.redeem(&other), Err(SigninError::Invalid), "spent");
        let (third, _) = links.issue(&engine).await.unwrap();
        assert!(links.redeem(&third).is_ok());
        engine.log().close().await;
    }

    #[tokio::test]
    async fn signin_issuance_is_a_log_leaf_and_old_links_are_pushed_out() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path()).await;
        let links = SigninLinks::default();
        let mut tokens = Vec::new();
        for _ in 0..=MAX_OUTSTANDING {
            tokens.push(links.issue(&engine).await.unwrap().0);
        }
        let mut issued = Vec::new();
        for i in 0..engine.log().size() {
            let e = engine.log().entry(i).await.unwrap();
            if e.get("type").and_then(|t| t.as_str()) == Some(EventType::SigninIssued.as_str()) {
                issued.push(format!("{e:?}"));
            }
        }
        assert_eq!(issued.len(), MAX_OUTSTANDING + 1);
        // The token itself is never in the log, only its hash.
        for text in &issued {
            assert!(text.contains("token_hash"), "{text}");
            assert!(!tokens.iter().any(|t| text.contains(&t[4..])), "{text}");
        }
        assert_eq!(links.redeem(&tokens[0]), Err(SigninError::Invalid));
        assert!(links.redeem(&tokens[MAX_OUTSTANDING]).is_ok());
        engine.log().close().await;
    }

    #[test]
    fn names_and_links() {
        assert!(valid_name("alice") && valid_name("a.b-c_d@x"));
        for bad in ["", "al ice", "a/b", "human:alice", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        assert_eq!(
            link("http://127.0.0.1:8717/", "ils_x"),
            "http://127.0.0.1:8717/#/signin/ils_x"
        );
    }
}
