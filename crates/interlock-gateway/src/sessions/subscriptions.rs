//! Resource subscriptions: which agent sessions asked for updates of which
//! upstream resource, and the standalone stream (`GET /mcp`) of each session
//! that carries them.
//!
//! The gateway subscribes upstream once per resource, for its first
//! subscriber, and unsubscribes when the last one leaves (unsubscribes, or
//! its session ends). An upstream's `notifications/resources/updated` goes
//! to every subscribed session that has a stream open; a session without
//! one misses it, as MCP allows (an update is a hint to re-read, and the
//! re-read is served, inspected and logged like any read).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Messages a session's stream buffers before further updates are dropped
/// (a client that does not read its stream must not grow the gateway).
const STREAM_DEPTH: usize = 64;

/// An agent key holds `limits.subscriptions_per_key` subscriptions already.
#[derive(Debug, thiserror::Error)]
#[error(
    "this agent key holds its maximum of {max} resource subscriptions (limits.subscriptions_per_key); unsubscribe from one first"
)]
pub(crate) struct CapReached {
    pub max: usize,
}

/// An upstream resource: the server that owns it and its URI.
pub(crate) type Resource = (String, String);

#[derive(Default)]
pub(crate) struct Subscriptions(Mutex<State>);

#[derive(Default)]
struct State {
    /// Held while a server's subscriptions change, across the upstream
    /// request, so a second subscriber is not told "subscribed" while the
    /// first one's upstream subscribe is still in flight (it could fail).
    /// Per server: a slow upstream holds up only its own resources.
    changing: HashMap<String, Arc<tokio::sync::Mutex<()>>>,
    /// Each session's open `GET /mcp` stream (the latest it opened).
    streams: HashMap<String, mpsc::Sender<Vec<u8>>>,
    /// The sessions subscribed to each resource.
    subscribers: HashMap<Resource, BTreeSet<String>>,
}

