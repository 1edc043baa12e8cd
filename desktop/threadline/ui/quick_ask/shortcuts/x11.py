"""The global shortcut on X11: a passive key grab on the root window, through xcb and ctypes.

Qt already holds an xcb connection (``QX11Application.connection``); the grab is made on
it, so the X server sends the KeyPress into Qt's own event stream, where a native event
filter picks it out before Qt looks for a window (docs/quick-ask.md). The xcb calls are the
shared ones of ``ui/common/xcb.py`` (libxcb and libxcb-keysyms, Qt's own dependencies on
X11, so nothing is added). The grab is made with and without Caps Lock and Num Lock, which
X counts as modifiers.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication
from PySide6.QtGui import QKeySequence

from threadline.ui.common.xcb import Xcb, qt_connection
from threadline.ui.quick_ask.shortcuts.base import EventType, ShortcutError, cannot_use, event_name, taken
from threadline.ui.quick_ask.shortcuts.keys import chord_of, x11_keysym

log = logging.getLogger("threadline.ui.quick_ask.x11")

SHIFT, LOCK, CONTROL, MOD1, MOD2, MOD4 = 1, 2, 4, 8, 16, 64
"""X modifier masks: Mod1 is Alt, Mod2 Num Lock, Mod4 Super on every common layout."""
IGNORED = (0, LOCK, MOD2, LOCK | MOD2)
KEY_PRESS = 2


class _KeyFilter(QAbstractNativeEventFilter):
    """Picks the grabbed KeyPress out of Qt's xcb events."""

    def __init__(self, matches: Callable[[int, int], bool], activated: Callable[[], None]) -> None:
        super().__init__()
        self._matches = matches
        self._activated = activated

    def nativeEventFilter(self, eventType: EventType, message: object) -> tuple[bool, int]:
        # ``message`` is a shiboken VoidPtr: falsy even when set, so read it as an address.
        address = int(message)  # type: ignore[call-overload]
        if event_name(eventType) != b"xcb_generic_event_t" or not address:
            return False, 0
        if ctypes.c_uint8.from_address(address).value & 0x7F != KEY_PRESS:
            return False, 0
        keycode = ctypes.c_uint8.from_address(address + 1).value
        state = ctypes.c_uint16.from_address(address + 28).value  # xcb_key_press_event_t.state
        if not self._matches(keycode, state):
            return False, 0
        self._activated()
        return True, 0


class X11Shortcut:
    """A key grab on the X server Qt is connected to."""

    name = "X11 key grab"
    local = True

    def __init__(self) -> None:
        connection = qt_connection()
        if not connection:
            raise ShortcutError("Qt is not connected to an X server.")
        self._xcb = Xcb(connection)
        self._root = self._xcb.root()
        self._grabs: list[tuple[int, int]] = []
        self._modifiers = 0
        self._filter: _KeyFilter | None = None

    def bind(self, sequence: QKeySequence, activated: Callable[[], None]) -> None:
        self.unbind()
        chord = chord_of(sequence)
        keysym = x11_keysym(chord.key) if chord is not None else None
        if chord is None or keysym is None:
            raise cannot_use(sequence)
        modifiers = (
            (CONTROL if chord.ctrl else 0)
            | (MOD1 if chord.alt else 0)
            | (SHIFT if chord.shift else 0)
            | (MOD4 if chord.meta else 0)
        )
        codes = self._xcb.keycodes(keysym[0])
        if not codes:
            raise ShortcutError(f"The keyboard has no {keysym[1]} key.")
        refused = False
        for code in codes:
            for extra in IGNORED:
                if not self._xcb.grab_key(self._root, modifiers | extra, code):
                    refused = True
                    continue
                self._grabs.append((code, modifiers | extra))
        self._xcb.flush()
        if refused and not self._grabs:
            raise taken(sequence)
        self._modifiers = modifiers
        grabbed = {code for code, _mods in self._grabs}

        def matches(keycode: int, state: int) -> bool:
            return keycode in grabbed and state & ~(LOCK | MOD2) & 0xFF == modifiers

        self._filter = _KeyFilter(matches, activated)
        app = QCoreApplication.instance()
        assert app is not None
        app.installNativeEventFilter(self._filter)
        log.info("global shortcut grabbed on X11: keycodes %s, modifiers %#x", sorted(grabbed), modifiers)

    def unbind(self) -> None:
        for code, mods in self._grabs:
            self._xcb.ungrab_key(self._root, mods, code)
        if self._grabs:
            self._xcb.flush()
        self._grabs = []
        if self._filter is not None:
            app = QCoreApplication.instance()
            if app is not None:
                app.removeNativeEventFilter(self._filter)
            self._filter = None
