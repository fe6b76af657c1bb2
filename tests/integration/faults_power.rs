//! Issue 44: power cuts under a gateway at work. The gateway's data
//! directory is on the fault filesystem (`faultfs.rs`); a cut SIGKILLs every
//! process using it — `interlock serve` and any CLI beside it — and drops
//! whatever was not synced, then the gateway starts again on what is left.
//!
//! What must survive is what docs/ARCHITECTURE.md's durability contract
//! promises, no less: with `durability = "strict"`, every call an agent got
//! an answer for, with its intent and its outcome; with the default group
//! commit, every such call's intent (its outcome may be among the last flush
//! window's, which the contract says a power loss can take). In both, every
//! approval the CLI acknowledged, no decision half-applied, `audit verify`
//! clean and the gateway serving again.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::faultfs::{Fault, FaultFs};
use crate::faults::Campaign;
use crate::gateway_util::{Gateway, peers_dir};
use crate::util::stderr;

/// The gateway's config: `drifty`, whose `add` appends each call it runs
/// to `<dir>/effects/calls` (outside the fault filesystem: the effect
/// evidence must precede).
fn add_server(dir: &Path, log: &str) -> String {
    let script = peers_dir().join("drifting-server.mjs");
    let effects = dir.join("effects");
    std::fs::create_dir_all(&effects).unwrap();
    format!(
        "[log]\n{log}\n[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n\
         env = {{ DRIFT_FILE = {:?}, CALLS_FILE = {:?} }}\nsandbox = {{ write = [{:?}] }}\n",
        script.to_str().unwrap(),
        dir.join("greet-description.txt").to_str().unwrap(),
        effects.join("calls").to_str().unwrap(),
        effects.to_str().unwrap(),
    )
}

/// The arguments of every call the upstream ran (its effects).
fn effects(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("effects/calls"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A gateway serving `drifty__add` with its data directory on a fault
/// filesystem.
fn gateway_on_faultfs(dir: &Path, log: &str) -> (Gateway, FaultFs) {
    gateway_on_faultfs_with(dir, log, "", &[])
}

/// [`gateway_on_faultfs`] with more config (`extra`, after the servers)
/// and environment.
fn gateway_on_faultfs_with(
    dir: &Path,
    log: &str,
    extra: &str,
    env: &[(&str, &str)],
) -> (Gateway, FaultFs) {
    let mut fs = None;
    let config = format!("{}{extra}", add_server(dir, log));
    let gw = Gateway::start_on_prepared_data(&config, env, &mut |data| {
        fs = Some(FaultFs::mount(data));
    });
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__add", true);
    (gw, fs.expect("mounted"))
}

/// Runs `interlock ARGS` until it ends (its success) or `cut` is set (then
/// it is killed, as a cut kills it: `None`).
fn run_until_cut(args: &[&str], env: &[(String, String)], cut: &AtomicBool) -> Option<bool> {
    run_until_cut_saying(args, env, cut).map(|(ok, _)| ok)
}

/// [`run_until_cut`], with what the command wrote to stderr when it ended.
fn run_until_cut_saying(
    args: &[&str],
    env: &[(String, String)],
    cut: &AtomicBool,
) -> Option<(bool, String)> {
    use std::io::Read as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut said = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut said);
            if !status.success() && cut.load(Ordering::SeqCst) {
                // The cut killed what the command was talking to.
                return None;
            }
            return Some((status.success(), said));
        }
        if cut.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `interlock ARGS` run to its end: whether it succeeded, and what it said.
fn run_cli(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = crate::util::interlock_with(args, None, env);
    let said = format!("{}{}", crate::util::stdout(&out), stderr(&out));
    (out.status.success(), said)
}

/// Runs `interlock ARGS` and cuts the power `at` after it started: while
/// it runs (`None`) or after it ended (its success).
fn power_cut_during(
    fs: &mut FaultFs,
    args: &[&str],
    env: &[(String, String)],
    at: Duration,
) -> Option<bool> {
    let cut = AtomicBool::new(false);
    let done = std::thread::scope(|s| {
        let run = s.spawn(|| run_until_cut(args, env, &cut));
        std::thread::sleep(at);
        cut.store(true, Ordering::SeqCst);
        run.join().unwrap()
    });
    fs.power_cut();
    done
}

/// The hash `plans show ID` prints, or `None` when the run was cut.
fn plan_hash(id: &str, env: &[(String, String)], cut: &AtomicBool) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .args(["plans", "show", id])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    loop {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().unwrap();
            return String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
                l.strip_prefix("hash")
                    .map(|h| h.trim().to_owned())
                    .filter(|h| h.starts_with("sha256:"))
            });
        }
        if cut.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn plan_file(plans: &Path, workspace: &Path, id: &str) -> std::path::PathBuf {
    let plan = json!({
        "schema_version": "interlock.plan/v1", "plan_id": id, "title": format!("Power {id}"),
        "proposer": "agent:faults", "created_at": "2026-12-07T00:00:00Z",
        "body": {"stages": [{
            "id": "write", "action": "fs.write_file",
            "target": workspace.join(format!("{id}.txt")).to_str().unwrap(),
            "params": {"content": "once\n"},
            "preconditions": [{"probe": "fs.path_absent"}],
            "verify": [{"probe": "fs.file_contains", "params": {"text": "once"}}],
            "rollback": "Delete it."}]}
    });
    let path = plans.join(format!("{id}.json"));
    std::fs::write(&path, plan.to_string()).unwrap();
    path
}

