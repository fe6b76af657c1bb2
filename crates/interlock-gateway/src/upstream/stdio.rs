//! An upstream MCP server as a child process: newline-delimited JSON-RPC on
//! its stdin/stdout, its stderr copied to the gateway's log.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

use interlock_sandbox::{Confiner, Launch, Setting};

use super::{Signals, UpstreamError, UpstreamSignal};
use crate::jsonrpc::{self, OwnedIncoming};

type Reply = oneshot::Sender<Result<Box<RawValue>, UpstreamError>>;

/// Requests waiting for their answers, by the gateway's id.
#[derive(Default)]
pub(super) struct Pending(Mutex<HashMap<u64, Reply>>);

impl Pending {
    pub(super) fn insert(&self, id: u64, reply: Reply) {
        self.0.lock().expect("pending lock").insert(id, reply);
    }

    pub(super) fn remove(&self, id: u64) -> Option<Reply> {
        self.0.lock().expect("pending lock").remove(&id)
    }

    /// Fails every waiter (the connection ended).
    pub(super) fn fail_all(&self, why: &str) {
        let waiting: Vec<Reply> = self
            .0
            .lock()
            .expect("pending lock")
            .drain()
            .map(|(_, r)| r)
            .collect();
        for r in waiting {
            let _ = r.send(Err(UpstreamError::Unavailable(why.to_owned())));
        }
    }

    /// Routes a response to its waiter. Returns false for an unknown id.
    pub(super) fn answer(&self, msg: OwnedIncoming) -> bool {
        let Some(id) = msg.id.as_deref().and_then(|i| i.get().parse::<u64>().ok()) else {
            return false;
        };
        let Some(reply) = self.remove(id) else {
            return false;
        };
        let outcome = match (msg.result, msg.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(UpstreamError::Rpc(Arc::from(error))),
            _ => Err(UpstreamError::Unavailable(
                "the upstream sent a response with neither result nor error".into(),
            )),
        };
        let _ = reply.send(outcome);
        true
    }
}

/// Handles what an upstream sends that is not a response: returns the reply
/// to write back, if any.
pub(super) fn handle_unsolicited(
    server: &str,
    msg: &OwnedIncoming,
    signals: &Signals,
) -> Option<Vec<u8>> {
    let method = msg.method.as_deref()?;
    match (&msg.id, method) {
        (
            None,
            "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed",
        ) => {
            let _ = signals.send(UpstreamSignal::SurfaceChanged);
            None
        }
        (None, "notifications/progress") => {
            if let Some(p) = &msg.params {
                signals.relays.progress(p);
            }
            None
        }
        (None, "notifications/resources/updated") => {
            #[derive(serde::Deserialize)]
            struct Updated {
                uri: String,
            }
            if let Some(p) = &msg.params
                && let Ok(u) = serde_json::from_str::<Updated>(p.get())
            {
                let _ = signals.send(UpstreamSignal::ResourceUpdated {
                    uri: u.uri,
                    message: jsonrpc::notification("notifications/resources/updated", Some(p)),
                });
            }
            None
        }
        (None, "notifications/message") => {
            if let Some(p) = &msg.params {
                signals.relays.log(p);
            }
            None
        }
        (None, _) => None,
        (Some(id), "ping") => Some(jsonrpc::result(
            id,
            &RawValue::from_string("{}".into()).expect("valid JSON"),
        )),
        (Some(id), other) => {
            // Sampling, elicitation and roots would let an upstream reach the
            // agent's model or files around the gateway's checks: refused.
            tracing::debug!(server, method = other, "refused a request from an upstream");
            Some(jsonrpc::error(
                Some(id),
                jsonrpc::code::METHOD_NOT_FOUND,
                &format!("the Interlock gateway does not relay `{other}` to agents"),
            ))
        }
    }
}

