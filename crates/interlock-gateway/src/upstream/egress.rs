//! A sandboxed server's only way out (issue 38): its network namespace has
//! nothing but its own loopback, where a relay inside the sandbox forwards
//! `127.0.0.1:3128` to a Unix socket bound in from here. This end is an HTTP
//! `CONNECT` proxy that opens a tunnel only to a `host:port` of the server's
//! `net` list, only while the server is approved (a pending or quarantined
//! server has no network), and never, through a name, to this machine, a
//! link-local or a metadata address (a name is resolved here, once, and the
//! tunnel goes to the address checked).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use interlock_sandbox::HostPort;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// The longest request head a client may send before its tunnel (bytes).
const MAX_HEAD: usize = 8 * 1024;

/// Whether the server may reach the network now (approved, not quarantined).
pub type MayConnect = Arc<dyn Fn() -> bool + Send + Sync>;

/// A running proxy: stops (and removes its socket) when dropped.
pub struct EgressProxy {
    task: tokio::task::JoinHandle<()>,
    path: PathBuf,
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Why a tunnel was refused, as the proxy answers it.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// 400: not a `CONNECT host:port` request.
    BadRequest(String),
    /// 403: not in the server's list, not approved, or an address it may
    /// not reach through a name.
    Forbidden(String),
    /// 502: the destination did not answer.
    Unreachable(String),
}

/// Starts the proxy of `server` on the Unix socket `path` (replacing a stale
/// one), letting it reach `allowed` while `may_connect` says so.
pub fn start(
    server: &str,
    path: &Path,
    allowed: Vec<HostPort>,
    may_connect: MayConnect,
) -> std::io::Result<EgressProxy> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    let server = server.to_owned();
    let allowed = Arc::new(allowed);
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (server, allowed, may) = (
                server.clone(),
                Arc::clone(&allowed),
                Arc::clone(&may_connect),
            );
            tokio::spawn(async move {
                serve(&server, stream, &allowed, &*may).await;
            });
        }
    });
    Ok(EgressProxy {
        task,
        path: path.to_path_buf(),
    })
}

async fn serve(
    server: &str,
    mut client: UnixStream,
    allowed: &[HostPort],
    may_connect: &(dyn Fn() -> bool + Send + Sync),
) {
    let head = match read_head(&mut client).await {
        Ok(h) => h,
        Err(why) => {
            let _ = answer(&mut client, &Refusal::BadRequest(why)).await;
            return;
        }
    };
    let upstream = match open(&head, allowed, may_connect()).await {
        Ok(u) => u,
        Err(refusal) => {
            tracing::warn!(server, request = %head.lines().next().unwrap_or(""), ?refusal, "egress refused");
            let _ = answer(&mut client, &refusal).await;
            return;
        }
    };
    let (dest, mut upstream) = upstream;
    tracing::info!(server, %dest, "egress tunnel opened");
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// Reads the request head (up to the blank line), at most [`MAX_HEAD`].
async fn read_head(client: &mut UnixStream) -> Result<String, String> {
    let mut buf = Vec::with_capacity(512);
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if buf.len() >= MAX_HEAD {
            return Err(format!("a request head over {MAX_HEAD} bytes"));
        }
        match client.read(&mut byte).await {
            Ok(0) | Err(_) => return Err("the request ended early".into()),
            Ok(_) => buf.push(byte[0]),
        }
    }
    String::from_utf8(buf).map_err(|_| "a request head that is not UTF-8".into())
}

/// The destination a request head asks for, if the server may reach it.
fn destination(head: &str, allowed: &[HostPort]) -> Result<HostPort, Refusal> {
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next(), parts.next(), parts.next());
    if method != Some("CONNECT") || !version.is_some_and(|v| v.starts_with("HTTP/1.")) {
        return Err(Refusal::BadRequest(format!(
            "only CONNECT host:port is relayed (HTTPS, or any TCP through a tunnel), not {line:?}"
        )));
    }
    let dest = HostPort::parse(target.unwrap_or_default()).map_err(Refusal::BadRequest)?;
    if !allowed.contains(&dest) {
        return Err(Refusal::Forbidden(format!(
            "{dest} is not in this server's net list"
        )));
    }
    Ok(dest)
}

