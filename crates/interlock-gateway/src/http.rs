//! The HTTP server: routes, body limits, and the Origin/Host checks that keep
//! a web page in the user's browser from talking to the gateway (DNS rebinding,
//! cross-site requests).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::HeaderValue;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::gateway::Gateway;
use crate::peer::Peer;

/// What the Host/Origin guard compares against: the address actually bound
/// (the config may say port 0).
#[derive(Clone)]
struct GuardState {
    gw: Gateway,
    bound: SocketAddr,
}

/// The router for both surfaces: `/mcp` for agents, `/api/v1` for reviewers,
/// served at `bound`.
pub fn router(gw: Gateway, bound: SocketAddr) -> Router {
    let limit = gw.config().limits.max_body_bytes;
    let ui_dir = gw.config().ui_dir.clone();
    let mut router = Router::new()
        .merge(crate::agent::routes())
        .merge(crate::reviewer::routes())
        .merge(crate::admin::routes())
        .route("/healthz", get(|| async { "ok" }));
    if let Some(dir) = ui_dir {
        // The review UI: static files, with every unknown path answered by
        // index.html (client-side routes). It may talk only to its own origin.
        let index = dir.join("index.html");
        router = router.fallback_service(
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
                    ),
                ))
                .service(ServeDir::new(dir).fallback(ServeFile::new(index))),
        );
    }
    let body_timeout = Duration::from_secs(gw.config().limits.body_timeout_secs.max(1));
    router
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(
            BodyBounds {
                deadline: body_timeout,
                max_bytes: limit,
            },
            whole_body_in_time,
        ))
        .layer(middleware::from_fn_with_state(
            GuardState {
                gw: gw.clone(),
                bound,
            },
            guard,
        ))
        .with_state(gw)
}

/// How much of a request body the gateway waits for, and for how long.
#[derive(Clone, Copy)]
struct BodyBounds {
    deadline: Duration,
    max_bytes: usize,
}

/// Reads the whole request body before any handler sees it: it must arrive
/// within `body_timeout_secs` *in all* (a timeout between frames would let a
/// client that sends a byte just before each deadline hold its connection for
/// as long as it likes), and be at most `max_body_bytes`. Every handler buffers
/// its body anyway, so this costs no streaming.
async fn whole_body_in_time(State(b): State<BodyBounds>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(b.deadline, axum::body::to_bytes(body, b.max_bytes)).await;
    // A coding agent's hook takes an error status as "no objection": its
    // endpoint answers a body it could not read with a deny instead.
    let hook_refusal = |why: String| crate::agent::hooks::unread_body(parts.uri.path(), &why);
    match &read {
        Ok(Err(e)) if over_length_limit(e) => {
            if let Some(r) = hook_refusal(format!(
                "the event is larger than limits.max_body_bytes ({} bytes)",
                b.max_bytes
            )) {
                return r;
            }
        }
        Ok(Err(e)) => {
            if let Some(r) = hook_refusal(format!("the event could not be read: {e}")) {
                return r;
            }
        }
        Err(_) => {
            if let Some(r) = hook_refusal(format!(
                "the event did not arrive within limits.body_timeout_secs ({} s)",
                b.deadline.as_secs()
            )) {
                return r;
            }
        }
        Ok(Ok(_)) => {}
    }
    match read {
        Ok(Ok(bytes)) => next.run(Request::from_parts(parts, bytes.into())).await,
        Ok(Err(e)) => {
            if over_length_limit(&e) {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the request body is larger than limits.max_body_bytes ({} bytes)",
                        b.max_bytes
                    ),
                )
                    .into_response()
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {e}"),
                )
                    .into_response()
            }
        }
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            [(header::CONNECTION, "close")],
            format!(
                "the request body did not arrive within limits.body_timeout_secs ({} s)",
                b.deadline.as_secs()
            ),
        )
            .into_response(),
    }
}

/// Whether `to_bytes` stopped at its limit (the error is nested in boxes).
fn over_length_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if c.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Refuses requests whose `Host` is not the gateway's own (loopback names, the
/// listen address, or configured hosts), and browser requests from an `Origin`
/// that is not allowed.
async fn guard(State(g): State<GuardState>, req: Request, next: Next) -> Response {
    let config = g.gw.config();
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !host_allowed(host, g.bound, &config.allowed_hosts) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            format!("Host {host:?} is not served here"),
        )
            .into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(origin, g.bound, &config.allowed_origins) {
            return (
                StatusCode::FORBIDDEN,
                format!("Origin {origin:?} may not call the gateway"),
            )
                .into_response();
        }
    }
    next.run(req).await
}

