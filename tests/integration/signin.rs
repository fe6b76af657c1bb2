//! Issue 19, the headless first run: `interlock serve` on a fresh data
//! directory prints a one-time sign-in link, and `POST /api/v1/signin`
//! trades its token for a reviewer API key and the browser's approver key.
//! Each hole an attacker would try has its test, against a real gateway.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::gateway_util::http;
use crate::util::{stderr, stdout};

/// A fresh machine's gateway: an empty data directory (no key, no reviewer,
/// no `gateway.toml`), serving a review UI.
pub(crate) struct Fresh {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
    pub(crate) addr: String,
    /// The link printed on the first start.
    link: String,
    child: Child,
}

impl Fresh {
    fn start() -> Fresh {
        Fresh::start_with(&[])
    }

    /// [`Fresh::start`] with `extra` in the gateway's environment (`HOME`).
    pub(crate) fn start_with(extra: &[(&str, &str)]) -> Fresh {
        let dir = tempfile::tempdir().unwrap();
        let ui = dir.path().join("ui");
        std::fs::create_dir_all(&ui).unwrap();
        std::fs::write(ui.join("index.html"), "<div id=\"app\"></div>").unwrap();
        let mut env = vec![
            (
                "INTERLOCK_DATA_DIR".to_owned(),
                dir.path().join("data").to_string_lossy().into_owned(),
            ),
            (
                "INTERLOCK_KEYCHAIN_SERVICE".to_owned(),
                format!(
                    "interlock-signin-test-{}-{}",
                    std::process::id(),
                    dir.path().file_name().unwrap().to_string_lossy()
                ),
            ),
        ];
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--ui"])
            .arg(&ui)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("serve.log")).unwrap(),
            ));
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let log = |d: &Path| std::fs::read_to_string(d.join("serve.log")).unwrap_or_default();
        let first = lines.next().unwrap().unwrap();
        let addr = first
            .strip_prefix("interlock gateway listening on http://")
            .unwrap_or_else(|| panic!("{first:?}: {}", log(dir.path())))
            .to_owned();
        let second = lines.next().unwrap().unwrap();
        // Not a terminal: the link is in an owner-only file, and only its
        // path is printed (issue 39 item 15).
        let file = second
            .strip_prefix("sign in: file ")
            .unwrap_or_else(|| panic!("no sign-in link file: {second:?}: {}", log(dir.path())));
        let link = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .trim()
            .to_owned();
        Fresh {
            dir,
            env,
            addr,
            link,
            child,
        }
    }

    pub(crate) fn token(&self) -> String {
        token_of(&self.link)
    }

    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `POST /api/v1/signin` as a browser on `origin` would.
    pub(crate) fn signin(&self, origin: &str, body: &Value) -> (u16, Vec<(String, String)>, Value) {
        let (status, headers, body) = http(
            &self.addr,
            "POST",
            "/api/v1/signin",
            &[("Origin", origin), ("Content-Type", "application/json")],
            &serde_json::to_vec(body).unwrap(),
        );
        (
            status,
            headers,
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        )
    }

    pub(crate) fn get(&self, key: &str, path: &str) -> (u16, Value) {
        let (status, _, body) = http(
            &self.addr,
            "GET",
            path,
            &[("Authorization", &format!("Bearer {key}"))],
            b"",
        );
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    pub(crate) fn cli(&self, args: &[&str], keychain: bool) -> std::process::Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
        cmd.args(args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if !keychain {
            // A second terminal: no session bus, so no keychain at all.
            cmd.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
        }
        cmd.output().unwrap()
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn token_of(link: &str) -> String {
    link.split_once("#/signin/")
        .unwrap_or_else(|| panic!("not a sign-in link: {link}"))
        .1
        .to_owned()
}

/// A browser's approver public key (64 hex digits).
pub(crate) fn browser_key(seed: u8) -> String {
    let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
    hex::encode(key.verifying_key().as_bytes())
}

pub(crate) fn body(token: &str, seed: u8, name: &str) -> Value {
    json!({"token": token, "public_key": browser_key(seed), "name": name})
}

/// The types of the log's leaves, in order (`interlock audit`'s view is the
/// signed one; this reads the reviewer API's).
fn leaf_types(gw: &Fresh, key: &str) -> Vec<String> {
    let (status, log) = gw.get(key, "/api/v1/log?from=0&limit=1000");
    assert_eq!(status, 200, "{log}");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["entry"]["type"].as_str().map(str::to_owned))
        .collect()
}

/// Issue 39 item 15: the headless first run printed its sign-in link on
/// stdout, which a container runtime or a journal keeps as a log that others
/// read, and whoever opens the link first becomes a reviewer. Off a terminal,
/// the link is now only in `<data dir>/signin-link` (0600): the log has its
/// path, never its token.
#[test]
fn regression_issue_39_the_first_run_link_never_reaches_a_log() {
    use std::os::unix::fs::PermissionsExt as _;
    let gw = Fresh::start();
    let file = gw.data().join("signin-link");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let token = gw.token();
    let log = std::fs::read_to_string(gw.dir.path().join("serve.log")).unwrap();
    assert!(
        !log.contains(&token),
        "the link's token is in the log: {log}"
    );
    assert!(log.contains("no reviewer yet"), "{log}");
}

#[test]
fn signin_first_run_link_makes_the_browser_a_reviewer_and_an_approver() {
    let gw = Fresh::start();
    assert!(
        gw.link
            .starts_with(&format!("http://{}/#/signin/ils_", gw.addr)),
        "{}",
        gw.link
    );
    let (status, headers, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 1, "alice"));
    assert_eq!(status, 200, "{answer}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "cache-control" && v == "no-store"),
        "{headers:?}"
    );
    assert_eq!(answer["identity"], "human:alice");
    let key = answer["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("ilk_"));

    // The key reads the reviewer API, and the browser's key is a trusted approver.
    let (status, inbox) = gw.get(&key, "/api/v1/inbox");
    assert_eq!(status, 200, "{inbox}");
    let (_, approvers) = gw.get(&key, "/api/v1/approvers");
    let mine = approvers["approvers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key_id"] == answer["key_id"])
        .unwrap_or_else(|| panic!("{approvers}"));
    assert_eq!(mine["identity"], "human:alice");

    // Every step is a leaf, and the token itself is in none of them.
    let types = leaf_types(&gw, &key);
    let at = |t: &str| {
        types
            .iter()
            .position(|x| x == t)
            .unwrap_or_else(|| panic!("{t} in {types:?}"))
    };
    assert!(at("signin.issued") < at("apikey.issued"));
    assert!(at("apikey.issued") < at("signin.redeemed"));
    assert!(at("approver.registered") < at("signin.redeemed"));
    let (_, log) = gw.get(&key, "/api/v1/log?from=0&limit=1000");
    assert!(!log.to_string().contains(&gw.token()[4..]));
    let audit = gw.cli(&["audit", "verify"], true);
    assert!(
        audit.status.success(),
        "{}{}",
        stdout(&audit),
        stderr(&audit)
    );
}

