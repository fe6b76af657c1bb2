"""The installed package, used as a new user would (issue 19's "Done when").

Run by `scripts/package-deb test` after `dpkg -i`, against the installed
`/usr/bin/interlock-desktop` and `/usr/bin/interlock` (INTERLOCK_DESKTOP_BIN,
INTERLOCK_BIN), under the end-to-end test's private session (Xvfb, a D-Bus
notification server and tray watcher, an unlocked keyring): a Claude Code user
(tests/data/connect/claude-code, the real peers' paths filled in) starts the app,
runs `interlock connect claude-code --yes`; the app's gateway shows the servers
pending at once (no restart); the reviewer approves one; the official Python SDK
client, configured exactly as the rewritten ~/.claude.json says, reaches its
tools; `interlock connect --undo claude-code` gives the file back byte for byte.
Prints the time from `dpkg -i` (INTERLOCK_PACKAGE_T0, epoch seconds) to that
client seeing its first approved tool.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from dbus_peers import Client, NotificationServer, StatusNotifierWatcher  # noqa: E402


def peer(name):
    value = os.environ.get(name)
    assert value, f"${name} is not set (scripts/peers.sh)"
    return value


def main():
    t0 = float(os.environ.get("INTERLOCK_PACKAGE_T0") or time.time())
    claude_json = os.path.join(os.environ["HOME"], ".claude.json")
    with open(os.path.join(e2e.REPO, "tests/data/connect/claude-code/.claude.json")) as f:
        original = (
            f.read()
            .replace("@NODE@", peer("INTERLOCK_PEERS_NODE"))
            .replace("@EVERYTHING@", peer("INTERLOCK_PEERS_SERVER_EVERYTHING"))
            .replace("@TIME@", peer("INTERLOCK_PEERS_TIME_SERVER"))
        )
    with open(claude_json, "w") as f:
        f.write(original)

    root = tempfile.mkdtemp(prefix="interlock-package-")
    notifications = NotificationServer()
    notifications.start()
    watcher = StatusNotifierWatcher()
    watcher.start()
    bus = Client()
    env = e2e.Env(root, "package")
    _, proc, (sender, path) = e2e.launch_to_tray(env, watcher, bus, "package", "--hidden")
    label = lambda: bus.item_property(sender, path, "XAyatanaLabel")  # noqa: E731
    try:
        out = env.cli("connect", "claude-code", "--yes")
        print(out.strip(), flush=True)

        def status(name):
            shown = env.cli("servers", "show", name)
            return dict(
                line.split(None, 1)
                for line in shown.splitlines()
                if line.split(None, 1)[0:1] and line.split(None, 1)[0] in ("status", "observed")
            )

        # Both imported servers wait for review in the running app, no restart.
        e2e.wait(lambda: status("everything").get("status", "").strip() == "PENDING", 60, "everything pending")
        e2e.wait(lambda: status("time").get("status", "").strip() == "PENDING", 60, "time pending")
        e2e.wait(lambda: label() == "2", 20, "the tray counting the two servers")
        observed = status("everything")["observed"].strip()
        env.cli("servers", "approve", "everything", "--hash", observed, "--reason", "reviewed its tools")

        # A real MCP client configured exactly as the rewritten file says.
        with open(claude_json) as f:
            entry = json.load(f)["mcpServers"]["interlock"]
        command = [peer("INTERLOCK_PEERS_PYTHON"), peer("INTERLOCK_PEERS_CLIENT_PY"), "--url", entry["url"]]
        for name, value in entry.get("headers", {}).items():
            command += ["--header", f"{name}: {value}"]

        def tools():
            got = json.loads(subprocess.run(command + ["list-tools"], capture_output=True, text=True, timeout=60).stdout)
            return {t["name"] for t in got.get("tools", [])}

        seen = e2e.wait(lambda: {n for n in tools() if n.startswith("everything__")}, 60, "everything's tools")
        took = time.time() - t0
        assert not any(n.startswith("time__") for n in tools()), "a pending server's tools are not served"
        print(
            f"package: from dpkg -i to a connected client seeing its first approved tool: {took:.1f} s"
            f" ({len(seen)} tools of `everything`)",
            flush=True,
        )

        out = env.cli("connect", "--undo", "claude-code")
        print(out.strip(), flush=True)
        with open(claude_json) as f:
            assert f.read() == original, "undo gives the file back byte for byte"
        print("package: connect, pending, approve, a client's tools, undo byte for byte: ok", flush=True)
    finally:
        e2e.stop(proc)
        notifications.stop()
        watcher.stop()


if __name__ == "__main__":
    main()