fn split_host_port(s: &str) -> (&str, Option<&str>) {
    if let Some(rest) = s.strip_prefix('[') {
        // [v6]:port
        return match rest.split_once(']') {
            Some((h, p)) => (h, p.strip_prefix(':')),
            None => (s, None),
        };
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (h, Some(p)),
        _ => (s, None),
    }
}

fn is_loopback_name(h: &str) -> bool {
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a `Host` header names this gateway.
pub fn host_allowed(host: &str, listen: SocketAddr, extra: &[String]) -> bool {
    let (h, port) = split_host_port(host);
    if h.is_empty() {
        return false;
    }
    let port_ok = port.is_none_or(|p| p.parse::<u16>() == Ok(listen.port()));
    if extra
        .iter()
        .any(|e| e.eq_ignore_ascii_case(host) || e.eq_ignore_ascii_case(h))
    {
        return true;
    }
    if !port_ok {
        return false;
    }
    is_loopback_name(h)
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip == listen.ip())
}

/// Whether a browser `Origin` may call the gateway: the gateway's own origin
/// (a loopback name at its port) or one configured.
pub fn origin_allowed(origin: &str, listen: SocketAddr, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a == origin) {
        return true;
    }
    let Some(rest) = origin.strip_prefix("http://") else {
        return false;
    };
    let (h, port) = split_host_port(rest);
    port.and_then(|p| p.parse::<u16>().ok()) == Some(listen.port()) && is_loopback_name(h)
}

/// Serves on `listener` until `shutdown` resolves, within the connection
/// limits (`[limits]`): at most `max_connections` at once (more wait in the
/// listen backlog), `header_read_timeout_secs` to send a header block (and to
/// send the next request on an idle keep-alive connection), a header block of
/// at most `max_header_bytes` (a larger one is answered 431). Served with
/// hyper's HTTP/1 connection builder directly: `axum::serve` sets none of these
/// (it has no timer, so hyper's header timeout never runs).
pub async fn serve(
    gw: Gateway,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let bound = listener.local_addr()?;
    let limits = gw.config().limits.clone();
    let gw_for_shares = gw.clone();
    let app = router(gw, bound);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_read_timeout_secs.max(1)))
        .max_header_size(limits.max_header_bytes.max(1024));
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let shares = gw_for_shares.clone();
    let mut next_connection = 0u64;
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => p.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait, not spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // An answer streamed as SSE (progress, then the result) is several
        // writes: without TCP_NODELAY the later ones wait for the client's ACK
        // of the first (Nagle's algorithm).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        // Each request knows the address it came from (`Peer`): a few routes
        // act on this machine and answer only its own users. And which
        // connection it came on (`ConnectionId`): an agent key's share of
        // the connections is counted by them (`crate::connections`).
        next_connection += 1;
        let connection = crate::connections::ConnectionId(next_connection);
        let service = tower::util::MapRequest::new(
            app.clone(),
            move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(Peer(peer));
                req.extensions_mut().insert(connection);
                req
            },
        );
        let conn = http1.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        let shares = shares.clone();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            shares.connection_shares().release(connection);
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_are_checked() {
        let listen: SocketAddr = "127.0.0.1:8717".parse().unwrap();
        assert!(host_allowed("127.0.0.1:8717", listen, &[]));
        assert!(host_allowed("localhost:8717", listen, &[]));
        assert!(host_allowed("[::1]:8717", listen, &[]));
        assert!(!host_allowed("evil.example:8717", listen, &[]));
        assert!(!host_allowed("localhost:9999", listen, &[]));
        assert!(host_allowed("gw.internal", listen, &["gw.internal".into()]));
        assert!(origin_allowed("http://localhost:8717", listen, &[]));
        assert!(!origin_allowed("http://evil.example", listen, &[]));
        assert!(!origin_allowed("http://localhost:5173", listen, &[]));
        assert!(origin_allowed(
            "http://localhost:5173",
            listen,
            &["http://localhost:5173".into()]
        ));
    }
}
