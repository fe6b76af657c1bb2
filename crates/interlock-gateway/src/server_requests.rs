//! Programs a reviewer asked to run, waiting for the machine's owner (issue
//! 39 item 1).
//!
//! Why: a reviewer key proves a reviewer, not the owner of this machine. A
//! loopback peer address does not either — an SSH tunnel (the README's own
//! advice for remote reviewers), a TLS proxy on the host, or another local
//! user all arrive from 127.0.0.1. A stdio server runs a program as the
//! gateway's user, so over the reviewer API it is only *requested*: kept
//! here with its `server.requested` leaf, and started only when the owner
//! confirms it through the admin socket (`interlock servers confirm NAME`),
//! which only the data directory's owner reaches. An HTTP upstream runs
//! nothing here and stays addable by reviewers.
//!
//! Kept in memory: a request does not outlive the process (the reviewer asks
//! again); at most [`MAX_REQUESTS`] wait, so a key cannot fill memory.

use std::sync::Mutex;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::server_file::NewServer;

/// The most requests that wait at once.
pub const MAX_REQUESTS: usize = 32;

/// One program a reviewer asked to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerRequest {
    pub server: NewServer,
    /// `reviewer:<key name>`.
    pub requested_by: String,
    /// Unix seconds.
    pub requested_at: i64,
    /// The `server.requested` leaf.
    pub leaf: u64,
}

/// Why a request was not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A request for this name waits already.
    Exists,
    /// [`MAX_REQUESTS`] wait already.
    Full,
}

/// The requests waiting for the owner, oldest first.
#[derive(Default)]
pub struct ServerRequests(Mutex<IndexMap<String, ServerRequest>>);

impl ServerRequests {
    /// Whether `insert` would refuse `name` now.
    pub fn check(&self, name: &str) -> Result<(), Refused> {
        let m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if m.contains_key(name) {
            Err(Refused::Exists)
        } else if m.len() >= MAX_REQUESTS {
            Err(Refused::Full)
        } else {
            Ok(())
        }
    }

    /// Keeps a request (checked again: another may have come meanwhile).
    pub fn insert(&self, request: ServerRequest) -> Result<(), Refused> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if m.contains_key(&request.server.name) {
            return Err(Refused::Exists);
        }
        if m.len() >= MAX_REQUESTS {
            return Err(Refused::Full);
        }
        m.insert(request.server.name.clone(), request);
        Ok(())
    }

    /// Every waiting request, oldest first.
    pub fn list(&self) -> Vec<ServerRequest> {
        let m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.values().cloned().collect()
    }

    /// Takes the request for `name` out (confirmed, or declined).
    pub fn take(&self, name: &str) -> Option<ServerRequest> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.shift_remove(name)
    }

    /// Puts a taken request back where it was not carried out.
    pub fn restore(&self, request: ServerRequest) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.insert(request.server.name.clone(), request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(name: &str) -> ServerRequest {
        ServerRequest {
            server: NewServer {
                name: name.into(),
                command: Some("/bin/true".into()),
                ..NewServer::default()
            },
            requested_by: "reviewer:r".into(),
            requested_at: 1,
            leaf: 0,
        }
    }

    #[test]
    fn requests_are_one_per_name_bounded_and_taken_once() {
        let r = ServerRequests::default();
        r.insert(request("a")).unwrap();
        assert_eq!(r.insert(request("a")), Err(Refused::Exists));
        for i in 1..MAX_REQUESTS {
            r.insert(request(&format!("s{i}"))).unwrap();
        }
        assert_eq!(r.check("another"), Err(Refused::Full));
        assert_eq!(r.insert(request("another")), Err(Refused::Full));
        assert_eq!(r.list()[0].server.name, "a", "oldest first");
        assert!(r.take("a").is_some());
        assert!(r.take("a").is_none(), "taken once");
        r.insert(request("another")).unwrap();
    }
}
