//! Postgres over TLS (issue 39 item 13): a team's gateways on other hosts
//! reach the database across a network, so the store must speak TLS to it
//! and, with `sslmode=verify-full`, refuse a server whose certificate the
//! deployment's CA did not sign for the host it named.
//!
//! The test makes a throwaway CA and a server certificate for
//! `localhost`/`127.0.0.1`, starts a Postgres cluster of its own (Debian's
//! `postgresql` binaries, as `scripts/pg-cluster` does, but on a TCP port of
//! 127.0.0.1 with `ssl = on`) whose `pg_hba.conf` accepts TLS connections
//! only, and opens the store through the same path a gateway takes
//! (`StoreLocation::parse` of the URL, then `Store::connect`). It starts its
//! own server whatever `$INTERLOCK_TEST_POSTGRES` says (that cluster speaks
//! on a Unix socket, where TLS does not apply), and fails, not skips, when
//! Postgres is not installed: `.ci/run` installs it.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use sqlx::Connection as _;

use interlock_store::{NewPlan, Store, StoreError, StoreLocation};

/// A certificate authority made for this test run only: no system trusts it.
struct Ca {
    params: CertificateParams,
    key: KeyPair,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).expect("the CA signs itself").pem();
        Ca { params, key, pem }
    }

    /// A server certificate for `names` (DNS names or IP addresses) and its
    /// key, both PEM.
    fn server(&self, names: &[&str]) -> (String, String) {
        let key = KeyPair::generate().expect("a server key");
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("server parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, "interlock test postgres");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let issuer = Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).expect("the CA signs");
        (cert.pem(), key.serialize_pem())
    }
}

/// A Postgres cluster listening on 127.0.0.1 with TLS on, stopped and
/// deleted on drop.
struct TlsCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

/// Debian's Postgres binaries (the newest installed), as `scripts/pg-cluster`
/// finds them.
fn postgres_bin() -> PathBuf {
    let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    bins.sort_by_key(|b| {
        b.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    bins.pop().unwrap_or_else(|| {
        panic!(
            "Postgres is not installed (no /usr/lib/postgresql/*/bin/initdb): \
             apt-get install postgresql; this test needs a real server with TLS"
        )
    })
}

fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// Runs `program` as the cluster's owner: initdb and the server refuse to
/// run as root, so as root they run as `postgres` (the Debian package's
/// user), as `scripts/pg-cluster` does.
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut c: Command, what: &str, log: Option<&Path>) {
    let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    if !out.status.success() {
        let server_log = log
            .and_then(|l| std::fs::read_to_string(l).ok())
            .unwrap_or_default();
        panic!(
            "{what} failed: {}\n{}\n{server_log}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

impl TlsCluster {
    /// initdb, the server's certificate and key (0600, owned by the server's
    /// user: Postgres refuses a key others can read), `ssl = on`, and a
    /// `pg_hba.conf` that trusts TLS connections from 127.0.0.1 and rejects
    /// the same connection without TLS.
    fn start(server_cert: &str, server_key: &str) -> TlsCluster {
        let bin = postgres_bin();
        let dir = tempfile::Builder::new()
            .prefix("interlock-pg-tls-")
            .tempdir()
            .expect("a temporary directory");
        let root = dir.path();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700)).unwrap();
        let cert = root.join("server.crt");
        let key = root.join("server.key");
        std::fs::write(&cert, server_cert).unwrap();
        std::fs::write(&key, server_key).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        if is_root() {
            // The directory, the certificate and the key become the
            // server's user's (its key must be 0600 and its own).
            let mut chown = Command::new("chown");
            chown.args(["-R", "postgres:"]).arg(root);
            run(chown, "chown -R postgres: the cluster's directory", None);
        }
        let data = root.join("data");
        let mut initdb = as_owner(&bin.join("initdb"));
        initdb.arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
        ]);
        run(initdb, "initdb", None);

        let port = free_port();
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap();
        use std::io::Write as _;
        writeln!(
            conf,
            "\n# interlock postgres_tls test\nlisten_addresses = '127.0.0.1,127.0.0.2'\nport = {port}\n\
             unix_socket_directories = '{root}'\nssl = on\nssl_cert_file = '{cert}'\n\
             ssl_key_file = '{key}'\nfsync = off\n",
            root = root.display(),
            cert = cert.display(),
            key = key.display(),
        )
        .unwrap();
        // The Unix socket (pg_ctl's readiness check) is trusted; over TCP,
        // TLS or nothing. 127.0.0.2 is the same machine under an address
        // the server's certificate does not name.
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\n\
             hostssl all all 127.0.0.1/32 trust\n\
             hostnossl all all 127.0.0.1/32 reject\n\
             hostssl all all 127.0.0.2/32 trust\n\
             hostnossl all all 127.0.0.2/32 reject\n",
        )
        .unwrap();
        // Written in place, the two files keep initdb's owner; the server
        // writes its log into the directory chowned above.
        let log = root.join("server.log");
        let mut pg_ctl = as_owner(&bin.join("pg_ctl"));
        pg_ctl
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "start"]);
        run(pg_ctl, "pg_ctl start (ssl = on)", Some(&log));
        TlsCluster { dir, bin, port }
    }

    /// The store URL for `host` with the query `query` (the TLS parameters).
    fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres?{query}", self.port)
    }

    /// A file in the cluster's directory, written for the client.
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let mut pg_ctl = as_owner(&self.bin.join("pg_ctl"));
        pg_ctl
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"]);
        let _ = pg_ctl.output();
    }
}

