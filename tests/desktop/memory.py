"""Where the desktop app's memory goes (issue 18 item 5), per process and per mapping.

Starts the app in the tray (`--hidden`) under the same private session as the
end-to-end test (Xvfb, a D-Bus notification server and tray watcher, an unlocked
keyring), has an agent propose 100 plans, then opens the window the way a
second launch does — without WebDriver, whose automation session would keep
WebKit's processes alive and alter the figures — and prints, idle in the tray,
with the window open on the inbox and after closing it: RSS and PSS summed over
the app and its WebKit processes, and for each process its PSS by mapping (the
app's own binary, WebKitGTK, JavaScriptCore, Mesa's software GL, anonymous
memory). Run it with `scripts/desktop.sh memory`; the figures are in
docs/BENCHMARKS.md, "The desktop window's memory".
"""

import collections
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import x11  # noqa: E402
from dbus_peers import Client, NotificationServer, StatusNotifierWatcher  # noqa: E402


def by_mapping(pid):
    """One line per process: PSS, RSS split into file-backed and anonymous, and
    the mappings holding the most PSS (MiB)."""
    lines = []
    for p in e2e.processes_of(pid):
        try:
            name = open(f"/proc/{p}/comm").read().strip()
            pss = collections.Counter()
            rss = collections.Counter()
            current = None
            for line in open(f"/proc/{p}/smaps"):
                parts = line.split()
                if len(parts) >= 5 and "-" in parts[0] and ":" not in parts[0]:
                    current = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
                    backed = len(parts) > 5 and parts[5].startswith("/")
                elif parts[0] == "Pss:":
                    pss[current] += int(parts[1])
                elif parts[0] == "Rss:":
                    rss["file" if backed else "anon"] += int(parts[1])
        except OSError:
            continue
        top = ", ".join(f"{k} {v // 1024}" for k, v in pss.most_common(8))
        lines.append(
            f"    {name}: PSS {sum(pss.values()) // 1024} MiB (RSS: file-backed {rss['file'] // 1024},"
            f" anonymous {rss['anon'] // 1024}); largest PSS: {top}"
        )
    return "\n".join(lines)


def report(what, pid):
    rss, pss, names = e2e.memory_of(pid)
    print(f"{what}: RSS {rss:.0f} MiB, PSS {pss:.0f} MiB ({', '.join(names)})", flush=True)
    print(by_mapping(pid), flush=True)


def main():
    root = tempfile.mkdtemp(prefix="interlock-desktop-memory-")
    notifications = NotificationServer()
    notifications.start()
    watcher = StatusNotifierWatcher()
    watcher.start()
    bus = Client()
    env = e2e.Env(root, "memory")
    key = env.cli("agents", "add", "memory-agent").strip().splitlines()[-1].strip()
    _, proc, _ = e2e.launch_to_tray(env, watcher, bus, "memory", "--hidden")
    try:
        e2e.propose_100(e2e.Agent(env.origin, key), env, "m")
        time.sleep(5)  # idle
        report("idle in the tray, 100 held", proc.pid)
        subprocess.Popen([e2e.APP], env=env.environ(), stderr=subprocess.DEVNULL).wait(15)
        e2e.wait(lambda: x11.windows_of(proc.pid), 15, "the window")
        e2e.wait(lambda: len(e2e.processes_of(proc.pid)) >= 3, 15, "WebKit's processes")
        time.sleep(10)  # the inbox loaded, idle
        report("window open on the inbox, 100 held", proc.pid)
        (window,) = x11.windows_of(proc.pid)
        for _ in range(3):  # without a window manager GTK may drop a close request
            x11.close(window)
            try:
                e2e.wait(lambda: not x11.windows_of(proc.pid), 5, "the window to close")
                break
            except AssertionError:
                continue
        time.sleep(5)
        report("after closing the window, 100 held", proc.pid)
    finally:
        e2e.stop(proc)
        notifications.stop()
        watcher.stop()


if __name__ == "__main__":
    main()
