//! Issue 44: `interlock serve` SIGKILLed around held calls — while a
//! reviewer approves one with the CLI beside it, while the agent comes back
//! for its result, while the approved call runs — and started again.
//!
//! What must hold: a held call runs at most once (one transition to
//! EXECUTING for its plan), and only once approved (the approval's leaf on
//! the log exactly when the plan left PROPOSED); none is left EXECUTING once
//! the lost executor's lease ran out; an agent that got the tool's answer
//! has it on the log as a finished run; a call whose answer the kill took
//! is never run a second time when the agent asks again; `audit verify`
//! clean.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::faults::Campaign;
use crate::gateway_util::{Gateway, try_http};

/// A stateless (2026-07-28) `tools/call` of `drifty__odd` with `key`, and
/// the request state of an earlier answer; `None` when the gateway is gone.
fn call_odd(gw: &Gateway, key: &str, n: usize, state: Option<&str>) -> Option<Value> {
    let mut params = json!({"name": "drifty__odd", "arguments": {"n": n}});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
    let auth = format!("Bearer {key}");
    let (status, _, bytes) = try_http(
        &gw.addr,
        "POST",
        "/mcp",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        body.to_string().as_bytes(),
    )
    .ok()?;
    (status == 200).then(|| serde_json::from_slice(&bytes).ok())?
}

