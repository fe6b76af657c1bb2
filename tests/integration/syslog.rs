//! Issue 21: the syslog sink — RFC 5424 over TLS with RFC 5425 octet
//! counting — received by Debian's real `rsyslog` (imtcp with the GnuTLS
//! network stream driver), configured here in a temp dir with a test CA made
//! by the OpenSSL CLI, writing what it parsed to a file the test reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, free_port, peers_dir, wait_for_port};
use crate::receiver::block_a_call_and_list_what_sinks_deliver;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA named `name` and a server certificate for localhost / 127.0.0.1 it signed.
fn make_ca(dir: &Path, name: &str) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut args = vec!["req", "-x509", "-days", "2", "-subj"];
    let subj = format!("/CN={name} test CA");
    args.push(&subj);
    args.extend(ec);
    args.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(dir, &args);
    let mut args = vec!["req", "-subj", "/CN=localhost"];
    args.extend(ec);
    args.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(dir, &args);
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext",
            "-out",
            "server.pem",
        ],
    );
}

struct Rsyslog {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Rsyslog {
    /// rsyslogd in the foreground, listening with TLS on a loopback port,
    /// writing each message's parsed fields as one line of `out.log`.
    fn start() -> Rsyslog {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        make_ca(d, "collector");
        std::fs::create_dir(d.join("work")).unwrap();
        let port = free_port();
        let conf = format!(
            r#"global(workDirectory="{d}/work"
       DefaultNetstreamDriverCAFile="{d}/ca.pem"
       DefaultNetstreamDriverCertFile="{d}/server.pem"
       DefaultNetstreamDriverKeyFile="{d}/server.key")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")
input(type="imtcp" port="{port}" address="127.0.0.1")
template(name="fields" type="string"
         string="%pri%|%timereported:::date-rfc3339%|%hostname%|%app-name%|%procid%|%msgid%|%structured-data%|%msg%\n")
action(type="omfile" file="{d}/out.log" template="fields")
"#,
            d = d.display()
        );
        std::fs::write(d.join("rsyslog.conf"), conf).unwrap();
        let child = Command::new("rsyslogd")
            .args(["-n", "-f"])
            .arg(d.join("rsyslog.conf"))
            .arg("-i")
            .arg(d.join("rsyslogd.pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("rsyslogd.log")).unwrap(),
            ))
            .spawn()
            .expect(
                "rsyslogd is installed (apt install rsyslog rsyslog-gnutls; scripts/setup.sh does)",
            );
        wait_for_port(port);
        Rsyslog { child, dir, port }
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The records written so far, by leaf index: (the line's fields, the event).
    fn records(&self) -> BTreeMap<u64, (Vec<String>, Value)> {
        let text = std::fs::read_to_string(self.dir.path().join("out.log")).unwrap_or_default();
        text.lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let fields: Vec<String> = l.splitn(8, '|').map(str::to_owned).collect();
                let event: Value = serde_json::from_str(fields[7].trim())
                    .unwrap_or_else(|e| panic!("rsyslog's msg is not the event JSON ({e}): {l}"));
                (event["index"].as_u64().unwrap(), (fields, event))
            })
            .collect()
    }
}

fn gateway(url: &str, ca: &Path) -> Gateway {
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[roles.default]\ntools = [\"*\"]\n[alerts]\npoll_ms = 50\n[[alerts.sinks]]\nname = \"rsyslog\"\n\
         kind = \"syslog\"\nurl = {url:?}\nca_file = {:?}\nhostname = \"gw-test\"\nbackoff_ms = 50\n\
         backoff_max_ms = 200\ntimeout_ms = 2000\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        ca.to_str().unwrap(),
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    gw
}

/// Every entry arrives at rsyslog over TLS, parsed by rsyslog as RFC 5424:
/// the priority from the severity, the leaf's time, our host and app name,
/// the kind as MSGID, the record in structured data and the event as MSG.
#[test]
fn rsyslog_receives_every_entry_as_rfc_5424_over_tls() {
    let rs = Rsyslog::start();
    let gw = gateway(&format!("tls://localhost:{}", rs.port), &rs.ca());
    let r = gw.client(
        "py",
        &["call", "drifty__greet", &json!({"name": "Ada"}).to_string()],
    );
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Ada!", "{r}");
    let expected = block_a_call_and_list_what_sinks_deliver(&gw);
    let reviewer = gw.reviewer_key();
    let deadline = Instant::now() + Duration::from_secs(60);
    let records = loop {
        let got = rs.records();
        if expected.iter().all(|i| got.contains_key(i)) {
            break got;
        }
        assert!(
            Instant::now() < deadline,
            "rsyslog has {:?} of {expected:?}; status {}",
            got.keys().collect::<Vec<_>>(),
            gw.api_get(&reviewer, "/api/v1/alerts")
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    for i in &expected {
        let (f, ev) = &records[i];
        assert_eq!(f[2], "gw-test", "{f:?}");
        assert_eq!(f[3], "interlock", "{f:?}");
        assert_eq!(f[5], ev["kind"].as_str().unwrap(), "{f:?}");
        assert!(f[6].starts_with("[interlock@32473 "), "{f:?}");
        assert!(f[6].contains(&format!("index=\"{i}\"")), "{f:?}");
        let proof = gw.api_get(&reviewer, &format!("/api/v1/log/{i}/proof"));
        assert!(
            f[6].contains(&format!(
                "leafHash=\"{}\"",
                proof["leaf_hash"].as_str().unwrap()
            )),
            "{f:?}"
        );
        assert_eq!(ev["leaf_hash"], proof["leaf_hash"]);
    }
    let blocked = records
        .values()
        .find(|(_, ev)| ev["verdict"] == "blocked")
        .expect("the blocked call");
    // Facility 13 (log audit) × 8 + error (3): rsyslog's %pri%.
    assert_eq!(blocked.0[0], "107", "{:?}", blocked.0);
    let allowed = records
        .values()
        .find(|(_, ev)| ev["verdict"] == "allowed")
        .unwrap();
    assert_eq!(allowed.0[0], "110", "info is 6: {:?}", allowed.0);
    let s = &gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0];
    assert_eq!(s["state"], "ok", "{s}");
}

/// A collector whose certificate another CA signed (someone in the middle)
/// gets nothing: the handshake fails, the sink says so, and nothing is
/// written to it in clear.
#[test]
fn a_collector_with_an_untrusted_certificate_gets_nothing() {
    let rs = Rsyslog::start();
    let other = tempfile::tempdir().unwrap();
    make_ca(other.path(), "someone else");
    let gw = gateway(
        &format!("tls://localhost:{}", rs.port),
        &other.path().join("ca.pem"),
    );
    let reviewer = gw.reviewer_key();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
        if s["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("TLS handshake"))
        {
            assert_eq!(s["delivered"], 0, "{s}");
            break;
        }
        assert!(Instant::now() < deadline, "{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(rs.records().is_empty());
}
