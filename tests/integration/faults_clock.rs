//! Issue 44, clocks: the wall clock of `interlock serve` (and of the CLI
//! beside it: one machine, one clock) stepped back and forward by hours, at
//! seeded random moments, while calls are held for approval, approved with a
//! validity window, retried, replayed, and the log appends and signs.
//!
//! The clock is libfaketime's (Debian's `faketime`, which scripts/setup.sh
//! installs): `LD_PRELOAD`ed into every `interlock` process the gateway
//! helper starts, reading its offset from a file the test rewrites, with the
//! monotonic clock left alone — an NTP step moves the wall clock only.
//!
//! What must hold whatever the steps: a clock step never grants an approval
//! (a plan runs only inside a valid approval's window by the gateway's own
//! clock, an expired or vetoed plan stays so when the clock goes back, a
//! standing approval covers only inside its window), a veto is taken at any
//! clock, a decision is one-shot (a replayed statement is refused at any
//! clock), a plan runs at most once, the log's leaves keep their append order
//! however their times move, `audit verify` and the receipts verified offline
//! are clean, and the gateway keeps answering. `INTERLOCK_FAULT_KILLS` sets
//! the rounds (two to four steps each; default 8, at least 4),
//! `INTERLOCK_FAULT_SEED` replays a campaign. Each hole the campaigns found
//! has a `regression_issue_44_` test below, made by hand.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http, peers_dir};
use crate::util::{stderr, stdout};

/// libfaketime, as Debian's `faketime` package installs it.
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

const HOUR: i64 = 3600;

/// The wall clock of the processes run with [`FakeClock::env`]: an offset
/// from the real time, in a file libfaketime reads on every call
/// (`FAKETIME_NO_CACHE`), so a rewrite steps every process at once.
struct FakeClock {
    _dir: tempfile::TempDir,
    file: PathBuf,
    offset: i64,
}

impl FakeClock {
    fn new() -> FakeClock {
        assert!(
            std::path::Path::new(LIBFAKETIME).exists(),
            "{LIBFAKETIME} is missing: install Debian's `faketime` (scripts/setup.sh does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("faketime");
        let clock = FakeClock {
            _dir: dir,
            file,
            offset: 0,
        };
        clock.write();
        clock
    }

    /// What a process needs in its environment to run on this clock. Only
    /// the wall clock moves: durations (a held call's wait, timers) are
    /// measured on the monotonic one, which an NTP step leaves alone.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LD_PRELOAD", LIBFAKETIME.to_owned()),
            (
                "FAKETIME_TIMESTAMP_FILE",
                self.file.to_string_lossy().into_owned(),
            ),
            ("FAKETIME_NO_CACHE", "1".to_owned()),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
        ]
    }

    /// Steps the clock to `offset` seconds from the real time.
    fn set(&mut self, offset: i64) {
        self.offset = offset;
        self.write();
    }

    fn write(&self) {
        // Written whole and renamed: a process reading it mid-write must not
        // see half an offset.
        let tmp = self.file.with_extension("tmp");
        std::fs::write(&tmp, format!("{:+}\n", self.offset)).unwrap();
        std::fs::rename(&tmp, &self.file).unwrap();
    }

    /// The time the stepped processes read now.
    fn now(&self) -> i64 {
        real_now() + self.offset
    }
}

fn real_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// The campaign's rounds and its random steps (xorshift64*, as in
/// `faults.rs`: replayable, not cryptographic).
struct Campaign {
    rounds: usize,
    seed: u64,
    state: u64,
}