/// The held `call-…` plans in `gw`'s inbox that are not in `known`.
fn new_held_plans(gw: &Gateway, reviewer: &str, known: &HashSet<String>) -> Vec<String> {
    let inbox = gw.api_get(reviewer, "/api/v1/inbox");
    inbox["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["plan_id"].as_str())
        .filter(|id| id.starts_with("call-") && !known.contains(*id))
        .map(str::to_owned)
        .collect()
}

/// One held call's life, as the agent and the reviewer saw it.
struct Held {
    plan: String,
    n: usize,
    state: String,
    answered: bool,
}

#[test]
fn fault_campaign_serve_killed_around_held_calls_and_their_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, reader) = crate::standing::gateway(dir.path());
    let reviewer = gw.reviewer_key();
    let mut campaign = Campaign::new("serve around held calls");
    let mut known = HashSet::new();
    let mut held: Vec<Held> = Vec::new();
    let (mut answered_before_kill, mut answered_after_restart) = (0, 0);
    let mut approvals_failed: Vec<String> = Vec::new();
    for round in 0..campaign.kills {
        let n = 1000 + round;
        let first = call_odd(&gw, &reader, n, None).expect("the gateway serves");
        assert_eq!(
            first["result"]["resultType"], "input_required",
            "round {round}: {first}"
        );
        let state = first["result"]["requestState"].as_str().unwrap().to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        let plan = loop {
            if let Some(p) = new_held_plans(&gw, &reviewer, &known).pop() {
                break p;
            }
            assert!(Instant::now() < deadline, "round {round}: never held");
            std::thread::sleep(Duration::from_millis(50));
        };
        known.insert(plan.clone());
        // The reviewer approves with the CLI while the agent keeps asking;
        // the gateway is killed at a random point of the two.
        let kill_at = campaign.point(Duration::from_millis(900));
        let pid = gw.pid();
        let killed = AtomicBool::new(false);
        let (answered, approve_failed) = std::thread::scope(|s| {
            // Beside a live gateway the CLI may ask it; one killed under
            // the request fails the command (checked after the restart).
            let approving = s.spawn(|| {
                let out = gw.approve("plans", &plan, "fault campaign");
                (!out.status.success()).then(|| crate::util::stderr(&out))
            });
            let asking = s.spawn(|| {
                while !killed.load(Ordering::SeqCst) {
                    match call_odd(&gw, &reader, n, Some(&state)) {
                        Some(r) if r["result"]["content"][0]["text"] == "odd" => return true,
                        _ => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
                false
            });
            std::thread::sleep(kill_at);
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            killed.store(true, Ordering::SeqCst);
            (asking.join().unwrap(), approving.join().unwrap())
        });
        gw.kill();
        gw.restart();
        gw.wait_for_tool("drifty__greet", true);
        if let Some(said) = approve_failed {
            // The reviewer tries again if the decision did not land.
            approvals_failed.push(said.trim().to_owned());
            if crate::faults::plan_statuses(&gw)[&plan] == "PROPOSED" {
                let out = gw.approve("plans", &plan, "fault campaign, again");
                assert!(
                    out.status.success(),
                    "round {round}: approve after the restart: {}",
                    crate::util::stderr(&out)
                );
            }
        }
        if answered {
            answered_before_kill += 1;
        }
        held.push(Held {
            plan,
            n,
            state,
            answered,
        });
    }
    // The agents come back for what the kills took: each gets the answer
    // (the approved call run once, by a gateway that started again), or a
    // clear error when its one run is spent — never a second run. A run a
    // kill cut short waits for its lease to run out, then is halted.
    let lease = Duration::from_secs(interlock_engine::LEASE_TIMEOUT_SECS as u64 + 15);
    let deadline = Instant::now() + lease;
    let mut asked_again = 0;
    for h in held.iter_mut().filter(|h| !h.answered) {
        // As an agent does: with its state, and without it when the
        // gateway says so (a restarted gateway cannot open a state sealed
        // before), which finds the approved call by its arguments.
        let mut state = Some(h.state.clone());
        loop {
            let r = call_odd(&gw, &reader, h.n, state.as_deref()).expect("the gateway serves");
            if r["result"]["content"][0]["text"] == "odd" {
                h.answered = true;
                answered_after_restart += 1;
                break;
            }
            let message = r["error"]["message"].as_str().unwrap_or_default();
            if state.is_some() && message.contains("call again without it") {
                state = None;
                asked_again += 1;
                continue;
            }
            assert_eq!(
                r["result"]["resultType"], "input_required",
                "{} (seed {}): neither the answer, a wait nor a clear refusal: {r}",
                h.plan, campaign.seed
            );
            if let Some(s) = r["result"]["requestState"].as_str() {
                state = Some(s.to_owned());
            }
            if Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let statuses = crate::faults::plan_statuses_settled(&gw, deadline);
    let leaves = crate::faults::log_leaves(&gw, &reviewer);
    let count = |kind: &str, id: &str, field: &str, value: &str| {
        leaves
            .iter()
            .filter(|l| l["type"] == kind && l["plan_id"] == id && l[field] == value)
            .count()
    };
    let seed = campaign.seed;
    let mut by_status = BTreeMap::<String, usize>::new();
    for h in &held {
        let status = &statuses[&h.plan];
        *by_status.entry(status.clone()).or_default() += 1;
        let id = &h.plan;
        assert_ne!(
            status, "EXECUTING",
            "{id} (seed {seed}): stuck in EXECUTING"
        );
        let approved = count("plan.decision", id, "decision", "approve");
        assert_eq!(approved, 1, "{id} (seed {seed}): approved {approved} times");
        assert_ne!(
            status, "PROPOSED",
            "{id} (seed {seed}): approval not applied"
        );
        let runs = count("plan.transition", id, "to", "EXECUTING");
        assert!(runs <= 1, "{id} (seed {seed}): run {runs} times");
        if h.answered {
            assert_eq!(
                (status.as_str(), runs),
                ("SUCCEEDED", 1),
                "{id} (seed {seed}): answered, but its run is not on the log"
            );
        } else {
            // Run (its answer taken by a kill, never run again) or halted
            // (its run cut short); never left approved and forgotten.
            assert!(
                status == "SUCCEEDED" || status == "HALTED",
                "{id} (seed {seed}): unanswered and {status}"
            );
        }
    }
    gw.assert_audit_clean();
    let indexed = crate::faults::assert_receipts_index_matches_log(&gw, &reviewer, &leaves, seed);
    eprintln!(
        "fault campaign serve around held calls: {} kills; answered before the kill {answered_before_kill}, \
         after the restart {answered_after_restart} (asked again without a state {asked_again} \
         times), never (the run's answer lost, or the run cut short and halted) {}; plans {by_status:?}; doubled \
         runs 0, stuck 0, half-applied approvals 0; approvals the kill failed (tried again) {}: {:?}; \
         the receipts index matches all {indexed} leaves",
        campaign.kills,
        held.iter().filter(|h| !h.answered).count(),
        approvals_failed.len(),
        approvals_failed.first(),
    );
}

/// Issue 44: `interlock servers approve` and `servers reject` SIGKILLed at
/// random points beside a live gateway. After each kill the server's status
/// is what its newest decision leaf says (a decision is whole or absent,
/// never a row without its leaf or a leaf without its row), and the gateway
/// serves the server's tools exactly when it is approved.
#[test]
fn fault_campaign_server_decisions_killed_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
        script.to_str().unwrap(),
        dir.path().join("greet.txt").to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    let reviewer = gw.reviewer_key();
    let env = gw.env_for_thread();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let approve_args = || {
        let hash = crate::util::shown_hash("servers", "drifty", &env_ref);
        vec![
            "servers".to_owned(),
            "approve".into(),
            "drifty".into(),
            "--reason".into(),
            "fault campaign".into(),
            "--hash".into(),
            hash,
        ]
    };
    let reject: Vec<String> = ["servers", "reject", "drifty", "--reason", "fault campaign"]
        .map(str::to_owned)
        .to_vec();
    let timed = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let t = Instant::now();
        let out = crate::util::interlock_with(&args, None, &env_ref);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            crate::util::stderr(&out)
        );
        t.elapsed()
    };
    // Each command's own run time, the shorter of two runs (the first of a
    // kind pays for what later ones find warm).
    let (mut approve_window, mut reject_window) = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        approve_window = approve_window.min(timed(&approve_args()));
        reject_window = reject_window.min(timed(&reject));
    }
    // The newest decision about the server on the log.
    let decided = || -> Option<String> {
        let leaves = crate::faults::log_leaves(&gw, &reviewer);
        leaves
            .iter()
            .rev()
            .filter(|l| l["server"] == "drifty" || l["name"] == "drifty")
            .filter_map(|l| l["type"].as_str())
            .find(|t| *t == "server.approved" || *t == "server.rejected")
            .map(str::to_owned)
    };
    // The server's status as the gateway serves it and the newest decision
    // leaf, once they agree, or as they are after 20 s. A killed CLI may
    // have handed its decision to the gateway, which applies it after the
    // kill: both are read again until the decision lands (or never does).
    let settled = || -> (String, &'static str, Option<String>) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let newest = decided();
            let expected = match newest.as_deref() {
                Some("server.approved") => "TRUSTED",
                Some("server.rejected") => "REJECTED",
                _ => "PENDING",
            };
            let v = gw.api_get(&reviewer, "/api/v1/servers/drifty");
            let status = v["server"]["status"]
                .as_str()
                .unwrap_or("none")
                .to_ascii_uppercase();
            if status == expected || Instant::now() > deadline {
                return (status, expected, newest);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let mut campaign = Campaign::new("server decisions");
    let (mut landed, mut ended) = (0, 0);
    let mut by_status = BTreeMap::<String, usize>::new();
    for i in 0..campaign.kills {
        let (args, window) = if i % 2 == 0 {
            (approve_args(), approve_window)
        } else {
            (reject.clone(), reject_window)
        };
        let at = campaign.kill_point(i / 2, window);
        if crate::faults::kill_after(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            &env,
            at,
        ) {
            landed += 1;
        } else {
            ended += 1;
        }
        let what = format!("kill {i} ({} at {at:?}, seed {})", args[1], campaign.seed);
        let (status, expected, newest) = settled();
        assert_eq!(
            status, expected,
            "{what}: the status is not what the newest decision leaf says ({newest:?})"
        );
        *by_status.entry(status.clone()).or_default() += 1;
        gw.wait_for_tool("drifty__add", status == "TRUSTED");
    }
    gw.assert_audit_clean();
    eprintln!(
        "fault campaign server decisions: {landed} kills landed mid-run, {ended} runs ended first; \
         statuses after the kills {by_status:?}; half-applied decisions 0, tools served against \
         the decision 0"
    );
}

/// Issue 44: a signed removal commits its `server.removed` leaf with the
/// deletion of the server's row, then takes the server out of
/// `gateway.toml`. A gateway stopped between the two came back with the
/// server in its config and no row, and ran the removed program again as a
/// new server. The removal now leaves a note first (`<data>/removing/NAME`),
/// and a gateway that finds one at start finishes what it says: with no row
/// (the removal committed) the server is taken out of the file and never
/// started; with a row (it did not commit) the note is dropped and the
/// server served as before.
#[test]
fn regression_issue_44_a_removal_cut_before_its_config_edit_is_finished_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let entry = |name: &str| {
        format!(
            "[servers.{name}]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
            script.to_str().unwrap(),
            dir.path().join(format!("{name}.txt")).to_str().unwrap()
        )
    };
    let mut gw = Gateway::start(&format!("{}\n{}", entry("gone"), entry("kept")));
    for name in ["gone", "kept"] {
        gw.wait_for_server(name, "PENDING");
        gw.approve_server(name);
    }
    gw.wait_for_tool("kept__add", true);
    let out = gw.cli(&["servers", "remove", "gone", "--reason", "not needed"]);
    assert!(
        out.status.success(),
        "{}{}",
        crate::util::stdout(&out),
        crate::util::stderr(&out)
    );
    let config_path = gw.data().parent().unwrap().join("gateway.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(!config.contains("[servers.gone]"), "{config}");
    let notes = gw.data().join("removing");
    assert!(
        std::fs::read_dir(&notes).is_ok_and(|mut d| d.next().is_none()),
        "a finished removal leaves no note"
    );

    // Stopped after the commit, before the file: the entry still there, and
    // its note; and a removal of `kept` stopped before its commit.
    gw.kill();
    std::fs::write(&config_path, format!("{config}\n{}", entry("gone"))).unwrap();
    for name in ["gone", "kept"] {
        std::fs::write(notes.join(name), b"").unwrap();
    }
    gw.start_serving();
    gw.wait_for_tool("kept__add", true);
    let listed = crate::util::stdout(&gw.cli(&["servers", "list"]));
    assert!(
        !listed.contains("gone"),
        "the removed server came back: {listed}"
    );
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(!config.contains("[servers.gone]"), "{config}");
    assert!(config.contains("[servers.kept]"), "{config}");
    assert!(
        std::fs::read_dir(&notes).is_ok_and(|mut d| d.next().is_none()),
        "every note is finished"
    );
    let reviewer = gw.reviewer_key();
    let leaves = crate::faults::log_leaves(&gw, &reviewer);
    let about_gone: Vec<&str> = leaves
        .iter()
        .filter(|l| l["server"] == "gone")
        .filter_map(|l| l["type"].as_str())
        .collect();
    assert_eq!(
        about_gone.last(),
        Some(&"server.removed"),
        "the removed server was taken for a new one: {about_gone:?}"
    );
    gw.assert_audit_clean();
}

/// Issue 44: `interlock serve` SIGKILLed while servers are added and removed
/// at run time (`interlock servers add` beside it; `servers remove`, a
/// signed removal). After each restart a server is either there — in the
/// config file, listed, served once approved, no `server.removed` leaf after
/// its last approval — or removed — its newest leaf `server.removed`, out of
/// the file, not listed, its tools gone; never a removal logged with the
/// server back, and no removal note left unfinished.
#[test]
fn fault_campaign_server_add_and_remove_with_serve_killed_anywhere() {
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let mut gw = Gateway::start("");
    let config_path = gw.data().parent().unwrap().join("gateway.toml");
    let env = gw.env_for_thread();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let add = |gw: &Gateway, name: &str| {
        let out = gw.cli(&[
            "servers",
            "add",
            name,
            "--command",
            "node",
            "--",
            script.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "add {name}: {}",
            crate::util::stderr(&out)
        );
    };
    // A removal's own run time, from one not killed.
    add(&gw, "timing");
    gw.wait_for_server("timing", "PENDING");
    let started = Instant::now();
    let out = crate::util::interlock_with(
        &["servers", "remove", "timing", "--reason", "timing"],
        None,
        &env_ref,
    );
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    let window = started.elapsed();

    let mut campaign = Campaign::new("server add/remove under serve kills");
    let mut by_outcome = BTreeMap::<&str, usize>::new();
    for i in 0..campaign.kills {
        let name = format!("s{i}");
        add(&gw, &name);
        gw.wait_for_server(&name, "PENDING");
        gw.approve_server(&name);
        gw.wait_for_tool(&format!("{name}__add"), true);
        let remove = ["servers", "remove", &name, "--reason", "fault campaign"];
        let env = env.clone();
        let args: Vec<String> = remove.iter().map(|s| (*s).to_owned()).collect();
        let removal = std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            crate::util::interlock_with(&args, None, &env)
        });
        std::thread::sleep(campaign.kill_point(i, window));
        gw.kill();
        let _ = removal.join();
        gw.start_serving();
        gw.wait_for_tool("propose_plan", true);
        let seed = campaign.seed;
        let reviewer = gw.reviewer_key();
        let leaves = crate::faults::log_leaves(&gw, &reviewer);
        let newest = leaves
            .iter()
            .rev()
            .filter(|l| l["server"] == name.as_str())
            .filter_map(|l| l["type"].as_str())
            .find(|t| *t == "server.removed" || *t == "server.approved");
        let config = std::fs::read_to_string(&config_path).unwrap();
        let in_file = config.contains(&format!("[servers.{name}]"));
        let listed = crate::util::stdout(&gw.cli(&["servers", "list"]))
            .lines()
            .any(|l| l.split_whitespace().next() == Some(name.as_str()));
        let outcome = if newest == Some("server.removed") {
            assert!(
                !in_file && !listed,
                "{name} (seed {seed}): removed on the log, yet in the file {in_file}, listed {listed}"
            );
            gw.wait_for_tool(&format!("{name}__add"), false);
            "removed"
        } else {
            assert!(
                in_file && listed,
                "{name} (seed {seed}): not removed on the log, yet in the file {in_file}, listed {listed}"
            );
            gw.wait_for_server(&name, "TRUSTED");
            gw.wait_for_tool(&format!("{name}__add"), true);
            "kept"
        };
        *by_outcome.entry(outcome).or_default() += 1;
        let notes = gw.data().join("removing");
        assert!(
            std::fs::read_dir(&notes).map_or(true, |mut d| d.next().is_none()),
            "{name} (seed {seed}): a removal note left unfinished"
        );
    }
    gw.assert_audit_clean();
    eprintln!(
        "fault campaign server add/remove under serve kills: {} kills over removals; {by_outcome:?}; \
         removals logged with the server back 0, servers gone without their removal 0",
        campaign.kills
    );
}
