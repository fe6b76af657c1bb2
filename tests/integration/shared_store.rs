//! Issue 20 item 2: several gateways, one database. Three `interlock serve`
//! processes — each with its own data directory, admin socket and port, as on
//! three machines of a team — share one store: a Postgres database on a
//! Postgres run (`$INTERLOCK_TEST_POSTGRES`), else one SQLite file named by
//! URL. A decision made through one is enforced by the others; a plan runs
//! once whichever gateways its callers reach; the one log they append to
//! stays gap-free and verifies.

use std::time::Instant;

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, peers_dir, write_file_plan};
use crate::util::{stderr, stdout};

fn drifting_config(dir: &std::path::Path) -> String {
    let script = peers_dir().join("drifting-server.mjs");
    format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        dir.join("greet-description.txt").to_str().unwrap()
    )
}

fn has_tool(gw: &Gateway, tool: &str) -> bool {
    let listed = gw.list_tools();
    listed["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == tool))
}

/// A server approved through one gateway is served by the two others, and
/// each of the three records the same decision: the others pick it up from the
/// database (no restart; on Postgres woken by its `NOTIFY`, on SQLite by
/// polling). The time each took is printed; the test only needs it to happen.
#[test]
fn a_server_approved_on_one_gateway_is_served_by_every_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = drifting_config(dir.path());
    let a = Gateway::start(&config);
    let b = Gateway::start_beside(&a, &config);
    let c = Gateway::start_beside(&a, &config);
    a.wait_for_server("drifty", "PENDING");
    for gw in [&a, &b, &c] {
        assert!(!has_tool(gw, "drifty__add"), "served before approval");
    }
    // The decision, made through gateway A's data directory (its CLI).
    a.approve_server("drifty");
    let approved = Instant::now();
    for (name, gw) in [("a", &a), ("b", &b), ("c", &c)] {
        gw.wait_for_tool("drifty__add", true);
        println!(
            "gateway {name} serves the approved server after {} ms",
            approved.elapsed().as_millis()
        );
        let (_, _, r) = gw.rpc(
            "tools/call",
            json!({"name": "drifty__add", "arguments": {"a": 2, "b": 3}}),
        );
        assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
    }
    // Every gateway lists the server as trusted: the same row.
    for gw in [&b, &c] {
        gw.wait_for_server("drifty", "TRUSTED");
    }
    // The one log all three appended to verifies, from any of them.
    for gw in [&a, &b, &c] {
        gw.assert_audit_clean();
    }
}

/// Fifty `execute_plan` calls for one approved plan, spread over three
/// gateways at once: exactly one runs it; the others are refused; the file is
/// written once; the log verifies.
#[test]
fn fifty_concurrent_executions_over_three_gateways_run_the_plan_once() {
    let a = Gateway::start("");
    let b = Gateway::start_beside(&a, "");
    let c = Gateway::start_beside(&a, "");
    let plan = write_file_plan(&a, "once", "Write once", "once.txt");
    let r = a.client("py", &["call", "propose_plan", &plan.to_string()]);
    assert_eq!(r["result"]["isError"], false, "{r}");
    let out = a.approve("plans", "once", "one file");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let gateways = [&a, &b, &c];
    let barrier = std::sync::Barrier::new(50);
    let results: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..50)
            .map(|i| {
                let gw = gateways[i % 3];
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    gw.rpc(
                        "tools/call",
                        json!({"name": "execute_plan", "arguments": {"plan_id": "once"}}),
                    )
                    .2
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ran: Vec<&Value> = results
        .iter()
        .filter(|r| r["result"]["isError"] == false)
        .collect();
    assert_eq!(ran.len(), 1, "exactly one execution: {results:#?}");
    for r in &results {
        assert!(
            r["result"]["isError"] == false || r["result"]["isError"] == true,
            "every call is answered: {r}"
        );
    }
    assert!(a.data().join("workspace/once.txt").exists());
    // A later call on any gateway is refused too: the plan has run.
    let (_, _, again) = c.rpc(
        "tools/call",
        json!({"name": "execute_plan", "arguments": {"plan_id": "once"}}),
    );
    assert_eq!(again["result"]["isError"], true, "{again}");
    for gw in gateways {
        gw.assert_audit_clean();
    }
}

/// A mistyped `--database` is refused with the accepted forms, never taken
/// for a new SQLite file, and its password is not echoed.
#[test]
fn regression_a_bad_database_url_is_refused_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    for bad in [
        "mysql://gw:s3cret@db/x",
        "postgres://gw:s3cret@db",
        "interlock.sqlite",
    ] {
        let out = crate::util::interlock_with(
            &["--database", bad, "servers", "list"],
            None,
            &[("INTERLOCK_DATA_DIR", data)],
        );
        let err = stderr(&out);
        assert!(!out.status.success(), "{bad}: {}", stdout(&out));
        assert!(
            err.contains("postgres://") || err.contains("names no database"),
            "{bad}: {err}"
        );
        assert!(!err.contains("s3cret"), "{bad}: the password leaked: {err}");
    }
    assert!(
        !dir.path().join("interlock.sqlite").exists() && !dir.path().join("mysql:").exists(),
        "no database was created"
    );
}