/// The only variables a stdio upstream inherits from the gateway (if set):
/// enough to find programs (`npx`, `uvx`), a home for their caches, and a
/// locale. Anything else it needs is named in its `env` table. A confined
/// server's `HOME` is its private state directory instead.
pub const INHERITED_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

pub struct StdioConnection {
    next_id: AtomicU64,
    pending: Arc<Pending>,
    to_child: mpsc::UnboundedSender<Vec<u8>>,
    child: Arc<Mutex<Option<Child>>>,
    pid: Option<u32>,
}

impl StdioConnection {
    /// Starts `launch` as server `name`: confined by `sandbox` through
    /// `confiner` (issue 38), or, for `sandbox = "off"` alone, unconfined.
    /// A sandbox that cannot start is an error naming what is missing; the
    /// server is never started unconfined instead.
    pub fn spawn(
        name: &str,
        launch: &Launch<'_>,
        sandbox: &Setting,
        confiner: &Confiner,
        max_message: usize,
        signals: Signals,
    ) -> Result<StdioConnection, UpstreamError> {
        let command = launch.command;
        let mut extra_env: Vec<(String, String)> = Vec::new();
        // The sandbox's seccomp filter, which bubblewrap reads from this
        // inherited descriptor: open until the child has started.
        let mut seccomp: Option<std::os::fd::OwnedFd> = None;
        let mut cmd = if sandbox.is_off() {
            tracing::warn!(server = name, "sandbox = \"off\": started unconfined");
            let mut cmd = Command::new(command);
            cmd.args(launch.args);
            if let Some(dir) = launch.cwd {
                cmd.current_dir(dir);
            }
            cmd
        } else {
            let path = std::env::var_os("PATH");
            let confined = confiner
                .confine(name, launch, sandbox, path.as_deref())
                .map_err(|e| {
                    UpstreamError::Unavailable(format!("cannot start `{command}` sandboxed: {e}"))
                })?;
            let mut cmd = Command::new(&confined.program);
            cmd.args(&confined.args);
            extra_env = confined.env;
            seccomp = Some(confined.seccomp);
            cmd
        };
        // A cleared environment plus an allow-list: the gateway's own
        // environment holds its secrets (`INTERLOCK_*`, upstream tokens), and
        // an upstream is third-party code (issue 15 item 17).
        cmd.env_clear();
        for key in INHERITED_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        if !sandbox.is_off() {
            cmd.env("HOME", interlock_sandbox::SANDBOX_HOME);
            cmd.env("TMPDIR", "/tmp");
        }
        // The egress proxy's variables, when its profile lists destinations.
        cmd.envs(extra_env);
        cmd.envs(launch.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // Its own process group, so closing kills the server's children too
            // (`npx` runs the real server as a grandchild).
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| UpstreamError::Unavailable(format!("cannot start `{command}`: {e}")))?;
        drop(seccomp);
        let pid = child.id();
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let child = Arc::new(Mutex::new(Some(child)));
        let exited = Arc::clone(&child);
        let pending = Arc::new(Pending::default());
        let (to_child, mut outbox) = mpsc::unbounded_channel::<Vec<u8>>();

        tokio::spawn(async move {
            while let Some(mut msg) = outbox.recv().await {
                msg.push(b'\n');
                if stdin.write_all(&msg).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });

        let server = name.to_owned();
        let reader_pending = Arc::clone(&pending);
        let replies = to_child.clone();
        tokio::spawn(async move {
            let why = read_messages(&server, stdout, max_message, |msg| {
                if msg.method.is_none() {
                    if !reader_pending.answer(msg) {
                        tracing::debug!(server, "a response to no pending request");
                    }
                } else if let Some(reply) = handle_unsolicited(&server, &msg, &signals) {
                    let _ = replies.send(reply);
                }
            })
            .await;
            // Why it ended, when it did: a server over one of its limits is
            // stopped by the kernel, and the supervisor reports that.
            let why = match exit_status(&exited).await {
                Some(status) if why.starts_with("exited") => {
                    format!("{why} ({})", describe_exit(status))
                }
                _ => why,
            };
            reader_pending.fail_all(&format!("upstream `{server}` {why}"));
            let _ = signals.send(UpstreamSignal::Closed(why));
        });

        let server = name.to_owned();
        tokio::spawn(copy_stderr(stderr, move |line| {
            tracing::info!(target: "interlock::upstream", server, "{line}");
        }));

        Ok(StdioConnection {
            next_id: AtomicU64::new(1),
            pending,
            to_child,
            child,
            pid,
        })
    }

    pub async fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.insert(id, tx);
        if self
            .to_child
            .send(jsonrpc::request(id, method, params))
            .is_err()
        {
            self.pending.remove(id);
            return Err(UpstreamError::Unavailable("the upstream has exited".into()));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(UpstreamError::Unavailable("the upstream has exited".into())),
            Err(_) => {
                self.pending.remove(id);
                // Tell the server to stop working on it.
                let cancel = RawValue::from_string(format!(
                    r#"{{"requestId":{id},"reason":"timed out at the gateway"}}"#
                ))
                .expect("valid JSON");
                let _ = self.to_child.send(jsonrpc::notification(
                    "notifications/cancelled",
                    Some(&cancel),
                ));
                Err(UpstreamError::Timeout(timeout))
            }
        }
    }

