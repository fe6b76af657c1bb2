"""Real D-Bus peers for the desktop end-to-end test (jeepney, blocking I/O).

- ``NotificationServer`` owns ``org.freedesktop.Notifications`` on the session
  bus, implements the Desktop Notifications spec's methods, records every
  ``Notify`` call (with the time it arrived), and emits ``ActionInvoked`` /
  ``NotificationClosed`` as a notification daemon does when a user clicks.
- ``StatusNotifierWatcher`` owns ``org.kde.StatusNotifierWatcher`` and records
  each tray item that registers (what a panel's tray sees), so the test can
  time "launch to tray" and read the item's label (the held count).

Each runs on its own connection in its own thread; signals are sent from that
thread (the app accepts actions only from the notification server's name).
"""

import queue
import threading
import time

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_call
from jeepney import new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NOTIFY_PATH = "/org/freedesktop/Notifications"
NOTIFY_IFACE = "org.freedesktop.Notifications"
WATCHER_NAME = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
PROPS_IFACE = "org.freedesktop.DBus.Properties"


class _Peer(threading.Thread):
    name_on_bus = ""

    def __init__(self):
        super().__init__(daemon=True)
        self.conn = open_dbus_connection(bus="SESSION")
        reply = self.conn.send_and_get_reply(message_bus.RequestName(self.name_on_bus, 4))
        if reply.body[0] != 1:  # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
            raise RuntimeError(f"cannot own {self.name_on_bus}: {reply.body}")
        self.lock = threading.Lock()
        self.outbox = queue.Queue()
        self.stopped = False

    def run(self):
        while not self.stopped:
            try:
                while True:
                    self.conn.send(self.outbox.get_nowait())
            except queue.Empty:
                pass
            try:
                msg = self.conn.receive(timeout=0.02)
            except TimeoutError:
                continue
            except OSError:
                return
            if msg.header.message_type != MessageType.method_call:
                continue
            try:
                reply = self.handle(msg)
            except Exception as e:  # a bug here must not hang the app
                reply = new_error(msg, "org.freedesktop.DBus.Error.Failed", "s", (repr(e),))
            if reply is not None:
                self.conn.send(reply)

    def member(self, msg):
        return (
            msg.header.fields.get(HeaderFields.interface),
            msg.header.fields.get(HeaderFields.member),
        )

    def unknown(self, msg):
        return new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("unknown",))

    def stop(self):
        self.stopped = True


