//! Issue 44, a first slice of the fault campaign: SIGKILL at a random point
//! of the write paths that run as a short process beside a live gateway, and
//! what must hold after each kill.
//!
//! - A coding agent's hooks install and undo (`interlock hooks install`):
//!   the client's settings file is its old bytes or its new bytes, never a
//!   mix; the next undo gives the old bytes back, whatever point the kill
//!   hit; nothing is left in the data directory that reads as an install.
//! - A client's connect and undo (`interlock connect`, no gateway running):
//!   the client's file is old or new, the gateway's config still reads, and
//!   the next undo gives the file back, the imported servers up, and leaves
//!   none of the upstream secrets connect moved in the keychain.
//!
//! `INTERLOCK_FAULT_KILLS` sets the kills per path (default 12, the count
//! `.ci/run` runs; `scripts/fault-campaign` runs the full one), and
//! `INTERLOCK_FAULT_SEED` replays a campaign: each test prints its seed and
//! its figures (kills that landed before the end, and after).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::gateway_util::Gateway;
use crate::util::{stderr, stdout};

/// The campaign's size and its random points (xorshift64*: a test needs
/// replayable points, not a cryptographic generator).
pub(crate) struct Campaign {
    pub(crate) kills: usize,
    pub(crate) seed: u64,
    state: u64,
}

