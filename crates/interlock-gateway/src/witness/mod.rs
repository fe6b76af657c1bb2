//! The witness face (issue 43): C2SP tlog-witness's `POST /add-checkpoint`
//! over an [`interlock_witness::Witness`], for `interlock witness serve`.
//!
//! The spec has no authentication beyond the checkpoint's signature: a
//! submission counts only if a key the witness trusts for its origin signed
//! it. Browsers are refused (a request with an `Origin` header): logs call
//! witnesses, pages do not. Bodies are capped at [`MAX_BODY`] (a checkpoint
//! and 63 proof lines are a few kilobytes).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use interlock_witness::{RefusalKind, TLOG_SIZE_CONTENT_TYPE as TLOG_SIZE, Witness};

/// The largest request body accepted.
pub const MAX_BODY: usize = 64 * 1024;

/// The witness's routes: `POST /add-checkpoint`, and `GET /` naming its key.
pub fn router(witness: Arc<Witness>) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/", get(about))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(witness)
}

async fn about(State(w): State<Arc<Witness>>) -> Response {
    let logs: Vec<&str> = w.logs().iter().map(|l| l.origin.as_str()).collect();
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!(
            "interlock witness\nkey {}\nlogs {}\n",
            w.vkey(),
            logs.join(" ")
        ),
    )
        .into_response()
}

async fn add_checkpoint(
    State(w): State<Arc<Witness>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if headers.contains_key(header::ORIGIN) {
        return (
            StatusCode::FORBIDDEN,
            "witnesses answer logs, not browsers\n",
        )
            .into_response();
    }
    let Ok(body) = std::str::from_utf8(&body) else {
        return (StatusCode::BAD_REQUEST, "the body is not UTF-8\n").into_response();
    };
    match w.add_checkpoint(body).await {
        Ok(line) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], line).into_response(),
        Err(refusal) => {
            let status = match refusal.kind() {
                RefusalKind::BadRequest => StatusCode::BAD_REQUEST,
                RefusalKind::Forbidden => StatusCode::FORBIDDEN,
                RefusalKind::NotFound => StatusCode::NOT_FOUND,
                RefusalKind::Conflict => StatusCode::CONFLICT,
                RefusalKind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
                RefusalKind::Internal => {
                    tracing::error!("witness: {refusal}");
                    StatusCode::INTERNAL_SERVER_ERROR
                }
            };
            match refusal.latest_size() {
                Some(size) if status == StatusCode::CONFLICT => (
                    status,
                    [(header::CONTENT_TYPE, TLOG_SIZE)],
                    format!("{size}\n"),
                )
                    .into_response(),
                _ => (status, format!("{refusal}\n")).into_response(),
            }
        }
    }
}

/// Serves `witness` on `listener` until `shutdown` resolves; a client has
/// ten seconds to send its header block.
pub async fn serve(
    witness: Arc<Witness>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let app = router(witness);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .max_header_size(16 * 1024);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let permits = Arc::new(tokio::sync::Semaphore::new(256));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => p.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn =
            http1.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "witness connection ended with an error");
            }
            drop(permit);
        });
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {}
    }
    Ok(())
}
