//! Issue 21: alerts delivered from the log to a sink, through a real
//! `interlock serve`, real MCP upstream and SDK clients, and a real local HTTP
//! receiver (`receiver.rs`) standing in for the team's SIEM webhook endpoint.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir};
use crate::receiver::{Captured, Mode, Receiver};

const SECRET: &str = "the-siem-shared-secret";

/// A webhook sink at `url`, with quick retries; `extra` lines override the
/// defaults of the same key.
fn sink(url: &str, extra: &str) -> String {
    let mut lines: Vec<String> = [
        "backoff_ms = 50",
        "backoff_max_ms = 200",
        "timeout_ms = 1000",
    ]
    .iter()
    .filter(|d| {
        let key = d.split(' ').next().unwrap();
        !extra.lines().any(|l| l.starts_with(key))
    })
    .map(|d| (*d).to_owned())
    .collect();
    lines.extend(extra.lines().map(str::to_owned));
    format!(
        "[alerts]\npoll_ms = 50\n[[alerts.sinks]]\nname = \"siem\"\nkind = \"webhook\"\n\
         url = \"{url}/hook\"\nsecret_env = \"SIEM_HOOK_SECRET\"\n{}\n",
        lines.join("\n")
    )
}

fn drifting(dir: &std::path::Path, alerts: &str) -> (Gateway, std::path::PathBuf) {
    let drift_file = dir.join("greet-description.txt");
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start_with_env(
        &format!(
            "[calls]\nhold_secs = 1\n[roles.default]\ntools = [\"*\"]\n{alerts}\n\
             [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
            script.to_str().unwrap(),
            drift_file.to_str().unwrap()
        ),
        &[("SIEM_HOOK_SECRET", SECRET)],
    );
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    (gw, drift_file)
}

fn greet(gw: &Gateway, name: &str) -> Value {
    gw.client(
        "py",
        &[
            "call",
            "drifty__greet",
            &json!({ "name": name }).to_string(),
        ],
    )
}

/// The signature checked independently of the gateway's code: OpenSSL's HMAC.
fn openssl_hmac(body: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("body");
    std::fs::write(&f, body).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", SECRET, "-r"])
        .arg(&f)
        .output()
        .expect("openssl runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    format!("sha256={}", text.split_whitespace().next().unwrap())
}

/// Every log entry up to the signed size that a default sink sends (all but
/// the internal ones: intents and the log's own bookkeeping).
fn expected_indices(gw: &Gateway, reviewer: &str) -> (u64, BTreeMap<u64, Value>) {
    let cp = gw.api_get(reviewer, "/api/v1/log/checkpoint");
    let size = cp["size"].as_u64().unwrap();
    let log = gw.api_get(reviewer, &format!("/api/v1/log?from=0&limit={size}"));
    let entries = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let t = e["entry"]["type"].as_str().unwrap_or("");
            t != "tool.call.intent" && !t.starts_with("log.")
        })
        .map(|e| (e["index"].as_u64().unwrap(), e["entry"].clone()))
        .collect();
    (size, entries)
}

fn by_index(got: &[Captured]) -> BTreeMap<u64, Value> {
    got.iter()
        .map(|r| {
            let v = r.json();
            (v["index"].as_u64().unwrap(), v)
        })
        .collect()
}

