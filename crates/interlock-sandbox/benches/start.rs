//! Issue 38's measures, sandboxed against unsandboxed in the same run,
//! alternating: the start of a program (to its exit), the per-message cost
//! of a stdio round trip through the sandbox's pipes, and the memory the
//! sandbox's own processes (bubblewrap and its init) add per server.
//!
//! `cargo bench -p interlock-sandbox --bench start` (prints figures and
//! ratios; asserts nothing).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use interlock_sandbox::{Confiner, Launch, Protected, Setting};

const ROUNDS: usize = 30;
const MESSAGES: usize = 20_000;

/// The command that starts `command` confined, and the filter descriptor
/// it inherits (keep it until the child has started).
fn confined(
    confiner: &Confiner,
    command: &str,
    args: &[String],
) -> (Command, interlock_sandbox::Confined) {
    let env = BTreeMap::new();
    let c = confiner
        .confine(
            "bench",
            &Launch {
                command,
                args,
                env: &env,
                cwd: None,
            },
            &Setting::Default,
            Some("/usr/bin:/bin".as_ref()),
        )
        .expect("confined");
    let mut cmd = Command::new(&c.program);
    cmd.args(&c.args).env_clear().env("PATH", "/usr/bin:/bin");
    (cmd, c)
}

fn direct(command: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(command);
    cmd.args(args).env_clear().env("PATH", "/usr/bin:/bin");
    cmd
}

fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(v[0]), ms(v[v.len() / 2]), ms(v[v.len() - 1]))
}

/// Start to exit.
fn start(mut cmd: Command) -> Duration {
    let t = Instant::now();
    let status = cmd.stdout(Stdio::null()).status().expect("runs");
    assert!(status.success());
    t.elapsed()
}

/// `MESSAGES` lines through `cat` and back, one at a time.
fn round_trips(mut cmd: Command) -> Duration {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut to = child.stdin.take().unwrap();
    let mut from = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // The first answer: the program is up.
    writeln!(to, "{{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{}}}}").unwrap();
    from.read_line(&mut line).unwrap();
    let t = Instant::now();
    for i in 1..=MESSAGES {
        line.clear();
        writeln!(to, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}").unwrap();
        to.flush().unwrap();
        from.read_line(&mut line).unwrap();
    }
    let elapsed = t.elapsed();
    drop(to);
    child.wait().unwrap();
    elapsed
}

/// Resident memory (KiB) of the sandbox's own processes around one server:
/// every process of the session whose program is bubblewrap.
fn sandbox_rss(confiner: &Confiner) -> u64 {
    let (mut cmd, _filter) = confined(confiner, "/usr/bin/sleep", &["30".into()]);
    let mut child = cmd.spawn().expect("starts");
    std::thread::sleep(Duration::from_millis(300));
    let mut total = 0;
    let mut pids = vec![child.id()];
    // bubblewrap forks once (its init in the new PID namespace): its child.
    if let Ok(kids) = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id())) {
        pids.extend(
            kids.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    for pid in pids {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() != "bwrap" {
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    let _ = child.kill();
    let _ = child.wait();
    total
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let confiner = Confiner::with_protected(
        Protected::new(None, None, &[dir.path().join("data")]),
        dir.path().join("data/servers"),
    );
    let programs: [(&str, Vec<String>); 2] = [
        ("/usr/bin/true", vec![]),
        ("/usr/bin/python3", vec!["-c".into(), "pass".into()]),
    ];
    println!(
        "sandboxed start (bubblewrap) against direct, {ROUNDS} alternating rounds, ms min/median/max"
    );
    for (program, args) in &programs {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(start(direct(program, args)));
            b.push(start(confined(&confiner, program, args).0));
        }
        let (da, ma, xa) = stats(a);
        let (db, mb, xb) = stats(b);
        println!(
            "  {program:<18} direct {da:.2}/{ma:.2}/{xa:.2}  sandboxed {db:.2}/{mb:.2}/{xb:.2}  added median {:.2} ms ({:.2}x)",
            mb - ma,
            mb / ma
        );
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        a.push(round_trips(direct("/usr/bin/cat", &[])));
        b.push(round_trips(confined(&confiner, "/usr/bin/cat", &[]).0));
    }
    let per = |v: Vec<Duration>| {
        let (_, m, _) = stats(v);
        m * 1e3 / MESSAGES as f64
    };
    let (pa, pb) = (per(a), per(b));
    println!(
        "stdio round trip (a JSON-RPC line out and back, {MESSAGES} in a row, median of 5): direct {pa:.2} us, sandboxed {pb:.2} us ({:.2}x)",
        pb / pa
    );
    println!(
        "memory of the sandbox's own processes per server (bubblewrap and its init): {} KiB RSS",
        sandbox_rss(&confiner)
    );
}
