//! The local admin socket (issue 19 item 3): CLI commands run beside a live
//! gateway reach it here instead of needing its keychain.
//!
//! Why: a headless gateway often runs with a keychain only it can reach (the
//! private D-Bus session `scripts/run` starts), so a second terminal's
//! `interlock reviewers add` failed with "no Secret Service" — opening the
//! engine needs the log key, which signs the key's issuance leaf. The running
//! gateway already holds that key, so it issues the key itself.
//!
//! Protection is the file system's: the socket lives in `<data dir>/run/`, a
//! directory only its owner can enter (0700; the socket itself 0600), and each
//! connection's peer must run as the gateway's own user (`SO_PEERCRED`). The
//! protocol is one JSON request line and one JSON answer line per connection;
//! it can only do what the CLI could do with the keychain: issue API keys,
//! write or delete upstreams' tokens (`interlock connect`) — never read one —
//! print a one-time sign-in link (`interlock signin-link`), and sign the
//! owner's decisions with the approver key in the gateway's keychain
//! ([`super::decisions`]).

use std::path::{Path, PathBuf};

use interlock_engine::Engine;
use interlock_store::ApiKeyKind;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

/// The socket's path under a data directory.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("run").join("admin.sock")
}

/// The largest request line read.
const MAX_REQUEST: u64 = 64 * 1024;

/// How long a connection may take to send its request line: a client that
/// connects and says nothing does not keep a task for ever.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Is a gateway there?
    Ping,
    /// Where agents reach it: its MCP endpoint's URL as it is bound now
    /// (`--listen` and `INTERLOCK_LISTEN` may differ from `gateway.toml`'s
    /// `listen`), so `interlock connect` beside it writes the right address.
    Address,
    /// Issue an API key (as `interlock agents add` / `reviewers add`).
    IssueKey {
        #[serde(with = "key_kind")]
        kind: ApiKeyKind,
        name: String,
        role: String,
        /// When `name` is taken, the first free `name-2`, `name-3`, …
        /// instead of a refusal (`interlock connect`'s keys; the answer
        /// names the one given).
        #[serde(default)]
        first_free: bool,
        /// In shadow mode from its first request (`agents add --shadow`).
        #[serde(default)]
        shadow: bool,
    },
    /// Keep an upstream's secret in the gateway's keychain (`interlock
    /// connect`): only tokens named `upstream.…`, the ones `env_keychain` /
    /// `headers_keychain` reference, and connect's backup sealing keys
    /// (`connect-backup.…`); only the latter can be read back.
    StoreToken { name: String, value: String },
    /// A sealing key of connect's undo backup (`interlock connect --undo`,
    /// issue 39 item 19): only names `connect-backup.…`. An upstream's token
    /// is never read back here.
    LoadBackupKey { name: String },
    /// Delete such a token (`interlock connect --undo`).
    DeleteToken { name: String },
    /// A one-time sign-in link for a browser (`interlock signin-link`;
    /// `crate::signin`).
    SigninLink,
    /// Add a server to the running gateway, pending review (`interlock
    /// servers add`; `crate::server_changes`).
    AddServer(crate::server_file::NewServer),
    /// The programs reviewers asked to run (`interlock servers requests`).
    ServerRequests,
    /// The owner runs one (`interlock servers confirm NAME`): only whoever
    /// reaches this socket, the data directory's owner, may (issue 39).
    ConfirmServer { name: String },
    /// The owner declines one (`interlock servers decline NAME`).
    DeclineServer { name: String },
    /// Revoke every active key of `kind` named `name`, each with its receipt
    /// (`interlock agents revoke`, `reviewers revoke`, `interlock connect
    /// --undo`, `interlock hooks install --undo`; `crate::keys::revoke_keys`),
    /// and forget their cached records, so they stop at their next request.
    RevokeKeys {
        #[serde(with = "key_kind")]
        kind: ApiKeyKind,
        name: String,
    },
    /// Shadow mode on or off for the agent `name`'s keys, with its receipt
    /// (`interlock agents shadow`, `agents add --shadow`).
    SetShadow { name: String, shadow: bool },
    /// Start the servers `gateway.toml` has and the gateway does not run
    /// (`interlock connect` wrote them).
    SyncServers,
    /// What a removal of server `name` must sign (`interlock servers
    /// remove` signs it with the keychain's approver key).
    RemovalTerms { name: String },
    /// A signed removal (a DSSE envelope; verified like every decision).
    RemoveServer { envelope: serde_json::Value },
    /// Mint an admin token (issue 20 item 3; `interlock admin token
    /// create`): how the first owner token comes to be — whoever can reach
    /// this socket owns the gateway's data directory already.
    IssueAdminToken {
        name: String,
        #[serde(with = "admin_scope")]
        scope: interlock_store::AdminScope,
    },
    /// The owner's decision, signed here with the gateway's approver key
    /// (`interlock servers approve|reject`, `plans approve|reject` beside a
    /// running gateway; [`super::decisions`]).
    Decide(super::decisions::OwnerDecision),
}

