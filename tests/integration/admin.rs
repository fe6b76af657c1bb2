//! Issue 19 item 3 (headless first run): CLI commands run beside a live
//! gateway reach it through its local admin socket instead of needing its
//! keychain — `scripts/run`'s keyring lives in the gateway's private D-Bus
//! session, so a second terminal has none, and `interlock reviewers add`
//! failed there with "no Secret Service on the session bus".

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output};

use serde_json::json;

use crate::gateway_util::{Gateway, post_mcp};
use crate::util::{stderr, stdout};

/// `interlock ARGS` in the gateway's data directory with no keychain at all
/// (no session bus to find a Secret Service on).
fn without_keychain(gw: &Gateway, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
    cmd.args(args)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    for (k, v) in gw.env_for_thread() {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn keys_are_issued_beside_a_live_gateway_without_its_keychain() {
    let mut gw = Gateway::start("");
    let socket = gw.data().join("run/admin.sock");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600, "the socket is owner-only");
    assert_eq!(mode(socket.parent().unwrap()), 0o700, "so is its directory");

    let out = without_keychain(&gw, &["reviewers", "add", "second-terminal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("by the running gateway"),
        "{}",
        stderr(&out)
    );
    let reviewer = stdout(&out).trim().to_owned();
    let servers = gw.api_get(&reviewer, "/api/v1/servers");
    assert!(servers.is_object() || servers.is_array(), "{servers}");

    let out = without_keychain(&gw, &["agents", "add", "from-terminal-two"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let agent = stdout(&out).trim().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let (status, _, answer) = post_mcp(
        &gw.addr,
        &agent,
        &[("MCP-Protocol-Version", "2026-07-28")],
        &serde_json::to_vec(&body).unwrap(),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));

    // The issuance is on the log, signed by the gateway's log key.
    gw.assert_audit_clean();

    // Without a live gateway (its socket left behind by a crash), the
    // command does the work itself, and so needs the keychain.
    gw.kill();
    assert!(socket.exists());
    let out = without_keychain(&gw, &["reviewers", "add", "no-gateway"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Secret Service"), "{}", stderr(&out));
}