#[test]
fn signin_token_replayed_is_refused() {
    let gw = Fresh::start();
    let request = body(&gw.token(), 2, "bob");
    let (status, _, answer) = gw.signin(&gw.origin(), &request);
    assert_eq!(status, 200, "{answer}");
    let (status, _, again) = gw.signin(&gw.origin(), &request);
    assert_eq!(status, 401, "{again}");
    assert_eq!(again["error"]["code"], "invalid_signin");
}

#[test]
fn signin_token_used_by_a_second_browser_is_refused() {
    let gw = Fresh::start();
    let (status, _, first) = gw.signin(&gw.origin(), &body(&gw.token(), 3, "carol"));
    assert_eq!(status, 200, "{first}");
    let (status, _, second) = gw.signin(&gw.origin(), &body(&gw.token(), 4, "mallory"));
    assert_eq!(status, 401, "{second}");
    // The second browser's key is not trusted, and it got no reviewer key.
    let key = first["key"].as_str().unwrap();
    let (_, approvers) = gw.get(key, "/api/v1/approvers");
    assert!(!approvers.to_string().contains("mallory"), "{approvers}");
    let reviewers = gw.cli(&["reviewers", "list"], true);
    assert!(
        !stdout(&reviewers).contains("mallory"),
        "{}",
        stdout(&reviewers)
    );
}

#[test]
fn signin_cross_origin_post_is_refused_and_does_not_spend_the_token() {
    let gw = Fresh::start();
    // A page on another site posting to the gateway (a link leaked into it,
    // or a guess): refused by the Origin check before the handler runs.
    let (status, _, answer) = gw.signin("http://evil.example", &body(&gw.token(), 5, "eve"));
    assert_eq!(status, 403, "{answer}");
    // A DNS-rebinding page (its own Host name) is refused too.
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/signin",
        &[
            ("Host", "rebound.example:80"),
            ("Content-Type", "application/json"),
        ],
        &serde_json::to_vec(&body(&gw.token(), 5, "eve")).unwrap(),
    );
    assert_eq!(status, 421);
    // A form post (no JSON content type, which a page could send without
    // a preflight) is not read as a request.
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/signin",
        &[("Content-Type", "text/plain")],
        &serde_json::to_vec(&body(&gw.token(), 5, "eve")).unwrap(),
    );
    assert_eq!(status, 415);
    // The token is still good for the browser it was printed for.
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 6, "dana"));
    assert_eq!(status, 200, "{answer}");
}