impl Subscriptions {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update below leaves the maps consistent at each step.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lock to hold while changing `server`'s subscriptions (see
    /// `State::changing`).
    pub(crate) fn changing(&self, server: &str) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(self.state().changing.entry(server.to_owned()).or_default())
    }

    /// Opens `session`'s standalone stream; one it opened before is closed.
    pub(crate) fn open_stream(&self, session: &str) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel(STREAM_DEPTH);
        self.state().streams.insert(session.to_owned(), tx);
        rx
    }

    /// Subscribes `session` to `resource`; true if it is the resource's
    /// first subscriber (so the gateway must subscribe upstream). Refused when
    /// the sessions of the same agent key (`key_sessions`, `session` among
    /// them) hold `max` subscriptions already, so one key cannot grow the
    /// gateway's subscription table without bound. Checked and inserted under
    /// one lock: concurrent subscribes cannot pass the cap together.
    pub(crate) fn subscribe(
        &self,
        resource: Resource,
        session: &str,
        key_sessions: &BTreeSet<String>,
        max: usize,
    ) -> Result<bool, CapReached> {
        let mut st = self.state();
        let already = st
            .subscribers
            .get(&resource)
            .is_some_and(|s| s.contains(session));
        if !already {
            let held: usize = st
                .subscribers
                .values()
                .map(|s| s.intersection(key_sessions).count())
                .sum();
            if held >= max {
                return Err(CapReached { max });
            }
        }
        let sessions = st.subscribers.entry(resource).or_default();
        let first = sessions.is_empty();
        sessions.insert(session.to_owned());
        Ok(first)
    }

    /// Unsubscribes `session` from `resource`; true if that left the
    /// resource without subscribers (so the gateway must unsubscribe
    /// upstream). False if the session was not subscribed.
    pub(crate) fn unsubscribe(&self, resource: &Resource, session: &str) -> bool {
        let mut st = self.state();
        let Some(sessions) = st.subscribers.get_mut(resource) else {
            return false;
        };
        if !sessions.remove(session) || !sessions.is_empty() {
            return false;
        }
        st.subscribers.remove(resource);
        true
    }

    /// The URIs of `server`'s resources someone is subscribed to (for
    /// subscribing again on a new connection, which starts with none).
    pub(crate) fn watched(&self, server: &str) -> Vec<String> {
        self.state()
            .subscribers
            .keys()
            .filter(|(s, _)| s == server)
            .map(|(_, uri)| uri.clone())
            .collect()
    }

    /// Forgets an ended session: its stream and its subscriptions. Returns
    /// the resources it left without subscribers.
    pub(crate) fn end_session(&self, session: &str) -> Vec<Resource> {
        let mut st = self.state();
        st.streams.remove(session);
        let mut orphaned = Vec::new();
        st.subscribers.retain(|resource, sessions| {
            if sessions.remove(session) && sessions.is_empty() {
                orphaned.push(resource.clone());
                return false;
            }
            true
        });
        orphaned
    }

    /// Sends `message` (a `notifications/resources/updated`) to the stream
    /// of every session subscribed to `resource`; returns how many got it.
    /// A stream whose client went away is forgotten; a full one misses it.
    pub(crate) fn updated(&self, resource: &Resource, message: &[u8]) -> usize {
        let mut st = self.state();
        let Some(sessions) = st.subscribers.get(resource) else {
            return 0;
        };
        let mut sent = 0;
        let mut gone = Vec::new();
        for session in sessions {
            let Some(tx) = st.streams.get(session) else {
                continue;
            };
            match tx.try_send(message.to_vec()) {
                Ok(()) => sent += 1,
                Err(mpsc::error::TrySendError::Closed(_)) => gone.push(session.clone()),
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(%session, uri = %resource.1, "a session's stream is full; a resource update was dropped");
                }
            }
        }
        for session in gone {
            st.streams.remove(&session);
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(uri: &str) -> Resource {
        ("s".to_owned(), uri.to_owned())
    }

    /// Subscribes a session that is its key's only one, well within the cap.
    fn sub(subs: &Subscriptions, resource: Resource, session: &str) -> bool {
        subs.subscribe(
            resource,
            session,
            &BTreeSet::from([session.to_owned()]),
            100,
        )
        .expect("within the cap")
    }

    #[test]
    fn regression_one_key_cannot_hold_subscriptions_without_bound() {
        let subs = Subscriptions::default();
        let key: BTreeSet<String> = ["k1".to_owned(), "k2".to_owned()].into();
        assert!(subs.subscribe(res("a"), "k1", &key, 2).unwrap());
        assert!(subs.subscribe(res("b"), "k2", &key, 2).unwrap());
        // The key's sessions together hold two: a third is refused, on any session.
        assert_eq!(subs.subscribe(res("c"), "k1", &key, 2).unwrap_err().max, 2);
        assert!(subs.subscribe(res("c"), "k2", &key, 2).is_err());
        // Subscribing again to one it holds is not a new one.
        assert!(subs.subscribe(res("a"), "k1", &key, 2).is_ok());
        // Another key is not affected.
        let other: BTreeSet<String> = ["o".to_owned()].into();
        assert!(subs.subscribe(res("c"), "o", &other, 2).unwrap());
        assert!(subs.unsubscribe(&res("b"), "k2"));
        assert!(subs.subscribe(res("d"), "k1", &key, 2).is_ok());
    }

    #[test]
    fn upstream_is_subscribed_for_the_first_and_unsubscribed_after_the_last() {
        let subs = Subscriptions::default();
        assert!(sub(&subs, res("a"), "one"));
        assert!(!sub(&subs, res("a"), "two"));
        assert!(!sub(&subs, res("a"), "two"), "twice is once");
        assert!(!subs.unsubscribe(&res("a"), "one"));
        assert!(!subs.unsubscribe(&res("a"), "stranger"));
        assert!(subs.unsubscribe(&res("a"), "two"));
        assert!(!subs.unsubscribe(&res("a"), "two"));
    }

    #[test]
    fn an_ended_session_leaves_the_resources_only_it_watched() {
        let subs = Subscriptions::default();
        sub(&subs, res("a"), "one");
        sub(&subs, res("b"), "one");
        sub(&subs, res("b"), "two");
        assert_eq!(subs.watched("s").len(), 2);
        assert!(subs.watched("other server").is_empty());
        assert_eq!(subs.end_session("one"), vec![res("a")]);
        assert_eq!(subs.end_session("two"), vec![res("b")]);
    }

    #[tokio::test]
    async fn updates_reach_subscribed_sessions_with_an_open_stream() {
        let subs = Subscriptions::default();
        let mut one = subs.open_stream("one");
        let two = subs.open_stream("two");
        sub(&subs, res("a"), "one");
        sub(&subs, res("a"), "two");
        sub(&subs, res("a"), "no-stream");
        let _other = subs.open_stream("other");
        sub(&subs, res("b"), "other");
        drop(two);
        assert_eq!(subs.updated(&res("a"), b"m"), 1);
        assert_eq!(one.recv().await.as_deref(), Some(&b"m"[..]));
        assert!(one.try_recv().is_err(), "one message per update");
        // A reopened stream replaces the old one, which ends.
        let mut again = subs.open_stream("one");
        assert!(one.recv().await.is_none());
        assert_eq!(subs.updated(&res("a"), b"n"), 1);
        assert_eq!(again.recv().await.as_deref(), Some(&b"n"[..]));
    }
}
