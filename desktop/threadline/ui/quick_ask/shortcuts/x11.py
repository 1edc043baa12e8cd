"""The global shortcut on X11: a passive key grab on the root window, through xcb and ctypes.

Qt already holds an xcb connection (``QX11Application.connection``); the grab is made on
it, so the X server sends the KeyPress into Qt's own event stream, where a native event
filter picks it out before Qt looks for a window (docs/quick-ask.md). libxcb and
libxcb-keysyms are Qt's own dependencies on X11, so nothing is added. The grab is made
with and without Caps Lock and Num Lock, which X counts as modifiers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication
from PySide6.QtGui import QGuiApplication, QKeySequence

from threadline.ui.quick_ask.shortcuts.base import EventType, ShortcutError, cannot_use, event_name, taken
from threadline.ui.quick_ask.shortcuts.keys import chord_of, x11_keysym

log = logging.getLogger("threadline.ui.quick_ask.x11")

SHIFT, LOCK, CONTROL, MOD1, MOD2, MOD4 = 1, 2, 4, 8, 16, 64
"""X modifier masks: Mod1 is Alt, Mod2 Num Lock, Mod4 Super on every common layout."""
IGNORED = (0, LOCK, MOD2, LOCK | MOD2)
KEY_PRESS = 2
GRAB_MODE_ASYNC = 1


def _library(soname: str, name: str) -> ctypes.CDLL:
    """By its usual file name first: ``find_library`` runs ``ldconfig`` (a process) to search."""
    try:
        return ctypes.CDLL(soname)
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library(name) or soname)


class _ScreenIterator(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("rem", ctypes.c_int), ("index", ctypes.c_int)]


class _Cookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class _Xcb:
    """The few libxcb and libxcb-keysyms calls needed, typed for ctypes."""

    def __init__(self) -> None:
        xcb = _library("libxcb.so.1", "xcb")
        keysyms = _library("libxcb-keysyms.so.1", "xcb-keysyms")
        libc = _library("libc.so.6", "c")
        xcb.xcb_get_setup.restype = ctypes.c_void_p
        xcb.xcb_get_setup.argtypes = [ctypes.c_void_p]
        xcb.xcb_setup_roots_iterator.restype = _ScreenIterator
        xcb.xcb_setup_roots_iterator.argtypes = [ctypes.c_void_p]
        xcb.xcb_grab_key_checked.restype = _Cookie
        xcb.xcb_grab_key_checked.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint8,
            ctypes.c_uint32,
            ctypes.c_uint16,
            ctypes.c_uint8,
            ctypes.c_uint8,
            ctypes.c_uint8,
        ]
        xcb.xcb_ungrab_key.restype = _Cookie
        xcb.xcb_ungrab_key.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint16]
        xcb.xcb_request_check.restype = ctypes.c_void_p
        xcb.xcb_request_check.argtypes = [ctypes.c_void_p, _Cookie]
        xcb.xcb_flush.argtypes = [ctypes.c_void_p]
        keysyms.xcb_key_symbols_alloc.restype = ctypes.c_void_p
        keysyms.xcb_key_symbols_alloc.argtypes = [ctypes.c_void_p]
        keysyms.xcb_key_symbols_free.argtypes = [ctypes.c_void_p]
        keysyms.xcb_key_symbols_get_keycode.restype = ctypes.POINTER(ctypes.c_uint8)
        keysyms.xcb_key_symbols_get_keycode.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
        libc.free.argtypes = [ctypes.c_void_p]
        self.xcb, self.keysyms, self.libc = xcb, keysyms, libc

    def root(self, connection: int) -> int:
        screen = self.xcb.xcb_setup_roots_iterator(self.xcb.xcb_get_setup(connection)).data
        return ctypes.c_uint32.from_address(screen).value  # xcb_screen_t starts with its root window

    def keycodes(self, connection: int, keysym: int) -> list[int]:
        symbols = self.keysyms.xcb_key_symbols_alloc(connection)
        try:
            found = self.keysyms.xcb_key_symbols_get_keycode(symbols, keysym)
            if not found:
                return []
            codes: list[int] = []
            while found[len(codes)] != 0:
                codes.append(found[len(codes)])
            self.libc.free(ctypes.cast(found, ctypes.c_void_p))
            return codes
        finally:
            self.keysyms.xcb_key_symbols_free(symbols)


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
        app = QGuiApplication.instance()
        native = app.nativeInterface() if isinstance(app, QGuiApplication) else None
        connection = int(native.connection()) if native is not None and hasattr(native, "connection") else 0
        if not connection:
            raise ShortcutError("Qt is not connected to an X server.")
        self._connection = connection
        self._xcb = _Xcb()
        self._root = self._xcb.root(connection)
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
        codes = self._xcb.keycodes(self._connection, keysym[0])
        if not codes:
            raise ShortcutError(f"The keyboard has no {keysym[1]} key.")
        xcb = self._xcb.xcb
        refused = False
        for code in codes:
            for extra in IGNORED:
                cookie = xcb.xcb_grab_key_checked(
                    self._connection, 1, self._root, modifiers | extra, code, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC
                )
                error = xcb.xcb_request_check(self._connection, cookie)
                if error:
                    self._xcb.libc.free(error)
                    refused = True
                    continue
                self._grabs.append((code, modifiers | extra))
        xcb.xcb_flush(self._connection)
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
        xcb = self._xcb.xcb
        for code, mods in self._grabs:
            xcb.xcb_ungrab_key(self._connection, code, self._root, mods)
        if self._grabs:
            xcb.xcb_flush(self._connection)
        self._grabs = []
        if self._filter is not None:
            app = QCoreApplication.instance()
            if app is not None:
                app.removeNativeEventFilter(self._filter)
            self._filter = None