/// Every decision, drift, hold and block reaches the receiver — signed, keyed
/// by its leaf index, with a leaf hash and checkpoint size that match the log —
/// and nothing the log holds is missing.
#[test]
fn every_decision_drift_hold_and_block_reaches_a_signed_webhook() {
    let rx = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let (gw, drift_file) = drifting(dir.path(), &sink(&rx.base, ""));
    assert_eq!(
        greet(&gw, "Ada")["result"]["content"][0]["text"],
        "Hello, Ada!"
    );
    let held = greet(&gw, "x'; DROP TABLE users; --");
    assert_eq!(held["result"]["structuredContent"]["held"], true, "{held}");
    let blocked = greet(
        &gw,
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    );
    assert_eq!(
        blocked["result"]["structuredContent"]["blocked"], true,
        "{blocked}"
    );
    std::fs::write(
        &drift_file,
        "Greets a person by name. Always greet everyone the user mentions.",
    )
    .unwrap();
    gw.wait_for_tool("drifty__greet", false);

    rx.wait_until("a call, a hold, a block, a drift and a decision", |got| {
        let cats: BTreeSet<String> = got
            .iter()
            .map(|r| r.json()["category"].as_str().unwrap_or("").to_owned())
            .collect();
        ["call", "hold", "block", "drift", "decision"]
            .iter()
            .all(|c| cats.contains(*c))
    });
    let reviewer = gw.reviewer_key();
    // Then everything signed so far, and nothing else.
    let (size, expected) = expected_indices(&gw, &reviewer);
    let got = rx.wait_until("every signed entry", |got| {
        let have = by_index(got);
        expected.keys().all(|i| have.contains_key(i))
    });
    let have = by_index(&got);
    for (i, entry) in &expected {
        let ev = &have[i];
        assert_eq!(ev["kind"], entry["type"], "entry {i}: {ev}");
    }
    assert!(
        have.keys().all(|i| expected.contains_key(i) || *i >= size),
        "an internal entry was sent: {:?}",
        have.keys()
            .filter(|i| !expected.contains_key(i))
            .collect::<Vec<_>>()
    );
    let verdicts: BTreeSet<&str> = have
        .values()
        .filter_map(|e| e["verdict"].as_str())
        .collect();
    for v in ["allowed", "held", "blocked"] {
        assert!(verdicts.contains(v), "no {v} call: {verdicts:?}");
    }
    let blocked = have.values().find(|e| e["verdict"] == "blocked").unwrap();
    assert_eq!(blocked["severity"], "high", "{blocked}");
    assert!(
        blocked["arguments_hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{blocked}"
    );
    // The arguments themselves never leave: only their hash and the findings.
    for r in &got {
        let body = String::from_utf8_lossy(&r.body);
        assert!(
            !body.contains("AKIAIOSFODNN7EXAMPLE"),
            "a raw argument was sent: {body}"
        );
        assert!(
            !body.contains("DROP TABLE"),
            "a raw argument was sent: {body}"
        );
    }
    for r in &got {
        let ev = r.json();
        let index = ev["index"].as_u64().unwrap();
        // Signed over the exact body, checked with OpenSSL.
        assert_eq!(
            r.header("x-interlock-signature"),
            Some(openssl_hmac(&r.body).as_str())
        );
        assert_eq!(
            r.header("idempotency-key"),
            Some(index.to_string().as_str())
        );
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/hook");
        // Verifiable: the leaf at that index has that hash, and it was signed.
        let proof = gw.api_get(&reviewer, &format!("/api/v1/log/{index}/proof"));
        assert_eq!(ev["leaf_hash"], proof["leaf_hash"], "entry {index}");
        assert!(ev["checkpoint_size"].as_u64().unwrap() > index, "{ev}");
        assert!(!ev["origin"].as_str().unwrap().is_empty());
    }
    let status = gw.api_get(&reviewer, "/api/v1/alerts");
    let s = &status["sinks"][0];
    assert_eq!(s["name"], "siem");
    assert_eq!(s["state"], "ok", "{status}");
    assert!(
        s["delivered"].as_u64().unwrap() >= expected.len() as u64,
        "{status}"
    );
}

/// A receiver that answers 500, then hangs past the timeout, then closes the
/// connection mid-request: every event still arrives once it recovers, the
/// sink's last error says what went wrong, and nothing is dead-lettered.
#[test]
fn a_failing_receiver_gets_everything_once_it_recovers() {
    let rx = Receiver::start(Mode::Fail(500));
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = drifting(
        dir.path(),
        &sink(&rx.base, "max_attempts = 1000\ntimeout_ms = 300"),
    );
    let reviewer = gw.reviewer_key();
    for n in 0..3 {
        greet(&gw, &format!("caller {n}"));
    }
    let status_until = |what: &str, done: &dyn Fn(&Value) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "{what}: {s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let s = status_until("a 500 recorded", &|s| {
        s["state"] == "retrying"
            && s["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("HTTP 500"))
    });
    assert_eq!(s["delivered"], 0, "{s}");
    rx.set_mode(Mode::Hang);
    status_until("a timeout recorded", &|s| {
        s["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out"))
    });
    rx.set_mode(Mode::Close);
    let before = rx.refused();
    status_until("a closed connection recorded", &|_| {
        rx.refused() > before + 1
    });
    let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
    assert_eq!(s["state"], "retrying", "{s}");
    rx.set_mode(Mode::Accept);
    let (_, expected) = expected_indices(&gw, &reviewer);
    let got = rx.wait_until("every signed entry after recovery", |got| {
        let have = by_index(got);
        expected.keys().all(|i| have.contains_key(i))
    });
    let calls = by_index(&got)
        .values()
        .filter(|e| e["kind"] == "tool.call")
        .count();
    assert_eq!(calls, 3, "the three calls arrive");
    let s = status_until("healthy again", &|s| s["state"] == "ok");
    assert_eq!(s["dead_letters"], 0, "{s}");
    assert!(
        s["last_error"].as_str().is_some(),
        "the last error is kept: {s}"
    );
}

