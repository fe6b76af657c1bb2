//! An agent's `POST /mcp` body as `mcp::post` takes it in, before any
//! dispatch: the nesting bound (`jsonrpc::nesting_exceeds`), the envelope
//! (`jsonrpc::Incoming`) and its classification (`Incoming::kind`), then the
//! gateway's hand-written JSON-RPC writers fed the raw parts it forwards.
//!
//! Invariants: nothing panics; `nesting_exceeds` agrees with the real depth of
//! every document serde_json can build; the responses and requests the
//! gateway writes from an accepted message are JSON-RPC messages again, of the
//! right kind, carrying the agent's `id`, `method` and `params` byte for byte.
#![no_main]

use interlock_fuzz::json_depth;
use interlock_gateway::agent::mcp::MAX_NESTING;
use interlock_gateway::jsonrpc::{self, Incoming, Kind, code};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn reparse(bytes: &[u8]) -> Incoming<'_> {
    let msg: Incoming = serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "the gateway wrote invalid JSON-RPC ({e}): {}",
            String::from_utf8_lossy(bytes)
        )
    });
    msg
}

fuzz_target!(|data: &[u8]| {
    // The nesting bound against the depth of what serde_json builds (its own
    // recursion limit keeps these under 128).
    if let Some(d) = json_depth(data) {
        assert!(
            !jsonrpc::nesting_exceeds(data, d),
            "depth {d} reported deeper"
        );
        if d > 0 {
            assert!(jsonrpc::nesting_exceeds(data, d - 1), "depth {d} missed");
        }
    }
    if jsonrpc::nesting_exceeds(data, MAX_NESTING) {
        return; // refused with 400 before parsing
    }
    let Ok(msg) = serde_json::from_slice::<Incoming>(data) else {
        return; // refused with a parse error
    };
    let kind = msg.kind();

    // Every refusal echoes the agent's id: it must stay a valid response.
    let err = jsonrpc::error(msg.id, code::INVALID_REQUEST, "refused \"here\"");
    let back = reparse(&err);
    assert!(matches!(back.kind(), Ok(Kind::Response)) || msg.id.is_some_and(|i| i.get() == "null"));
    assert_eq!(
        back.id.map(|i| i.get()),
        Some(msg.id.map_or("null", |i| i.get()))
    );

    let Ok(kind) = kind else { return };
    match kind {
        Kind::Request => {
            let id = msg.id.expect("a request has an id");
            // A string or an integer literal; an integer past f64's range is
            // still JSON (the id is echoed, never read as a number).
            let raw = id.get();
            let integer = {
                let digits = raw.strip_prefix('-').unwrap_or(raw);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            };
            match serde_json::from_str::<Value>(raw) {
                Ok(Value::String(_)) => {}
                Ok(Value::Number(_)) | Err(_) if integer => {}
                other => panic!("id {raw} accepted ({other:?})"),
            }
            let method = msg.method.as_deref().expect("a request has a method");
            // An answer forwarding a raw result.
            if let Some(params) = msg.params {
                let ok = jsonrpc::result(id, params);
                let back = reparse(&ok);
                assert!(matches!(back.kind(), Ok(Kind::Response)));
                assert_eq!(back.id.unwrap().get(), id.get());
                assert_eq!(back.result.unwrap().get(), params.get());
            }
            // The request relayed upstream: method re-encoded, params raw.
            let up = jsonrpc::request(7, method, msg.params);
            let back = reparse(&up);
            assert!(matches!(back.kind(), Ok(Kind::Request)));
            assert_eq!(back.method.as_deref(), Some(method));
            assert_eq!(back.params.map(|p| p.get()), msg.params.map(|p| p.get()));
            // A listing of raw items (what tools/list writes).
            let items: Vec<&str> = msg.params.map(|p| p.get()).into_iter().collect();
            let list = jsonrpc::listing(id, "tools", items, true);
            assert!(matches!(reparse(&list).kind(), Ok(Kind::Response)));
        }
        Kind::Notification => {
            let method = msg.method.as_deref().expect("a notification has a method");
            let up = jsonrpc::notification(method, msg.params);
            let back = reparse(&up);
            assert!(matches!(back.kind(), Ok(Kind::Notification)));
            assert_eq!(back.method.as_deref(), Some(method));
            assert_eq!(back.params.map(|p| p.get()), msg.params.map(|p| p.get()));
        }
        Kind::Response => {
            assert!(msg.method.is_none() && msg.id.is_some());
        }
    }
});