/// Every leaf on `gw`'s log.
fn all_leaves(gw: &Gateway) -> Vec<Value> {
    crate::faults::log_leaves(gw, &gw.reviewer_key())
}

fn arguments_hash(arguments: &Value) -> String {
    let canonical =
        interlock_core::canon::parse_json(serde_json::to_string(arguments).unwrap().as_bytes())
            .unwrap();
    interlock_trust::held_id::arguments_digest(&canonical).to_string()
}

/// What one campaign saw, for its figures.
#[derive(Default)]
struct Seen {
    calls_acknowledged: Vec<Value>,
    approvals_acknowledged: Vec<String>,
    proposed: Vec<String>,
}

/// Cuts the power under a gateway at random points of a burst of tool calls
/// (four agents' worth) and of the CLI proposing and approving plans beside
/// it; after each cut the gateway starts again on what the disk kept.
fn power_cut_campaign(path: &str, log: &str, outcomes_promised: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, mut fs) = gateway_on_faultfs(dir.path(), log);
    let env = gw.env_for_thread();
    let workspace = gw.data().join("workspace");
    let plans = dir.path().join("plans");
    std::fs::create_dir_all(&plans).unwrap();
    let mut campaign = Campaign::new(path);
    let next = AtomicU64::new(1);
    let seen = Mutex::new(Seen::default());
    let started = Instant::now();
    for round in 0..campaign.kills {
        let cut = AtomicBool::new(false);
        let cut_after = Duration::from_millis(150) + campaign.point(Duration::from_millis(1200));
        let pid = gw.pid();
        std::thread::scope(|s| {
            for agent in 0..4u64 {
                let (gw, cut, next, seen) = (&gw, &cut, &next, &seen);
                s.spawn(move || {
                    while !cut.load(Ordering::SeqCst) {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let args = json!({"a": n, "b": agent});
                        let sum = (n + agent).to_string();
                        if let Some(r) = gw.try_call("drifty__add", args.clone())
                            && r["result"]["content"][0]["text"].as_str() == Some(sum.as_str())
                        {
                            seen.lock().unwrap().calls_acknowledged.push(args);
                        }
                    }
                });
            }
            let (env, cut, seen, plans, workspace) = (&env, &cut, &seen, &plans, &workspace);
            s.spawn(move || {
                for i in 0.. {
                    let id = format!("power-{round}-{i}");
                    let file = plan_file(plans, workspace, &id);
                    let propose = ["plan", "propose", file.to_str().unwrap()];
                    if run_until_cut(&propose, env, cut) != Some(true) {
                        return;
                    }
                    seen.lock().unwrap().proposed.push(id.clone());
                    let Some(hash) = plan_hash(&id, env, cut) else {
                        return;
                    };
                    let approve = [
                        "plans",
                        "approve",
                        &id,
                        "--reason",
                        "power cut",
                        "--hash",
                        &hash,
                    ];
                    match run_until_cut_saying(&approve, env, cut) {
                        Some((true, _)) => seen.lock().unwrap().approvals_acknowledged.push(id),
                        Some((false, said)) => {
                            panic!("approving {id} failed with the power on: {said}")
                        }
                        None => return,
                    }
                }
            });
            std::thread::sleep(cut_after);
            // The cut: every process on the disk dies at once. The flag goes
            // first, so a command that fails because the gateway died is
            // known to have failed under the cut (CI saw the gap once).
            cut.store(true, Ordering::SeqCst);
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        });
        gw.kill();
        fs.power_cut();
        gw.restart();
        gw.wait_for_tool("drifty__add", true);
    }

    let seen = seen.into_inner().unwrap();
    let leaves = all_leaves(&gw);
    let hashes_of = |kind: &str| -> HashSet<String> {
        leaves
            .iter()
            .filter(|l| l["type"] == kind)
            .filter_map(|l| l["arguments_hash"].as_str().map(str::to_owned))
            .collect()
    };
    let (intents, outcomes) = (hashes_of("tool.call.intent"), hashes_of("tool.call"));
    let seed = campaign.seed;
    let ran = effects(dir.path());
    for args in &ran {
        assert!(
            intents.contains(&arguments_hash(args)),
            "(seed {seed}) the upstream ran a call whose intent is not on the log: {args}"
        );
    }
    let mut outcomes_lost = 0;
    for args in &seen.calls_acknowledged {
        let hash = arguments_hash(args);
        assert!(
            intents.contains(&hash),
            "(seed {seed}) an acknowledged call's intent was lost: {args}"
        );
        if !outcomes.contains(&hash) {
            outcomes_lost += 1;
            assert!(
                !outcomes_promised,
                "(seed {seed}) an acknowledged call's outcome was lost under strict durability: {args}"
            );
        }
    }

    // Decisions: every acknowledged approval kept; none half-applied.
    let status = crate::faults::plan_statuses(&gw);
    for id in &seen.proposed {
        assert!(
            status.contains_key(id),
            "(seed {seed}) {id}: an acknowledged proposal was lost"
        );
    }
    for id in &seen.approvals_acknowledged {
        assert_eq!(
            status[id], "APPROVED",
            "(seed {seed}) {id}: an acknowledged approval was lost"
        );
    }
    for (id, status) in &status {
        let approvals = leaves
            .iter()
            .filter(|l| {
                l["type"] == "plan.decision" && l["plan_id"] == *id && l["decision"] == "approve"
            })
            .count();
        assert!(
            approvals <= 1,
            "(seed {seed}) {id}: approved {approvals} times"
        );
        assert_eq!(
            approvals == 1,
            status != "PROPOSED",
            "(seed {seed}) {id}: {status} with {approvals} approval leaves (half-applied)"
        );
    }
    gw.assert_audit_clean();
    let indexed =
        crate::faults::assert_receipts_index_matches_log(&gw, &gw.reviewer_key(), &leaves, seed);
    let counts = fs.counts();
    gw.kill();
    eprintln!(
        "fault campaign {path}: {} power cuts in {:.0?} ({} syncs, {} writes); {} calls and {} \
         approvals acknowledged, none lost; {} calls run by the upstream, each with its intent on the log; {outcomes_lost} acknowledged calls' outcome leaves \
         lost (the last flush window's; their intents kept); {} plans proposed; half-applied \
         decisions 0; the receipts index matches all {indexed} leaves",
        counts.power_cuts,
        started.elapsed(),
        counts.syncs,
        counts.writes,
        seen.calls_acknowledged.len(),
        seen.approvals_acknowledged.len(),
        ran.len(),
        seen.proposed.len(),
    );
    drop(fs);
}