/// Connects to what `head` asks for, when allowed.
async fn open(
    head: &str,
    allowed: &[HostPort],
    approved: bool,
) -> Result<(SocketAddr, TcpStream), Refusal> {
    let dest = destination(head, allowed)?;
    if !approved {
        return Err(Refusal::Forbidden(
            "the server is not approved: no network until a reviewer approves it".into(),
        ));
    }
    let literal: Option<std::net::IpAddr> = dest.host.parse().ok();
    let addrs: Vec<SocketAddr> = match literal {
        // An address in the list is where the operator meant.
        Some(ip) => vec![SocketAddr::new(ip, dest.port)],
        None => {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((dest.host.as_str(), dest.port))
                .await
                .map_err(|e| Refusal::Unreachable(format!("{}: {e}", dest.host)))?
                .collect();
            let url = reqwest::Url::parse(&format!("http://{}/", dest.host))
                .map_err(|e| Refusal::BadRequest(e.to_string()))?;
            super::address_guard::AddressGuard::for_url(&url)
                .keep(&dest.host, found)
                .map_err(Refusal::Forbidden)?
        }
    };
    let mut last = String::from("no address");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok((addr, s)),
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    Err(Refusal::Unreachable(last))
}

async fn answer(client: &mut UnixStream, refusal: &Refusal) -> std::io::Result<()> {
    let (status, why) = match refusal {
        Refusal::BadRequest(w) => ("400 Bad Request", w),
        Refusal::Forbidden(w) => ("403 Forbidden", w),
        Refusal::Unreachable(w) => ("502 Bad Gateway", w),
    };
    let body = format!("Interlock sandbox egress: {why}\n");
    client
        .write_all(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<HostPort> {
        items.iter().map(|i| HostPort::parse(i).unwrap()).collect()
    }

    #[test]
    fn only_connect_to_a_listed_destination_is_relayed() {
        let allowed = list(&["api.github.com:443", "127.0.0.1:8080"]);
        let head = |line: &str| format!("{line}\r\nHost: x\r\n\r\n");
        assert_eq!(
            destination(&head("CONNECT API.github.com:443 HTTP/1.1"), &allowed),
            Ok(HostPort::parse("api.github.com:443").unwrap())
        );
        for refused in [
            "CONNECT api.github.com:80 HTTP/1.1",
            "CONNECT evil.example:443 HTTP/1.1",
            "CONNECT 127.0.0.1:8081 HTTP/1.1",
        ] {
            assert!(
                matches!(
                    destination(&head(refused), &allowed),
                    Err(Refusal::Forbidden(_))
                ),
                "{refused}"
            );
        }
        for bad in [
            "GET http://api.github.com/ HTTP/1.1",
            "CONNECT api.github.com HTTP/1.1",
            "CONNECT api.github.com:443",
        ] {
            assert!(
                matches!(
                    destination(&head(bad), &allowed),
                    Err(Refusal::BadRequest(_))
                ),
                "{bad}"
            );
        }
    }

    #[tokio::test]
    async fn a_listed_name_that_does_not_resolve_or_an_unapproved_server_gets_no_tunnel() {
        // (A listed name that resolves to this machine is refused by the
        // address guard, `address_guard::tests`.)
        let allowed = list(&["localhost.localdomain.invalid:443"]);
        let err = open(
            "CONNECT localhost.localdomain.invalid:443 HTTP/1.1\r\n\r\n",
            &allowed,
            true,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, Refusal::Unreachable(_) | Refusal::Forbidden(_)),
            "{err:?}"
        );
        let unapproved = open(
            "CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n",
            &list(&["127.0.0.1:9"]),
            false,
        )
        .await
        .unwrap_err();
        assert!(matches!(unapproved, Refusal::Forbidden(ref w) if w.contains("not approved")));
    }

    #[tokio::test]
    async fn a_tunnel_reaches_a_listed_address_through_the_socket() {
        let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = target.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = target.accept().await.unwrap();
            s.write_all(b"hello from the destination").await.unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("egress.sock");
        let _proxy = start(
            "s",
            &sock,
            list(&[&format!("127.0.0.1:{port}")]),
            Arc::new(|| true),
        )
        .unwrap();
        let mut c = UnixStream::connect(&sock).await.unwrap();
        c.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).await.unwrap();
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.ends_with("hello from the destination"), "{text}");
    }
}