/// An [`interlock_store::AdminScope`] on the wire: its name.
mod admin_scope {
    use interlock_store::AdminScope;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(s: &AdminScope, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AdminScope, D::Error> {
        let name = String::deserialize(d)?;
        AdminScope::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown admin scope {name:?}")))
    }
}

/// An [`ApiKeyKind`] on the wire: its stable name (`agent`, `reviewer`); any
/// other name is refused when the request is read.
mod key_kind {
    use interlock_store::ApiKeyKind;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &ApiKeyKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ApiKeyKind, D::Error> {
        let name = String::deserialize(d)?;
        [ApiKeyKind::Agent, ApiKeyKind::Reviewer]
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown key kind {name:?}")))
    }
}

/// One answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Pong,
    /// The gateway's MCP endpoint (`Request::Address`).
    Address {
        mcp_url: String,
    },
    Key {
        key: String,
        key_hash: String,
        /// The name the key was given (`Request::IssueKey`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    Stored,
    Deleted(bool),
    /// How many keys a `RevokeKeys` or `SetShadow` changed.
    KeysChanged(u64),
    /// A backup sealing key (`Request::LoadBackupKey`), if kept.
    BackupKey(Option<String>),
    SigninLink {
        url: String,
        expires_in_secs: u64,
    },
    /// A server added or removed: its leaf's index.
    Logged(u64),
    /// The servers started.
    Started(Vec<String>),
    /// The programs reviewers asked to run, oldest first.
    ServerRequests(Vec<crate::server_requests::ServerRequest>),
    /// What a decision made of its subject, in words (`Request::Decide`).
    Decided(String),
    /// What a removal signs, and the terms it is checked against.
    RemovalTerms {
        subject: String,
        hash: String,
        audience: String,
        policy_digest: String,
        now: i64,
    },
    Error(String),
}

/// What the admin socket needs to print sign-in links: the gateway's links
/// and the address of the review UI it serves.
#[derive(Clone)]
pub struct SigninIssuer {
    pub links: std::sync::Arc<crate::signin::SigninLinks>,
    /// `http://host:port` of the review UI.
    pub base_url: String,
}

/// What the host lends the admin socket for the owner: its keychain's
/// upstream tokens, the sign-in links of the UI it serves, and its approver
/// key's signer. Each is absent where the host has none.
#[derive(Clone, Default)]
pub struct OwnerServices {
    pub tokens: Option<std::sync::Arc<dyn TokenStore>>,
    pub signin: Option<SigninIssuer>,
    pub decisions: Option<std::sync::Arc<dyn super::decisions::OwnerDecisions>>,
}

/// The prefix of the tokens the admin socket may write.
pub const UPSTREAM_TOKEN_PREFIX: &str = "upstream.";

/// The prefix of connect's backup sealing keys, which the admin socket may
/// also write, and read back.
pub const CONNECT_BACKUP_KEY_PREFIX: &str = "connect-backup.";

/// Where the gateway keeps upstreams' secrets (the host's keychain; the
/// gateway crate does not open keychains itself).
pub trait TokenStore: Send + Sync + 'static {
    fn store(&self, name: &str, value: &str) -> Result<(), String>;
    fn delete(&self, name: &str) -> Result<bool, String>;
    fn load(&self, name: &str) -> Result<Option<String>, String>;
}