#[test]
fn signin_malformed_request_does_not_spend_the_token() {
    let gw = Fresh::start();
    let token = gw.token();
    for bad in [
        json!({"token": token, "public_key": "zz", "name": "erin"}),
        json!({"token": token, "public_key": "00".repeat(31), "name": "erin"}),
        json!({"token": token, "public_key": browser_key(7), "name": "human:erin"}),
        json!({"token": token, "public_key": browser_key(7), "name": ""}),
        json!({"token": token, "public_key": browser_key(7), "name": "erin", "role": "admin"}),
    ] {
        let (status, _, answer) = gw.signin(&gw.origin(), &bad);
        assert!(status == 400 || status == 422, "{bad}: {status} {answer}");
    }
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&token, 7, "erin"));
    assert_eq!(status, 200, "{answer}");
}

/// Issue 39 item 15: ten wrong tokens a minute from anyone (one global
/// window) kept sign-in locked for everyone, the right token included.
/// Failures now count per link: guesses naming no link lock nothing, and
/// guesses at one link spend only that link.
#[test]
fn regression_issue_39_guessing_cannot_keep_sign_in_locked() {
    let gw = Fresh::start();
    for i in 0..30 {
        let guess = format!("ils_{:0>43}", i);
        let (status, _, answer) = gw.signin(&gw.origin(), &body(&guess, 8, "guesser"));
        assert_eq!(status, 401, "{answer}");
    }
    // Guesses at the printed link's own id spend that link after five.
    let out = gw.cli(&["signin-link"], false);
    assert!(out.status.success(), "{}", stderr(&out));
    let second = token_of(stdout(&out).trim());
    let id = &second[..12];
    let mut spent = None;
    for i in 0..10 {
        let guess = format!("{id}{:0>35}", i);
        let (status, _, answer) = gw.signin(&gw.origin(), &body(&guess, 8, "guesser"));
        if status == 429 {
            assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
            spent = Some(i);
            break;
        }
        assert_eq!(status, 401, "{answer}");
    }
    assert_eq!(spent, Some(4), "the fifth wrong token spends the link");
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&second, 8, "frank"));
    assert_eq!(status, 401, "a spent link: {answer}");
    // The first link was never locked.
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 8, "frank"));
    assert_eq!(status, 200, "{answer}");
}

/// Issue 39 item 15: the redeemer picked the name, so a second browser
/// signed in as `human:alice` beside alice's own key — and quorum counts
/// identities. An identity held by another approver key is refused (409),
/// and the link stays usable for another name.
#[test]
fn regression_issue_39_a_sign_in_cannot_take_an_approvers_identity() {
    let gw = Fresh::start();
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 1, "alice"));
    assert_eq!(status, 200, "{answer}");
    let out = gw.cli(&["signin-link"], false);
    assert!(out.status.success(), "{}", stderr(&out));
    let second = token_of(stdout(&out).trim());
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&second, 2, "alice"));
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "identity_taken", "{answer}");
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&second, 2, "mallory"));
    assert_eq!(status, 200, "the link was not spent: {answer}");
    assert_eq!(answer["identity"], "human:mallory");
}

#[test]
fn signin_link_from_a_second_terminal_without_the_keychain() {
    let gw = Fresh::start();
    // `interlock signin-link` beside the running gateway: through the admin
    // socket, with no keychain in reach.
    let out = gw.cli(&["signin-link"], false);
    assert!(out.status.success(), "{}", stderr(&out));
    let link = stdout(&out).trim().to_owned();
    assert!(
        link.starts_with(&format!("http://{}/#/signin/ils_", gw.addr)),
        "{link}"
    );
    assert_ne!(token_of(&link), gw.token());
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&token_of(&link), 9, "gina"));
    assert_eq!(status, 200, "{answer}");
    // The first link is still good (each is single use on its own).
    let (status, _, answer) = gw.signin(&gw.origin(), &body(&gw.token(), 10, "hank"));
    assert_eq!(status, 200, "{answer}");

    // No gateway: said plainly.
    gw.child_kill();
    let out = gw.cli(&["signin-link"], false);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no gateway is running"),
        "{}",
        stderr(&out)
    );
    assert!(gw.data().join("run").is_dir());
}

impl Fresh {
    /// Ends the gateway as SIGTERM does (its admin socket removed).
    fn child_kill(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let socket = self.data().join("run/admin.sock");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while socket.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}
