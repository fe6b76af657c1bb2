//! What an upstream sends about a call in flight — `notifications/progress`
//! and log messages — relayed to the agent that made the call.
//!
//! Why synchronous, in the connection's reader: an upstream sends a call's
//! progress before its response, on the same stream; routing it as it is read
//! keeps that order, so the agent never gets progress after the result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::jsonrpc;

/// Where one call's notifications go: the agent's SSE stream, with the
/// agent's own progress token put back.
struct CallRelay {
    agent_token: Box<RawValue>,
    tx: mpsc::Sender<Vec<u8>>,
    /// The least severe log level the agent's session asked for.
    log_level: Option<LogLevel>,
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
/// progress token (unique per call: agents' own tokens may collide).
#[derive(Default)]
pub struct Relays(Mutex<HashMap<String, CallRelay>>);

/// Removes a call's relay when the call ends, however it ends.
pub struct RelayGuard {
    relays: Arc<Relays>,
    token: String,
}

impl Drop for RelayGuard {
    fn drop(&mut self) {
        self.relays
            .0
            .lock()
            .expect("relays lock")
            .remove(&self.token);
    }
}

impl Relays {
    /// Registers a call: the upstream's progress for `token` reaches `tx`
    /// with `agent_token` in its place, until the guard drops.
    pub fn register(
        self: &Arc<Self>,
        token: String,
        agent_token: Box<RawValue>,
        tx: mpsc::Sender<Vec<u8>>,
        log_level: Option<LogLevel>,
    ) -> RelayGuard {
        self.0.lock().expect("relays lock").insert(
            token.clone(),
            CallRelay {
                agent_token,
                tx,
                log_level,
            },
        );
        RelayGuard {
            relays: Arc::clone(self),
            token,
        }
    }

    /// `notifications/progress`: to the call whose token it carries.
    /// Never blocks: a slow agent loses notifications, the reader goes on.
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
        let relays = self.0.lock().expect("relays lock");
        let Some(relay) = relays.get(&token) else {
            return;
        };
        p.insert("progressToken".into(), relay.agent_token.clone());
        let raw = serde_json::value::to_raw_value(&p).expect("raw JSON serializes");
        let _ = relay
            .tx
            .try_send(jsonrpc::notification("notifications/progress", Some(&raw)));
    }

    /// `notifications/message` (a log message): relayed only when exactly one
    /// relayed call is in flight — stdio carries no request id on it, and
    /// another agent's call must never see it.
    /// Messages below the level the agent's session set are dropped.
    pub fn log(&self, params: &RawValue) {
        #[derive(serde::Deserialize)]
        struct P {
            level: String,
        }
        let level = serde_json::from_str::<P>(params.get())
            .ok()
            .and_then(|p| LogLevel::parse(&p.level));
        let relays = self.0.lock().expect("relays lock");
        if relays.len() == 1
            && let Some(relay) = relays.values().next()
            && relay
                .log_level
                .is_none_or(|min| level.is_some_and(|l| l >= min))
        {
            let _ = relay
                .tx
                .try_send(jsonrpc::notification("notifications/message", Some(params)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn progress_goes_to_its_call_with_the_agents_token_until_the_call_ends() {
        let relays = Arc::new(Relays::default());
        let (tx_a, mut rx_a) = mpsc::channel(8);
        let (tx_b, mut rx_b) = mpsc::channel(8);
        let a = relays.register("interlock-1".into(), raw("7"), tx_a, None);
        let _b = relays.register(
            "interlock-2".into(),
            raw(r#""b-token""#),
            tx_b,
            Some(LogLevel::Warning),
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
        relays.progress(&raw(r#"{"progressToken":"interlock-1","progress":2}"#));
        assert!(rx_a.try_recv().is_err());
        // One call in flight: its log messages reach it, from the level its
        // session set.
        relays.log(&raw(r#"{"level":"info","data":"x"}"#));
        assert!(rx_b.try_recv().is_err(), "below warning");
        relays.log(&raw(r#"{"level":"error","data":"x"}"#));
        let got = String::from_utf8(rx_b.try_recv().unwrap()).unwrap();
        assert!(got.contains("notifications/message"), "{got}");
    }
}
