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

/// Issue 46: `interlock servers approve` in a second terminal failed on the
/// Secret Service although `agents add` worked there. Decisions now reach the
/// running gateway through its admin socket, and it signs them with the
/// approver key in its own keychain — bound to the hash the person was shown,
/// refused (nothing signed) for any other.
#[test]
fn regression_issue_46_a_second_terminal_decides_through_the_running_gateway() {
    use crate::gateway_util::{peer, write_file_plan};
    use crate::util::shown_hash;
    let time = peer("INTERLOCK_PEERS_TIME_SERVER");
    let mut gw = Gateway::start(&format!(
        "[servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n",
        time.to_str().unwrap()
    ));
    gw.wait_for_server("time", "PENDING");
    let env: Vec<(String, String)> = gw.env_for_thread();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let observed = shown_hash("servers", "time", &env);

    // Without the hash it was shown, nothing is asked of the gateway.
    let out = without_keychain(&gw, &["servers", "approve", "time", "--reason", "read it"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("without --hash"), "{}", stderr(&out));
    // Another hash than the one it lists now: refused, nothing signed.
    let other = format!("sha256:{}", "0".repeat(64));
    let out = without_keychain(
        &gw,
        &[
            "servers", "approve", "time", "--reason", "read it", "--hash", &other,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refused") && stderr(&out).contains("changed since it was shown"),
        "{}",
        stderr(&out)
    );
    gw.wait_for_server("time", "PENDING");

    // The hash it was shown: signed by the running gateway, applied at once.
    let out = without_keychain(
        &gw,
        &[
            "servers",
            "approve",
            "time",
            "--reason",
            "read every tool",
            "--hash",
            &observed,
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "approved server `time` at {observed} — now TRUSTED"
        )),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("signed by the running gateway"),
        "{}",
        stderr(&out)
    );
    gw.wait_for_tool("time__get_current_time", true);

    // Plans too: an agent's proposal, approved as shown from the second terminal.
    let plan = write_file_plan(&gw, "second-terminal", "Write from afar", "afar.txt");
    let r = gw.client("py", &["call", "propose_plan", &plan.to_string()]);
    assert_eq!(r["result"]["isError"], false, "{r}");
    let hash = shown_hash("plans", "second-terminal", &env);
    let out = without_keychain(
        &gw,
        &[
            "plans",
            "approve",
            "second-terminal",
            "--reason",
            "a file in the workspace",
            "--hash",
            &hash,
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("approved plan `second-terminal` revision 1")
            && stdout(&out).contains("now APPROVED"),
        "{}",
        stdout(&out)
    );
    // The owner changes their mind before it runs: rejected the same way.
    let out = without_keychain(
        &gw,
        &[
            "plans",
            "reject",
            "second-terminal",
            "--reason",
            "changed my mind",
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("rejected plan `second-terminal`")
            && stdout(&out).contains("now REJECTED"),
        "{}",
        stdout(&out)
    );

    // Every decision is on the log, signed as any other.
    gw.assert_audit_clean();

    // No gateway (its socket left behind): the command needs the keychain.
    gw.kill();
    let out = without_keychain(&gw, &["servers", "reject", "time", "--reason", "gone"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Secret Service"), "{}", stderr(&out));
}
