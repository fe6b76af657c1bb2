//! Held calls that survive the client (issue 18 item 3): MCP tasks
//! (protocol 2025-11-25, experimental there). A `tools/call` that carries a
//! `task` member is answered at once with a task; the call runs through the
//! same pipeline as any other, and a held call waits for its reviewer for the
//! task's whole lifetime instead of `calls.hold_secs`. The agent polls
//! `tasks/get` and fetches the answer with `tasks/result`, so no client
//! timeout is in play however long the reviewer takes.
//!
//! A task belongs to the agent key that created it: another key is told the
//! task does not exist (ids are 128-bit random, and never confirmed to a
//! stranger). Tasks live in this process's memory (a task does not outlive
//! its session's process any more than the session does), at most
//! [`crate::sessions::tasks::MAX_TASKS_PER_KEY`] per key, each for its `ttl` (at most
//! [`MAX_TTL_MS`]). `tasks/cancel` stops a held call from waiting; a call
//! already forwarded upstream finishes and is logged as always (evidence is
//! never cut short), but its task stays `cancelled`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use interlock_store::ApiKeyRecord;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};

use super::pipeline::{self, Origin};
use super::progress::Progress;
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::sessions::tasks::{Answer, State, Task, TaskStatus};

/// A task's lifetime when the agent asks for none: an hour.
const DEFAULT_TTL_MS: u64 = 3_600_000;
/// The longest lifetime granted (an agent may ask for more and get this).
pub const MAX_TTL_MS: u64 = 24 * 3_600_000;
/// The shortest lifetime granted.
const MIN_TTL_MS: u64 = 1_000;
/// Tasks listed per `tasks/list` page.
const LIST_PAGE: usize = 50;

/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Whether a `tools/call`'s params ask for a task (a `task` member).
pub(crate) fn asks_for_task(params: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    struct P {
        task: Option<serde::de::IgnoredAny>,
    }
    params
        .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
        .is_some_and(|p| p.task.is_some())
}

/// A task-augmented `tools/call`: creates the task, starts the call through
/// the pipeline, and answers with the task at once.
pub(crate) fn start(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    session: &str,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Vec<u8> {
    #[derive(serde::Deserialize)]
    struct TaskParams {
        ttl: Option<u64>,
    }
    let Some(mut members) =
        params.and_then(|p| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(p.get()).ok())
    else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "tools/call needs params {name, arguments?, task?}",
        );
    };
    let requested = members
        .shift_remove("task")
        .map(|t| serde_json::from_str::<TaskParams>(t.get()).map_err(|e| e.to_string()));
    let ttl_ms = match requested {
        Some(Ok(t)) => t
            .ttl
            .unwrap_or(DEFAULT_TTL_MS)
            .clamp(MIN_TTL_MS, MAX_TTL_MS),
        Some(Err(e)) => {
            return jsonrpc::error(
                Some(id),
                code::INVALID_PARAMS,
                &format!("`task` must be an object {{ttl?: milliseconds}}: {e}"),
            );
        }
        None => DEFAULT_TTL_MS,
    };
    let now = gw.engine().now();
    let mut rnd = [0u8; 16];
    getrandom::fill(&mut rnd).expect("OS randomness");
    let (changed, _) = watch::channel(0);
    let task = Arc::new(Task {
        id: format!("task-{}", hex::encode(rnd)),
        owner: agent.key_hash.clone(),
        created_at: now,
        ttl_ms,
        state: Mutex::new(State {
            status: TaskStatus::Working,
            message: Some("the gateway is inspecting the call".into()),
            updated_at: now,
            answer: None,
        }),
        changed,
        cancelled: AtomicBool::new(false),
    });
    if let Err(max) = gw.tasks().insert(Arc::clone(&task), now) {
        return jsonrpc::error(
            Some(id),
            code::LIMIT,
            &format!(
                "this agent key has {max} tasks already (limit); wait for some to end or cancel them"
            ),
        );
    }
    let call_params = serde_json::value::to_raw_value(&members).expect("raw JSON serializes");
    tokio::spawn(run(
        gw.clone(),
        agent.clone(),
        session.to_owned(),
        id.to_owned(),
        call_params,
        Arc::clone(&task),
    ));
    jsonrpc::result_value(
        id,
        &json!({
            "task": task.json(),
            "_meta": {"io.modelcontextprotocol/model-immediate-response":
                "The gateway accepted this call as a task; it may wait for a human reviewer. Poll the task for its result."},
        }),
    )
}