/// Every message in an error's source chain, for assertions on what a
/// deployment would read.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(" / ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_39_postgres_speaks_tls_and_verifies_the_server() {
    let started = Instant::now();
    let ca = Ca::new("interlock test CA");
    let (server_cert, server_key) = ca.server(&["localhost", "127.0.0.1"]);
    let cluster = TlsCluster::start(&server_cert, &server_key);
    let ca_pem = cluster.file("ca.pem", &ca.pem);
    let other_ca_pem = cluster.file("other-ca.pem", &Ca::new("someone else's CA").pem);

    // 1. verify-full against the CA that signed the server's certificate:
    //    the store opens (migrations run over TLS) and keeps a write.
    let url = cluster.url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", ca_pem.display()),
    );
    let location = StoreLocation::parse(&url).expect("a verify-full URL parses");
    let store = Store::connect(&location)
        .await
        .unwrap_or_else(|e| panic!("the store opens over verified TLS: {}", chain(&e)));
    let written = store
        .insert_plan_revision(&NewPlan {
            plan_id: "tls-1".into(),
            plan_hash: "sha256:01".into(),
            document: br#"{"body":{}}"#.to_vec(),
            title: "Over TLS".into(),
            proposer: "agent:builder".into(),
            risk: "low".into(),
        })
        .await
        .expect("a write over TLS");
    let read = store
        .current_plan("tls-1")
        .await
        .expect("a read over TLS")
        .expect("the plan written");
    assert_eq!(read.plan_hash, written.plan_hash);
    assert_eq!(read.title, "Over TLS");
    // The server's own view of the connection: encrypted.
    let mut conn = interlock_store::testing::raw_connection(&location).await;
    let (ssl, version): (bool, String) = sqlx::query_as(
        "SELECT ssl, COALESCE(version, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    )
    .fetch_one(&mut conn)
    .await
    .expect("pg_stat_ssl");
    assert!(ssl, "the server sees the connection without TLS");
    assert!(version.starts_with("TLSv1."), "{version}");
    let _ = conn.close().await;
    store.close().await;

    // The server's certificate also names 127.0.0.1, and verify-ca checks
    // the signature alone.
    for url in [
        cluster.url(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={}", ca_pem.display()),
        ),
        cluster.url(
            "localhost",
            &format!("sslmode=verify-ca&sslrootcert={}", ca_pem.display()),
        ),
        // `require`: encrypted, the server not verified (libpq's meaning).
        cluster.url("localhost", "sslmode=require"),
    ] {
        let s = Store::connect(&StoreLocation::parse(&url).unwrap())
            .await
            .unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
        assert!(s.current_plan("tls-1").await.unwrap().is_some(), "{url}");
        s.close().await;
    }

    // 2. verify-full against a CA that did not sign the server's
    //    certificate: refused during the handshake, as a TLS error that
    //    names the reason, before any query.
    for mode in ["verify-full", "verify-ca"] {
        let url = cluster.url(
            "localhost",
            &format!("sslmode={mode}&sslrootcert={}", other_ca_pem.display()),
        );
        let err = Store::connect(&StoreLocation::parse(&url).unwrap())
            .await
            .expect_err("a server the CA did not sign is refused");
        let text = chain(&err);
        eprintln!("{mode} against another CA: {text}");
        assert!(matches!(err, StoreError::Tls { .. }), "{mode}: {err:?}");
        assert!(text.contains("over TLS"), "{text}");
        assert!(
            text.to_ascii_lowercase().contains("certificate"),
            "{mode}: the reason is the certificate: {text}"
        );
    }

    // 2b. verify-full also checks the name: the same server reached as
    //     127.0.0.2, which its certificate does not name, is refused, while
    //     verify-ca (the signature alone) accepts it.
    let other_name = |mode: &str| {
        cluster.url(
            "127.0.0.2",
            &format!("sslmode={mode}&sslrootcert={}", ca_pem.display()),
        )
    };
    let err = Store::connect(&StoreLocation::parse(&other_name("verify-full")).unwrap())
        .await
        .expect_err("a certificate for another name is refused");
    let text = chain(&err);
    eprintln!("verify-full to a name the certificate lacks: {text}");
    assert!(matches!(err, StoreError::Tls { .. }), "{err:?}");
    assert!(text.contains("not valid for name"), "{text}");
    let s = Store::connect(&StoreLocation::parse(&other_name("verify-ca")).unwrap())
        .await
        .unwrap_or_else(|e| panic!("verify-ca ignores the name: {}", chain(&e)));
    s.close().await;

    // 3. Without TLS the server refuses the connection (`hostnossl …
    //    reject`): what succeeded above went over TLS, not around it.
    let err = Store::connect(
        &StoreLocation::parse(&cluster.url("localhost", "sslmode=disable")).unwrap(),
    )
    .await
    .expect_err("a connection without TLS is refused");
    let text = chain(&err);
    eprintln!("sslmode=disable: {text}");
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(text.contains("no encryption"), "{text}");

    // 4. A sslrootcert the server is not verified against, and a mistyped
    //    sslmode, are refused before connecting.
    for query in [
        format!("sslmode=require&sslrootcert={}", ca_pem.display()),
        "sslmode=verify_full".to_owned(),
    ] {
        let err = StoreLocation::parse(&cluster.url("localhost", &query))
            .expect_err("refused before connecting");
        assert!(
            matches!(err, StoreError::InvalidInput(_)),
            "{query}: {err:?}"
        );
    }

    eprintln!(
        "postgres over TLS: cluster started and checked in {:.1?}",
        started.elapsed()
    );
}
