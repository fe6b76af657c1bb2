"""The app's top-level X11 window, found by its _NET_WM_PID, and the window
manager's close request (WM_DELETE_WINDOW) — what the title bar's × sends."""

from Xlib import X, display, protocol


def windows_of(pid):
    d = display.Display()
    net_pid = d.intern_atom("_NET_WM_PID")
    found = []
    for w in d.screen().root.query_tree().children:
        try:
            prop = w.get_full_property(net_pid, X.AnyPropertyType)
            attrs = w.get_attributes()
        except Exception:
            continue
        if prop and prop.value[0] == pid and attrs.map_state == X.IsViewable:
            found.append(w.id)
    d.close()
    return found


def close(window_id):
    d = display.Display()
    w = d.create_resource_object("window", window_id)
    protocols = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    event = protocol.event.ClientMessage(
        window=w, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])
    )
    w.send_event(event, event_mask=X.NoEventMask)
    d.flush()
    d.close()


def screenshot(window_id, path):
    """Writes what the window shows now as a PNG (what a user sees, frame and
    all, rather than the page WebDriver would render for itself)."""
    import struct
    import zlib

    d = display.Display()
    w = d.create_resource_object("window", window_id)
    g = w.get_geometry()
    image = w.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF)
    d.close()
    data = image.data if isinstance(image.data, bytes) else image.data.encode("latin-1")
    stride = len(data) // g.height
    rows = []
    for y in range(g.height):
        row = data[y * stride : y * stride + g.width * 4]
        rgb = bytearray(g.width * 3)
        rgb[0::3] = row[2::4]  # BGRX → RGB
        rgb[1::3] = row[1::4]
        rgb[2::3] = row[0::4]
        rows.append(b"\0" + bytes(rgb))

    def chunk(kind, body):
        c = struct.pack(">I", len(body)) + kind + body
        return c + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", g.width, g.height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(b"".join(rows), 6)))
        f.write(chunk(b"IEND", b""))


def click(window_id, x, y):
    """A left click at (x, y) in the window's coordinates (negative: from the
    right or bottom edge), sent through XTest as the pointer would."""
    from Xlib.ext import xtest

    d = display.Display()
    w = d.create_resource_object("window", window_id)
    g = w.get_geometry()
    x = x if x >= 0 else g.width + x
    y = y if y >= 0 else g.height + y
    at = d.screen().root.translate_coords(w, x, y)
    xtest.fake_input(d, X.MotionNotify, x=at.x, y=at.y)
    d.sync()
    xtest.fake_input(d, X.ButtonPress, 1)
    d.sync()
    xtest.fake_input(d, X.ButtonRelease, 1)
    d.sync()
    d.close()


def size(window_id):
    d = display.Display()
    g = d.create_resource_object("window", window_id).get_geometry()
    d.close()
    return g.width, g.height