/// Issue 44: power cuts under `durability = "strict"`: nothing acknowledged
/// is lost, outcomes included.
#[test]
fn fault_campaign_power_cut_under_strict_durability_loses_nothing_acknowledged() {
    power_cut_campaign("power cuts (strict)", "durability = \"strict\"", true);
}

/// Issue 44: power cuts under the default group commit: every acknowledged
/// call's intent and every acknowledged decision survive; only outcome
/// leaves of the last flush window may go, as the contract says.
#[test]
fn fault_campaign_power_cut_under_group_commit_keeps_what_the_contract_promises() {
    power_cut_campaign("power cuts (group commit)", "", false);
}

/// Issue 44: a full disk and a failing device under a burst of tool calls,
/// each for a random spell at a random point. While the fault lasts a call
/// gets a clear error or an answer it can trust — every answered call has
/// its intent and outcome on the log, every call the upstream ran has its
/// intent there — and once the disk is back the gateway serves again (by
/// itself, or, if it stopped, with a clear error in its log and a restart).
#[test]
fn fault_campaign_disk_full_and_io_errors_lose_nothing_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, fs) = gateway_on_faultfs(dir.path(), "durability = \"strict\"");
    let mut campaign = Campaign::new("disk full and I/O errors");
    let next = AtomicU64::new(1);
    let acknowledged = Mutex::new(Vec::<Value>::new());
    let errors = Mutex::new(BTreeMap::<String, usize>::new());
    let (mut restarts, mut recovered_alone) = (0, 0);
    for round in 0..campaign.kills {
        let fault = if round % 2 == 0 {
            Fault::DiskFull
        } else {
            Fault::IoError
        };
        let before = Duration::from_millis(50) + campaign.point(Duration::from_millis(400));
        let spell = Duration::from_millis(100) + campaign.point(Duration::from_millis(500));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for agent in 0..4u64 {
                let (gw, stop, next) = (&gw, &stop, &next);
                let (acknowledged, errors) = (&acknowledged, &errors);
                s.spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let args = json!({"a": n, "b": agent});
                        let sum = (n + agent).to_string();
                        let Some(r) = gw.try_call("drifty__add", args.clone()) else {
                            // The gateway stopped (checked below).
                            std::thread::sleep(Duration::from_millis(20));
                            continue;
                        };
                        if r["result"]["content"][0]["text"].as_str() == Some(sum.as_str()) {
                            acknowledged.lock().unwrap().push(args);
                        } else {
                            let message = r["error"]["message"]
                                .as_str()
                                .or(r["result"]["content"][0]["text"].as_str())
                                .unwrap_or_else(|| panic!("neither an answer nor an error: {r}"))
                                .to_owned();
                            // One figure per kind of message (numbers cut).
                            let kind: String = message
                                .chars()
                                .filter(|c| !c.is_ascii_digit())
                                .take(80)
                                .collect();
                            *errors.lock().unwrap().entry(kind).or_default() += 1;
                        }
                    }
                });
            }
            std::thread::sleep(before);
            fs.set_fault(fault);
            std::thread::sleep(spell);
            fs.set_fault(Fault::None);
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::SeqCst);
        });
        // Serving again, by itself or after a restart.
        let deadline = Instant::now() + Duration::from_secs(20);
        let args = json!({"a": 0, "b": round});
        let mut restarted = false;
        loop {
            if let Some(r) = gw.try_call("drifty__add", args.clone())
                && r["result"]["content"][0]["text"].as_str() == Some(round.to_string().as_str())
            {
                acknowledged.lock().unwrap().push(args);
                break;
            }
            if gw.exited() {
                let log = gw.log();
                assert!(
                    log.contains("No space left")
                        || log.contains("I/O error")
                        || log.contains("disk"),
                    "(seed {}) the gateway stopped without saying why:\n{log}",
                    campaign.seed
                );
                restarts += 1;
                restarted = true;
                gw.restart();
                gw.wait_for_tool("drifty__add", true);
                continue;
            }
            assert!(
                Instant::now() < deadline,
                "(seed {}) round {round}: not serving 20 s after the {fault:?} ended:\n{}",
                campaign.seed,
                gw.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        if !restarted {
            recovered_alone += 1;
        }
    }
    let leaves = all_leaves(&gw);
    let hashes_of = |kind: &str| -> HashSet<String> {
        leaves
            .iter()
            .filter(|l| l["type"] == kind)
            .filter_map(|l| l["arguments_hash"].as_str().map(str::to_owned))
            .collect()
    };
    let (intents, outcomes) = (hashes_of("tool.call.intent"), hashes_of("tool.call"));
    let seed = campaign.seed;
    let acknowledged = acknowledged.into_inner().unwrap();
    for args in &acknowledged {
        let hash = arguments_hash(args);
        assert!(
            intents.contains(&hash) && outcomes.contains(&hash),
            "(seed {seed}) an answered call is not on the log: {args}"
        );
    }
    let ran = effects(dir.path());
    for args in &ran {
        assert!(
            intents.contains(&arguments_hash(args)),
            "(seed {seed}) the upstream ran a call whose intent is not on the log: {args}"
        );
    }
    gw.assert_audit_clean();
    let indexed =
        crate::faults::assert_receipts_index_matches_log(&gw, &gw.reviewer_key(), &leaves, seed);
    let counts = fs.counts();
    gw.kill();
    let errors = errors.into_inner().unwrap();
    eprintln!(
        "fault campaign disk full and I/O errors: {} spells ({} writes or syncs refused); {} calls \
         answered, each on the log; {} run by the upstream, each with its intent; refused with \
         {errors:?}; serving again by itself after {recovered_alone} spells, after a restart \
         {restarts} times; the receipts index matches all {indexed} leaves",
        campaign.kills,
        counts.injected,
        acknowledged.len(),
        ran.len(),
    );
    drop(fs);
}