/// Runs the call of `task` and records its answer. Progress the pipeline
/// reports (a held call's "waiting for a reviewer", the upstream's own
/// progress) becomes the task's status message.
async fn run(
    gw: Gateway,
    agent: ApiKeyRecord,
    session: String,
    id: Box<RawValue>,
    params: Box<RawValue>,
    task: Arc<Task>,
) {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(16);
    let token = RawValue::from_string(format!("\"{}\"", task.id)).expect("a JSON string");
    let progress = Progress::new(Some(token), tx, None);
    let status_task = Arc::clone(&task);
    let clock = gw.clone();
    let messages = tokio::spawn(async move {
        while let Some(note) = rx.recv().await {
            if let Some(m) = progress_message(&note) {
                status_task.update(clock.engine().now(), |s| {
                    if !s.status.terminal() {
                        s.message = Some(m);
                    }
                });
            }
        }
    });
    let origin = Origin {
        progress: Some(&progress),
        session: Some(&session),
        hold_secs: Some(task.ttl_ms / 1000),
        cancelled: Some(&task.cancelled),
        limited: None,
    };
    let body = pipeline::tools_call(&gw, &agent, &id, Some(&params), &origin).await;
    drop(progress);
    let _ = messages.await;
    let answer = answer_of(&body);
    let failed = match &answer {
        Answer::Error(_) => true,
        Answer::Result(r) => {
            #[derive(serde::Deserialize)]
            struct R {
                #[serde(rename = "isError", default)]
                is_error: bool,
            }
            serde_json::from_str::<R>(r.get()).is_ok_and(|r| r.is_error)
        }
    };
    task.update(gw.engine().now(), |s| {
        if s.status == TaskStatus::Cancelled {
            return; // cancelled stays cancelled, whatever the call did
        }
        s.status = if failed {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        s.message = None;
        s.answer = Some(answer);
    });
}

/// The `message` of a `notifications/progress` the pipeline sent.
fn progress_message(note: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(note).ok()?;
    (v["method"] == "notifications/progress")
        .then(|| v["params"]["message"].as_str().map(str::to_owned))
        .flatten()
}

/// A JSON-RPC response's `result` or `error`, raw.
fn answer_of(body: &[u8]) -> Answer {
    #[derive(serde::Deserialize)]
    struct Response {
        result: Option<Box<RawValue>>,
        error: Option<Box<RawValue>>,
    }
    match serde_json::from_slice::<Response>(body) {
        Ok(Response {
            result: Some(r), ..
        }) => Answer::Result(r),
        Ok(Response { error: Some(e), .. }) => Answer::Error(e),
        _ => Answer::Error(
            serde_json::value::to_raw_value(
                &json!({"code": code::INTERNAL_ERROR, "message": "the call produced no answer"}),
            )
            .expect("JSON"),
        ),
    }
}

/// The `taskId` of a `tasks/*` request.
fn task_id(params: Option<&RawValue>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    params
        .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
        .map(|p| p.task_id)
}

fn not_found(id: &RawValue) -> Vec<u8> {
    jsonrpc::error(
        Some(id),
        code::INVALID_PARAMS,
        "Failed to retrieve task: no such task (unknown, expired, or not this agent key's)",
    )
}

fn find(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Result<Arc<Task>, Vec<u8>> {
    let Some(task_id) = task_id(params) else {
        return Err(jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "this method needs params {taskId}",
        ));
    };
    gw.tasks()
        .get(&agent.key_hash, &task_id, gw.engine().now())
        .ok_or_else(|| not_found(id))
}

/// `tasks/get`.
pub(crate) fn get(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Vec<u8> {
    match find(gw, agent, id, params) {
        Ok(task) => jsonrpc::result_value(id, &task.json()),
        Err(e) => e,
    }
}

/// `tasks/result`: waits until the task ends, then answers exactly what its
/// `tools/call` answered (a result, tagged with its task, or an error).
pub(crate) async fn result(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Vec<u8> {
    let task = match find(gw, agent, id, params) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let mut changed = task.changed.subscribe();
    loop {
        // Read under the lock, wait without it.
        let now: Option<Option<Answer>> = {
            let s = task.state.lock().unwrap_or_else(|e| e.into_inner());
            match (s.status, &s.answer) {
                (TaskStatus::Cancelled, _) => Some(None),
                (_, Some(a)) => Some(Some(a.clone())),
                (_, None) => None,
            }
        };
        let Some(answer) = now else {
            if changed.changed().await.is_err() {
                return not_found(id);
            }
            continue;
        };
        return match answer {
            Some(Answer::Result(r)) => jsonrpc::result(id, &with_related_task(&r, &task.id)),
            Some(Answer::Error(e)) => jsonrpc::error_raw(id, &e),
            None => jsonrpc::error(
                Some(id),
                code::INVALID_PARAMS,
                "the task was cancelled: it has no result",
            ),
        };
    }
}

/// `result` with `_meta["io.modelcontextprotocol/related-task"]` set, the
/// rest of it byte for byte.
fn with_related_task(result: &RawValue, task_id: &str) -> Box<RawValue> {
    let Ok(mut members) = serde_json::from_str::<IndexMap<String, Box<RawValue>>>(result.get())
    else {
        return result.to_owned();
    };
    let mut meta = members
        .get("_meta")
        .and_then(|m| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(m.get()).ok())
        .unwrap_or_default();
    meta.insert(
        RELATED_TASK.into(),
        serde_json::value::to_raw_value(&json!({"taskId": task_id})).expect("JSON"),
    );
    members.insert(
        "_meta".into(),
        serde_json::value::to_raw_value(&meta).expect("raw JSON serializes"),
    );
    serde_json::value::to_raw_value(&members).expect("raw JSON serializes")
}

/// `tasks/list`: this agent key's tasks, oldest first, in pages.
pub(crate) fn list(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Vec<u8> {
    #[derive(serde::Deserialize, Default)]
    struct P {
        cursor: Option<String>,
    }
    let p = params
        .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
        .unwrap_or_default();
    let start = match p.cursor.as_deref().map(str::parse::<usize>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return jsonrpc::error(Some(id), code::INVALID_PARAMS, "invalid cursor");
        }
    };
    let tasks = gw.tasks().owned_by(&agent.key_hash, gw.engine().now());
    if start > tasks.len() {
        return jsonrpc::error(Some(id), code::INVALID_PARAMS, "invalid cursor");
    }
    let page: Vec<_> = tasks
        .iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|t| t.json())
        .collect();
    let mut v = json!({"tasks": page});
    if start + LIST_PAGE < tasks.len() {
        v["nextCursor"] = json!((start + LIST_PAGE).to_string());
    }
    jsonrpc::result_value(id, &v)
}

/// `tasks/cancel`: a held call stops waiting; the task is `cancelled` for good.
pub(crate) fn cancel(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Vec<u8> {
    let task = match find(gw, agent, id, params) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let terminal = task
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .status
        .terminal();
    if terminal {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "the task has already ended; it cannot be cancelled",
        );
    }
    task.cancelled.store(true, Ordering::SeqCst);
    task.update(gw.engine().now(), |s| {
        s.status = TaskStatus::Cancelled;
        s.message = Some("cancelled by the agent".into());
    });
    jsonrpc::result_value(id, &task.json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_member_asks_for_a_task() {
        let raw = |s: &str| RawValue::from_string(s.into()).unwrap();
        assert!(asks_for_task(Some(&raw(
            r#"{"name":"x","task":{"ttl":5}}"#
        ))));
        assert!(asks_for_task(Some(&raw(r#"{"name":"x","task":{}}"#))));
        assert!(!asks_for_task(Some(&raw(r#"{"name":"x"}"#))));
        assert!(!asks_for_task(None));
    }

    #[test]
    fn the_related_task_is_added_to_a_result_and_the_rest_kept() {
        let r = RawValue::from_string(
            r#"{"content":[{"type":"text","text":"hi"}],"_meta":{"a":1},"isError":false}"#.into(),
        )
        .unwrap();
        let out = with_related_task(&r, "task-1");
        assert_eq!(
            out.get(),
            r#"{"content":[{"type":"text","text":"hi"}],"_meta":{"a":1,"io.modelcontextprotocol/related-task":{"taskId":"task-1"}},"isError":false}"#
        );
    }
}
