//! The peers measured beside the fast upstream, in the same run:
//! `@modelcontextprotocol/server-everything` (the reference MCP servers' Node
//! `everything`, from tests/peers) as a real upstream, reached directly,
//! through `interlock serve` and through IBM ContextForge (a peer gateway from
//! PyPI, set up by `scripts/peer-contextforge.sh`).
//!
//! Why a real upstream beside the in-process one: the fast upstream shows what
//! the gateway itself costs, but hides how it compares with a call's usual
//! price (a Node SDK server answering over SSE); a peer gateway in front of
//! the same upstream, on the same machine and in the same minute, is the only
//! fair yardstick on a machine whose figures drift 30–50% from hour to hour.
//!
//! A peer that cannot be set up (not installed, no Python 3.12, no network for
//! PyPI) is reported as skipped with the reason, and the rest still runs: no
//! figure is ever printed for a path that was not measured.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{CONCURRENCY, McpClient, contains, percentile};

/// Calls per measured phase, and warm-up calls before it.
#[derive(Clone, Copy)]
pub struct Counts {
    pub seq: usize,
    pub conc: usize,
    pub warmup: usize,
    /// Warm-up calls per session before the 16-way phase.
    pub conc_warmup: usize,
}

/// What the Rust gateway and the direct path run: as many calls as the fast
/// upstream's sequential phase.
pub const FULL: Counts = Counts {
    seq: 2000,
    conc: 2000,
    warmup: 300,
    conc_warmup: 20,
};

/// ContextForge answers in tens of milliseconds: fewer calls keep its phases
/// under ten seconds each while still giving its CPU thousands of ticks.
pub const SLOW: Counts = Counts {
    seq: 300,
    conc: 300,
    warmup: 30,
    conc_warmup: 3,
};

// ---------------------------------------------------------------------------
// Which peers: GATEWAY_PROXY_PEERS.

/// `GATEWAY_PROXY_PEERS`: unset or `all` = both peers; `none` = only the fast
/// upstream; or a comma list of `everything`, `contextforge`.
pub struct Selection {
    pub everything: bool,
    pub contextforge: bool,
}

impl Selection {
    pub fn from_env() -> Result<Selection, String> {
        let raw = std::env::var("GATEWAY_PROXY_PEERS").unwrap_or_else(|_| "all".to_owned());
        let mut s = Selection {
            everything: false,
            contextforge: false,
        };
        for word in raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "all" => {
                    s.everything = true;
                    s.contextforge = true;
                }
                "none" => {}
                "everything" => s.everything = true,
                "contextforge" => s.contextforge = true,
                other => {
                    return Err(format!(
                        "GATEWAY_PROXY_PEERS: unknown peer {other:?} (all, none, everything, contextforge)"
                    ));
                }
            }
        }
        Ok(s)
    }
}

// ---------------------------------------------------------------------------
// server-everything over Streamable HTTP.

/// A running `server-everything streamableHttp` (it reads its port from
/// `PORT`); killed on drop, so a panicking bench leaves nothing behind.
pub struct Everything {
    child: Child,
    log: PathBuf,
    pub port: u16,
    pub version: String,
}

