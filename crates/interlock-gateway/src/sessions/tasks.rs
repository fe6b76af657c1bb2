//! The gateway's MCP tasks as state: each task, its owner, its status and
//! answer, and the table that bounds them per key. The protocol's handlers
//! are [`crate::agent::calls::tasks`]; this room is what the gateway holds between them.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use interlock_core::time::rfc3339;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::sync::watch;

/// How often an agent is asked to poll.
const POLL_INTERVAL_MS: u64 = 1_000;
/// Tasks kept per agent key (live and finished, until their lifetime ends).
pub const MAX_TASKS_PER_KEY: usize = 64;

/// A task's status, as the protocol names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub(crate) fn terminal(self) -> bool {
        self != TaskStatus::Working
    }
}

/// What the underlying `tools/call` answered: its `result` or its `error`.
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Result(Box<RawValue>),
    Error(Box<RawValue>),
}

#[derive(Debug)]
pub(crate) struct State {
    pub(crate) status: TaskStatus,
    pub(crate) message: Option<String>,
    pub(crate) updated_at: i64,
    pub(crate) answer: Option<Answer>,
}

/// One task.
#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) id: String,
    /// The hash of the agent key that created it: the only key that sees it.
    pub(crate) owner: String,
    pub(crate) created_at: i64,
    pub(crate) ttl_ms: u64,
    pub(crate) state: Mutex<State>,
    /// Bumped on every change (a waiting `tasks/result` wakes on it).
    pub(crate) changed: watch::Sender<u64>,
    pub(crate) cancelled: AtomicBool,
}

impl Task {
    pub(crate) fn expired(&self, now: i64) -> bool {
        now.saturating_sub(self.created_at) as u64 * 1000 > self.ttl_ms
    }

    pub(crate) fn update(&self, now: i64, f: impl FnOnce(&mut State)) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        s.updated_at = now;
        drop(s);
        self.changed.send_modify(|n| *n += 1);
    }

    /// The protocol's `Task` object.
    pub(crate) fn json(&self) -> serde_json::Value {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut v = json!({
            "taskId": self.id,
            "status": s.status.as_str(),
            "createdAt": rfc3339(self.created_at),
            "lastUpdatedAt": rfc3339(s.updated_at),
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(m) = &s.message {
            v["statusMessage"] = json!(m);
        }
        v
    }
}

/// The gateway's tasks.
#[derive(Default)]
pub(crate) struct Tasks {
    by_id: Mutex<HashMap<String, Arc<Task>>>,
}

impl Tasks {
    /// The task `id` if `owner` may see it (and its lifetime has not ended).
    pub(crate) fn get(&self, owner: &str, id: &str, now: i64) -> Option<Arc<Task>> {
        let m = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        m.get(id)
            .filter(|t| t.owner == owner && !t.expired(now))
            .cloned()
    }

    /// Adds a task unless its owner has [`MAX_TASKS_PER_KEY`] already;
    /// tasks whose lifetime ended are dropped first.
    pub(crate) fn insert(&self, task: Arc<Task>, now: i64) -> Result<(), usize> {
        let mut m = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, t| !t.expired(now));
        if m.values().filter(|t| t.owner == task.owner).count() >= MAX_TASKS_PER_KEY {
            return Err(MAX_TASKS_PER_KEY);
        }
        m.insert(task.id.clone(), task);
        Ok(())
    }

    pub(crate) fn owned_by(&self, owner: &str, now: i64) -> Vec<Arc<Task>> {
        let m = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = m
            .values()
            .filter(|t| t.owner == owner && !t.expired(now))
            .cloned()
            .collect();
        v.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        v
    }
}