impl Campaign {
    fn new(path: &str) -> Campaign {
        let rounds = std::env::var("INTERLOCK_FAULT_KILLS")
            .ok()
            .and_then(|k| k.parse().ok())
            // Fewer rounds might never step back while a leaf is written.
            .map_or(8, |k: usize| k.max(4));
        let seed = std::env::var("INTERLOCK_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("fault campaign {path}: {rounds} rounds, INTERLOCK_FAULT_SEED={seed}");
        Campaign {
            rounds,
            seed,
            state: seed,
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `[0, n)`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A new clock offset at least an hour from `from`, back or forward, at
    /// most eight hours from the real time (the steps are by hours, and a
    /// plan approved with `--expires 2h` can land on either side of its
    /// window).
    fn step_from(&mut self, from: i64) -> i64 {
        loop {
            let to = (self.below(16 * 60 + 1) as i64 - 8 * 60) * 60;
            if (to - from).abs() >= HOUR {
                return to;
            }
        }
    }
}

/// A gateway on `clock` serving the drifting SDK server with its `note` tool
/// (medium risk), and a default role allowed only low risk: every `note`
/// call is held for a reviewer (for a second, then the agent is told the
/// plan to wait for), `greet` is answered at once.
fn gateway_on(clock: &FakeClock) -> Gateway {
    let script = peers_dir().join("drifting-server.mjs");
    let env = clock.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gw = Gateway::start_with_env(
        &format!(
            "[calls]\nhold_secs = 1\n[roles.default]\ntools = [\"*\"]\nmax_risk = \"low\"\n\
             [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ NOTE_TOOL = \"1\" }}\n",
            script.to_str().unwrap(),
        ),
        &env,
    );
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__note", true);
    gw
}

/// Every leaf of the gateway's log, in append order.
fn leaves(gw: &Gateway, key: &str) -> Vec<Value> {
    let mut all: Vec<Value> = Vec::new();
    loop {
        let page = gw.api_get(key, &format!("/api/v1/log?from={}&limit=1000", all.len()));
        let entries = page["entries"].as_array().unwrap();
        if entries.is_empty() {
            return all;
        }
        all.extend(entries.iter().cloned());
    }
}

/// The leaf's entry and its `time` (the writer's wall clock when it
/// appended it).
fn entry_time(leaf: &Value) -> i64 {
    leaf["entry"]["time"]
        .as_i64()
        .unwrap_or_else(|| panic!("a leaf without its time: {leaf}"))
}

/// `tools/call` through the TypeScript SDK client.
fn call(gw: &Gateway, tool: &str, args: Value) -> Value {
    gw.client("mjs", &["call", tool, &args.to_string()])
}

/// The text a tool's answer carries.
fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The statement a `plan.decision` leaf recorded, decoded: its window.
fn statement_window(decision: &Value) -> (i64, i64) {
    use base64::Engine as _;
    let payload = decision["entry"]["statement"]["payload"]
        .as_str()
        .unwrap_or_else(|| panic!("a decision leaf without its statement: {decision}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .unwrap();
    let st: Value = serde_json::from_slice(&bytes).unwrap();
    (
        st["not_before"].as_i64().unwrap(),
        st["expires_at"].as_i64().unwrap(),
    )
}

/// Checks that stepping the file reaches `interlock serve`: with the clock
/// `offset` away, a call's leaf carries a time that far from the real one.
fn assert_the_step_reaches_the_gateway(
    gw: &Gateway,
    key: &str,
    clock: &mut FakeClock,
    offset: i64,
) {
    clock.set(offset);
    let r = call(gw, "drifty__greet", json!({"name": "clock"}));
    assert_eq!(text(&r), "Hello, clock!", "{r}");
    let all = leaves(gw, key);
    let last = all
        .iter()
        .rev()
        .find(|l| l["entry"]["type"] == "tool.call")
        .expect("the call's leaf");
    let seen = entry_time(last);
    assert!(
        (seen - clock.now()).abs() < 120,
        "the gateway's leaf says {seen}, the stepped clock {} (real {}): libfaketime did not reach it",
        clock.now(),
        real_now()
    );
}

/// Issue 44: held calls, their approvals (a two-hour window) and the agent's
/// retries, with the wall clock stepped back and forward by up to eight
/// hours between each move. What must hold is checked on the log at the
/// end, whatever the steps made of each round:
/// - a plan reached EXECUTING at most once, and only with an approval on
///   the log whose window held the gateway's clock at that moment (a step
///   never granted one);
/// - an agent told its call ran has that plan's run on the log;
/// - a plan once EXPIRED never ran (stepping back does not revive it);
/// - every replay of a recorded decision was refused, at any clock;
/// - the leaves are in append order (their `seq` is their index) whatever
///   their times did, and `audit verify` is clean;
/// - the gateway answered every call (it kept serving).
#[test]
fn fault_campaign_clock_steps_during_held_calls_and_approvals() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let key = gw.reviewer_key();
    // First prove the stepped time reaches the gateway, both ways.
    assert_the_step_reaches_the_gateway(&gw, &key, &mut clock, -5 * HOUR);
    assert_the_step_reaches_the_gateway(&gw, &key, &mut clock, 5 * HOUR);
    clock.set(0);

    let env = gw.env_for_thread();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut campaign = Campaign::new("clock steps, held calls");
    let mut steps = 0;
    let mut step = |clock: &mut FakeClock, campaign: &mut Campaign| {
        let to = campaign.step_from(clock.offset);
        clock.set(to);
        steps += 1;
    };
    let (mut approved, mut ran, mut refused_runs, mut replays, mut vetoes) = (0, 0, 0, 0, 0);
    let mut told_ran: Vec<String> = Vec::new();
    for i in 0..campaign.rounds {
        let what = format!("round {i} (seed {})", campaign.seed);
        let args = json!({"text": format!("round {i}")});
        let r = call(&gw, "drifty__note", args.clone());
        let held = &r["result"]["structuredContent"];
        assert_eq!(held["held"], true, "{what}: not held: {r}");
        let plan_id = held["plan_id"].as_str().unwrap().to_owned();
        step(&mut clock, &mut campaign);
        // A reviewer approves, for two hours from the gateway's clock now.
        let out = crate::util::approve_as_shown(
            "plans",
            &plan_id,
            "clock campaign",
            &["--expires", "2h"],
            &env,
        );
        assert!(
            out.status.success(),
            "{what}: approve: {}{}",
            stdout(&out),
            stderr(&out)
        );
        approved += 1;
        let approved_at = clock.offset;
        // The clock steps up to twice more before the agent retries.
        for _ in 0..campaign.below(3) {
            step(&mut clock, &mut campaign);
        }
        // One round in three, the reviewer vetoes first, at whatever the
        // clock says now: the veto is taken, and the retry does not run.
        let veto = campaign.below(3) == 0;
        if veto {
            let out = gw.cli(&["plans", "reject", &plan_id, "--reason", "changed my mind"]);
            assert!(
                out.status.success(),
                "{what}: a veto at {:+} min (approved at {:+} min) was refused: {}{}",
                clock.offset / 60,
                approved_at / 60,
                stdout(&out),
                stderr(&out)
            );
            vetoes += 1;
        }
        let r = call(&gw, "drifty__note", args.clone());
        let answer = text(&r);
        eprintln!(
            "{what}: approved at {:+} min, retried at {:+} min: {answer}",
            approved_at / 60,
            clock.offset / 60
        );
        if answer == format!("noted: round {i}") {
            assert!(!veto, "{what}: a vetoed call ran");
            ran += 1;
            told_ran.push(plan_id.clone());
        } else {
            assert!(
                r["result"]["isError"] == true,
                "{what}: neither ran nor refused: {r}"
            );
            refused_runs += 1;
        }
        // Every decision on the plan, replayed at another clock: refused.
        step(&mut clock, &mut campaign);
        for leaf in leaves(&gw, &key)
            .iter()
            .filter(|l| l["entry"]["type"] == "plan.decision" && l["entry"]["plan_id"] == plan_id)
        {
            let (status, _, body) = http(
                &gw.addr,
                "POST",
                &format!("/api/v1/plans/{plan_id}/decisions"),
                &[
                    ("Authorization", &format!("Bearer {key}")),
                    ("Content-Type", "application/json"),
                ],
                &serde_json::to_vec(&leaf["entry"]["statement"]).unwrap(),
            );
            assert!(
                status >= 400,
                "{what}: a replayed decision was taken ({status}): {}",
                String::from_utf8_lossy(&body)
            );
            replays += 1;
        }
    }
    clock.set(0);

    // What the log says, whatever the steps made of each round.
    let all = leaves(&gw, &key);
    let mut backwards = 0;
    for (i, leaf) in all.iter().enumerate() {
        assert_eq!(
            leaf["entry"]["seq"].as_u64(),
            Some(i as u64),
            "leaf {i} is out of append order: {leaf}"
        );
        if i > 0 && entry_time(leaf) < entry_time(&all[i - 1]) {
            backwards += 1;
        }
    }
    assert!(backwards > 0, "no step back reached the log's leaf times");
    let mut by_plan: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for leaf in &all {
        if let Some(id) = leaf["entry"]["plan_id"].as_str() {
            by_plan.entry(id.to_owned()).or_default().push(leaf);
        }
    }
    let mut expired = 0;
    for (id, plan_leaves) in &by_plan {
        let seed = campaign.seed;
        let runs: Vec<&&Value> = plan_leaves
            .iter()
            .filter(|l| l["entry"]["type"] == "plan.transition" && l["entry"]["to"] == "EXECUTING")
            .collect();
        assert!(
            runs.len() <= 1,
            "{id} (seed {seed}): ran {} times",
            runs.len()
        );
        let expired_at = plan_leaves
            .iter()
            .position(|l| l["entry"]["type"] == "plan.transition" && l["entry"]["to"] == "EXPIRED");
        if expired_at.is_some() {
            expired += 1;
            assert!(runs.is_empty(), "{id} (seed {seed}): ran after it expired");
        }
        if plan_leaves
            .iter()
            .any(|l| l["entry"]["type"] == "plan.decision" && l["entry"]["decision"] == "reject")
        {
            assert!(runs.is_empty(), "{id} (seed {seed}): ran after its veto");
        }
        if let Some(run) = runs.first() {
            let at = entry_time(run);
            let covered = plan_leaves
                .iter()
                .filter(|l| {
                    l["entry"]["type"] == "plan.decision" && l["entry"]["decision"] == "approve"
                })
                .any(|d| {
                    let (not_before, expires_at) = statement_window(d);
                    // The run's leaf follows the check by a moment.
                    not_before <= at && at < expires_at + 5
                });
            assert!(
                covered,
                "{id} (seed {seed}): ran at {at} with no approval valid then: {plan_leaves:?}"
            );
        }
    }
    for id in &told_ran {
        assert!(
            by_plan[id].iter().any(|l| l["entry"]["to"] == "EXECUTING"),
            "{id}: the agent was told it ran, the log has no run"
        );
    }
    gw.assert_audit_clean();
    // And offline, as an auditor checks it: every receipt, inclusion proof
    // and checkpoint of a log whose checkpoints were signed at times that
    // went back and forth.
    let bundle = gw.dir.path().join("bundle");
    let out = gw.cli(&["receipts", "export", bundle.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = gw.cli(&["receipts", "verify", bundle.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "the bundle does not verify: {}{}",
        stdout(&out),
        stderr(&out)
    );
    eprintln!(
        "fault campaign clock steps, held calls: {steps} steps of 1-16 h over {} rounds; \
         {approved} approvals, {vetoes} vetoes taken, {ran} retries ran, {refused_runs} refused, \
         {expired} plans expired; {replays} replays refused; {} leaves, {backwards} times a leaf's \
         time went back; audit and offline receipts clean; runs outside an approval's window 0, \
         runs after expiry or veto 0, replays accepted 0, double runs 0",
        campaign.rounds,
        all.len()
    );
}

/// Issue 44, found by the clock campaign: a gateway's newest entries, not yet
/// signed (a checkpoint follows within `[log] checkpoint_interval_ms`), were
/// reported by `audit verify` as "not covered by any signed checkpoint
/// (added outside the log)" — tampering — when the wall clock had stepped
/// forward since they were appended: the audit told a running writer's tail
/// from an old one by their times alone. It now waits (on the monotonic
/// clock) for a running writer to sign what it would report. Here the
/// interval is four seconds, so the tail is still unsigned when the audit
/// starts, an hour after its entries' time.
#[test]
fn regression_issue_44_a_clock_stepped_forward_does_not_make_new_entries_look_forged() {
    let mut clock = FakeClock::new();
    clock.set(-HOUR);
    let env = clock.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let script = peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start_with_env(
        &format!(
            "[log]\ncheckpoint_interval_ms = 4000\n\
             [servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
            script.to_str().unwrap(),
        ),
        &env,
    );
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__greet", true);
    // Two calls in a row: each an intent and an outcome entry, the last ones
    // left for the next checkpoint (at most one per four seconds).
    for name in ["first", "second"] {
        let (status, _, body) = gw.rpc(
            "tools/call",
            json!({"name": "drifty__greet", "arguments": {"name": name}}),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body["result"]["content"][0]["text"],
            format!("Hello, {name}!")
        );
    }
    // NTP steps the machine's clock forward by the hour it was behind.
    clock.set(0);
    let audit = gw.cli(&["audit", "verify"]);
    assert!(
        audit.status.success(),
        "entries a running gateway appended an hour ago by the clock read as forged: {}{}",
        stdout(&audit),
        stderr(&audit)
    );
    eprintln!(
        "regression issue 44 (audit after a forward step): 1 step of +1 h, audit clean: {}",
        stdout(&audit).lines().next().unwrap_or_default()
    );
}

/// Issue 44: a reviewer's rejection after the wall clock stepped back, of a
/// plan approved before the step. The decision ledger orders decisions by
/// their `issued_at`, so the rejection, signed by the stepped-back clock,
/// reads as older than the approval: before the fix it was refused as stale
/// for as long as the step (a veto frozen out for hours).
#[test]
fn regression_issue_44_a_veto_after_the_clock_stepped_back_is_taken() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let env = gw.env_for_thread();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = call(&gw, "drifty__note", json!({"text": "veto"}));
    let plan_id = r["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap_or_else(|| panic!("not held: {r}"))
        .to_owned();
    clock.set(3 * HOUR);
    let out = crate::util::approve_as_shown("plans", &plan_id, "looks fine", &[], &env);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // NTP steps the clock back three hours; the reviewer changes their mind.
    clock.set(0);
    let out = gw.cli(&["plans", "reject", &plan_id, "--reason", "no, not this"]);
    assert!(
        out.status.success(),
        "a veto after the clock stepped back was refused: {}{}",
        stdout(&out),
        stderr(&out)
    );
    let r = call(&gw, "drifty__note", json!({"text": "veto"}));
    assert_ne!(text(&r), "noted: veto", "the vetoed call ran: {r}");
    let shown = gw.cli(&["plans", "show", &plan_id]);
    assert!(stdout(&shown).contains("REJECTED"), "{}", stdout(&shown));
    gw.assert_audit_clean();
    eprintln!(
        "regression issue 44 (veto after a step back): steps +3 h, -3 h; veto taken, the call did not run"
    );
}

/// Issue 44: the wall clock stepped forward by hours while an approved held
/// call runs (a slow tool, eight seconds). An execution's lease is renewed
/// every few seconds with the wall clock's time, and one unrenewed for 30 s
/// by the wall clock counted as lost: the gateway's own sweep halted its own
/// running execution (`executor.lost`, "its process stopped renewing the
/// lease") while the tool went on to answer — evidence that said the plan
/// was halted, of a call that ran. A gateway now never counts its own
/// running executions lost, and another process's lease whose renewals it
/// sees is alive whatever the clock says.
#[test]
fn regression_issue_44_a_step_forward_does_not_halt_a_running_execution() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let key = gw.reviewer_key();
    let env = gw.env_for_thread();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // `slow` is read-only; a sensitive path among its arguments is what
    // holds the call.
    let args = json!({"ms": 8000, "path": "/root/.ssh/id_rsa"});
    let r = call(&gw, "drifty__slow", args.clone());
    let plan_id = r["result"]["structuredContent"]["plan_id"]
        .as_str()
        .unwrap_or_else(|| panic!("not held: {r}"))
        .to_owned();
    let out = crate::util::approve_as_shown("plans", &plan_id, "slow is fine", &[], &env);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let answer = std::thread::scope(|s| {
        let retry = s.spawn(|| call(&gw, "drifty__slow", args.clone()));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !leaves(&gw, &key)
            .iter()
            .any(|l| l["entry"]["plan_id"] == plan_id.as_str() && l["entry"]["to"] == "EXECUTING")
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the retry never ran the plan"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // NTP steps the clock two hours forward mid-run.
        clock.set(2 * HOUR);
        retry.join().unwrap()
    });
    let log = leaves(&gw, &key);
    let lost: Vec<&Value> = log
        .iter()
        .filter(|l| l["entry"]["type"] == "executor.lost")
        .collect();
    assert!(
        lost.is_empty(),
        "a running execution was halted as lost: {lost:?}"
    );
    assert_eq!(text(&answer), "done", "{answer}");
    let shown = gw.cli(&["plans", "show", &plan_id]);
    assert!(stdout(&shown).contains("SUCCEEDED"), "{}", stdout(&shown));
    gw.assert_audit_clean();
    eprintln!(
        "regression issue 44 (step forward mid-run): 1 step of +2 h during an 8 s execution; \
         executions halted as lost 0, the call answered"
    );
}

/// Issue 44: a key's rate limit after the wall clock stepped back. On
/// Postgres (a team's shared store) the limit is a GCRA whose theoretical
/// arrival time is wall-clock milliseconds in the database; a step back by
/// hours left it hours ahead of the clock, and every call of the key was
/// refused (429, "retry in" hours) until the clock caught up — a stall. An
/// arrival time further ahead than any run of calls can push it is now read
/// as the clock's step and starts afresh. (On SQLite the limiter lives in
/// memory on the monotonic clock; this test holds the Postgres run.)
#[test]
fn regression_issue_44_a_rate_limited_key_is_not_stalled_by_a_step_back() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let out = gw.cli(&["admin", "token", "create", "root", "--scope", "owner"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let root = stdout(&out).trim().to_owned();
    let (status, _, made) = http(
        &gw.addr,
        "POST",
        "/api/v1/admin/keys",
        &[
            ("Authorization", &format!("Bearer {root}")),
            ("Content-Type", "application/json"),
        ],
        json!({"name": "steady", "rate_per_minute": 60})
            .to_string()
            .as_bytes(),
    );
    let made: Value = serde_json::from_slice(&made).unwrap_or(Value::Null);
    assert_eq!(status, 200, "{made}");
    let key = made["key"].as_str().unwrap().to_owned();
    let greet = |name: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "drifty__greet", "arguments": {"name": name}}});
        let (status, _, body) = crate::gateway_util::post_mcp(
            &gw.addr,
            &key,
            &[("MCP-Protocol-Version", "2026-07-28")],
            body.to_string().as_bytes(),
        );
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    let (status, body) = greet("before");
    assert_eq!(status, 200, "{body}");
    // NTP steps the clock back three hours.
    clock.set(-3 * HOUR);
    let (status, body) = greet("after");
    assert_eq!(
        status, 200,
        "a key at one call a second was stalled by a step back: {body}"
    );
    assert!(body.contains("Hello, after!"), "{body}");
    gw.assert_audit_clean();
    eprintln!(
        "regression issue 44 (rate limit after a step back, {}): 1 step of -3 h; the next call answered",
        if gw.database_url().is_some() {
            "Postgres"
        } else {
            "SQLite"
        }
    );
}

/// Issue 44: a standing approval (for an hour, of the held `note` tool)
/// with the wall clock stepped back and forward around and far from its
/// window. What must hold: a call is covered only while the gateway's clock
/// is inside the grant's window — a step forward past its end holds calls
/// again, and a step back to before it was granted does not make it cover
/// (before the fix it did: only its end was checked, so a step back by a
/// day stretched a grant the policy caps at hours by a day) — and inside
/// its window it covers. A step back from after its end into its window
/// finds it in force again (the window is wall-clock time; counted).
#[test]
fn fault_campaign_clock_steps_across_a_standing_approval() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let key = gw.reviewer_key();
    let config = gw.dir.path().join("gateway.toml");
    let granted_from = real_now();
    let out = gw.cli(&[
        "standing",
        "add",
        "--role",
        "default",
        "--tool",
        "drifty__note",
        "--shape",
        r#"{"text": "*"}"#,
        "--for",
        "1h",
        "--reason",
        "notes are harmless",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let granted_to = real_now();
    let listed = gw.api_get(&key, "/api/v1/standing");
    let expires_at = listed["standing"][0]["expires_at"].as_i64().unwrap();

    let mut campaign = Campaign::new("clock steps, standing approval");
    let (mut covered, mut held, mut revived, mut steps) = (0, 0, 0, 0);
    let mut seen_expired = false;
    for i in 0..campaign.rounds * 2 {
        // Every other step lands near the window (an hour from now), the
        // others anywhere within eight hours.
        let to = if i % 2 == 0 {
            loop {
                let to = (campaign.below(241) as i64 - 90) * 60;
                if (to - clock.offset).abs() >= HOUR / 2 {
                    break to;
                }
            }
        } else {
            campaign.step_from(clock.offset)
        };
        clock.set(to);
        steps += 1;
        let r = call(&gw, "drifty__note", json!({"text": format!("s{i}")}));
        if text(&r) == format!("noted: s{i}") {
            covered += 1;
            if seen_expired {
                revived += 1;
            }
        } else {
            assert_eq!(
                r["result"]["structuredContent"]["held"], true,
                "step {i} (seed {}): neither covered nor held: {r}",
                campaign.seed
            );
            held += 1;
            if clock.now() >= expires_at {
                seen_expired = true;
            }
        }
    }
    clock.set(0);
    let (mut inside, mut outside) = (0, 0);
    for leaf in leaves(&gw, &key) {
        let e = &leaf["entry"];
        if e["type"] != "tool.call" || e["tool"] != "note" {
            continue;
        }
        let t = entry_time(&leaf);
        // The call's leaf follows the check by a moment; the grant's own
        // time is known to the second it was made within.
        let in_window = t >= granted_to + 2 && t < expires_at - 2;
        let out_of_window = t < granted_from || t >= expires_at + 2;
        match e["verdict"]["verdict"].as_str() {
            Some("standing_approval") => {
                assert!(
                    !out_of_window,
                    "seed {}: covered at {t}, outside the grant's window [{granted_from}, {expires_at}): {leaf}",
                    campaign.seed
                );
                inside += 1;
            }
            Some("held") => {
                assert!(
                    !in_window,
                    "seed {}: held at {t}, inside the grant's window [{granted_to}, {expires_at}): {leaf}",
                    campaign.seed
                );
                outside += 1;
            }
            _ => {}
        }
    }
    gw.assert_audit_clean();
    eprintln!(
        "fault campaign clock steps, standing approval: {steps} steps over {} rounds; \
         {covered} calls covered ({inside} leaves, all inside the window), {held} held \
         ({outside} leaves, none inside it); {revived} covered again after a step back \
         from past its end; covered outside the window 0",
        campaign.rounds
    );
}

/// Issue 44, found by the clock campaign: a standing approval is in force
/// from its grant to its end. Only its end was checked, so with the clock
/// stepped back to before the grant (here three hours) it covered calls —
/// a step back by a day stretched a grant the policy caps at hours by a day.
#[test]
fn regression_issue_44_a_standing_approval_does_not_cover_calls_before_its_grant() {
    let mut clock = FakeClock::new();
    let gw = gateway_on(&clock);
    let config = gw.dir.path().join("gateway.toml");
    let out = gw.cli(&[
        "standing",
        "add",
        "--role",
        "default",
        "--tool",
        "drifty__note",
        "--shape",
        r#"{"text": "*"}"#,
        "--for",
        "1h",
        "--reason",
        "notes are harmless",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let r = call(&gw, "drifty__note", json!({"text": "now"}));
    assert_eq!(text(&r), "noted: now", "the grant does not cover: {r}");
    clock.set(-3 * HOUR);
    let r = call(&gw, "drifty__note", json!({"text": "before"}));
    assert_eq!(
        r["result"]["structuredContent"]["held"], true,
        "a grant covered a call three hours before it was made: {r}"
    );
    clock.set(0);
    let r = call(&gw, "drifty__note", json!({"text": "again"}));
    assert_eq!(text(&r), "noted: again", "{r}");
    gw.assert_audit_clean();
    eprintln!(
        "regression issue 44 (standing approval, step back before its grant): steps -3 h, +3 h; \
         covered, held, covered"
    );
}