/// A sink that keeps failing past `max_attempts` dead-letters the request
/// (its leaf range and last error kept) and moves on to the next one.
#[test]
fn a_request_that_keeps_failing_is_dead_lettered_with_its_error() {
    let rx = Receiver::start(Mode::Fail(503));
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = drifting(dir.path(), &sink(&rx.base, "max_attempts = 2"));
    let reviewer = gw.reviewer_key();
    let deadline = Instant::now() + Duration::from_secs(60);
    let s = loop {
        let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
        if s["dead_letters"].as_u64().unwrap_or(0) >= 2 {
            break s;
        }
        assert!(Instant::now() < deadline, "nothing dead-lettered: {s}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let d = &s["recent_dead_letters"][0];
    assert_eq!(d["attempts"], 2, "{s}");
    assert!(d["error"].as_str().unwrap().contains("HTTP 503"), "{s}");
    // Each dead-lettered request was tried exactly max_attempts times.
    let tries: BTreeMap<String, usize> = rx.requests().iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.header("idempotency-key").unwrap().to_owned())
            .or_default() += 1;
        m
    });
    assert!(tries.values().all(|n| *n <= 2), "{tries:?}");
    // Recovery: later entries are delivered.
    rx.set_mode(Mode::Accept);
    greet(&gw, "after");
    rx.wait_until("a call after recovery", |got| {
        got.iter().any(|r| r.json()["kind"] == "tool.call")
    });
}

/// `interlock serve` SIGKILLed while requests are in flight: after a restart
/// every entry arrives, and at most the batch in flight at the kill (its
/// requests go out together; the cursor moves past the whole batch) arrives
/// twice (same idempotency key).
#[test]
fn a_gateway_killed_mid_delivery_loses_nothing_and_resends_at_most_the_batch_in_flight() {
    const BATCH: usize = 4;
    let rx = Receiver::start(Mode::Late(Duration::from_millis(150)));
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, _) = drifting(
        dir.path(),
        &sink(&rx.base, &format!("batch_size = {BATCH}")),
    );
    for n in 0..8 {
        greet(&gw, &format!("caller {n}"));
    }
    // Some delivered, not all: kill it mid-delivery.
    rx.wait_until("a few deliveries", |got| got.len() >= 3);
    gw.kill();
    let at_kill = rx.requests().len();
    rx.set_mode(Mode::Accept);
    gw.restart();
    let reviewer = gw.reviewer_key();
    let (_, expected) = expected_indices(&gw, &reviewer);
    let got = rx.wait_until("every entry after the restart", |got| {
        let have = by_index(got);
        expected.keys().all(|i| have.contains_key(i))
    });
    assert!(got.len() > at_kill, "delivery resumed");
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for r in rx.requests() {
        *seen.entry(r.json()["index"].as_u64().unwrap()).or_default() += 1;
    }
    let repeated: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        repeated.len() <= BATCH,
        "more than the batch in flight was resent: {repeated:?}"
    );
    assert!(repeated.iter().all(|(_, n)| **n == 2), "{repeated:?}");
}

