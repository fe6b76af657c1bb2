//! What an upstream sends about a call in flight — `notifications/progress`
//! and log messages — relayed to the agent that made the call, each through
//! the call's [`Screen`]: the agent face passes one in that scans it like the
//! call's result (a progress `message`, a log message's `data` and `logger`)
//! and keeps what it found for the call's `tool.call` leaf. This room knows
//! nothing of scanning.
//!
//! Why synchronous, in the connection's reader: an upstream sends a call's
//! progress before its response, on the same stream; routing it as it is read
//! keeps that order, so the agent never gets progress after the result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::jsonrpc;

/// What a relayed notification becomes before it reaches the agent, decided
/// by whoever registered the call.
pub trait Screen: Send + Sync {
    /// The notification's params to send (redacted or unchanged), or `None`
    /// to withhold it. `texts` names the members a person reads.
    fn screen(&self, method: &str, params: &str, texts: &[&str]) -> Option<Box<RawValue>>;
}

/// Where one call's notifications go: the agent's SSE stream, with the
/// agent's own progress token put back.
struct CallRelay {
    agent_token: Box<RawValue>,
    tx: mpsc::Sender<Vec<u8>>,
    /// The least severe log level the agent's session asked for.
    log_level: Option<LogLevel>,
    /// What each notification becomes before the agent sees it.
    screen: Arc<dyn Screen>,
}

impl CallRelay {
    /// Sends the notification as the call's screen lets it through. Never
    /// blocks: a slow agent loses notifications, the reader goes on.
    fn send(&self, method: &str, params: &str, texts: &[&str]) {
        if let Some(raw) = self.screen.screen(method, params, texts) {
            let _ = self.tx.try_send(jsonrpc::notification(method, Some(&raw)));
        }
    }
}

/// MCP's log levels (RFC 5424 severities), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }
}

/// The calls in flight on one upstream that take progress, by the gateway's
/// progress token (unique per call: agents' own tokens may collide), and how
/// many requests of any kind are in flight on it.
#[derive(Default)]
pub struct Relays {
    calls: Mutex<HashMap<String, CallRelay>>,
    /// Every request the gateway has sent the upstream and not yet seen
    /// answered, relayed or not (another agent's call, a listing).
    in_flight: AtomicUsize,
}

/// Removes a call's relay when the call ends, however it ends.
pub struct RelayGuard {
    relays: Arc<Relays>,
    token: String,
}

impl Drop for RelayGuard {
    fn drop(&mut self) {
        self.relays
            .calls
            .lock()
            .expect("relays lock")
            .remove(&self.token);
    }
}

/// Counts one request in flight until it drops.
pub struct InFlight<'a>(&'a Relays);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Relays {
    /// Registers a call: the upstream's progress for `token` reaches `tx`
    /// with `agent_token` in its place, through `screen`, until the guard
    /// drops.
    pub fn register(
        self: &Arc<Self>,
        token: String,
        agent_token: Box<RawValue>,
        tx: mpsc::Sender<Vec<u8>>,
        log_level: Option<LogLevel>,
        screen: Arc<dyn Screen>,
    ) -> RelayGuard {
        self.calls.lock().expect("relays lock").insert(
            token.clone(),
            CallRelay {
                agent_token,
                tx,
                log_level,
                screen,
            },
        );
        RelayGuard {
            relays: Arc::clone(self),
            token,
        }
    }