/// Why the admin socket could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("the admin socket {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("the gateway refused: {0}")]
    Refused(String),
}

/// Binds the admin socket of `data_dir`: its directory made owner-only
/// first, so the socket is never reachable by others, even for the moment
/// between bind and chmod. A stale socket (no gateway answers on it) is
/// replaced; a live one (another gateway on this data directory) is an error.
pub async fn bind(data_dir: &Path) -> Result<UnixListener, AdminError> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    let path = socket_path(data_dir);
    let io = |e: std::io::Error| AdminError::Io {
        path: path.clone(),
        message: e.to_string(),
    };
    let dir = path.parent().expect("the socket is in run/");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    if path.exists() {
        if UnixStream::connect(&path).await.is_ok() {
            return Err(AdminError::Io {
                path,
                message: "another gateway already serves this data directory".into(),
            });
        }
        std::fs::remove_file(&path).map_err(io)?;
    }
    let listener = UnixListener::bind(&path).map_err(io)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    Ok(listener)
}

/// Serves `listener` until `stop` resolves, answering with `engine`,
/// `tokens` (without one, token requests are refused) and `signin` (without
/// one, no sign-in link: the gateway serves no UI to sign in to).
pub async fn serve(
    listener: UnixListener,
    engine: Engine,
    owner: OwnerServices,
    gateway: Option<crate::Gateway>,
    mcp_url: Option<String>,
    stop: impl std::future::Future<Output = ()>,
) {
    let OwnerServices {
        tokens,
        signin,
        decisions,
    } = owner;
    let uid = rustix::process::getuid().as_raw();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("admin socket: {e}");
                    continue;
                }
            },
        };
        if !stream.peer_cred().is_ok_and(|c| c.uid() == uid) {
            continue;
        }
        let engine = engine.clone();
        let tokens = tokens.clone();
        let signin = signin.clone();
        let decisions = decisions.clone();
        let gateway = gateway.clone();
        let mcp_url = mcp_url.clone();
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut line = String::new();
            let mut reader = BufReader::new(read).take(MAX_REQUEST);
            let read = tokio::time::timeout(REQUEST_TIMEOUT, reader.read_line(&mut line)).await;
            let answer = match read {
                Ok(Ok(_)) => match serde_json::from_str::<Request>(&line) {
                    Ok(Request::Address) => match mcp_url {
                        Some(mcp_url) => Answer::Address { mcp_url },
                        None => Answer::Error("this gateway serves no MCP endpoint".into()),
                    },
                    Ok(Request::Decide(d)) => decide(decisions, d).await,
                    Ok(req) => answer(&engine, tokens, signin, gateway, req).await,
                    Err(e) => Answer::Error(format!("not a request: {e}")),
                },
                Ok(Err(e)) => Answer::Error(e.to_string()),
                Err(_) => Answer::Error("no request within 10 s".into()),
            };
            let mut out = serde_json::to_vec(&answer).unwrap_or_default();
            out.push(b'\n');
            let _ = write.write_all(&out).await;
        });
    }
}

/// `Request::Decide`: checked, then signed by the host's keychain signer.
async fn decide(
    decisions: Option<std::sync::Arc<dyn super::decisions::OwnerDecisions>>,
    d: super::decisions::OwnerDecision,
) -> Answer {
    if let Err(e) = super::decisions::check(&d) {
        return Answer::Error(e);
    }
    match decisions {
        None => Answer::Error(
            "this gateway cannot sign decisions (no keychain); decide in its review UI".into(),
        ),
        Some(signer) => match signer.decide(d).await {
            Ok(done) => Answer::Decided(done),
            Err(e) => Answer::Error(e),
        },
    }
}

