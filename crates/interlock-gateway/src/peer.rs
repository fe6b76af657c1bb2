//! Where a request's connection came from ([`Peer`]), and the refusal of a
//! request that did not come from this machine. The routes ([`crate::http`])
//! record the peer; the handlers that change files here ask it. A room of its
//! own so those handlers need not import the routes that call them.

use std::net::SocketAddr;

/// The address a request's connection came from.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

/// Refuses a request that did not come from this machine: for routes that
/// change files here (connecting an AI client rewrites its config file in
/// this user's home), which a reviewer elsewhere — a gateway listening off
/// loopback for a team — must not reach, reviewer key or not.
pub(crate) fn from_this_machine(peer: Option<&Peer>) -> Result<(), crate::extract::ApiError> {
    match peer {
        Some(Peer(addr)) if addr.ip().is_loopback() => Ok(()),
        _ => Err(crate::extract::ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "local_only",
            "connecting AI clients edits files on the gateway's machine: do it from that machine (the desktop app, a browser there, or `interlock connect`)".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_a_remote_reviewer_cannot_rewrite_this_machines_client_files() {
        let at = |a: &str| Peer(a.parse().unwrap());
        assert!(from_this_machine(Some(&at("127.0.0.1:5000"))).is_ok());
        assert!(from_this_machine(Some(&at("[::1]:5000"))).is_ok());
        assert!(from_this_machine(Some(&at("192.168.1.20:5000"))).is_err());
        assert!(from_this_machine(Some(&at("10.0.0.2:5000"))).is_err());
        // No address known (a request that did not come through `serve`): refused.
        assert!(from_this_machine(None).is_err());
    }
}