/// Issue 44: `interlock connect --yes` and `--undo` with the power cut at a
/// random point (no gateway running: the CLI writes the client's file, the
/// gateway's config and the data directory itself, all on the fault
/// filesystem). After every cut the client's file is its old bytes or a
/// whole connect — the new bytes if the run had said it was done — and the
/// gateway's config still reads; an undo run to its end then gives the
/// client its bytes back and takes the imported servers out.
#[test]
fn fault_campaign_connect_and_undo_power_cut_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut fs = None;
    let mut gw = Gateway::start_on_prepared_data("", &[], &mut |data| {
        fs = Some(FaultFs::mount(data));
    });
    let mut fs = fs.expect("mounted");
    gw.kill();
    // The client's home and the gateway's config on the same disk.
    let home = gw.data().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let original = crate::connect::substitute(
        &std::fs::read_to_string(
            crate::util::manifest_dir().join("tests/data/connect/claude-code/.claude.json"),
        )
        .unwrap(),
    );
    let file = home.join(".claude.json");
    let config = gw.data().join("gateway.toml");
    std::fs::copy(gw.dir.path().join("gateway.toml"), &config).unwrap();
    // What the test wrote itself is on the disk before the campaign starts.
    std::fs::write(&file, &original).unwrap();
    for synced in [&file, &config] {
        std::fs::File::open(synced).unwrap().sync_all().unwrap();
    }
    let config_arg = config.to_str().unwrap().to_owned();
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.to_string_lossy().into_owned()));
    env.push((
        "XDG_CONFIG_HOME".into(),
        home.join(".config").to_string_lossy().into_owned(),
    ));
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let connect = ["connect", "claude-code", "--yes", "--config", &config_arg];
    let undo = ["connect", "--undo", "claude-code", "--config", &config_arg];
    let run = |args: &[&str]| run_cli(args, &env_ref);
    let timed = |args: &[&str]| crate::faults::timed(args, &env_ref);
    let (connect_window, undo_window) = (timed(&connect), timed(&undo));
    let is_connected = |text: &str| {
        serde_json::from_str::<Value>(text).is_ok_and(|v| v["mcpServers"]["interlock"].is_object())
    };
    let imported =
        |text: &str| text.contains("[servers.everything]") || text.contains("[servers.time]");
    let mut campaign = Campaign::new("connect/undo power cuts");
    let (mut cut_mid_run, mut after_done) = (0, 0);
    for i in 0..campaign.kills {
        let cutting_undo = i % 2 == 1;
        if cutting_undo {
            let (ok, said) = run(&connect);
            assert!(ok, "{said}");
        }
        let args: &[&str] = if cutting_undo { &undo } else { &connect };
        let window = if cutting_undo {
            undo_window
        } else {
            connect_window
        };
        let at = campaign.kill_point(i / 2, window);
        let done = power_cut_during(&mut fs, args, &env, at);
        let what = format!("cut {i} ({:?} at {at:?}, seed {})", args[1], campaign.seed);
        let now = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{what}: the client's file is gone: {e}"));
        assert!(
            now == original || is_connected(&now),
            "{what}: neither old nor new: {now}"
        );
        match done {
            Some(true) => {
                after_done += 1;
                // It said it was done: what it did is on the disk.
                assert_eq!(
                    is_connected(&now),
                    !cutting_undo,
                    "{what}: a finished run was lost: {now}"
                );
            }
            Some(false) => panic!("{what}: the run failed with the power on"),
            None => cut_mid_run += 1,
        }
        let text = std::fs::read_to_string(&config)
            .unwrap_or_else(|e| panic!("{what}: the gateway config is gone: {e}"));
        text.parse::<toml::Table>()
            .unwrap_or_else(|e| panic!("{what}: a broken gateway config: {e}\n{text}"));
        let (ok, said) = run(&undo);
        assert!(
            ok || said.contains("nothing to undo"),
            "{what}: undo failed: {said}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            original,
            "{what}: {said}"
        );
        let text = std::fs::read_to_string(&config).unwrap_or_default();
        assert!(
            !imported(&text),
            "{what}: an imported server stayed in the config: {text}"
        );
    }
    eprintln!(
        "fault campaign connect/undo power cuts: {} cuts, {cut_mid_run} mid-run, {after_done} after \
         the run said it was done; broken or mixed files 0, finished runs lost 0, undos that \
         failed 0",
        fs.counts().power_cuts
    );
    drop(dir);
}

