//! `Idempotency-Key` for `POST /api/v1/servers/{name}/review`.
//!
//! Why: a CI job retries a request whose answer it lost; the retry must get
//! the same answer, not a second evaluation that may differ (a baseline
//! approved in between), and a key reused for another request must be
//! refused rather than silently answered with the first one's result. The
//! review changes no state, so the cache lives in memory: bounded, each
//! answer kept for a day.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an answer is kept.
pub const TTL: Duration = Duration::from_secs(24 * 3600);
/// How many answers are kept at most (the oldest go first).
pub const CAPACITY: usize = 4096;
/// The longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

/// What a key finds.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    /// Not seen: evaluate, then [`Cache::store`].
    Fresh,
    /// Seen with the same request: this answer.
    Replay(serde_json::Value),
    /// Seen with another request.
    Conflict,
}

/// `(caller, key)` → `(request digest, answer, when)`.
type Answers = HashMap<(String, String), (String, serde_json::Value, Instant)>;

/// The answers kept.
#[derive(Default)]
pub struct Cache(Mutex<Answers>);

impl Cache {
    /// Looks `key` up for the caller `owner` (a key's hash: keys are per
    /// caller) and the request's digest.
    pub fn lookup(&self, owner: &str, key: &str, request: &str) -> Lookup {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, (_, _, at)| at.elapsed() < TTL);
        match m.get(&(owner.to_owned(), key.to_owned())) {
            None => Lookup::Fresh,
            Some((digest, answer, _)) if digest == request => Lookup::Replay(answer.clone()),
            Some(_) => Lookup::Conflict,
        }
    }

    /// Keeps `answer` for `(owner, key)` and the request's digest.
    pub fn store(&self, owner: &str, key: &str, request: &str, answer: serde_json::Value) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= CAPACITY
            && let Some(oldest) = m
                .iter()
                .min_by_key(|(_, (_, _, at))| *at)
                .map(|(k, _)| k.clone())
        {
            m.remove(&oldest);
        }
        m.insert(
            (owner.to_owned(), key.to_owned()),
            (request.to_owned(), answer, Instant::now()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_replays_its_answer_and_refuses_another_request() {
        let c = Cache::default();
        assert_eq!(c.lookup("k", "1", "a"), Lookup::Fresh);
        c.store("k", "1", "a", serde_json::json!({"x": 1}));
        assert_eq!(
            c.lookup("k", "1", "a"),
            Lookup::Replay(serde_json::json!({"x": 1}))
        );
        assert_eq!(c.lookup("k", "1", "b"), Lookup::Conflict);
        // Another caller's key of the same name is its own.
        assert_eq!(c.lookup("other", "1", "b"), Lookup::Fresh);
    }
}
