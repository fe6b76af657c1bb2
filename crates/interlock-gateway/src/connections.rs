//! Each agent key's share of the gateway's TCP connections (issue 39 item
//! 18). `max_connections` bounds them all, so one agent holding many
//! connections open — a stream per session, held calls waiting for a
//! reviewer — could leave none for the others. A connection belongs to the
//! first agent key that used it, and a key is served on at most
//! `limits.connections_per_key` at once; [`crate::http::serve`] numbers the
//! connections and releases each when it ends.

use std::collections::HashMap;
use std::sync::Mutex;

/// One accepted TCP connection, numbered by [`crate::http::serve`] and
/// carried in each of its requests' extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionId(pub u64);

/// Which key each connection belongs to, and how many each key holds.
#[derive(Default)]
pub struct ConnectionShares {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    owner: HashMap<ConnectionId, String>,
    held: HashMap<String, usize>,
}

/// A request refused: the key holds `share` connections already.
#[derive(Debug, PartialEq, Eq)]
pub struct OverShare {
    pub share: usize,
}

impl OverShare {
    pub fn message(&self) -> String {
        format!(
            "this agent key is served on {} connections already (limits.connections_per_key); \
             reuse one of them, or close one",
            self.share
        )
    }
}

impl ConnectionShares {
    /// Counts `conn` as `key_hash`'s, unless it is counted already (as
    /// whichever key used it first); refused when the key holds `share`
    /// connections already. `share` 0: no limit.
    pub fn claim(&self, conn: ConnectionId, key_hash: &str, share: usize) -> Result<(), OverShare> {
        let mut s = self.state.lock().expect("connection shares lock");
        if s.owner.contains_key(&conn) {
            return Ok(());
        }
        let held = s.held.get(key_hash).copied().unwrap_or(0);
        if share > 0 && held >= share {
            return Err(OverShare { share });
        }
        s.owner.insert(conn, key_hash.to_owned());
        *s.held.entry(key_hash.to_owned()).or_insert(0) += 1;
        Ok(())
    }

    /// The connection ended: its key holds one fewer.
    pub fn release(&self, conn: ConnectionId) {
        let mut s = self.state.lock().expect("connection shares lock");
        if let Some(key) = s.owner.remove(&conn)
            && let Some(n) = s.held.get_mut(&key)
        {
            *n -= 1;
            if *n == 0 {
                s.held.remove(&key);
            }
        }
    }

    /// How many connections `key_hash` holds now.
    pub fn held(&self, key_hash: &str) -> usize {
        let s = self.state.lock().expect("connection shares lock");
        s.held.get(key_hash).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_share_and_gets_it_back_as_connections_end() {
        let shares = ConnectionShares::default();
        let c = ConnectionId;
        assert_eq!(shares.claim(c(1), "a", 2), Ok(()));
        assert_eq!(
            shares.claim(c(1), "a", 2),
            Ok(()),
            "the same connection again"
        );
        assert_eq!(shares.claim(c(2), "a", 2), Ok(()));
        assert_eq!(shares.claim(c(3), "a", 2), Err(OverShare { share: 2 }));
        // Another key is not held back by this one.
        assert_eq!(shares.claim(c(3), "b", 2), Ok(()));
        // A connection stays its first key's.
        assert_eq!(shares.claim(c(1), "b", 2), Ok(()));
        assert_eq!((shares.held("a"), shares.held("b")), (2, 1));
        shares.release(c(1));
        assert_eq!(shares.held("a"), 1);
        assert_eq!(shares.claim(c(4), "a", 2), Ok(()));
        shares.release(c(99)); // never claimed: nothing to do
        for n in [2, 3, 4] {
            shares.release(c(n));
        }
        assert_eq!((shares.held("a"), shares.held("b")), (0, 0));
        assert_eq!(shares.claim(c(5), "a", 0), Ok(()), "0: no share");
    }
}
