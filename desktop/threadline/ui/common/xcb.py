"""A few libxcb calls on Qt's own X connection, through ctypes (X11 only).

Qt holds the connection (``QX11Application.connection``); making the calls on it needs no
second connection and no dependency (python-xlib would be both). libxcb is Qt's own
dependency on X11 and is loaded by its file name (docs/quick-ask.md, "Start-up cost").
Used by the start-up id activation (``x11_activation.py``) and Quick ask's check for a
compositor (``ui/quick_ask/compositing.py``).
"""

from __future__ import annotations

import ctypes
import os

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


class Xcb:
    """libxcb, typed for the calls used, on one connection."""

    def __init__(self, connection: int) -> None:
        lib = ctypes.CDLL("libxcb.so.1")
        lib.xcb_get_setup.restype = ctypes.c_void_p
        lib.xcb_get_setup.argtypes = [ctypes.c_void_p]
        lib.xcb_setup_roots_iterator.restype = _ScreenIterator
        lib.xcb_setup_roots_iterator.argtypes = [ctypes.c_void_p]
        lib.xcb_intern_atom.restype = Cookie
        lib.xcb_intern_atom.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_char_p]
        lib.xcb_intern_atom_reply.restype = ctypes.POINTER(_Reply)
        lib.xcb_intern_atom_reply.argtypes = [ctypes.c_void_p, Cookie, ctypes.c_void_p]
        lib.xcb_get_selection_owner.restype = Cookie
        lib.xcb_get_selection_owner.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
        lib.xcb_get_selection_owner_reply.restype = ctypes.POINTER(_Reply)
        lib.xcb_get_selection_owner_reply.argtypes = [ctypes.c_void_p, Cookie, ctypes.c_void_p]
        lib.xcb_change_property.restype = Cookie
        lib.xcb_change_property.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint8,
            ctypes.c_uint32,
            ctypes.c_uint32,
            ctypes.c_uint32,
            ctypes.c_uint8,
            ctypes.c_uint32,
            ctypes.c_void_p,
        ]
        lib.xcb_send_event.restype = Cookie
        lib.xcb_send_event.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint8,
            ctypes.c_uint32,
            ctypes.c_uint32,
            ctypes.c_void_p,
        ]
        lib.xcb_flush.argtypes = [ctypes.c_void_p]
        libc = ctypes.CDLL("libc.so.6")
        libc.free.argtypes = [ctypes.c_void_p]
        self.lib, self._libc, self.connection = lib, libc, connection

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

    def flush(self) -> None:
        self.lib.xcb_flush(self.connection)