async fn answer(
    engine: &Engine,
    tokens: Option<std::sync::Arc<dyn TokenStore>>,
    signin: Option<SigninIssuer>,
    gateway: Option<crate::Gateway>,
    req: Request,
) -> Answer {
    let servers = || {
        gateway
            .clone()
            .ok_or_else(|| Answer::Error("this gateway runs no servers".into()))
    };
    let token_op = |name: &str| -> Result<std::sync::Arc<dyn TokenStore>, Answer> {
        let writable =
            name.starts_with(UPSTREAM_TOKEN_PREFIX) || name.starts_with(CONNECT_BACKUP_KEY_PREFIX);
        if !writable || !crate::config::valid_token_name(name) {
            return Err(Answer::Error(format!(
                "only upstream tokens ({UPSTREAM_TOKEN_PREFIX}…) and backup keys \
                 ({CONNECT_BACKUP_KEY_PREFIX}…) can be written here, not {name:?}"
            )));
        }
        tokens
            .clone()
            .ok_or_else(|| Answer::Error("this gateway keeps no tokens".into()))
    };
    match req {
        Request::Ping => Answer::Pong,
        Request::RevokeKeys { kind, name } => {
            let by = crate::keys::IssuedBy::OwnerBesideGateway;
            match crate::keys::revoke_keys(engine, kind, &name, by).await {
                Ok(n) => {
                    if let Some(gw) = &gateway {
                        gw.forget_keys_named(kind, &name);
                    }
                    Answer::KeysChanged(n)
                }
                Err(e) => Answer::Error(e.to_string()),
            }
        }
        Request::SetShadow { name, shadow } => {
            let by = crate::keys::IssuedBy::OwnerBesideGateway;
            match crate::keys::set_shadow(engine, &name, shadow, by).await {
                Ok(n) => {
                    if let Some(gw) = &gateway {
                        gw.forget_keys_named(ApiKeyKind::Agent, &name);
                    }
                    Answer::KeysChanged(n)
                }
                Err(e) => Answer::Error(e.to_string()),
            }
        }
        // Answered in `serve`, which knows the address and the signer.
        Request::Address => Answer::Error("no address here".into()),
        Request::Decide(_) => Answer::Error("no signer here".into()),
        Request::SigninLink => match signin {
            None => Answer::Error(
                "this gateway serves no review UI to sign in to (start it with `interlock serve --ui ui/dist`)".into(),
            ),
            Some(s) => match s.links.issue(engine).await {
                Ok((token, ttl)) => Answer::SigninLink {
                    url: crate::signin::link(&s.base_url, &token),
                    expires_in_secs: ttl.as_secs(),
                },
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::StoreToken { name, value } => match token_op(&name) {
            Err(a) => a,
            // A keychain call is a blocking D-Bus round trip.
            Ok(t) => match tokio::task::spawn_blocking(move || t.store(&name, &value)).await {
                Ok(Ok(())) => Answer::Stored,
                Ok(Err(e)) => Answer::Error(e),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::LoadBackupKey { name } if !name.starts_with(CONNECT_BACKUP_KEY_PREFIX) => {
            Answer::Error(format!(
                "only backup keys ({CONNECT_BACKUP_KEY_PREFIX}…) can be read here, not {name:?}"
            ))
        }
        Request::LoadBackupKey { name } => match token_op(&name) {
            Err(a) => a,
            Ok(t) => match tokio::task::spawn_blocking(move || t.load(&name)).await {
                Ok(Ok(k)) => Answer::BackupKey(k),
                Ok(Err(e)) => Answer::Error(e),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::DeleteToken { name } => match token_op(&name) {
            Err(a) => a,
            Ok(t) => match tokio::task::spawn_blocking(move || t.delete(&name)).await {
                Ok(Ok(d)) => Answer::Deleted(d),
                Ok(Err(e)) => Answer::Error(e),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::AddServer(new) => match servers() {
            Err(a) => a,
            Ok(gw) => match gw.add_server(&new, "interlock servers add").await {
                Ok(i) => Answer::Logged(i),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::ServerRequests => match servers() {
            Err(a) => a,
            Ok(gw) => Answer::ServerRequests(gw.server_requests()),
        },
        Request::ConfirmServer { name } => match servers() {
            Err(a) => a,
            Ok(gw) => match gw.confirm_server(&name, "interlock servers confirm").await {
                Ok(i) => Answer::Logged(i),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::DeclineServer { name } => match servers() {
            Err(a) => a,
            Ok(gw) => Answer::Deleted(gw.decline_server(&name)),
        },
        Request::SyncServers => match servers() {
            Err(a) => a,
            Ok(gw) => match gw.sync_servers("interlock connect").await {
                Ok(names) => Answer::Started(names),
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::RemovalTerms { name } => match servers() {
            Err(a) => a,
            Ok(gw) => match gw.removal_terms(&name).await {
                Ok((subject, hash)) => Answer::RemovalTerms {
                    subject,
                    hash: hash.to_string(),
                    audience: engine.log().origin().to_owned(),
                    policy_digest: engine.policy().digest().to_string(),
                    now: engine.now(),
                },
                Err(e) => Answer::Error(e.to_string()),
            },
        },
        Request::RemoveServer { envelope } => match servers() {
            Err(a) => a,
            Ok(gw) => match interlock_core::DsseEnvelope::from_json(&envelope) {
                Err(e) => Answer::Error(format!("not a DSSE envelope: {e}")),
                Ok(env) => match gw.remove_server(&env).await {
                    Ok(i) => Answer::Logged(i),
                    Err(e) => Answer::Error(e.to_string()),
                },
            },
        },
        Request::IssueAdminToken { name, scope } => {
            match crate::admin::api::issue_token(
                engine,
                &name,
                scope,
                serde_json::json!({"admin_socket": true}),
            )
            .await
            {
                Ok((key, key_hash)) => Answer::Key {
                    key,
                    key_hash,
                    name: None,
                },
                Err(e) => Answer::Error(e.to_string()),
            }
        }
        Request::IssueKey {
            kind,
            name,
            role,
            first_free,
            shadow,
        } => {
            // An agent's name is its identity (`agent:<name>`); a reviewer
            // key's is not (decisions are the approver key's), and the owner
            // may give one person several (a laptop, a desktop app).
            let name = match (kind, first_free) {
                (_, true) => match crate::keys::first_free_name(engine, kind, &name).await {
                    Ok(n) => n,
                    Err(e) => return Answer::Error(e.to_string()),
                },
                (ApiKeyKind::Agent, false) => {
                    match crate::keys::name_taken(engine, kind, &name).await {
                        Ok(None) => name,
                        Ok(Some(taken)) => return Answer::Error(taken.message(kind, &name)),
                        Err(e) => return Answer::Error(e.to_string()),
                    }
                }
                (ApiKeyKind::Reviewer, false) => name,
            };
            // `first_free` is connect's: it names keys after the clients it writes.
            let by = if first_free {
                crate::keys::IssuedBy::Connect
            } else {
                crate::keys::IssuedBy::OwnerBesideGateway
            };
            match crate::keys::issue_key(engine, kind, &name, &role, by, shadow).await {
                Ok((key, record)) => Answer::Key {
                    key,
                    key_hash: record.key_hash,
                    name: Some(name),
                },
                Err(e) => Answer::Error(e.to_string()),
            }
        }
    }
}

/// Sends `req` to the gateway serving `data_dir`, if one does: `Ok(None)`
/// when no gateway listens there (the caller then does the work itself).
pub async fn request(data_dir: &Path, req: &Request) -> Result<Option<Answer>, AdminError> {
    let path = socket_path(data_dir);
    let io = |e: std::io::Error| AdminError::Io {
        path: path.clone(),
        message: e.to_string(),
    };
    let stream = match UnixStream::connect(&path).await {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(io(e)),
    };
    let (read, mut write) = stream.into_split();
    let mut line = serde_json::to_vec(req).map_err(|e| io(std::io::Error::other(e)))?;
    line.push(b'\n');
    write.write_all(&line).await.map_err(io)?;
    let mut answer = String::new();
    BufReader::new(read)
        .take(MAX_REQUEST)
        .read_line(&mut answer)
        .await
        .map_err(io)?;
    match serde_json::from_str::<Answer>(&answer) {
        Ok(Answer::Error(e)) => Err(AdminError::Refused(e)),
        Ok(a) => Ok(Some(a)),
        Err(e) => Err(io(std::io::Error::other(format!("no answer: {e}")))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The socket is owner-only, answers while the gateway lives (a key it
    /// issues authenticates), writes only `upstream.` tokens, refuses a
    /// second gateway on the same data directory, and once the gateway is
    /// gone the CLI is told nobody listens (it then does the work itself).
    #[tokio::test]
    async fn the_admin_socket_issues_keys_and_touches_only_upstream_tokens() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(
            interlock_engine::EngineConfig::new(dir.path().join("db")),
            std::sync::Arc::new(ed25519_dalek::SigningKey::from_bytes(&[7; 32])),
        )
        .await
        .unwrap();
        let listener = bind(dir.path()).await.unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&socket_path(dir.path())), 0o600);
        assert_eq!(mode(&dir.path().join("run")), 0o700);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            engine.clone(),
            OwnerServices::default(),
            None,
            None,
            async {
                let _ = stopped.await;
            },
        ));

        let data = dir.path().to_owned();
        let ask = move |req: Request| {
            let data = data.clone();
            async move { request(&data, &req).await }
        };
        assert!(matches!(ask(Request::Ping).await, Ok(Some(Answer::Pong))));
        // No UI served here: no sign-in link.
        let e = ask(Request::SigninLink).await.unwrap_err().to_string();
        assert!(e.contains("serves no review UI"), "{e}");
        // No keychain here: no decision signed, whatever it says (issue 46).
        let decide = |shown_hash: Option<&str>| {
            Request::Decide(super::super::decisions::OwnerDecision {
                subject: super::super::decisions::DecisionSubject::Server { name: "x".into() },
                decision: interlock_core::decision::Decision::Approve,
                shown_hash: shown_hash.map(str::to_owned),
                reason: "read it".into(),
                valid_for_secs: 60,
            })
        };
        let e = ask(decide(Some("sha256:00")))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot sign decisions"), "{e}");
        // An approval that names no hash is refused before any signer.
        let e = ask(decide(None)).await.unwrap_err().to_string();
        assert!(e.contains("must name the hash"), "{e}");
        // A kind the gateway does not issue is refused when the line is read.
        let raw = |line: &'static str| {
            let path = socket_path(dir.path());
            async move {
                let stream = UnixStream::connect(&path).await.unwrap();
                let (read, mut write) = stream.into_split();
                write.write_all(line.as_bytes()).await.unwrap();
                let mut answer = String::new();
                BufReader::new(read).read_line(&mut answer).await.unwrap();
                answer
            }
        };
        let refused =
            raw("{\"op\":\"issue_key\",\"kind\":\"admin\",\"name\":\"x\",\"role\":\"reviewer\"}\n")
                .await;
        assert!(refused.contains("unknown key kind"), "{refused}");
        let issued = ask(Request::IssueKey {
            kind: ApiKeyKind::Reviewer,
            name: "second-terminal".into(),
            role: "reviewer".into(),
            first_free: false,
            shadow: false,
        })
        .await
        .unwrap();
        let Some(Answer::Key { key, .. }) = issued else {
            panic!("{issued:?}")
        };
        let record = crate::keys::authenticate(&engine, &key, ApiKeyKind::Reviewer)
            .await
            .unwrap()
            .expect("the issued key authenticates");
        assert_eq!(record.name, "second-terminal");

        for name in ["approver", "token:team", "log", "upstream.bad name"] {
            let e = ask(Request::StoreToken {
                name: name.into(),
                value: "x".into(),
            })
            .await
            .unwrap_err()
            .to_string();
            assert!(e.contains("only upstream tokens"), "{name}: {e}");
        }
        // An upstream token is accepted by name, and this gateway keeps none.
        let e = ask(Request::DeleteToken {
            name: "upstream.gh.GITHUB_TOKEN".into(),
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("keeps no tokens"), "{e}");
        // Issue 39 item 19: connect's backup keys are read back here, an
        // upstream's token never is.
        for name in ["upstream.gh.GITHUB_TOKEN", "approver", "connect-backupx"] {
            let e = ask(Request::LoadBackupKey { name: name.into() })
                .await
                .unwrap_err()
                .to_string();
            assert!(e.contains("only backup keys"), "{name}: {e}");
        }
        let e = ask(Request::LoadBackupKey {
            name: "connect-backup.cursor.00ff".into(),
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("keeps no tokens"), "{e}");

        let second = bind(dir.path()).await.unwrap_err().to_string();
        assert!(second.contains("another gateway"), "{second}");

        stop.send(()).unwrap();
        server.await.unwrap();
        assert!(matches!(ask(Request::Ping).await, Ok(None)));
        engine.log().close().await;
    }
}