/// Issue 44, found by the campaign above: `connect --undo` removed the
/// layer's record without syncing its directory, then deleted the backup's
/// sealing key from the keychain. A power cut brought the record back with
/// its key gone, and every later undo failed ("the key that seals … is not
/// in the keychain: nothing was undone"). The removal is synced before the
/// key goes now, and a layer's records are written whole (temp file,
/// rename, directory sync).
#[test]
fn regression_issue_44_an_undone_connect_stays_undone_after_a_power_cut() {
    // The database off the fault filesystem: its commits sync, and one
    // landing after the undo (SQLite's checkpoint when the CLI's last
    // connection closes, if it closes before the process ends) would hide
    // the missing sync. Only connect's own writes are on it.
    let db = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", db.path().join("interlock.sqlite").display());
    let mut fs = None;
    let mut gw =
        Gateway::start_on_prepared_data("", &[("INTERLOCK_DATABASE_URL", &url)], &mut |data| {
            fs = Some(FaultFs::mount(data));
        });
    let mut fs = fs.expect("mounted");
    gw.kill();
    let home = gw.data().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let original = crate::connect::substitute(
        &std::fs::read_to_string(
            crate::util::manifest_dir().join("tests/data/connect/claude-code/.claude.json"),
        )
        .unwrap(),
    );
    let file = home.join(".claude.json");
    std::fs::write(&file, &original).unwrap();
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    let config = gw.dir.path().join("gateway.toml");
    let config_arg = config.to_str().unwrap().to_owned();
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.to_string_lossy().into_owned()));
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    for args in [
        &["connect", "claude-code", "--yes", "--config", &config_arg][..],
        &["connect", "--undo", "claude-code", "--config", &config_arg][..],
    ] {
        let out = crate::util::interlock_with(args, None, &env_ref);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    fs.power_cut();
    let out = crate::util::interlock_with(
        &["connect", "--undo", "claude-code", "--config", &config_arg],
        None,
        &env_ref,
    );
    let said = format!("{}{}", crate::util::stdout(&out), stderr(&out));
    assert!(
        said.contains("nothing to undo"),
        "the undone layer came back: {said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// Issue 44: `interlock hooks install --yes` and `--undo` with the power
/// cut at a random point (the settings file and the data directory on the
/// fault filesystem; no gateway running). After every cut the settings
/// file is its old bytes or a whole install — what a run that said it was
/// done did, kept — and an undo run to its end gives the old bytes back and
/// leaves no backup behind.
#[test]
fn fault_campaign_hooks_install_and_undo_power_cut_anywhere() {
    let mut fs = None;
    let mut gw = Gateway::start_on_prepared_data("", &[], &mut |data| {
        fs = Some(FaultFs::mount(data));
    });
    let mut fs = fs.expect("mounted");
    let gateway = format!("http://{}", gw.addr);
    gw.kill();
    let home = gw.data().join("home");
    let file = home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original =
        "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(git status)\"]}\n}\n";
    std::fs::write(&file, original).unwrap();
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.to_string_lossy().into_owned()));
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let install = [
        "hooks",
        "install",
        "claude-code",
        "--yes",
        "--gateway",
        &gateway,
    ];
    let undo = ["hooks", "install", "claude-code", "--undo"];
    let run = |args: &[&str]| run_cli(args, &env_ref);
    let timed = |args: &[&str]| crate::faults::timed(args, &env_ref);
    let (install_window, undo_window) = (timed(&install), timed(&undo));
    let mut campaign = Campaign::new("hooks install/undo power cuts");
    let (mut cut_mid_run, mut after_done) = (0, 0);
    for i in 0..campaign.kills {
        let cutting_undo = i % 2 == 1;
        if cutting_undo {
            let (ok, said) = run(&install);
            assert!(ok, "{said}");
        }
        let args: &[&str] = if cutting_undo { &undo } else { &install };
        let window = if cutting_undo {
            undo_window
        } else {
            install_window
        };
        let at = campaign.kill_point(i / 2, window);
        let done = power_cut_during(&mut fs, args, &env, at);
        let what = format!("cut {i} ({:?} at {at:?}, seed {})", args[3], campaign.seed);
        let now = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{what}: the settings file is gone: {e}"));
        let installed = now != original;
        if installed {
            let v: Value = serde_json::from_str(&now)
                .unwrap_or_else(|e| panic!("{what}: a broken file: {e}\n{now}"));
            assert_eq!(v["model"], "opus", "{what}: another setting lost: {now}");
            assert!(
                now.contains(" hook claude-code"),
                "{what}: neither old nor new: {now}"
            );
        }
        match done {
            Some(true) => {
                after_done += 1;
                assert_eq!(
                    installed, !cutting_undo,
                    "{what}: a finished run was lost: {now}"
                );
            }
            Some(false) => panic!("{what}: the run failed with the power on"),
            None => cut_mid_run += 1,
        }
        let (ok, said) = run(&undo);
        assert!(
            ok || said.contains("no Interlock hooks were installed"),
            "{what}: undo failed: {said}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            original,
            "{what}: {said}"
        );
        let left: Vec<_> = std::fs::read_dir(gw.data().join("hooks"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{what}: a backup left behind: {left:?}");
    }
    eprintln!(
        "fault campaign hooks install/undo power cuts: {} cuts, {cut_mid_run} mid-run, \
         {after_done} after the run said it was done; broken or mixed files 0, finished runs \
         lost 0, undos that failed 0",
        fs.counts().power_cuts
    );
}

/// Issue 44: alert delivery through power cuts, under the default group
/// commit. A SIEM's webhook receives the log's entries from the gateway's
/// cursor; after each cut the gateway starts again on what the disk kept.
/// In the end every entry on the log has reached the receiver (nothing
/// skipped), and what the receiver holds for an index is the entry the log
/// holds there — an event sent for an entry the cut then took, with another
/// entry written at its index since, would be a SIEM contradicting the log.
#[test]
fn fault_campaign_alerts_through_power_cuts_skip_nothing_and_never_contradict_the_log() {
    use crate::receiver::{Mode, Receiver};
    let rx = Receiver::start(Mode::Accept);
    let dir = tempfile::tempdir().unwrap();
    let sink = format!(
        "[alerts]\npoll_ms = 50\n[[alerts.sinks]]\nname = \"siem\"\nkind = \"webhook\"\n\
         url = \"{}/hook\"\nsecret_env = \"SIEM_HOOK_SECRET\"\nbackoff_ms = 50\n\
         backoff_max_ms = 200\ntimeout_ms = 1000\n",
        rx.base
    );
    let (mut gw, mut fs) =
        gateway_on_faultfs_with(dir.path(), "", &sink, &[("SIEM_HOOK_SECRET", "fault")]);
    let mut campaign = Campaign::new("alerts through power cuts");
    let next = AtomicU64::new(1);
    for agent in 0..campaign.kills as u64 {
        let cut_after = Duration::from_millis(100) + campaign.point(Duration::from_millis(500));
        let stop = AtomicBool::new(false);
        let pid = gw.pid();
        std::thread::scope(|s| {
            {
                let (gw, stop, next) = (&gw, &stop, &next);
                s.spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let _ = gw.try_call("drifty__add", json!({"a": n, "b": agent}));
                    }
                });
            }
            std::thread::sleep(cut_after);
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            stop.store(true, Ordering::SeqCst);
        });
        gw.kill();
        fs.power_cut();
        gw.restart();
        gw.wait_for_tool("drifty__add", true);
    }
    let leaves = all_leaves(&gw);
    let sent = |e: &Value| {
        let t = e["type"].as_str().unwrap_or("");
        t != "tool.call.intent" && !t.starts_with("log.")
    };
    let expected: Vec<u64> = leaves
        .iter()
        .enumerate()
        .filter(|(_, e)| sent(e))
        .map(|(i, _)| i as u64)
        .collect();
    let got = rx.wait_until("every entry on the log", |got| {
        let have: HashSet<u64> = got
            .iter()
            .map(|r| r.json()["index"].as_u64().unwrap())
            .collect();
        expected.iter().all(|i| have.contains(i))
    });
    let seed = campaign.seed;
    let mut contradictions = Vec::new();
    for r in &got {
        let ev = r.json();
        let i = ev["index"].as_u64().unwrap() as usize;
        let Some(entry) = leaves.get(i) else {
            contradictions.push(format!(
                "{i}: beyond the log's end ({}): {ev}",
                leaves.len()
            ));
            continue;
        };
        let same = ev["kind"] == entry["type"]
            && (ev["arguments_hash"].is_null() || ev["arguments_hash"] == entry["arguments_hash"]);
        if !same {
            contradictions.push(format!("{i}: sent {ev}, the log holds {entry}"));
        }
    }
    assert!(
        contradictions.is_empty(),
        "(seed {seed}) {} events contradict the log after power cuts: {:?}",
        contradictions.len(),
        &contradictions[..contradictions.len().min(3)]
    );
    gw.assert_audit_clean();
    gw.kill();
    eprintln!(
        "fault campaign alerts through power cuts: {} cuts; {} entries on the log to send, all \
         received ({} requests); skipped 0, contradicting the log 0",
        fs.counts().power_cuts,
        expected.len(),
        got.len()
    );
}

/// Issue 44, found by the disk-full campaign: a decision whose COMMIT failed
/// on the full disk left its pooled database connection counted in a
/// transaction (SQLite had rolled it back itself, so sqlx's ROLLBACK
/// failed), and every later decision that drew that connection failed —
/// "attempted to call begin_with at non-zero transaction depth" — until the
/// gateway restarted, while tool calls went on. Such a connection is now
/// closed instead of reused.
#[test]
fn regression_issue_44_a_full_disk_does_not_leave_decisions_failing() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, fs) = gateway_on_faultfs(dir.path(), "");
    fs.set_fault(Fault::DiskFull);
    let mut refused = 0;
    for i in 0..8 {
        let out = gw.cli(&["agents", "add", &format!("during-{i}")]);
        if !out.status.success() {
            refused += 1;
        }
    }
    assert!(refused > 0, "the full disk refused no decision");
    fs.set_fault(Fault::None);
    for i in 0..16 {
        let out = gw.cli(&["agents", "add", &format!("after-{i}")]);
        assert!(
            out.status.success(),
            "decision {i} after the disk was freed: {}",
            stderr(&out)
        );
    }
    gw.assert_audit_clean();
}