impl Everything {
    /// Where scripts/peers.sh put it (`INTERLOCK_PEERS_SERVER_EVERYTHING`), or
    /// the same place in this checkout.
    fn script() -> PathBuf {
        std::env::var_os("INTERLOCK_PEERS_SERVER_EVERYTHING")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            })
    }

    pub fn start(log: &Path) -> Result<Everything, String> {
        let script = Self::script();
        if !script.is_file() {
            return Err(format!(
                "{} is not installed (run scripts/peers.sh)",
                script.display()
            ));
        }
        // dist/index.js → the package's package.json.
        let version = script
            .parent()
            .and_then(Path::parent)
            .and_then(|pkg| std::fs::read_to_string(pkg.join("package.json")).ok())
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "?".to_owned());
        let node = std::env::var("INTERLOCK_PEERS_NODE").unwrap_or_else(|_| "node".to_owned());
        let port = super::free_port();
        let child = Command::new(&node)
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            // It logs every request to stdout: into a file, never a pipe that fills.
            .stdout(std::fs::File::create(log).map_err(|e| e.to_string())?)
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("{node} {}: {e}", script.display()))?;
        let mut me = Everything {
            child,
            log: log.to_owned(),
            port,
            version,
        };
        let until = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = me.child.try_wait() {
                return Err(format!("server-everything exited: {status}"));
            }
            if Instant::now() > until {
                return Err("server-everything did not listen within 30 s".to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(me)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// HTTP POSTs it has received so far (it logs a line for each): how many
    /// upstream requests a gateway makes per tool call.
    fn posts(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .map(|s| s.matches("Received MCP POST request").count())
            .unwrap_or(0)
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// ContextForge, set up by scripts/peer-contextforge.sh.

/// A ContextForge gateway in front of one upstream. The script starts it in
/// the background and names its pid; it is stopped (SIGTERM, then SIGKILL) on
/// drop.
pub struct ContextForge {
    pid: u32,
    pub url: String,
    pub token: String,
    pub tool_prefix: String,
    pub version: String,
    pub dir: String,
}

impl ContextForge {
    pub fn start(upstream: &str, log: &Path) -> Result<ContextForge, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/peer-contextforge.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(upstream)
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(log).map_err(|e| e.to_string())?)
            .output()
            .map_err(|e| format!("{}: {e}", script.display()))?;
        let vars: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        // Whatever happened, a pid it printed is ours to stop.
        let pid = vars.get("CONTEXTFORGE_PID").and_then(|p| p.parse().ok());
        let why = || {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(6).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!(
                "scripts/peer-contextforge.sh {}:\n      {}",
                out.status,
                tail.join("\n      ")
            )
        };
        if !out.status.success() {
            if let Some(pid) = pid {
                stop_pid(pid);
            }
            return Err(why());
        }
        let get = |k: &str| {
            vars.get(k)
                .filter(|v| !v.starts_with("$'") && !v.contains('\\'))
                .cloned()
                .ok_or_else(|| format!("scripts/peer-contextforge.sh printed no plain {k}"))
        };
        let pid = pid.ok_or_else(why)?;
        let cf = ContextForge {
            pid,
            url: get("CONTEXTFORGE_URL")?,
            token: get("CONTEXTFORGE_TOKEN")?,
            tool_prefix: get("CONTEXTFORGE_TOOL_PREFIX")?,
            version: get("CONTEXTFORGE_VERSION")?,
            dir: get("CONTEXTFORGE_DIR")?,
        };
        Ok(cf)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }
}

impl Drop for ContextForge {
    fn drop(&mut self) {
        stop_pid(self.pid);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERM (its workers exit with it), then SIGKILL after 10 s.
fn stop_pid(pid: u32) {
    let alive = || Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let until = Instant::now() + Duration::from_secs(10);
    while alive() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    if alive() {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

fn is_zombie(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s == "Z"))
}

// ---------------------------------------------------------------------------
// CPU of a process tree.

/// The fields of /proc/PID/stat after the command name (field 3 on).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// utime + stime + cutime + cstime, in clock ticks, of `root` and every live
/// descendant. ContextForge's one worker runs beside helper processes of its
/// own, so its cost is the tree's; a child's ticks move into its parent's
/// cutime when it is reaped, so the sum stays continuous.
pub fn tree_ticks(root: u32) -> u64 {
    let mut parent_of = HashMap::new();
    let mut ticks = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Some(f) = stat_fields(pid) else { continue };
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            parent_of.insert(pid, n(1) as u32);
            ticks.insert(pid, n(11) + n(12) + n(13) + n(14));
        }
    }
    ticks
        .iter()
        .filter(|&(&pid, _)| {
            let mut p = pid;
            for _ in 0..64 {
                if p == root {
                    return true;
                }
                match parent_of.get(&p) {
                    Some(&q) if q != 0 && q != p => p = q,
                    _ => return false,
                }
            }
            false
        })
        .map(|(_, t)| t)
        .sum()
}

// ---------------------------------------------------------------------------
// Measurement.

/// One path to the upstream's `echo`: the client (already initialized), the
/// tool name it calls there, and the gateway process in between, if any.
pub struct Target {
    pub client: McpClient,
    pub params: String,
    pub gateway: Option<u32>,
    pub counts: Counts,
}

pub struct Row {
    pub seq_per_sec: f64,
    pub seq_p50: f64,
    pub seq_p99: f64,
    pub conc_per_sec: f64,
    pub conc_p50: f64,
    /// Gateway CPU ms per call (sequential, 16-way); `None` for direct.
    pub gw_cpu: Option<(f64, f64)>,
    /// The upstream's (node's) CPU ms per call (sequential, 16-way).
    pub up_cpu: (f64, f64),
    /// HTTP requests the upstream received per call (sequential, 16-way).
    pub up_posts: (f64, f64),
}

struct Ticks<'a> {
    gateway: Option<(u32, u64)>,
    upstream: (&'a Everything, u64, usize),
}

impl<'a> Ticks<'a> {
    fn start(gateway: Option<u32>, upstream: &'a Everything) -> Ticks<'a> {
        Ticks {
            gateway: gateway.map(|p| (p, tree_ticks(p))),
            upstream: (upstream, tree_ticks(upstream.pid()), upstream.posts()),
        }
    }

    /// (gateway CPU, upstream CPU) ms per call and upstream POSTs per call
    /// since `start`.
    fn per_call(&self, calls: usize, clk_tck: f64) -> (Option<f64>, f64, f64) {
        let ms = |(pid, t0): (u32, u64)| {
            tree_ticks(pid).saturating_sub(t0) as f64 * 1e3 / clk_tck / calls as f64
        };
        let (up, t0, posts) = self.upstream;
        (
            self.gateway.map(ms),
            ms((up.pid(), t0)),
            up.posts().saturating_sub(posts) as f64 / calls as f64,
        )
    }
}

/// Sequential, then 16-way, each CPU-counted over its measured calls only
/// (warm-ups and session setup excluded).
pub async fn measure(
    t: &mut Target,
    expect: &str,
    upstream: &Everything,
    clk_tck: f64,
) -> Result<Row, String> {
    let c = t.counts;
    let first = t.client.call(&t.params).await?;
    if !contains(&first, expect.as_bytes()) {
        return Err(format!(
            "the echo did not come back: {}",
            String::from_utf8_lossy(&first)
        ));
    }
    for _ in 0..c.warmup {
        t.client.call(&t.params).await?;
    }
    let ticks = Ticks::start(t.gateway, upstream);
    let start = Instant::now();
    let mut ms = Vec::with_capacity(c.seq);
    for _ in 0..c.seq {
        let t0 = Instant::now();
        t.client.call(&t.params).await?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let seq_secs = start.elapsed().as_secs_f64();
    let (gw_seq, up_seq, posts_seq) = ticks.per_call(c.seq, clk_tck);
    ms.sort_by(f64::total_cmp);
    let (seq_p50, seq_p99) = (percentile(&ms, 50.0), percentile(&ms, 99.0));

    // 16 sessions share a fixed number of calls.
    let mut clients = Vec::new();
    for _ in 0..CONCURRENCY {
        let mut cl = t.client.clone();
        cl.next_id = 1;
        cl.initialize().await?;
        for _ in 0..c.conc_warmup {
            cl.call(&t.params).await?;
        }
        clients.push(cl);
    }
    let params: Arc<str> = Arc::from(t.params.as_str());
    let left = Arc::new(AtomicUsize::new(c.conc));
    let ticks = Ticks::start(t.gateway, upstream);
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut cl| {
            let params = Arc::clone(&params);
            let left = Arc::clone(&left);
            tokio::spawn(async move {
                let mut ms = Vec::new();
                while left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok()
                {
                    let t0 = Instant::now();
                    cl.call(&params).await?;
                    ms.push(t0.elapsed().as_secs_f64() * 1e3);
                }
                Ok::<_, String>(ms)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(c.conc);
    let mut failed = None;
    for task in tasks {
        match task.await {
            Ok(Ok(ms)) => all.extend(ms),
            Ok(Err(e)) => failed = Some(e),
            Err(e) => failed = Some(e.to_string()),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let conc_secs = start.elapsed().as_secs_f64();
    let (gw_conc, up_conc, posts_conc) = ticks.per_call(all.len(), clk_tck);
    all.sort_by(f64::total_cmp);
    Ok(Row {
        seq_per_sec: c.seq as f64 / seq_secs,
        seq_p50,
        seq_p99,
        conc_per_sec: all.len() as f64 / conc_secs,
        conc_p50: percentile(&all, 50.0),
        gw_cpu: gw_seq.zip(gw_conc),
        up_cpu: (up_seq, up_conc),
        up_posts: (posts_seq, posts_conc),
    })
}

// ---------------------------------------------------------------------------
// Report.

/// A measured path, or why it was not.
pub type Outcome = Result<Row, String>;

pub fn print(everything_version: &str, rows: &[(&str, &Outcome)]) {
    println!();
    println!(
        "  peers: @modelcontextprotocol/server-everything {everything_version} over Streamable HTTP (node), its `echo`, same run"
    );
    println!(
        "    sequential: {} calls after {} warm-up ({} after {} through ContextForge); 16-way: {CONCURRENCY} sessions, {} calls in all ({})",
        FULL.seq, FULL.warmup, SLOW.seq, SLOW.warmup, FULL.conc, SLOW.conc
    );
    println!(
        "    CPU per call from /proc (process and its children), over the measured calls only;"
    );
    println!("    upstream POSTs: HTTP requests server-everything received per call");
    println!();
    println!(
        "    {:<20} {:>8} {:>9} {:>9} {:>9} {:>9}   {:>21}   {:>21}   {:>14}",
        "",
        "seq /s",
        "seq p50",
        "seq p99",
        "16-way /s",
        "16w p50",
        "gateway CPU seq · 16w",
        "upstream CPU seq · 16w",
        "upstream POSTs"
    );
    for (name, row) in rows {
        match row {
            Ok(r) => {
                let gw = r
                    .gw_cpu
                    .map_or_else(|| "—".to_owned(), |(s, c)| format!("{s:.3} · {c:.3} ms"));
                println!(
                    "    {:<20} {:>8.0} {:>6.2} ms {:>6.2} ms {:>9.0} {:>6.2} ms   {:>21}   {:>21}   {:>14}",
                    name,
                    r.seq_per_sec,
                    r.seq_p50,
                    r.seq_p99,
                    r.conc_per_sec,
                    r.conc_p50,
                    gw,
                    format!("{:.3} · {:.3} ms", r.up_cpu.0, r.up_cpu.1),
                    format!("{:.2} · {:.2}", r.up_posts.0, r.up_posts.1)
                );
            }
            Err(why) => println!("    {name:<20} NOT MEASURED: {why}"),
        }
    }
    let Some((_, Ok(direct))) = rows.first() else {
        return;
    };
    println!();
    println!(
        "    {:<20} {:>10} {:>10} {:>12} {:>14}",
        "ratio to direct", "seq /s", "seq p50", "16-way /s", "added seq p50"
    );
    for (name, row) in &rows[1..] {
        if let Ok(r) = row {
            println!(
                "    {:<20} {:>9.2}x {:>9.2}x {:>11.2}x {:>11.2} ms",
                name,
                r.seq_per_sec / direct.seq_per_sec,
                r.seq_p50 / direct.seq_p50,
                r.conc_per_sec / direct.conc_per_sec,
                r.seq_p50 - direct.seq_p50
            );
        }
    }
    if let (Some((_, Ok(il))), Some((_, Ok(cf)))) = (rows.get(1), rows.get(2))
        && let (Some(il_cpu), Some(cf_cpu)) = (il.gw_cpu, cf.gw_cpu)
    {
        println!(
            "    interlock vs ContextForge: calls/s {:.1}x (seq) · {:.1}x (16-way); gateway CPU per call {:.0}x less (seq) · {:.0}x less (16-way)",
            il.seq_per_sec / cf.seq_per_sec,
            il.conc_per_sec / cf.conc_per_sec,
            cf_cpu.0 / il_cpu.0,
            cf_cpu.1 / il_cpu.1
        );
    }
}
