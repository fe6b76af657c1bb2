//! One upstream, connected read-only, its surface listed.
//!
//! Why a module: the review must see what the gateway would see — the same
//! transports, protocol eras and listing caps ([`Connection::open`],
//! [`Connection::list_tools`]) — but it must not do anything else: it never
//! calls a tool (declared probes are the gateway's, after approval), never
//! serves one, and closes the connection (killing a child process) as soon as
//! the listing is read. What it lists is what the gateway pins
//! ([`crate::pinned::listing`]): the same surface, so the same hash.

use std::sync::Arc;
use std::time::{Duration, Instant};

use interlock_surface::Surface;
use tokio::sync::mpsc;

use crate::config::{Limits, UpstreamConfig};
use crate::upstream::{Connection, Signals, relay::Relays};

/// Why an upstream's surface could not be observed.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error("server `{server}`: {message}")]
    Config { server: String, message: String },
    #[error("server `{server}`: {message}")]
    Upstream { server: String, message: String },
    #[error("server `{server}` did not list its tools within {after:?}")]
    Timeout { server: String, after: Duration },
    #[error("server `{server}` listed a surface that is not one: {message}")]
    BadSurface { server: String, message: String },
}

/// What one upstream lists now, and how long it took to start and list it.
#[derive(Debug)]
pub struct Observed {
    pub surface: Surface,
    pub elapsed: Duration,
}

/// How many times an upstream is started before the review gives up on it.
/// A process started under load can miss the era discovery's deadline and
/// then refuse the handshake (its first request chose its era); the gateway's
/// supervisor reconnects with backoff, and so does the review, a little.
pub const ATTEMPTS: u32 = 3;

/// [`observe_once`], retried up to [`ATTEMPTS`] times with the gateway's
/// reconnect backoff when the upstream (not its configuration) failed.
pub async fn observe(
    server: &str,
    up: &UpstreamConfig,
    limits: &Limits,
    confiner: &interlock_sandbox::Confiner,
) -> Result<Observed, ObserveError> {
    let started = Instant::now();
    let mut attempt = 0;
    loop {
        match observe_once(server, up, limits, confiner).await {
            Err(ObserveError::Upstream { .. } | ObserveError::Timeout { .. })
                if attempt + 1 < ATTEMPTS =>
            {
                tokio::time::sleep(crate::upstream::backoff(attempt)).await;
                attempt += 1;
            }
            Ok(mut o) => {
                o.elapsed = started.elapsed();
                return Ok(o);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Starts or connects to `up` (as `server`), lists its surface within
/// `limits` (the whole observation within `limits.upstream_timeout_secs`,
/// at most 60 s), and closes it.
pub async fn observe_once(
    server: &str,
    up: &UpstreamConfig,
    limits: &Limits,
    confiner: &interlock_sandbox::Confiner,
) -> Result<Observed, ObserveError> {
    let started = Instant::now();
    let transport = up.transport(server).map_err(|e| ObserveError::Config {
        server: server.to_owned(),
        message: e.to_string(),
    })?;
    let timeout = limits.upstream_timeout().min(Duration::from_secs(60));
    let upstream = |e: crate::upstream::UpstreamError| ObserveError::Upstream {
        server: server.to_owned(),
        message: match e {
            crate::upstream::UpstreamError::Rpc(raw) => {
                format!("the upstream returned an error: {}", raw.get())
            }
            e => e.to_string(),
        },
    };
    let work = async {
        // Nothing the upstream sends unasked (list_changed, log messages) is
        // acted on: the receiver is dropped with the connection.
        let (tx, _signals) = mpsc::unbounded_channel();
        let (conn, hello) = Connection::open(
            server,
            &transport,
            up.protocol,
            limits,
            Signals::new(tx, Arc::new(Relays::default())),
            confiner,
        )
        .await
        .map_err(upstream)?;
        // What the gateway pins of it (`pin`: tools, and prompts,
        // resources and instructions as configured), listed the same way.
        let listed = match conn.list_tools(timeout, limits.tools_list_caps()).await {
            Ok(tools) => crate::pinned::listing(
                &conn,
                Some(&hello),
                &up.pin,
                limits,
                hello.instructions.as_deref(),
                tools,
                crate::pinned::Kept::Nothing,
            )
            .await
            .map(|observed| observed.listing),
            Err(e) => Err(e),
        };
        conn.close().await;
        let mut listing = listed.map_err(upstream)?;
        listing.launch = transport.pinned_launch();
        interlock_trust::pins::parse_surface(server, &listing).map_err(|e| {
            ObserveError::BadSurface {
                server: server.to_owned(),
                message: e.to_string(),
            }
        })
    };
    let surface =
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| ObserveError::Timeout {
                server: server.to_owned(),
                after: timeout,
            })??;
    Ok(Observed {
        surface,
        elapsed: started.elapsed(),
    })
}
