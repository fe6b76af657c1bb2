//! The syslog sink's transport: one long-lived TCP connection, TLS (rustls,
//! the stack reqwest already uses) for `tls://`, plain for `tcp://` to
//! loopback. A batch's frames are one write; a connection that fails or that
//! the collector closed is dropped and made again on the next try.
//!
//! RFC 5425 has no acknowledgement: a batch counts as delivered once it is
//! written and flushed to the connection. A collector that dies right after
//! may lose what was in its buffers; a reconnect resends only what failed.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

use super::config::SinkConfig;

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

pub struct SyslogConn {
    host: String,
    port: u16,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    timeout: Duration,
    stream: Mutex<Option<Box<dyn Stream>>>,
}

impl SyslogConn {
    /// The connection settings of `sink` (nothing is connected yet).
    pub fn new(sink: &SinkConfig) -> Result<SyslogConn, String> {
        let url = reqwest::Url::parse(&sink.url).map_err(|e| e.to_string())?;
        let host = url
            .host_str()
            .ok_or("no host")?
            .trim_matches(['[', ']'])
            .to_owned();
        let port = url.port().ok_or("no port")?;
        let tls = if url.scheme() == "tls" {
            let mut roots = RootCertStore::empty();
            match &sink.ca_file {
                Some(path) => {
                    for cert in CertificateDer::pem_file_iter(path)
                        .map_err(|e| format!("ca_file {}: {e}", path.display()))?
                    {
                        let cert = cert.map_err(|e| format!("ca_file {}: {e}", path.display()))?;
                        roots
                            .add(cert)
                            .map_err(|e| format!("ca_file {}: {e}", path.display()))?;
                    }
                }
                None => {
                    for cert in rustls_native_certs::load_native_certs().certs {
                        let _ = roots.add(cert);
                    }
                }
            }
            if roots.is_empty() {
                return Err("no CA certificate to check the collector against".into());
            }
            let config = ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
            let name = ServerName::try_from(host.clone()).map_err(|e| e.to_string())?;
            Some((TlsConnector::from(Arc::new(config)), name))
        } else {
            None
        };
        Ok(SyslogConn {
            host,
            port,
            tls,
            timeout: Duration::from_millis(sink.timeout_ms),
            stream: Mutex::new(None),
        })
    }

    async fn connect(&self) -> Result<Box<dyn Stream>, String> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("could not connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => Ok(Box::new(tcp)),
            Some((connector, name)) => Ok(Box::new(
                connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| format!("TLS handshake: {e}"))?,
            )),
        }
    }

    /// Writes `bytes` (whole frames) and flushes, within the sink's timeout.
    pub async fn send(&self, bytes: &[u8]) -> Result<(), String> {
        let mut slot = self.stream.lock().await;
        // A collector never writes to us: a readable connection is one it closed.
        if let Some(s) = slot.as_mut() {
            let mut probe = [0u8; 1];
            if let Some(r) = s.read(&mut probe).now_or_never()
                && matches!(r, Ok(0) | Err(_))
            {
                *slot = None;
            }
        }
        let attempt = async {
            if slot.is_none() {
                *slot = Some(self.connect().await?);
            }
            let s = slot.as_mut().expect("connected");
            s.write_all(bytes)
                .await
                .map_err(|e| format!("write: {e}"))?;
            s.flush().await.map_err(|e| format!("flush: {e}"))
        };
        let result = match tokio::time::timeout(self.timeout, attempt).await {
            Ok(r) => r,
            Err(_) => Err("timed out".to_owned()),
        };
        if result.is_err() {
            *slot = None;
        }
        result
    }
}