/// A dead sink (it never answers) does not slow calls: every call of a burst
/// is answered and logged while the sink has delivered nothing and holds at
/// most one batch's requests open (`IN_FLIGHT`, 8).
#[test]
fn a_dead_sink_does_not_slow_calls() {
    let rx = Receiver::start(Mode::Hang);
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = drifting(dir.path(), &sink(&rx.base, "timeout_ms = 600000"));
    let reviewer = gw.reviewer_key();
    for n in 0..12 {
        let r = greet(&gw, &format!("caller {n}"));
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("Hello, caller {n}!"),
            "{r}"
        );
    }
    let log = gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000");
    let calls = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["type"] == "tool.call")
        .count();
    assert_eq!(calls, 12, "every call is logged");
    let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
    assert_eq!(s["delivered"], 0, "{s}");
    assert!(rx.accepted().is_empty());
    let open = rx.requests().len();
    assert!(
        (1..=8).contains(&open),
        "{open} requests held open: at most one batch's in flight, no more sent"
    );
    assert!(s["lag"].as_u64().unwrap() >= 12, "{s}");
}

/// A record the SIEM kept verifies with `interlock receipts verify-event`
/// against the live log and against an exported bundle; a record whose leaf
/// hash, index or origin was edited does not.
#[test]
fn an_event_a_siem_kept_verifies_against_the_log_and_a_bundle_but_a_forged_one_does_not() {
    use crate::util::{stderr, stdout};
    let rx = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = drifting(dir.path(), &sink(&rx.base, ""));
    greet(&gw, "Ada");
    let got = rx.wait_until("the call", |got| {
        got.iter().any(|r| r.json()["kind"] == "tool.call")
    });
    let call = got
        .iter()
        .find(|r| r.json()["kind"] == "tool.call")
        .unwrap();
    let kept = dir.path().join("kept.json");
    std::fs::write(&kept, &call.body).unwrap();
    let file = kept.to_str().unwrap();

    let out = gw.cli(&["receipts", "verify-event", file]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("1 of 1 events verified"),
        "{}",
        stdout(&out)
    );
    // Every event the receiver got, as one NDJSON file (as a SIEM exports them),
    // with Splunk's wrapping on one of them.
    let all = dir.path().join("all.ndjson");
    let mut lines: Vec<String> = got
        .iter()
        .map(|r| String::from_utf8(r.body.clone()).unwrap())
        .collect();
    lines[0] = format!("{{\"time\":1,\"event\":{}}}", lines[0]);
    std::fs::write(&all, lines.join("\n")).unwrap();
    let out = gw.cli(&["receipts", "verify-event", all.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["events"].as_array().unwrap().len(), got.len());

    let bundle = dir.path().join("bundle");
    let out = gw.cli(&["receipts", "export", bundle.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = gw.cli(&[
        "receipts",
        "verify-event",
        file,
        "--bundle",
        bundle.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let ev = call.json();
    let forge = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut v = ev.clone();
        edit(&mut v);
        let p = dir.path().join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let flipped = {
        let h = ev["leaf_hash"].as_str().unwrap();
        let first = if h.starts_with('0') { "1" } else { "0" };
        format!("{first}{}", &h[1..])
    };
    let cases = [
        (
            forge("hash.json", &|v| v["leaf_hash"] = flipped.clone().into()),
            "hashes to",
        ),
        (
            forge("index.json", &|v| {
                v["index"] = (v["index"].as_u64().unwrap() - 1).into()
            }),
            "hashes to",
        ),
        (
            forge("origin.json", &|v| v["origin"] = "someone.else/log".into()),
            "someone.else/log",
        ),
    ];
    for (forged, why) in &cases {
        for extra in [&[][..], &["--bundle", bundle.to_str().unwrap()][..]] {
            let mut args = vec!["receipts", "verify-event", forged.to_str().unwrap()];
            args.extend_from_slice(extra);
            let out = gw.cli(&args);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{forged:?} {extra:?}: {}",
                stdout(&out)
            );
            assert!(
                stdout(&out).contains(why),
                "{forged:?} {extra:?}: {}",
                stdout(&out)
            );
        }
    }
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, br#"{"index": 1}"#).unwrap();
    let out = gw.cli(&["receipts", "verify-event", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not an alert event"),
        "{}",
        stderr(&out)
    );
}

/// *Send test* through the reviewer API and `interlock alerts test`: the
/// receiver gets an `alert.test` event marked as a test, under an idempotency
/// key no real delivery uses; `interlock alerts status` shows each sink; an
/// unknown sink is a 404.
#[test]
fn a_test_event_reaches_the_receiver_and_status_lists_the_sinks() {
    use crate::gateway_util::http;
    use crate::util::{stderr, stdout};
    let rx = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = drifting(dir.path(), &sink(&rx.base, ""));
    let reviewer = gw.reviewer_key();
    let auth = format!("Bearer {reviewer}");
    let (status, _, body) = http(
        &gw.addr,
        "POST",
        "/api/v1/alerts/siem/test",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let outcome: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(outcome["ok"], true, "{outcome}");
    let got = rx.wait_until("the test event", |got| {
        got.iter().any(|r| r.json()["kind"] == "alert.test")
    });
    let t = got
        .iter()
        .find(|r| r.json()["kind"] == "alert.test")
        .unwrap();
    assert_eq!(t.json()["test"], true);
    assert!(
        t.header("idempotency-key").unwrap().starts_with("test-"),
        "{:?}",
        t.headers
    );
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/alerts/nope/test",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 404);
    let (status, _, _) = http(
        &gw.addr,
        "POST",
        "/api/v1/alerts/siem/test",
        &[("Authorization", &format!("Bearer {}", gw.agent_key))],
        b"",
    );
    assert_eq!(status, 401, "an agent key cannot send tests");

    let config = gw.dir.path().join("gateway.toml");
    let out = gw.cli(&[
        "alerts",
        "test",
        "siem",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    rx.wait_until("two test events", |got| {
        got.iter()
            .filter(|r| r.json()["kind"] == "alert.test")
            .count()
            == 2
    });
    let out = gw.cli(&["alerts", "status", "--config", config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("siem "), "{}", stdout(&out));
    rx.set_mode(Mode::Fail(500));
    let out = gw.cli(&[
        "alerts",
        "test",
        "siem",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("HTTP 500"), "{}", stdout(&out));
}

/// A sink that fails until its requests are dead-lettered, then comes back:
/// a redelivery while it still fails settles nothing (`interlock alerts
/// redeliver` exits 1 and says why); once it is back, the reviewer API's
/// redelivery sends exactly the dead-lettered events, each once, and a second
/// one sends nothing. Each redelivery is an `admin.action` leaf.
#[test]
fn redelivery_sends_exactly_the_dead_lettered_events_once() {
    let rx = Receiver::start(Mode::Fail(503));
    let dir = tempfile::tempdir().unwrap();
    // Admin actions (`other`) are not sent: the redeliveries' own leaves do
    // not join the dead letters while the receiver still fails.
    let (gw, _) = drifting(
        dir.path(),
        &sink(
            &rx.base,
            "max_attempts = 2\nevents = [\"block\", \"hold\", \"drift\", \"quarantine\", \"decision\", \"call\", \"plan\"]",
        ),
    );
    let reviewer = gw.reviewer_key();
    for n in 0..3 {
        greet(&gw, &format!("caller {n}"));
    }
    // Everything signed so far given up on: the cursor past it, no retry on.
    let (size, expected) = expected_indices(&gw, &reviewer);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
        if s["next_index"].as_u64().unwrap() >= size && s["attempts"] == 0 {
            break s;
        }
        assert!(Instant::now() < deadline, "not dead-lettered: {s}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status["delivered"], 0, "{status}");
    let dead_letters = status["dead_letters"].as_u64().unwrap();
    assert!(dead_letters > 0, "{status}");
    // What was dead-lettered: every event the receiver refused (each tried
    // `max_attempts` times), all of them under `size`.
    let dead: BTreeSet<u64> = rx
        .requests()
        .iter()
        .map(|r| r.json()["index"].as_u64().unwrap())
        .collect();
    assert!(dead.iter().all(|i| *i < size), "{dead:?}");
    assert!(
        dead.iter().any(|i| expected[i]["type"] == "tool.call"),
        "the calls are among the dead letters"
    );

    // Still failing: nothing settled, exit 1 with the receiver's answer.
    let config = gw.dir.path().join("gateway.toml");
    let out = gw.cli(&[
        "alerts",
        "redeliver",
        "siem",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("refused") && text.contains("HTTP 503"),
        "{text}"
    );
    let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
    assert_eq!(s["dead_letters"].as_u64().unwrap(), dead_letters, "{s}");

    // Back: the API's redelivery sends each dead-lettered event once.
    rx.set_mode(Mode::Accept);
    let post = |path: &str| {
        let (code, _, body) = crate::gateway_util::http(
            &gw.addr,
            "POST",
            path,
            &[("Authorization", &format!("Bearer {reviewer}"))],
            b"",
        );
        assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
        serde_json::from_slice::<Value>(&body).unwrap()
    };
    let first = post("/api/v1/alerts/siem/redeliver");
    assert!(first["refused"].is_null(), "{first}");
    assert_eq!(
        first["events"].as_u64().unwrap(),
        dead.len() as u64,
        "{first}"
    );
    assert_eq!(first["remaining"], 0, "{first}");
    let again = post("/api/v1/alerts/siem/redeliver");
    assert_eq!(again["events"], 0, "{again}");
    assert_eq!(again["redelivered"], json!([]), "{again}");
    assert!(
        again["leaf_index"].is_null(),
        "nothing to do is not recorded: {again}"
    );
    // Unknown sinks are named as such.
    let (code, _, _) = crate::gateway_util::http(
        &gw.addr,
        "POST",
        "/api/v1/alerts/nope/redeliver",
        &[("Authorization", &format!("Bearer {reviewer}"))],
        b"",
    );
    assert_eq!(code, 404);
    // Normal delivery of later leaves (the admin actions) goes on beside it:
    // count only the leaves that were dead-lettered.
    let mut sent: BTreeMap<u64, usize> = BTreeMap::new();
    for r in rx.accepted() {
        let i = r.json()["index"].as_u64().unwrap();
        if i < size {
            *sent.entry(i).or_default() += 1;
        }
    }
    assert_eq!(sent.keys().copied().collect::<BTreeSet<_>>(), dead);
    assert!(
        sent.values().all(|n| *n == 1),
        "sent more than once: {sent:?}"
    );
    let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
    assert_eq!(s["dead_letters"], 0, "{s}");
    assert_eq!(s["state"], "ok", "{s}");

    // Both attempts are on the log, naming who asked and what was sent.
    let at = first["leaf_index"].as_u64().unwrap();
    let log = gw.api_get(&reviewer, &format!("/api/v1/log?from=0&limit={}", at + 1));
    let actions: Vec<&Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry"])
        .filter(|e| e["type"] == "admin.action" && e["action"] == "alerts.redeliver")
        .collect();
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert!(actions[0]["by"]["cli"].is_string(), "{}", actions[0]);
    assert!(actions[0]["error"].as_str().unwrap().contains("HTTP 503"));
    assert_eq!(actions[1]["by"]["reviewer"], "ui", "{}", actions[1]);
    assert_eq!(actions[1]["events"].as_u64().unwrap(), dead.len() as u64);
    assert_eq!(actions[1]["sink"], "siem");
}

/// Per-key sinks, end to end through the admin API and CLI: an agent key's
/// settings name the sinks that receive its events, with its minimum
/// severity. `pager` is `keys_only`: it gets the events of the key that names
/// it and nobody else's; `siem` is global with `min_severity = "high"`: it
/// keeps sending everyone's blocks, and the naming key's allowed calls too
/// (its minimum `info`). A sink gateway.toml does not configure, or a
/// severity that is none, is refused. Raising the key's minimum with
/// `interlock admin keys update` stops its allowed calls reaching `pager`.
#[test]
fn a_keys_sinks_receive_its_events_at_its_minimum_severity() {
    let siem = Receiver::start(Mode::Accept);
    let pager = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let alerts = format!(
        "[alerts]\npoll_ms = 50\n\
         [[alerts.sinks]]\nname = \"siem\"\nkind = \"webhook\"\nurl = \"{}/hook\"\n\
         secret_env = \"SIEM_HOOK_SECRET\"\nmin_severity = \"high\"\n\
         [[alerts.sinks]]\nname = \"pager\"\nkind = \"webhook\"\nurl = \"{}/hook\"\n\
         secret_env = \"SIEM_HOOK_SECRET\"\nkeys_only = true\n",
        siem.base, pager.base
    );
    let (gw, _) = drifting(dir.path(), &alerts);
    let out = gw.cli(&["admin", "token", "create", "ops", "--scope", "owner"]);
    assert!(out.status.success(), "{out:?}");
    let owner = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let admin = |method: &str, path: &str, body: Value| {
        let bytes = serde_json::to_vec(&body).unwrap();
        let auth = format!("Bearer {owner}");
        let (s, _, b) = crate::gateway_util::http(
            &gw.addr,
            method,
            path,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            if method == "GET" { b"" } else { &bytes },
        );
        (
            s,
            serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null),
        )
    };
    let keys = admin("GET", "/api/v1/admin/keys", Value::Null).1;
    let builder = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "builder")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Bad input is refused with a clear error, nothing changed.
    let (s, b) = admin(
        "PATCH",
        &format!("/api/v1/admin/keys/{builder}"),
        json!({"alert_sinks": ["pager", "nope"]}),
    );
    assert_eq!(s, 400, "{b}");
    assert!(
        b.to_string().contains("no sink is named \\\"nope\\\""),
        "{b}"
    );
    let (s, b) = admin(
        "PATCH",
        &format!("/api/v1/admin/keys/{builder}"),
        json!({"alert_min_severity": "loud"}),
    );
    assert_eq!(s, 400, "{b}");
    let (s, b) = admin(
        "PATCH",
        &format!("/api/v1/admin/keys/{builder}"),
        json!({"alert_sinks": ["pager", "siem", "pager"], "alert_min_severity": "info"}),
    );
    assert_eq!(s, 200, "{b}");
    let keys = admin("GET", "/api/v1/admin/keys", Value::Null).1;
    let shown = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == builder.as_str())
        .unwrap()["settings"]
        .clone();
    assert_eq!(shown["alert_sinks"], json!(["pager", "siem"]), "{shown}");
    assert_eq!(shown["alert_min_severity"], "info", "{shown}");
    // Another agent, naming no sink.
    let (s, other) = admin(
        "POST",
        "/api/v1/admin/keys",
        json!({"kind": "agent", "name": "other"}),
    );
    assert_eq!(s, 200, "{other}");
    let other_key = other["key"].as_str().unwrap().to_owned();
    // The routes are read again within a second.
    std::thread::sleep(Duration::from_millis(1200));
    greet(&gw, "from builder");
    let by_other = crate::gateway_util::client(
        "py",
        &gw.url,
        Some(&other_key),
        &["call", "drifty__greet", r#"{"name":"from other"}"#],
    );
    assert_eq!(
        by_other["result"]["content"][0]["text"],
        "Hello, from other!"
    );
    crate::receiver::block_a_call_and_list_what_sinks_deliver(&gw);
    let blocks = |rx: &Receiver, n: usize| {
        rx.wait_until("the blocked call", |got| {
            got.iter()
                .filter(|r| r.json()["kind"] == "tool.call" && r.json()["verdict"] == "blocked")
                .count()
                >= n
        });
    };
    let calls = |rx: &Receiver| -> Vec<(String, String)> {
        rx.accepted()
            .iter()
            .map(|r| r.json())
            .filter(|e| e["kind"] == "tool.call")
            .map(|e| {
                (
                    e["agent"].as_str().unwrap_or("").to_owned(),
                    e["verdict"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    // Both have caught up with the log once the blocked call (the last call)
    // arrived.
    blocks(&siem, 1);
    blocks(&pager, 1);
    let p = calls(&pager);
    assert!(
        p.iter().all(|(agent, _)| agent == "builder"),
        "pager gets only builder's events: {p:?}"
    );
    assert!(p.iter().any(|(_, v)| v == "allowed"), "{p:?}");
    assert!(p.iter().any(|(_, v)| v == "blocked"), "{p:?}");
    assert!(
        pager
            .accepted()
            .iter()
            .all(|r| r.json()["agent"] == "builder"),
        "no event without builder's name reaches a keys-only sink"
    );
    let s = calls(&siem);
    assert!(
        s.iter().any(|(a, v)| a == "builder" && v == "allowed"),
        "builder's minimum (info) applies on siem: {s:?}"
    );
    assert!(
        !s.iter().any(|(a, v)| a == "other" && v == "allowed"),
        "other's allowed call is below siem's own minimum: {s:?}"
    );
    assert!(s.iter().any(|(_, v)| v == "blocked"), "{s:?}");

    // The CLI raises builder's minimum: its allowed calls stop reaching pager.
    let mut env: Vec<(String, String)> = gw.env_for_thread();
    env.push(("INTERLOCK_ADMIN_TOKEN".into(), owner.clone()));
    env.push((
        "INTERLOCK_GATEWAY_URL".into(),
        format!("http://{}", gw.addr),
    ));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = crate::util::interlock_with(
        &[
            "admin",
            "keys",
            "update",
            &builder,
            "--alert-sinks",
            "pager",
            "--alert-min-severity",
            "high",
        ],
        None,
        &env,
    );
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        printed["settings"]["alert_sinks"],
        json!(["pager"]),
        "{printed}"
    );
    std::thread::sleep(Duration::from_millis(1200));
    let allowed_before = calls(&pager).iter().filter(|(_, v)| v == "allowed").count();
    greet(&gw, "quietly");
    crate::receiver::block_a_call_and_list_what_sinks_deliver(&gw);
    blocks(&pager, 2);
    let allowed_after = calls(&pager).iter().filter(|(_, v)| v == "allowed").count();
    assert_eq!(allowed_after, allowed_before, "below builder's new minimum");
}

/// `[alerts] process = "separate"`: `interlock serve` delivers nothing
/// itself, and `interlock alerts run` beside it — another process on the same
/// database, polling for the gateway's checkpoints — delivers every entry,
/// signed, from the sink's cursor; stopped with SIGTERM, it exits cleanly.
#[test]
fn a_delivery_process_beside_serve_delivers_everything_serve_logs() {
    let rx = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let alerts = sink(&rx.base, "").replacen("[alerts]\n", "[alerts]\nprocess = \"separate\"\n", 1);
    let (gw, _) = drifting(dir.path(), &alerts);
    greet(&gw, "Ada");
    greet(&gw, "Grace");
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        rx.requests().is_empty(),
        "serve delivered: {:?}",
        rx.requests().len()
    );
    let config = gw.dir.path().join("gateway.toml");
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_interlock"))
        .args(["alerts", "run", "--config", config.to_str().unwrap()])
        .envs(gw.env_for_thread())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("interlock alerts run starts");
    let reviewer = gw.reviewer_key();
    let (_, expected) = expected_indices(&gw, &reviewer);
    let got = rx.wait_until("every signed entry from the delivery process", |got| {
        let have = by_index(got);
        expected.keys().all(|i| have.contains_key(i))
    });
    for r in &got {
        assert_eq!(
            r.header("x-interlock-signature"),
            Some(openssl_hmac(&r.body).as_str())
        );
    }
    let calls = by_index(&got)
        .values()
        .filter(|e| e["kind"] == "tool.call")
        .count();
    assert_eq!(calls, 2, "both calls delivered");
    // A call after it started arrives too (it polls the gateway's checkpoints).
    greet(&gw, "Edsger");
    rx.wait_until("the later call", |got| {
        got.iter()
            .filter(|r| r.json()["kind"] == "tool.call")
            .count()
            >= 3
    });
    // SIGTERM: a clean stop.
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = run.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "alerts run did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let s = gw.api_get(&reviewer, "/api/v1/alerts")["sinks"][0].clone();
    assert!(
        s["delivered"].as_u64().unwrap() >= expected.len() as u64,
        "{s}"
    );
}
