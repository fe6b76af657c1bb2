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
    /// first subscriber (so the gateway must subscribe upstream).
    pub(crate) fn subscribe(&self, resource: Resource, session: &str) -> bool {
        let mut st = self.state();
        let sessions = st.subscribers.entry(resource).or_default();
        let first = sessions.is_empty();
        sessions.insert(session.to_owned());
        first
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

    #[test]
    fn upstream_is_subscribed_for_the_first_and_unsubscribed_after_the_last() {
        let subs = Subscriptions::default();
        assert!(subs.subscribe(res("a"), "one"));
        assert!(!subs.subscribe(res("a"), "two"));
        assert!(!subs.subscribe(res("a"), "two"), "twice is once");
        assert!(!subs.unsubscribe(&res("a"), "one"));
        assert!(!subs.unsubscribe(&res("a"), "stranger"));
        assert!(subs.unsubscribe(&res("a"), "two"));
        assert!(!subs.unsubscribe(&res("a"), "two"));
    }

    #[test]
    fn an_ended_session_leaves_the_resources_only_it_watched() {
        let subs = Subscriptions::default();
        subs.subscribe(res("a"), "one");
        subs.subscribe(res("b"), "one");
        subs.subscribe(res("b"), "two");
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
        subs.subscribe(res("a"), "one");
        subs.subscribe(res("a"), "two");
        subs.subscribe(res("a"), "no-stream");
        let _other = subs.open_stream("other");
        subs.subscribe(res("b"), "other");
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
