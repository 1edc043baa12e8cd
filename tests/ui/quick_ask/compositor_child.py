"""The Quick ask window on a real X server, for ``test_quick_ask_compositor``: run on Xvfb.

Shows the window (light theme, no chat: the card and its header), waits until it is painted,
grabs the whole screen into a PNG and prints what the test checks:

    COMPOSITING True|False      what the window decided
    WINDOW x y w h              the window on the screen
    CARD x y w h                the card inside it, on the screen

    python compositor_child.py OUT.png [--own-cm]

``--own-cm`` first takes the ``_NET_WM_CM_S0`` selection, as a compositing manager does.
"""

from __future__ import annotations

import ctypes
import sys
import time

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget

DEADLINE = 90.0


def own_compositor_selection(helper: QWidget) -> None:
    """Announce a compositor: own ``_NET_WM_CM_S0`` with a window of ours (EWMH)."""
    from threadline.ui.common.xcb import Cookie, Xcb, qt_connection

    xcb = Xcb(qt_connection())
    xcb.lib.xcb_set_selection_owner.restype = Cookie
    xcb.lib.xcb_set_selection_owner.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.c_uint32,
    ]
    xcb.lib.xcb_set_selection_owner(xcb.connection, int(helper.winId()), xcb.atom(b"_NET_WM_CM_S0"), 0)
    xcb.flush()
    end = time.monotonic() + DEADLINE
    while xcb.selection_owner(xcb.atom(b"_NET_WM_CM_S0")) == 0 and time.monotonic() < end:
        time.sleep(0.02)


def main() -> int:
    out = sys.argv[1]
    app = QApplication(sys.argv[:1])
    import threadline.ui  # noqa: F401  (tames PySide6's import hook)
    from threadline.ui.common.theme import LIGHT
    from threadline.ui.quick_ask.quick_ask_window import QuickAskWindow

    helper = QWidget()
    if "--own-cm" in sys.argv:
        own_compositor_selection(helper)
    window = QuickAskWindow(LIGHT)
    window.place_on_screen()
    window.show()
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        app.processEvents()
        handle = window.windowHandle()
        if handle is not None and handle.isExposed():
            break
        time.sleep(0.02)
    # A few more turns of the loop, then the X server has the painted card.
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        app.processEvents()
        time.sleep(0.02)
    app.primaryScreen().grabWindow(0).save(out)
    frame = window.geometry()
    card = window.card.geometry()
    top_left = window.mapToGlobal(QPoint(card.x(), card.y()))
    print("COMPOSITING", window.translucent, flush=True)
    print("WINDOW", frame.x(), frame.y(), frame.width(), frame.height(), flush=True)
    print("CARD", top_left.x(), top_left.y(), card.width(), card.height(), flush=True)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
