"""A few libxcb calls on Qt's own X connection, through ctypes (X11 only).

Qt holds the connection (``QX11Application.connection``); making the calls on it needs no
second connection and no dependency (python-xlib would be both). libxcb and libxcb-keysyms
are Qt's own dependencies on X11 and are loaded by their file names (docs/quick-ask.md,
"Start-up cost"); each is loaded and typed once, here. Used by the start-up id activation
(``x11_activation.py``), Quick ask's check for a compositor (``ui/quick_ask/compositing.py``)
and its global shortcut's key grab (``ui/quick_ask/shortcuts/x11.py``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import cache

from PySide6.QtGui import QGuiApplication


class _ScreenIterator(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("rem", ctypes.c_int), ("index", ctypes.c_int)]


class Cookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class _Reply(ctypes.Structure):
    """The head shared by ``xcb_intern_atom_reply_t`` and ``xcb_get_selection_owner_reply_t``."""

    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("pad0", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("length", ctypes.c_uint32),
        ("value", ctypes.c_uint32),
    ]


GRAB_MODE_ASYNC = 1


def qt_connection() -> int:
    """Qt's ``xcb_connection_t *`` (0 when Qt is not on X11)."""
    app = QGuiApplication.instance()
    native = app.nativeInterface() if isinstance(app, QGuiApplication) else None
    return int(native.connection()) if native is not None and hasattr(native, "connection") else 0


def screen_number() -> int:
    """The X screen of ``DISPLAY`` (``:1.0`` → 0), the one Qt opens."""
    display = os.environ.get("DISPLAY", "")
    _host, _colon, rest = display.rpartition(":")
    _number, dot, screen = rest.partition(".")
    return int(screen) if dot and screen.isdigit() else 0


def _library(soname: str, name: str) -> ctypes.CDLL:
    """By its usual file name first: ``find_library`` runs ``ldconfig`` (a process) to search."""
    try:
        return ctypes.CDLL(soname)
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library(name) or soname)


@cache
def _libc() -> ctypes.CDLL:
    libc = _library("libc.so.6", "c")
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


@cache
def _libxcb() -> ctypes.CDLL:
    """libxcb, typed for the calls used (``OSError`` where it cannot be loaded)."""
    lib = _library("libxcb.so.1", "xcb")
    u8, u16, u32, ptr = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_void_p
    lib.xcb_get_setup.restype = ptr
    lib.xcb_get_setup.argtypes = [ptr]
    lib.xcb_setup_roots_iterator.restype = _ScreenIterator
    lib.xcb_setup_roots_iterator.argtypes = [ptr]
    lib.xcb_intern_atom.restype = Cookie
    lib.xcb_intern_atom.argtypes = [ptr, u8, u16, ctypes.c_char_p]
    lib.xcb_intern_atom_reply.restype = ctypes.POINTER(_Reply)
    lib.xcb_intern_atom_reply.argtypes = [ptr, Cookie, ptr]
    lib.xcb_get_selection_owner.restype = Cookie
    lib.xcb_get_selection_owner.argtypes = [ptr, u32]
    lib.xcb_get_selection_owner_reply.restype = ctypes.POINTER(_Reply)
    lib.xcb_get_selection_owner_reply.argtypes = [ptr, Cookie, ptr]
    lib.xcb_change_property.restype = Cookie
    lib.xcb_change_property.argtypes = [ptr, u8, u32, u32, u32, u8, u32, ptr]
    lib.xcb_send_event.restype = Cookie
    lib.xcb_send_event.argtypes = [ptr, u8, u32, u32, ptr]
    lib.xcb_grab_key_checked.restype = Cookie
    lib.xcb_grab_key_checked.argtypes = [ptr, u8, u32, u16, u8, u8, u8]
    lib.xcb_ungrab_key.restype = Cookie
    lib.xcb_ungrab_key.argtypes = [ptr, u8, u32, u16]
    lib.xcb_request_check.restype = ptr
    lib.xcb_request_check.argtypes = [ptr, Cookie]
    lib.xcb_flush.argtypes = [ptr]
    return lib


@cache
def _keysyms() -> ctypes.CDLL:
    """libxcb-keysyms: which keycodes make a keysym on this keyboard."""
    lib = _library("libxcb-keysyms.so.1", "xcb-keysyms")
    lib.xcb_key_symbols_alloc.restype = ctypes.c_void_p
    lib.xcb_key_symbols_alloc.argtypes = [ctypes.c_void_p]
    lib.xcb_key_symbols_free.argtypes = [ctypes.c_void_p]
    lib.xcb_key_symbols_get_keycode.restype = ctypes.POINTER(ctypes.c_uint8)
    lib.xcb_key_symbols_get_keycode.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    return lib


class Xcb:
    """libxcb on one connection (``OSError`` where libxcb cannot be loaded)."""

    def __init__(self, connection: int) -> None:
        self.lib, self._libc, self.connection = _libxcb(), _libc(), connection

    def root(self) -> int:
        """The first screen's root window (``xcb_screen_t`` starts with it)."""
        screen = self.lib.xcb_setup_roots_iterator(self.lib.xcb_get_setup(self.connection)).data
        return ctypes.c_uint32.from_address(screen).value

    def _value(self, reply: ctypes._Pointer[_Reply]) -> int:
        if not reply:
            return 0
        value = int(reply.contents.value)
        self._libc.free(ctypes.cast(reply, ctypes.c_void_p))
        return value

    def atom(self, name: bytes) -> int:
        cookie = self.lib.xcb_intern_atom(self.connection, 0, len(name), name)
        return self._value(self.lib.xcb_intern_atom_reply(self.connection, cookie, None))

    def selection_owner(self, selection: int) -> int:
        cookie = self.lib.xcb_get_selection_owner(self.connection, selection)
        return self._value(self.lib.xcb_get_selection_owner_reply(self.connection, cookie, None))

    def keycodes(self, keysym: int) -> list[int]:
        """The keycodes that type ``keysym`` (``OSError`` where libxcb-keysyms cannot be loaded)."""
        keysyms = _keysyms()
        symbols = keysyms.xcb_key_symbols_alloc(self.connection)
        try:
            found = keysyms.xcb_key_symbols_get_keycode(symbols, keysym)
            if not found:
                return []
            codes: list[int] = []
            while found[len(codes)] != 0:
                codes.append(found[len(codes)])
            self._libc.free(ctypes.cast(found, ctypes.c_void_p))
            return codes
        finally:
            keysyms.xcb_key_symbols_free(symbols)

    def grab_key(self, window: int, modifiers: int, keycode: int) -> bool:
        """A passive grab of ``keycode`` with ``modifiers`` on ``window``; False: the server refused
        (another client holds it). Waits for the server's answer."""
        cookie = self.lib.xcb_grab_key_checked(
            self.connection, 1, window, modifiers, keycode, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC
        )
        error = self.lib.xcb_request_check(self.connection, cookie)
        if error:
            self._libc.free(error)
            return False
        return True

    def ungrab_key(self, window: int, modifiers: int, keycode: int) -> None:
        self.lib.xcb_ungrab_key(self.connection, keycode, window, modifiers)

    def flush(self) -> None:
        self.lib.xcb_flush(self.connection)
