"""The global shortcut on Windows: ``RegisterHotKey`` through ctypes.

Registered without a window (``hWnd`` NULL), so Windows posts ``WM_HOTKEY`` to the GUI
thread's queue, where Qt's event dispatcher hands it to native event filters. Not run
here (no Windows machine); kept small and behind ``sys.platform`` (docs/quick-ask.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication
from PySide6.QtGui import QKeySequence

from threadline.ui.quick_ask.shortcuts.base import EventType, ShortcutError, cannot_use, event_name, taken
from threadline.ui.quick_ask.shortcuts.keys import chord_of, windows_vk

MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x1, 0x2, 0x4, 0x8, 0x4000
WM_HOTKEY = 0x0312
HOTKEY_ID = 0x5151


class _HotKeyFilter(QAbstractNativeEventFilter):
    def __init__(self, activated: Callable[[], None]) -> None:
        super().__init__()
        self._activated = activated

    def nativeEventFilter(self, eventType: EventType, message: object) -> tuple[bool, int]:
        if sys.platform != "win32" or event_name(eventType) not in (
            b"windows_generic_MSG",
            b"windows_dispatcher_MSG",
        ):
            return False, 0
        import ctypes.wintypes

        msg = ctypes.wintypes.MSG.from_address(int(message))  # type: ignore[call-overload,unused-ignore]
        if msg.message == WM_HOTKEY and msg.wParam == HOTKEY_ID:
            self._activated()
            return True, 0
        return False, 0


class WindowsShortcut:
    name = "Windows hot key"
    local = True

    def __init__(self) -> None:
        self._filter: _HotKeyFilter | None = None

    def bind(self, sequence: QKeySequence, activated: Callable[[], None]) -> None:
        self.unbind()
        chord = chord_of(sequence)
        vk = windows_vk(chord.key) if chord is not None else None
        if chord is None or vk is None:
            raise cannot_use(sequence)
        if sys.platform != "win32":
            raise ShortcutError("Windows hot keys work only on Windows.")
        import ctypes

        mods = MOD_NOREPEAT
        mods |= MOD_CONTROL if chord.ctrl else 0
        mods |= MOD_ALT if chord.alt else 0
        mods |= MOD_SHIFT if chord.shift else 0
        mods |= MOD_WIN if chord.meta else 0
        if not ctypes.windll.user32.RegisterHotKey(None, HOTKEY_ID, mods, vk):
            raise taken(sequence)
        self._filter = _HotKeyFilter(activated)
        app = QCoreApplication.instance()
        assert app is not None
        app.installNativeEventFilter(self._filter)

    def unbind(self) -> None:
        if self._filter is None:
            return
        app = QCoreApplication.instance()
        if app is not None:
            app.removeNativeEventFilter(self._filter)
        self._filter = None
        if sys.platform == "win32":
            import ctypes

            ctypes.windll.user32.UnregisterHotKey(None, HOTKEY_ID)