    pub async fn notify(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), UpstreamError> {
        self.to_child
            .send(jsonrpc::notification(method, params))
            .map_err(|_| UpstreamError::Unavailable("the upstream has exited".into()))
    }

    pub fn close(&self) {
        if let Some(pid) = self.pid
            && let Some(pid) = rustix::process::Pid::from_raw(pid as i32)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        if let Some(mut child) = self.child.lock().expect("child lock").take() {
            let _ = child.start_kill();
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
    }
}

impl Drop for StdioConnection {
    fn drop(&mut self) {
        self.close();
    }
}

/// The exit status of a child whose output ended, if it ends within a
/// second (it may close its output and go on).
async fn exit_status(child: &Mutex<Option<Child>>) -> Option<std::process::ExitStatus> {
    for _ in 0..50 {
        let status = {
            let mut slot = child.lock().expect("child lock");
            match slot.as_mut() {
                None => return None,
                Some(c) => c.try_wait().ok().flatten(),
            }
        };
        if status.is_some() {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// An exit status for a person, naming the limit a signal stands for. A
/// sandboxed server's status is bubblewrap's, which exits with 128 + the
/// signal that ended the server.
pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.signal().or_else(|| {
        status
            .code()
            .filter(|c| (129..160).contains(c))
            .map(|c| c - 128)
    });
    match (signal, status.code()) {
        (Some(24), _) => "stopped by the kernel: over its CPU time limit (SIGXCPU)".into(),
        (Some(25), _) => "stopped by the kernel: over its file size limit (SIGXFSZ)".into(),
        (Some(9), _) => "killed (SIGKILL)".into(),
        (Some(6), _) => "aborted (SIGABRT; often out of memory under its memory limit)".into(),
        (Some(s), _) => format!("ended by signal {s}"),
        (None, Some(c)) => format!("exit code {c}"),
        (None, None) => "no exit status".into(),
    }
}

/// Reads newline-delimited messages until EOF or a protocol violation, handing
/// each parsed message to `each`; returns why it stopped.
pub(super) async fn read_messages<R: AsyncRead + Unpin>(
    server: &str,
    from: R,
    max_message: usize,
    mut each: impl FnMut(OwnedIncoming),
) -> String {
    let mut reader = BufReader::with_capacity(64 * 1024, from);
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        // Read one line without letting it grow past the limit.
        loop {
            let buf = match reader.fill_buf().await {
                Ok(b) => b,
                Err(e) => return format!("closed its output: {e}"),
            };
            if buf.is_empty() {
                return if line.is_empty() {
                    "exited".to_owned()
                } else {
                    "exited mid-message".to_owned()
                };
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1),
                None => (buf, buf.len()),
            };
            let found_newline = done != buf.len() || buf.last() == Some(&b'\n');
            line.extend_from_slice(chunk);
            reader.consume(done);
            if line.len() > max_message {
                return format!("sent a message over {max_message} bytes");
            }
            if found_newline {
                break;
            }
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<OwnedIncoming>(text) {
            Ok(msg) => each(msg),
            Err(e) => {
                // Servers that print logs to stdout break the protocol; say so
                // once per line and keep reading rather than dropping the link.
                tracing::warn!(server, error = %e, "an upstream wrote a line that is not JSON-RPC");
            }
        }
    }
}

/// The longest stderr line of an upstream copied to the log, in bytes; the rest
/// of a longer line is dropped (and the line marked as cut).
pub(crate) const MAX_STDERR_LINE: usize = 4096;

/// Copies a child's stderr to `emit` line by line, each line cut at
/// [`MAX_STDERR_LINE`] bytes: a child that writes without newlines cannot grow
/// the gateway's memory (`lines()` would buffer the whole "line").
pub(crate) async fn copy_stderr<R>(stderr: R, mut emit: impl FnMut(&str))
where
    R: AsyncRead + Unpin,
{
    let mut r = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut cut = false;
    let mut flush = |line: &mut Vec<u8>, cut: &mut bool| {
        let text = String::from_utf8_lossy(line);
        if *cut {
            emit(&format!("{text} … (line cut at {MAX_STDERR_LINE} bytes)"));
        } else {
            emit(&text);
        }
        line.clear();
        *cut = false;
    };
    loop {
        let buf = match r.fill_buf().await {
            Ok(b) if !b.is_empty() => b,
            _ => break,
        };
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        let room = MAX_STDERR_LINE - line.len();
        if chunk.len() > room {
            line.extend_from_slice(&chunk[..room]);
            cut = true;
        } else {
            line.extend_from_slice(chunk);
        }
        let used = newline.map_or(buf.len(), |i| i + 1);
        r.consume(used);
        if newline.is_some() {
            flush(&mut line, &mut cut);
        }
    }
    if !line.is_empty() {
        flush(&mut line, &mut cut);
    }
}

#[cfg(test)]
mod stderr_tests {
    #[tokio::test]
    async fn regression_stdio_stderr_capture_is_bounded() {
        // 4 MB without a newline, then a short line.
        let mut input = vec![b'x'; 4 << 20];
        input.extend_from_slice(b"\nafter\n");
        let mut lines = Vec::new();
        super::copy_stderr(&input[..], |l| lines.push(l.to_owned())).await;
        assert_eq!(
            lines.len(),
            2,
            "{:?}",
            lines.iter().map(String::len).collect::<Vec<_>>()
        );
        assert!(
            lines[0].len() < super::MAX_STDERR_LINE + 64,
            "{}",
            lines[0].len()
        );
        assert!(lines[0].ends_with("(line cut at 4096 bytes)"));
        assert_eq!(lines[1], "after");
    }
}

#[cfg(test)]
mod exit_tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn a_server_over_its_limits_is_reported_by_the_limit() {
        // Directly signalled, and through bubblewrap (128 + signal).
        let cpu = super::describe_exit(ExitStatus::from_raw(24));
        assert!(cpu.contains("CPU time limit"), "{cpu}");
        let cpu = super::describe_exit(ExitStatus::from_raw((128 + 24) << 8));
        assert!(cpu.contains("CPU time limit"), "{cpu}");
        let fsize = super::describe_exit(ExitStatus::from_raw((128 + 25) << 8));
        assert!(fsize.contains("file size limit"), "{fsize}");
        assert_eq!(
            super::describe_exit(ExitStatus::from_raw(3 << 8)),
            "exit code 3"
        );
    }
}