    /// Counts a request as in flight (sent, not yet answered) while the
    /// returned guard lives. Taken before the request is written, so a log
    /// message of it can never be attributed to another call.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self)
    }

    /// `notifications/progress`: to the call whose token it carries.
    pub fn progress(&self, params: &RawValue) {
        let Ok(mut p) = serde_json::from_str::<IndexMap<String, Box<RawValue>>>(params.get())
        else {
            return;
        };
        let Some(token) = p
            .get("progressToken")
            .and_then(|t| serde_json::from_str::<String>(t.get()).ok())
        else {
            return;
        };
        let relays = self.calls.lock().expect("relays lock");
        let Some(relay) = relays.get(&token) else {
            return;
        };
        p.insert("progressToken".into(), relay.agent_token.clone());
        let raw = serde_json::value::to_raw_value(&p).expect("raw JSON serializes");
        relay.send("notifications/progress", raw.get(), &["message"]);
    }

    /// `notifications/message` (a log message): stdio carries no request id
    /// on it, so it is attributed to a call only when exactly one request is
    /// in flight on the upstream and that request is a relayed call; otherwise
    /// it is dropped — another agent's call must never see it. Messages below
    /// the level the agent's session set are dropped.
    pub fn log(&self, params: &RawValue) {
        #[derive(serde::Deserialize)]
        struct P {
            level: String,
        }
        let level = serde_json::from_str::<P>(params.get())
            .ok()
            .and_then(|p| LogLevel::parse(&p.level));
        let relays = self.calls.lock().expect("relays lock");
        if self.in_flight.load(Ordering::SeqCst) == 1
            && relays.len() == 1
            && let Some(relay) = relays.values().next()
            && relay
                .log_level
                .is_none_or(|min| level.is_some_and(|l| l >= min))
        {
            relay.send("notifications/message", params.get(), &["data", "logger"]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    /// Lets every notification through unchanged: routing is what these tests
    /// are about (the agent face's scanning screen is `calls::notifications`).
    struct PassThrough;

    impl Screen for PassThrough {
        fn screen(&self, _: &str, params: &str, _: &[&str]) -> Option<Box<RawValue>> {
            Some(raw(params))
        }
    }

    #[tokio::test]
    async fn progress_goes_to_its_call_with_the_agents_token_until_the_call_ends() {
        let relays = Arc::new(Relays::default());
        let (tx_a, mut rx_a) = mpsc::channel(8);
        let (tx_b, mut rx_b) = mpsc::channel(8);
        let rules: Arc<dyn Screen> = Arc::new(PassThrough);
        let a_busy = relays.in_flight();
        let a = relays.register("interlock-1".into(), raw("7"), tx_a, None, rules.clone());
        let b_busy = relays.in_flight();
        let _b = relays.register(
            "interlock-2".into(),
            raw(r#""b-token""#),
            tx_b,
            Some(LogLevel::Warning),
            rules,
        );
        relays.progress(&raw(
            r#"{"progressToken":"interlock-1","progress":1,"total":3}"#,
        ));
        relays.progress(&raw(r#"{"progressToken":"interlock-9","progress":1}"#));
        let got = String::from_utf8(rx_a.try_recv().unwrap()).unwrap();
        assert_eq!(
            got,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":3}}"#
        );
        assert!(rx_a.try_recv().is_err() && rx_b.try_recv().is_err());
        // Two calls in flight: a log message cannot be attributed.
        relays.log(&raw(r#"{"level":"info","data":"x"}"#));
        assert!(rx_a.try_recv().is_err() && rx_b.try_recv().is_err());
        drop(a);
        drop(a_busy);
        relays.progress(&raw(r#"{"progressToken":"interlock-1","progress":2}"#));
        assert!(rx_a.try_recv().is_err());
        // One call in flight: its log messages reach it, from the level its
        // session set.
        relays.log(&raw(r#"{"level":"info","data":"x"}"#));
        assert!(rx_b.try_recv().is_err(), "below warning");
        relays.log(&raw(r#"{"level":"error","data":"x"}"#));
        let got = String::from_utf8(rx_b.try_recv().unwrap()).unwrap();
        assert!(got.contains("notifications/message"), "{got}");
        // Another request in flight (unrelayed: another agent's call, a
        // listing): the message cannot be attributed.
        let other = relays.in_flight();
        relays.log(&raw(r#"{"level":"error","data":"x"}"#));
        assert!(rx_b.try_recv().is_err(), "another request is in flight");
        drop(other);
        drop(b_busy);
    }
}