/// `$INTERLOCK_DATABASE_URL_FILE` (a container's secret) names the database
/// for every command; a file that exists but cannot be parsed stops the
/// command instead of falling back to the SQLite file.
#[test]
fn the_database_url_can_come_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let shared = dir.path().join("shared.sqlite");
    let url_file = dir.path().join("database_url");
    std::fs::write(&url_file, format!("sqlite://{}\n", shared.display())).unwrap();
    let env = [
        ("INTERLOCK_DATA_DIR", data.to_str().unwrap()),
        ("INTERLOCK_DATABASE_URL_FILE", url_file.to_str().unwrap()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            "interlock-test-database-url-file",
        ),
    ];
    let out = crate::util::interlock_with(&["agents", "add", "filed"], None, &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(shared.exists(), "the database named in the file was used");
    assert!(!data.join("interlock.sqlite").exists());
    std::fs::write(&url_file, "not a url\n").unwrap();
    let out = crate::util::interlock_with(&["agents", "list"], None, &env);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not a database URL"),
        "{}",
        stderr(&out)
    );
}

/// `interlock keys log-key send --to RECIPIENT --out FILE` on `gw`.
fn send_log_key(gw: &Gateway, recipient: &str, out: &std::path::Path) -> std::process::Output {
    gw.cli(&[
        "keys",
        "log-key",
        "send",
        "--to",
        recipient,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// Issue 20: a team member's gateway joins a shared database from a machine
/// whose keychain has no log key. It makes none of its own (the log would
/// refuse it) and says how to receive the team's; a key sealed to its
/// recipient by a gateway of *another* log is refused as not this database's;
/// the team's key, sealed by gateway A, is kept, spent once, and the joined
/// gateway serves and extends the one log, which verifies from both machines
/// with the same pinned key. Both hand-over steps are log leaves.
#[test]
fn a_joining_gateway_receives_the_team_log_key_sealed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let a = Gateway::start("");
    let mut b = Gateway::joining(&a, "");
    // No log key here: a command that writes the log explains, and leaves no key.
    let out = b.cli(&["agents", "add", "early"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("interlock keys log-key request"),
        "{}",
        stderr(&out)
    );
    let shown = b.cli(&["keys", "log-key", "show", "--json"]);
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["public_key"], Value::Null, "{shown}");
    assert!(shown["database_vkey"].is_string(), "{shown}");

    let out = b.cli(&["keys", "log-key", "request"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let recipient = stdout(&out).trim().to_owned();
    assert!(recipient.starts_with("age1"), "{recipient}");

    // Someone else's log key, sealed to the same public recipient: refused.
    let stranger = Gateway::start("");
    let forged = dir.path().join("forged.age");
    let out = send_log_key(&stranger, &recipient, &forged);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = b.cli(&["keys", "log-key", "accept", forged.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not this database's log key"),
        "{}",
        stderr(&out)
    );

    // The team's key, from gateway A.
    let sealed = dir.path().join("log-key.age");
    let out = send_log_key(&a, &recipient, &sealed);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&sealed).unwrap();
    assert!(
        text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"),
        "{text}"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&sealed).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // --out never overwrites.
    let again = send_log_key(&a, &recipient, &sealed);
    assert!(!again.status.success());
    let out = b.cli(&["keys", "log-key", "accept", sealed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Spent: the same file does not open twice.
    let out = b.cli(&["keys", "log-key", "accept", sealed.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no transfer"), "{}", stderr(&out));

    let pinned = |gw: &Gateway| {
        let out = gw.cli(&["keys", "log-key", "show", "--json"]);
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["public_key"].clone()
    };
    assert_eq!(pinned(&a), pinned(&b));
    b.start_serving();
    let (_, _, r) = b.rpc("tools/list", json!({}));
    assert!(r["result"]["tools"].is_array(), "{r}");
    for gw in [&a, &b] {
        gw.assert_audit_clean();
    }
    let reviewer = b.reviewer_key();
    let actions: Vec<String> = b.api_get(&reviewer, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["type"] == "admin.action")
        .map(|e| e["entry"]["action"].as_str().unwrap_or("").to_owned())
        .collect();
    for action in ["log_key.sealed", "log_key.accepted"] {
        let text = actions.join(", ");
        assert!(text.contains(action), "{action} not logged: {text}");
    }
}

/// The arguments hash a `tool.call` leaf records for these arguments.
fn arguments_hash(arguments: &Value) -> String {
    let canonical =
        interlock_core::canon::parse_json(serde_json::to_string(arguments).unwrap().as_bytes())
            .unwrap();
    interlock_trust::held_id::arguments_digest(&canonical).to_string()
}

/// Every `tool.call` leaf's arguments hash, read through `gw`'s reviewer API.
fn call_leaf_hashes(gw: &Gateway) -> std::collections::HashSet<String> {
    let reviewer = gw.reviewer_key();
    let mut hashes = std::collections::HashSet::new();
    let mut from = 0u64;
    loop {
        let page = gw.api_get(&reviewer, &format!("/api/v1/log?from={from}&limit=1000"));
        let entries = page["entries"].as_array().unwrap();
        for e in entries {
            if e["entry"]["type"] == "tool.call"
                && let Some(h) = e["entry"]["arguments_hash"].as_str()
            {
                hashes.insert(h.to_owned());
            }
        }
        from += entries.len() as u64;
        if entries.is_empty() || from >= page["size"].as_u64().unwrap() {
            return hashes;
        }
    }
}

/// Issue 20's measure: three gateways on one database under a burst of tool
/// calls, one of them SIGKILLed mid-burst, round after round (3 rounds here;
/// `INTERLOCK_TEAM_KILL_ROUNDS=20` for the figure). No call any
/// gateway acknowledged is missing from the log; the two others keep serving
/// through the kill without a failed call; the killed one restarts on the same
/// database; the one log verifies from every gateway at the end.
#[test]
fn one_of_three_gateways_killed_mid_burst_loses_nothing_acknowledged() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::Duration;
    let rounds: usize = std::env::var("INTERLOCK_TEAM_KILL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let config = drifting_config(dir.path());
    let a = Gateway::start(&config);
    a.wait_for_server("drifty", "PENDING");
    a.approve_server("drifty");
    let b = Gateway::start_beside(&a, &config);
    let c = Gateway::start_beside(&a, &config);
    let mut gateways = [a, b, c];
    for gw in &gateways {
        gw.wait_for_tool("drifty__add", true);
    }
    let next = AtomicU64::new(1);
    let mut acknowledged: Vec<Value> = Vec::new();
    for round in 0..rounds {
        let victim = round % 3;
        let victim_pid = gateways[victim].pid();
        let stop = AtomicBool::new(false);
        let killed = AtomicBool::new(false);
        let (acked, survivors_after, survivor_failures) = std::thread::scope(|s| {
            let workers: Vec<_> = (0..9)
                .map(|w| {
                    let gw = &gateways[w % 3];
                    let (stop, killed, next) = (&stop, &killed, &next);
                    let is_victim = w % 3 == victim;
                    s.spawn(move || {
                        let (mut acked, mut after, mut failed) = (Vec::new(), 0u64, 0u64);
                        while !stop.load(Ordering::Relaxed) {
                            let n = next.fetch_add(1, Ordering::Relaxed);
                            let args = json!({"a": n, "b": w});
                            let sum = (n + w as u64).to_string();
                            let was_killed = killed.load(Ordering::Relaxed);
                            match gw.try_call("drifty__add", args.clone()) {
                                Some(r)
                                    if r["result"]["content"][0]["text"].as_str()
                                        == Some(sum.as_str()) =>
                                {
                                    acked.push(args);
                                    if was_killed && !is_victim {
                                        after += 1;
                                    }
                                }
                                other => {
                                    if is_victim {
                                        // The victim is going or gone.
                                        if killed.load(Ordering::Relaxed) {
                                            break;
                                        }
                                    } else {
                                        failed += 1;
                                        eprintln!("survivor call failed: {other:?}");
                                    }
                                }
                            }
                        }
                        (acked, after, failed)
                    })
                })
                .collect();
            std::thread::sleep(Duration::from_millis(400));
            let status = std::process::Command::new("kill")
                .args(["-KILL", &victim_pid.to_string()])
                .status()
                .unwrap();
            assert!(status.success());
            killed.store(true, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(400));
            stop.store(true, Ordering::Relaxed);
            let mut all = Vec::new();
            let (mut after, mut failed) = (0, 0);
            for w in workers {
                let (acked, a, f) = w.join().unwrap();
                all.extend(acked);
                after += a;
                failed += f;
            }
            (all, after, failed)
        });
        assert_eq!(
            survivor_failures, 0,
            "round {round}: the gateways still up failed calls"
        );
        assert!(
            survivors_after > 0,
            "round {round}: no gateway served after the kill"
        );
        let restart = std::time::Instant::now();
        gateways[victim].kill();
        gateways[victim].restart();
        gateways[victim].wait_for_tool("drifty__add", true);
        println!(
            "round {round}: gateway {victim} killed; {} calls acknowledged, {survivors_after} by the two others after the kill; restarted serving in {} ms",
            acked.len(),
            restart.elapsed().as_millis()
        );
        acknowledged.extend(acked);
    }
    let logged = call_leaf_hashes(&gateways[0]);
    let missing: Vec<&Value> = acknowledged
        .iter()
        .filter(|args| !logged.contains(&arguments_hash(args)))
        .collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged calls have no tool.call leaf: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    println!(
        "{rounds} kills: {} acknowledged calls, all in the log ({} tool.call leaves)",
        acknowledged.len(),
        logged.len()
    );
    for gw in &gateways {
        gw.assert_audit_clean();
    }
}

/// Reads `gw`'s reviewer event stream (SSE) until every `(event, subject)` in
/// `wanted` has arrived, or 30 s pass; returns what arrived, with the time
/// each wanted one took from `since`.
fn events_until(
    gw: &Gateway,
    reviewer: &str,
    wanted: &[(&str, &str)],
    started: std::sync::mpsc::Sender<()>,
) -> (String, Vec<(String, u128)>) {
    use std::io::{Read, Write};
    let addr = gw.addr.clone();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    write!(
        s,
        "GET /api/v1/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {reviewer}\r\n\r\n"
    )
    .unwrap();
    let since = Instant::now();
    let mut seen = String::new();
    let mut arrived = Vec::new();
    let mut buf = [0u8; 8192];
    let mut told = false;
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        if !told {
            // The response head: the stream is subscribed.
            let _ = started.send(());
            told = true;
        }
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        for (event, subject) in wanted {
            let found = seen.split("\n\n").any(|block| {
                block.contains(&format!("event: {event}\n"))
                    && block.contains(&format!("\"subject\":\"{subject}\""))
            });
            if found && !arrived.iter().any(|(e, _)| e == event) {
                arrived.push(((*event).to_owned(), since.elapsed().as_millis()));
            }
        }
        if arrived.len() == wanted.len() {
            break;
        }
    }
    (seen, arrived)
}

/// Issue 20: a reviewer connected to one gateway is told of what happens on
/// the others. A plan proposed through gateway C, and the server and the plan
/// approved through gateway A's CLI, reach gateway B's reviewer event stream
/// (what the desktop app relays as notifications), read from the entries B
/// adopts from the shared log.
#[test]
fn a_reviewer_on_one_gateway_hears_what_the_others_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let config = drifting_config(dir.path());
    let a = Gateway::start(&config);
    a.wait_for_server("drifty", "PENDING");
    let b = Gateway::start_beside(&a, &config);
    let c = Gateway::start_beside(&a, &config);
    let reviewer = b.reviewer_key();
    let wanted = [
        ("server.approved", "drifty"),
        ("plan.proposed", "team-evt"),
        ("plan.approved", "team-evt"),
    ];
    let (started_tx, started) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let reader = s.spawn(|| events_until(&b, &reviewer, &wanted, started_tx));
        started
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the event stream answered");
        a.approve_server("drifty");
        let plan = write_file_plan(&c, "team-evt", "Proposed on C", "evt.txt");
        let r = c.client("py", &["call", "propose_plan", &plan.to_string()]);
        assert_eq!(r["result"]["isError"], false, "{r}");
        let out = a.approve("plans", "team-evt", "approved on A");
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        let (seen, arrived) = reader.join().unwrap();
        for (event, _) in &wanted {
            assert!(
                arrived.iter().any(|(e, _)| e == event),
                "gateway B's reviewers never heard {event}: {seen}"
            );
        }
        println!("on gateway B's event stream (ms after subscribing): {arrived:?}");
    });
}
