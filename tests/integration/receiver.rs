//! A local HTTP receiver that stands in for a remote service an alert sink
//! posts to (a SIEM's webhook endpoint, Splunk's HEC, Datadog's intake, ...).
//! It is a real HTTP/1.1 server (hyper) on a loopback port: it records every
//! request as received — method, path, headers, body — and answers as the
//! test says (`Mode`): accept, fail with a status, hang past the sink's
//! timeout, close the connection mid-request, or answer late.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt as _;

/// How the receiver answers the next requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `200 OK`.
    Accept,
    /// This status, with a short body.
    Fail(u16),
    /// Never answers (the sink's timeout fires).
    Hang,
    /// Reads the request's first bytes, then closes the connection.
    Close,
    /// Answers `200` after this long.
    Late(Duration),
}

/// One request as it arrived.
#[derive(Clone, Debug)]
pub struct Captured {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status it was answered with (0: no answer).
    pub status: u16,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct State {
    mode: Mutex<Option<Mode>>,
    requests: Mutex<Vec<Captured>>,
    /// Connections closed by `Mode::Close`, and requests left hanging.
    refused: Mutex<u64>,
}

pub struct Receiver {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    pub fn start(mode: Mode) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State::default());
        *state.mode.lock().unwrap() = Some(mode);
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let st = Arc::clone(&state);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let sock = tokio::select! {
                        a = listener.accept() => match a { Ok((s, _)) => s, Err(_) => continue },
                        _ = &mut stopped => return,
                    };
                    let st = Arc::clone(&st);
                    tokio::spawn(async move {
                        if st.mode() == Mode::Close {
                            let mut sock = sock;
                            let mut buf = [0u8; 64];
                            let _ = sock.read(&mut buf).await;
                            *st.refused.lock().unwrap() += 1;
                            return; // dropped: the connection closes mid-request
                        }
                        let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                            let st = Arc::clone(&st);
                            async move { Ok::<_, hyper::Error>(st.answer(req).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(sock), svc)
                            .await;
                    });
                }
            });
        });
        Receiver {
            base,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.state.mode.lock().unwrap() = Some(mode);
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Captured> {
        self.state.requests.lock().unwrap().clone()
    }

    /// The requests answered 2xx.
    pub fn accepted(&self) -> Vec<Captured> {
        self.requests()
            .into_iter()
            .filter(|r| (200..300).contains(&r.status))
            .collect()
    }

    /// Connections closed mid-request plus requests left hanging.
    pub fn refused(&self) -> u64 {
        *self.state.refused.lock().unwrap()
    }

    /// Polls until `done` holds on the accepted requests (60 s at most).
    pub fn wait_until(&self, what: &str, done: impl Fn(&[Captured]) -> bool) -> Vec<Captured> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.accepted();
            if done(&got) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "receiver: {what} did not happen; {} requests, {} accepted",
                self.requests().len(),
                got.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl State {
    fn mode(&self) -> Mode {
        self.mode.lock().unwrap().unwrap_or(Mode::Accept)
    }

    async fn answer(
        &self,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<Full<Bytes>> {
        let method = req.method().to_string();
        let path = req
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default();
        let headers = req
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect();
        let body = req
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes().to_vec())
            .unwrap_or_default();
        let mode = self.mode();
        let status = match mode {
            Mode::Accept | Mode::Close => 200,
            Mode::Fail(s) => s,
            Mode::Late(d) => {
                tokio::time::sleep(d).await;
                200
            }
            Mode::Hang => 0,
        };
        self.requests.lock().unwrap().push(Captured {
            method,
            path,
            headers,
            body,
            status,
        });
        if status == 0 {
            *self.refused.lock().unwrap() += 1;
            std::future::pending::<()>().await;
        }
        hyper::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(b"{\"ok\":true}")))
            .unwrap()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Has `gw` block one call (an AWS key pair in `drifty__greet`'s arguments)
/// and returns the indices of the log's entries a sink delivers by then:
/// every entry but the intent leaves and the log's own.
pub fn block_a_call_and_list_what_sinks_deliver(gw: &crate::gateway_util::Gateway) -> Vec<u64> {
    let blocked = gw.client(
        "py",
        &[
            "call",
            "drifty__greet",
            r#"{"name":"AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
        ],
    );
    assert_eq!(
        blocked["result"]["structuredContent"]["blocked"], true,
        "{blocked}"
    );
    let reviewer = gw.reviewer_key();
    let size = gw.api_get(&reviewer, "/api/v1/log/checkpoint")["size"]
        .as_u64()
        .unwrap();
    let log = gw.api_get(&reviewer, &format!("/api/v1/log?from=0&limit={size}"));
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let t = e["entry"]["type"].as_str().unwrap_or("");
            t != "tool.call.intent" && !t.starts_with("log.")
        })
        .map(|e| e["index"].as_u64().unwrap())
        .collect()
}
