#!/usr/bin/env python3
"""Draws Interlock's icons: a blue shield with a white padlock.

Pure Python (standard library only), so anyone can regenerate them:

    python3 icons/generate.py

Writes, beside this file: 32x32.png, 128x128.png, 128x128@2x.png (256 px) and
icon.png (512 px) for the app and its bundle, and tray.png / tray-held.png
(64 px; the second with an amber dot) for the tray icon, which shows the second
while any item waits for review. Each pixel is 4x4 supersampled.
"""

import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SS = 4  # supersampling per axis

TOP = (0x3B, 0x82, 0xF6)  # shield gradient, top
BOTTOM = (0x1E, 0x3A, 0x8A)  # shield gradient, bottom
RIM = (0x17, 0x2C, 0x6B)  # shield outline
WHITE = (0xFF, 0xFF, 0xFF)
AMBER = (0xF5, 0x9E, 0x0B)


def shield_half_width(y):
    """Half-width of the shield at height y (unit square), or None outside."""
    if y < 0.07 or y > 0.95:
        return None
    if y <= 0.52:
        return 0.36
    t = (y - 0.52) / (0.95 - 0.52)
    return 0.36 * (1.0 - t**1.7) ** 0.9


def in_shield(x, y, inset=0.0):
    w = shield_half_width(y)
    if w is None:
        return False
    top = 0.07 + inset
    if y < top:
        return False
    w -= inset
    if w <= 0 or abs(x - 0.5) > w:
        return False
    # Rounded top corners.
    r = 0.08
    cx = 0.5 - w + r if x < 0.5 else 0.5 + w - r
    cy = top + r
    if y < cy and abs(x - 0.5) > w - r:
        return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
    if y > 0.52 and inset > 0:
        # Keep the inner outline parallel near the point.
        return y < 0.95 - inset * 1.6
    return True


def in_rounded_rect(x, y, x0, y0, x1, y1, r):
    if not (x0 <= x <= x1 and y0 <= y <= y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def in_lock(x, y):
    """The white padlock: shackle and body, minus the keyhole."""
    body = in_rounded_rect(x, y, 0.33, 0.46, 0.67, 0.76, 0.045)
    cx, cy = 0.5, 0.46
    d = math.hypot(x - cx, y - cy)
    shackle = (y <= cy and 0.085 <= d <= 0.14) or (
        cy <= y <= 0.48 and (0.36 <= x <= 0.415 or 0.585 <= x <= 0.64)
    )
    if not (body or shackle):
        return False
    keyhole = math.hypot(x - 0.5, y - 0.575) <= 0.04 or (
        abs(x - 0.5) <= 0.016 and 0.575 <= y <= 0.68
    )
    return not (body and keyhole)


def color_at(x, y, dot):
    if dot:
        d = math.hypot(x - 0.80, y - 0.20)
        if d <= 0.15:
            return AMBER + (255,)
        if d <= 0.19:
            return WHITE + (255,)
    if not in_shield(x, y):
        return (0, 0, 0, 0)
    if in_lock(x, y):
        return WHITE + (255,)
    if not in_shield(x, y, inset=0.035):
        return RIM + (255,)
    t = (y - 0.07) / 0.88
    return tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM)) + (255,)


def render(size, dot=False):
    rows = []
    n = SS * SS
    for py in range(size):
        row = bytearray([0])  # PNG filter: none
        for px in range(size):
            acc = [0, 0, 0, 0]
            for sy in range(SS):
                for sx in range(SS):
                    x = (px + (sx + 0.5) / SS) / size
                    y = (py + (sy + 0.5) / SS) / size
                    r, g, b, a = color_at(x, y, dot)
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            if acc[3] == 0:
                row += b"\0\0\0\0"
            else:
                row += bytes(
                    [
                        round(acc[0] / acc[3]),
                        round(acc[1] / acc[3]),
                        round(acc[2] / acc[3]),
                        round(acc[3] / n),
                    ]
                )
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(w, h, raw):
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main():
    outputs = {
        "32x32.png": (32, False),
        "128x128.png": (128, False),
        "128x128@2x.png": (256, False),
        "icon.png": (512, False),
        "tray.png": (64, False),
        "tray-held.png": (64, True),
    }
    for name, (size, dot) in outputs.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(render(size, dot))
        print(f"icons/{name} ({size}x{size})")


if __name__ == "__main__":
    main()
