"""The global shortcut on macOS: Carbon's ``RegisterEventHotKey`` through ctypes.

Still the way to get a system-wide hot key without Accessibility permission; the handler
is installed on the application's event target and called on the main thread, which Qt's
Cocoa event loop runs. Qt's Ctrl is the Command key on macOS and Meta the Control key.
Not run here (no Mac); kept small and behind ``sys.platform`` (docs/quick-ask.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QKeySequence

from threadline.ui.quick_ask.shortcuts.base import ShortcutError, cannot_use, taken
from threadline.ui.quick_ask.shortcuts.keys import chord_of, mac_keycode

CMD_KEY, SHIFT_KEY, OPTION_KEY, CONTROL_KEY = 0x100, 0x200, 0x800, 0x1000
K_EVENT_CLASS_KEYBOARD = int.from_bytes(b"keyb", "big")
K_EVENT_HOT_KEY_PRESSED = 5
SIGNATURE = int.from_bytes(b"TLqa", "big")


class _EventTypeSpec(ctypes.Structure):
    _fields_ = [("eventClass", ctypes.c_uint32), ("eventKind", ctypes.c_uint32)]


class _EventHotKeyID(ctypes.Structure):
    _fields_ = [("signature", ctypes.c_uint32), ("id", ctypes.c_uint32)]


_Handler = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class MacShortcut:
    name = "macOS hot key"
    local = True
    _carbon: ctypes.CDLL
    _hot_key: ctypes.c_void_p
    _handler_ref: ctypes.c_void_p

    def __init__(self) -> None:
        if sys.platform != "darwin":
            raise ShortcutError("Carbon hot keys work only on macOS.")
        path = ctypes.util.find_library("Carbon") or "/System/Library/Frameworks/Carbon.framework/Carbon"
        self._carbon = ctypes.CDLL(path)
        self._carbon.GetApplicationEventTarget.restype = ctypes.c_void_p
        self._hot_key = ctypes.c_void_p()
        self._handler_ref = ctypes.c_void_p()
        self._callback: Any = None  # kept alive as long as Carbon may call it

    def bind(self, sequence: QKeySequence, activated: Callable[[], None]) -> None:
        self.unbind()
        chord = chord_of(sequence)
        code = mac_keycode(chord.key) if chord is not None else None
        if chord is None or code is None:
            raise cannot_use(sequence)
        mods = (CMD_KEY if chord.ctrl else 0) | (OPTION_KEY if chord.alt else 0)
        mods |= (SHIFT_KEY if chord.shift else 0) | (CONTROL_KEY if chord.meta else 0)

        def pressed(_call: object, _event: object, _data: object) -> int:
            activated()
            return 0

        self._callback = _Handler(pressed)
        target = self._carbon.GetApplicationEventTarget()
        spec = _EventTypeSpec(K_EVENT_CLASS_KEYBOARD, K_EVENT_HOT_KEY_PRESSED)
        status = self._carbon.InstallEventHandler(
            ctypes.c_void_p(target),
            self._callback,
            1,
            ctypes.byref(spec),
            None,
            ctypes.byref(self._handler_ref),
        )
        if status != 0:
            raise ShortcutError("macOS did not accept a hot key handler.")
        status = self._carbon.RegisterEventHotKey(
            code, mods, _EventHotKeyID(SIGNATURE, 1), ctypes.c_void_p(target), 0, ctypes.byref(self._hot_key)
        )
        if status != 0:
            self.unbind()
            raise taken(sequence)

    def unbind(self) -> None:
        if self._hot_key.value:
            self._carbon.UnregisterEventHotKey(self._hot_key)
            self._hot_key = ctypes.c_void_p()
        if self._handler_ref.value:
            self._carbon.RemoveEventHandler(self._handler_ref)
            self._handler_ref = ctypes.c_void_p()
        self._callback = None