class NotificationServer(_Peer):
    name_on_bus = NOTIFY_IFACE

    def __init__(self):
        super().__init__()
        self.next_id = 1
        self.calls = []  # dicts: id, t, app, sender, replaces, summary, body, actions, hints
        self.closed = []

    def handle(self, msg):
        iface, member = self.member(msg)
        if member == "GetCapabilities":
            return new_method_return(
                msg, "as", (["actions", "body", "body-markup", "icon-static", "persistence"],)
            )
        if member == "GetServerInformation":
            return new_method_return(msg, "ssss", ("interlock-test", "interlock", "1", "1.2"))
        if member == "Notify":
            t = time.monotonic()
            app, replaces, _icon, summary, body, actions, hints, _timeout = msg.body
            sender = msg.header.fields.get(HeaderFields.sender)
            with self.lock:
                nid = replaces or self.next_id
                if not replaces:
                    self.next_id += 1
                self.calls.append(
                    {
                        "id": nid,
                        "t": t,
                        "app": app,
                        "sender": sender,
                        "replaces": replaces,
                        "summary": summary,
                        "body": body,
                        "actions": dict(zip(actions[0::2], actions[1::2])),
                        "hints": {k: v[1] for k, v in hints.items()},
                    }
                )
            return new_method_return(msg, "u", (nid,))
        if member == "CloseNotification":
            (nid,) = msg.body
            self._emit("NotificationClosed", "uu", (nid, 3))
            return new_method_return(msg)
        if iface == "org.freedesktop.DBus.Peer" and member == "Ping":
            return new_method_return(msg)
        return self.unknown(msg)

    def _emit(self, signal, sig, body):
        emitter = DBusAddress(NOTIFY_PATH, interface=NOTIFY_IFACE)
        self.outbox.put(new_signal(emitter, signal, sig, body))

    def click(self, nid, action):
        """What a daemon does when the user clicks an action: ActionInvoked,
        then the notification closes (reason 2: dismissed by the user)."""
        with self.lock:
            self.closed.append(nid)
        self._emit("ActionInvoked", "us", (nid, action))
        self._emit("NotificationClosed", "uu", (nid, 2))

    def snapshot(self):
        with self.lock:
            return list(self.calls)

    def wait_for(self, pred, timeout, what, since=0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for c in self.snapshot()[since:]:
                if pred(c):
                    return c
            time.sleep(0.005)
        raise AssertionError(f"no notification {what} within {timeout}s: {self.snapshot()}")


class StatusNotifierWatcher(_Peer):
    name_on_bus = WATCHER_NAME

    def __init__(self):
        super().__init__()
        self.items = []  # (t, sender, path_or_name)

    def handle(self, msg):
        iface, member = self.member(msg)
        sender = msg.header.fields.get(HeaderFields.sender)
        if member == "RegisterStatusNotifierItem":
            (service,) = msg.body
            with self.lock:
                self.items.append((time.monotonic(), sender, service))
            path = service if service.startswith("/") else "/StatusNotifierItem"
            name = sender if service.startswith("/") else service
            emitter = DBusAddress(WATCHER_PATH, interface=WATCHER_NAME)
            self.outbox.put(
                new_signal(emitter, "StatusNotifierItemRegistered", "s", (f"{name}{path}",))
            )
            return new_method_return(msg)
        if member == "RegisterStatusNotifierHost":
            return new_method_return(msg)
        if iface == PROPS_IFACE and member in ("Get", "GetAll"):
            props = {
                "IsStatusNotifierHostRegistered": ("b", True),
                "ProtocolVersion": ("i", 0),
                "RegisteredStatusNotifierItems": (
                    "as",
                    [f"{s}{p}" for _, s, p in self.items],
                ),
            }
            if member == "Get":
                return new_method_return(msg, "v", (props[msg.body[1]],))
            return new_method_return(msg, "a{sv}", (props,))
        if iface == "org.freedesktop.DBus.Introspectable":
            return new_method_return(msg, "s", ("<node/>",))
        return self.unknown(msg)

    def registered(self):
        with self.lock:
            return list(self.items)


class Client:
    """A plain session-bus client for the test's own questions."""

    def __init__(self):
        self.conn = open_dbus_connection(bus="SESSION")

    def call(self, dest, path, iface, member, sig=None, body=()):
        addr = DBusAddress(path, bus_name=dest, interface=iface)
        reply = self.conn.send_and_get_reply(new_method_call(addr, member, sig, body), timeout=5)
        if reply.header.message_type == MessageType.error:
            raise RuntimeError(f"{member}: {reply.body}")
        return reply.body

    def pid_of(self, unique_name):
        return self.call(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            "s",
            (unique_name,),
        )[0]

    def item_property(self, sender, path, prop):
        return self.call(
            sender, path, PROPS_IFACE, "Get", "ss", ("org.kde.StatusNotifierItem", prop)
        )[0][1]


class TrayMenu:
    """The tray item's menu as a panel sees it (com.canonical.dbusmenu), to
    click its entries as a user would."""

    IFACE = "com.canonical.dbusmenu"

    def __init__(self, client, sender, item_path):
        self.client = client
        self.sender = sender
        self.path = client.item_property(sender, item_path, "Menu")

    def items(self):
        """{label: (id, properties)} of the menu's entries (mnemonics removed)."""
        _rev, layout = self.client.call(
            self.sender, self.path, self.IFACE, "GetLayout", "iias", (0, -1, [])
        )
        out = {}

        def walk(node):
            nid, props, children = node
            label = props.get("label", ("s", ""))[1].replace("_", "")
            if label:
                out[label] = (nid, {k: v[1] for k, v in props.items()})
            for _sig, child in children:
                walk(child)

        walk(layout)
        return out

    def click(self, label):
        nid, _ = self.items()[label]
        self.client.call(
            self.sender, self.path, self.IFACE, "Event", "isvu", (nid, "clicked", ("i", 0), 0)
        )