impl Campaign {
    pub(crate) fn new(path: &str) -> Campaign {
        let kills = std::env::var("INTERLOCK_FAULT_KILLS")
            .ok()
            .and_then(|k| k.parse().ok())
            .unwrap_or(12);
        let seed = std::env::var("INTERLOCK_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("fault campaign {path}: {kills} kills, INTERLOCK_FAULT_SEED={seed}");
        Campaign {
            kills,
            seed,
            state: seed,
        }
    }

    /// The `i`th kill's point over a run of `window`: every other one drawn
    /// over the whole run, the others over its last third and a little past
    /// it, where a short process does its writes (its start-up is most of
    /// its time).
    pub(crate) fn kill_point(&mut self, i: usize, window: Duration) -> Duration {
        if i % 4 < 2 {
            self.point(window)
        } else {
            window * 2 / 3 + self.point(window * 2 / 5)
        }
    }

    /// A point in `[0, max)`.
    pub(crate) fn point(&mut self, max: Duration) -> Duration {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let r = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let nanos = max.as_nanos().max(1) as u64;
        Duration::from_nanos(r % nanos)
    }
}

/// Runs `interlock ARGS` with `env` and SIGKILLs it after `after` unless it
/// ended first; whether the kill landed.
pub(crate) fn kill_after(args: &[&str], env: &[(String, String)], after: Duration) -> bool {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the binary runs");
    let deadline = Instant::now() + after;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Every leaf on `gw`'s log, in order, read through its reviewer API.
pub(crate) fn log_leaves(gw: &Gateway, reviewer: &str) -> Vec<Value> {
    let mut leaves: Vec<Value> = Vec::new();
    loop {
        let page = gw.api_get(
            reviewer,
            &format!("/api/v1/log?from={}&limit=1000", leaves.len()),
        );
        let entries = page["entries"].as_array().unwrap();
        if entries.is_empty() {
            return leaves;
        }
        leaves.extend(entries.iter().map(|e| e["entry"].clone()));
    }
}

/// Issue 44: the receipts index (the store's `receipt_facts`, written by the
/// tally and by the receipts API catching up) against the log it indexes,
/// after faults: every leaf of `leaves` (the log as read before) is listed
/// once, none is missing, and each kind's filter selects exactly the leaves
/// of that kind — so no fact outlived a leaf a fault took, and none was
/// skipped. Returns how many leaves were checked.
pub(crate) fn assert_receipts_index_matches_log(
    gw: &Gateway,
    reviewer: &str,
    leaves: &[Value],
    seed: u64,
) -> usize {
    // Every receipt `query` selects, newest first, as (index, kind).
    let all = |query: &str| -> Vec<(u64, String)> {
        let mut out = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = gw.api_get(
                reviewer,
                &format!("/api/v1/receipts?limit=500{query}{cursor}"),
            );
            for r in page["receipts"].as_array().unwrap() {
                out.push((
                    r["index"].as_u64().unwrap(),
                    r["kind"].as_str().unwrap_or("").to_owned(),
                ));
            }
            match page["next_cursor"].as_u64() {
                Some(c) => cursor = format!("&cursor={c}"),
                None => return out,
            }
        }
    };
    let n = leaves.len() as u64;
    let mut listed: Vec<(u64, String)> = all("").into_iter().filter(|(i, _)| *i < n).collect();
    listed.sort();
    let indices: Vec<u64> = listed.iter().map(|(i, _)| *i).collect();
    assert_eq!(
        indices,
        (0..n).collect::<Vec<_>>(),
        "(seed {seed}) the receipts index lists other leaves than the log's {n}"
    );
    let mut kinds = std::collections::BTreeMap::<String, Vec<u64>>::new();
    for (i, kind) in &listed {
        assert_eq!(
            leaves[*i as usize]["type"].as_str().unwrap_or(""),
            kind,
            "(seed {seed}) receipt {i} is not the log's leaf {i}"
        );
        kinds.entry(kind.clone()).or_default().push(*i);
    }
    for (kind, want) in &kinds {
        let mut got: Vec<u64> = all(&format!("&event={kind}"))
            .into_iter()
            .map(|(i, _)| i)
            .filter(|i| *i < n)
            .collect();
        got.sort_unstable();
        assert_eq!(
            &got, want,
            "(seed {seed}) the index's facts for {kind} are not the log's {kind} leaves"
        );
    }
    leaves.len()
}

/// Each plan's status, by id (`interlock plans list --json`).
pub(crate) fn plan_statuses(gw: &Gateway) -> std::collections::BTreeMap<String, String> {
    let out = gw.cli(&["plans", "list", "--json"]);
    assert!(out.status.success(), "plans list: {}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["plan_id"].as_str().unwrap().to_owned(),
                p["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// [`plan_statuses`] once none is EXECUTING (a lost executor's lease runs
/// out first), or as they are at `deadline`.
pub(crate) fn plan_statuses_settled(
    gw: &Gateway,
    deadline: Instant,
) -> std::collections::BTreeMap<String, String> {
    loop {
        let statuses = plan_statuses(gw);
        if !statuses.values().any(|s| s == "EXECUTING") || Instant::now() > deadline {
            return statuses;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The names of the upstream secrets connect keeps in the keychain of
/// `service`, as the Secret Service lists them (`secret-tool`, from
/// libsecret-tools). A backup's sealing key is stored before the layer that
/// names it (the backup cannot be opened without it), so a connect killed
/// between the two leaves that random key, which seals nothing: not counted.
fn keychain_secrets(service: &str) -> Vec<String> {
    let out = Command::new("secret-tool")
        .args(["search", "--all", "service", service])
        .output()
        .expect("secret-tool runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .filter_map(|l| l.split_once(" = ").map(|(_, v)| v.trim().to_owned()))
        .filter(|v| v.starts_with("token:upstream."))
        .collect()
}

/// How long `interlock ARGS` takes when nothing stops it.
pub(crate) fn timed(args: &[&str], env: &[(&str, &str)]) -> Duration {
    let t = Instant::now();
    let out = crate::util::interlock_with(args, None, env);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    t.elapsed()
}

/// Issue 44: `interlock hooks install --yes` and `--undo` SIGKILLed at
/// random points. After every kill the settings file is the original or a
/// whole install (its other settings kept); an undo run to its end then
/// gives the original bytes back — an install killed before it wrote the
/// file, or an undo killed after it did, included — and no backup is left
/// that a later undo would take for an install.
#[test]
fn fault_campaign_hooks_install_and_undo_killed_anywhere() {
    let gw = Gateway::start("");
    let home = tempfile::tempdir().unwrap();
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.path().to_string_lossy().into_owned()));
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let file = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original =
        "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(git status)\"]}\n}\n";
    std::fs::write(&file, original).unwrap();
    let gateway = format!("http://{}", gw.addr);
    let install = [
        "hooks",
        "install",
        "claude-code",
        "--yes",
        "--gateway",
        &gateway,
    ];
    let undo = ["hooks", "install", "claude-code", "--undo"];
    // Kills are drawn over each command's own run time when nothing stops it.
    let install_window = timed(&install, &env_ref);
    let undo_window = timed(&undo, &env_ref);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let mut campaign = Campaign::new("hooks install/undo");
    let (mut landed, mut ended) = (0, 0);
    for i in 0..campaign.kills {
        // Even kills hit an install; odd ones an undo of a whole install.
        let killing_undo = i % 2 == 1;
        if killing_undo {
            let out = crate::util::interlock_with(&install, None, &env_ref);
            assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        }
        let args: &[&str] = if killing_undo { &undo } else { &install };
        let at = campaign.kill_point(
            i / 2,
            if killing_undo {
                undo_window
            } else {
                install_window
            },
        );
        if kill_after(args, &env, at) {
            landed += 1;
        } else {
            ended += 1;
        }
        let now = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!(
                "kill {i} ({args:?} at {at:?}, seed {}): the file is gone: {e}",
                campaign.seed
            )
        });
        if now != original {
            let v: Value = serde_json::from_str(&now).unwrap_or_else(|e| {
                panic!(
                    "kill {i} (seed {}): a broken file: {e}\n{now}",
                    campaign.seed
                )
            });
            assert_eq!(v["model"], "opus", "kill {i}: another setting lost: {now}");
            assert!(
                now.contains(" hook claude-code"),
                "kill {i} (seed {}): neither old nor new: {now}",
                campaign.seed
            );
        }
        // The next undo, run to its end, gives the original back (or
        // there was nothing to undo, and the original is there).
        let out = crate::util::interlock_with(&undo, None, &env_ref);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            out.status.success() || said.contains("no Interlock hooks were installed"),
            "kill {i} ({args:?} at {at:?}, seed {}): undo failed: {said}",
            campaign.seed
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            original,
            "kill {i} ({args:?} at {at:?}, seed {}): {said}",
            campaign.seed
        );
        let left: Vec<_> = std::fs::read_dir(gw.data().join("hooks"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "kill {i}: a backup left behind: {left:?}");
    }
    eprintln!(
        "fault campaign hooks install/undo: {landed} kills landed mid-run, {ended} runs ended first; \
         broken or mixed files 0, undos that failed 0"
    );
    gw.assert_audit_clean();
}

/// A home with Claude Code's connect fixture (the peers' paths filled in)
/// beside `gw`'s data directory, and the environment the CLI runs in there.
struct ConnectHome {
    home: tempfile::TempDir,
    file: std::path::PathBuf,
    original: String,
    config: std::path::PathBuf,
    config_arg: String,
    env: Vec<(String, String)>,
}

impl ConnectHome {
    fn new(gw: &Gateway) -> ConnectHome {
        let home = tempfile::tempdir().unwrap();
        let original = crate::connect::substitute(
            &std::fs::read_to_string(
                crate::util::manifest_dir().join("tests/data/connect/claude-code/.claude.json"),
            )
            .unwrap(),
        );
        let file = home.path().join(".claude.json");
        std::fs::write(&file, &original).unwrap();
        let config = gw.dir.path().join("gateway.toml");
        let config_arg = config.to_str().unwrap().to_owned();
        let mut env = gw.env_for_thread();
        env.push(("HOME".into(), home.path().to_string_lossy().into_owned()));
        env.push((
            "XDG_CONFIG_HOME".into(),
            home.path().join(".config").to_string_lossy().into_owned(),
        ));
        ConnectHome {
            home,
            file,
            original,
            config,
            config_arg,
            env,
        }
    }
}

/// Issue 44: `interlock connect --yes` and `--undo` SIGKILLed at random
/// points, with no gateway running (the CLI writes the gateway's config,
/// the keychain and the client's file itself). After every kill the
/// client's file is its old bytes or a whole connect and the gateway's
/// config still reads; an undo run to its end gives the client its bytes
/// back and takes the imported servers out of the config.
#[test]
fn fault_campaign_connect_and_undo_killed_anywhere() {
    let mut gw = Gateway::start("");
    gw.kill();
    let ConnectHome {
        home: _home,
        file,
        original,
        config,
        config_arg,
        env,
    } = ConnectHome::new(&gw);
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let connect = ["connect", "claude-code", "--yes", "--config", &config_arg];
    let undo = ["connect", "--undo", "claude-code", "--config", &config_arg];
    let service = gw.env_var("INTERLOCK_KEYCHAIN_SERVICE").unwrap().to_owned();
    let connect_window = timed(&connect, &env_ref);
    // The keychain check below sees what connect stores (it cannot pass by
    // seeing nothing at all).
    let moved = keychain_secrets(&service);
    assert!(!moved.is_empty(), "connect moved no secret the lister sees");
    let undo_window = timed(&undo, &env_ref);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(keychain_secrets(&service).is_empty());

    let imported =
        |text: &str| text.contains("[servers.everything]") || text.contains("[servers.time]");
    let mut campaign = Campaign::new("connect/undo");
    let (mut landed, mut ended) = (0, 0);
    for i in 0..campaign.kills {
        let killing_undo = i % 2 == 1;
        if killing_undo {
            let out = crate::util::interlock_with(&connect, None, &env_ref);
            assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        }
        let args: &[&str] = if killing_undo { &undo } else { &connect };
        let at = campaign.kill_point(
            i / 2,
            if killing_undo {
                undo_window
            } else {
                connect_window
            },
        );
        if kill_after(args, &env, at) {
            landed += 1;
        } else {
            ended += 1;
        }
        let what = format!("kill {i} ({:?} at {at:?}, seed {})", args[1], campaign.seed);
        let now = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{what}: the file is gone: {e}"));
        if now != original {
            let v: Value = serde_json::from_str(&now)
                .unwrap_or_else(|e| panic!("{what}: a broken file: {e}\n{now}"));
            assert!(
                v["mcpServers"]["interlock"].is_object(),
                "{what}: neither old nor new: {now}"
            );
        }
        if let Ok(text) = std::fs::read_to_string(&config) {
            text.parse::<toml::Table>()
                .unwrap_or_else(|e| panic!("{what}: a broken gateway config: {e}\n{text}"));
        }
        let out = crate::util::interlock_with(&undo, None, &env_ref);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            out.status.success() || said.contains("nothing to undo"),
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
        let left = keychain_secrets(&service);
        assert!(
            left.is_empty(),
            "{what}: secrets left in the keychain: {left:?}"
        );
    }
    eprintln!(
        "fault campaign connect/undo: {landed} kills landed mid-run, {ended} runs ended first; \
         broken or mixed files 0, undos that failed 0, upstream secrets left 0"
    );
}

/// The points the campaign found, each made by hand: a hooks install
/// killed after it kept the backup but before it wrote the file (the file
/// is the original, the backup says installed), and an undo killed after it
/// gave the bytes back but before it dropped the backup. Both undo to the
/// end now; before, the first refused as "changed since the install".
#[test]
fn regression_issue_44_a_hooks_undo_finishes_what_a_killed_run_left() {
    let gw = Gateway::start("");
    let home = tempfile::tempdir().unwrap();
    let mut env = gw.env_for_thread();
    env.push(("HOME".into(), home.path().to_string_lossy().into_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let file = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = "{\"theme\": \"GitHub\"}\n";
    let gateway = format!("http://{}", gw.addr);
    let run = |args: &[&str]| {
        let out = crate::util::interlock_with(args, None, &env);
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    };
    for _ in 0..2 {
        std::fs::write(&file, original).unwrap();
        run(&[
            "hooks",
            "install",
            "gemini-cli",
            "--yes",
            "--gateway",
            &gateway,
        ]);
        // As the killed run left it: the original bytes, the backup kept.
        std::fs::write(&file, original).unwrap();
        run(&["hooks", "install", "gemini-cli", "--undo"]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
        let left: Vec<_> = std::fs::read_dir(gw.data().join("hooks"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // An install killed inside its first atomic write: a directory with a
    // temporary file and no backup. Nothing to undo, and swept away.
    let stray = gw.data().join("hooks/gemini-cli-000000000000");
    std::fs::create_dir_all(&stray).unwrap();
    let out =
        crate::util::interlock_with(&["hooks", "install", "gemini-cli", "--undo"], None, &env);
    assert!(
        stderr(&out).contains("no Interlock hooks were installed"),
        "{}",
        stderr(&out)
    );
}

/// A point the campaign found in `interlock connect --undo`, made by hand:
/// an undo killed after it gave the client its bytes back (before, the next
/// undo refused: "changed after connect wrote it"). The other — an undo
/// killed after it deleted the keychain tokens, the backup's sealing key
/// among them, so that no undo could open the backup again — cannot be
/// made from outside; the key is now deleted last, after the layer, and
/// `fault_campaign_connect_and_undo_killed_anywhere` holds it.
#[test]
fn regression_issue_44_a_connect_undo_finishes_what_a_killed_undo_left() {
    let mut gw = Gateway::start("");
    gw.kill();
    let ConnectHome {
        home: _home,
        file,
        original,
        config,
        config_arg,
        env,
    } = ConnectHome::new(&gw);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = |args: &[&str]| {
        let out = crate::util::interlock_with(args, None, &env);
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    };
    run(&["connect", "claude-code", "--yes", "--config", &config_arg]);
    // As an undo killed after its first step left it: the bytes given back.
    std::fs::write(&file, &original).unwrap();
    run(&["connect", "--undo", "claude-code", "--config", &config_arg]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    assert!(!text.contains("[servers.everything]"), "{text}");
    let out = crate::util::interlock_with(
        &["connect", "--undo", "claude-code", "--config", &config_arg],
        None,
        &env,
    );
    assert!(stderr(&out).contains("nothing to undo"), "{}", stderr(&out));
}

/// Issue 44: a reviewer's decision and an execution from the CLI, with no
/// gateway running (the CLI signs with the keychain's key and writes the
/// store itself), SIGKILLed at random points. Then a gateway starts on the
/// same data directory and, once a lost execution's lease has run out, what
/// must hold: no decision half-applied (a plan is approved exactly when its
/// `plan.decision` leaf is on the log), no plan run twice (one transition to
/// EXECUTING at most) or stuck in EXECUTING, and `audit verify` clean.
#[test]
fn fault_campaign_cli_decisions_and_executions_killed_anywhere() {
    let mut gw = Gateway::start("");
    gw.kill();
    let env = gw.env_for_thread();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let plans = tempfile::tempdir().unwrap();
    let workspace = gw.data().join("workspace");
    let propose = |id: &str| {
        let plan = serde_json::json!({
            "schema_version": "interlock.plan/v1", "plan_id": id, "title": format!("Fault {id}"),
            "proposer": "agent:faults", "created_at": "2026-12-07T00:00:00Z",
            "body": {"stages": [{
                "id": "write", "action": "fs.write_file",
                "target": workspace.join(format!("{id}.txt")).to_str().unwrap(),
                "params": {"content": "once\n"},
                "preconditions": [{"probe": "fs.path_absent"}],
                "verify": [{"probe": "fs.file_contains", "params": {"text": "once"}}],
                "rollback": "Delete it."}]}
        });
        let path = plans.path().join(format!("{id}.json"));
        std::fs::write(&path, plan.to_string()).unwrap();
        let out = crate::util::interlock_with(
            &["plan", "propose", path.to_str().unwrap()],
            None,
            &env_ref,
        );
        assert!(out.status.success(), "propose {id}: {}", stderr(&out));
    };
    let approve_args = |id: &str| {
        let hash = crate::util::shown_hash("plans", id, &env_ref);
        vec![
            "plans".to_owned(),
            "approve".into(),
            id.to_owned(),
            "--reason".into(),
            "fault campaign".into(),
            "--hash".into(),
            hash,
        ]
    };
    // Each command's own run time, from a plan that is not killed.
    propose("fault-timing");
    let approve = approve_args("fault-timing");
    let approve_ref: Vec<&str> = approve.iter().map(String::as_str).collect();
    let approve_window = timed(&approve_ref, &env_ref);
    let execute_window = timed(&["plan", "execute", "fault-timing"], &env_ref);

    let mut campaign = Campaign::new("cli decisions/executions");
    let (mut landed, mut ended) = (0, 0);
    for i in 0..campaign.kills {
        let id = format!("fault-{i}");
        propose(&id);
        let approve = approve_args(&id);
        let approve: Vec<&str> = approve.iter().map(String::as_str).collect();
        let killed = if i % 2 == 0 {
            kill_after(&approve, &env, campaign.kill_point(i / 2, approve_window))
        } else {
            let out = crate::util::interlock_with(&approve, None, &env_ref);
            assert!(out.status.success(), "approve {id}: {}", stderr(&out));
            kill_after(
                &["plan", "execute", &id],
                &env,
                campaign.kill_point(i / 2, execute_window),
            )
        };
        if killed {
            landed += 1;
        } else {
            ended += 1;
        }
    }

    // A gateway on the same data directory recovers what the killed
    // executions left, once their leases run out.
    gw.start_serving();
    let key = gw.reviewer_key();
    let lease = Duration::from_secs(interlock_engine::LEASE_TIMEOUT_SECS as u64 + 15);
    let deadline = Instant::now() + lease;
    let statuses = plan_statuses_settled(&gw, deadline);
    let leaves = log_leaves(&gw, &key);
    // Leaves of plan `id` of type `kind` whose `field` is `value`.
    let count = |kind: &str, id: &str, field: &str, value: &str| {
        leaves
            .iter()
            .filter(|l| l["type"] == kind && l["plan_id"] == id && l[field] == value)
            .count()
    };
    let mut by_status = std::collections::BTreeMap::<String, usize>::new();
    for (id, status) in &statuses {
        *by_status.entry(status.clone()).or_default() += 1;
        let seed = campaign.seed;
        assert_ne!(
            status, "EXECUTING",
            "{id} (seed {seed}): stuck in EXECUTING"
        );
        let approved = count("plan.decision", id, "decision", "approve");
        assert!(
            approved <= 1,
            "{id} (seed {seed}): approved {approved} times"
        );
        assert_eq!(
            approved == 1,
            status != "PROPOSED",
            "{id} (seed {seed}): status {status} with {approved} approval leaves (half-applied)"
        );
        let executing = count("plan.transition", id, "to", "EXECUTING");
        assert!(executing <= 1, "{id} (seed {seed}): run {executing} times");
        if status == "SUCCEEDED" || status == "HALTED" {
            assert_eq!(
                executing, 1,
                "{id} (seed {seed}): {status} without its run on the log"
            );
        }
        let written = workspace.join(format!("{id}.txt"));
        if status == "SUCCEEDED" {
            assert_eq!(std::fs::read_to_string(&written).unwrap(), "once\n", "{id}");
        }
    }
    gw.assert_audit_clean();
    eprintln!(
        "fault campaign cli decisions/executions: {landed} kills landed mid-run, {ended} runs ended \
         first; after recovery {by_status:?}; half-applied decisions 0, doubled executions 0, \
         stuck executions 0"
    );
}
