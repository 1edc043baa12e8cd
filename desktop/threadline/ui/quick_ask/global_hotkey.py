"""The Quick ask shortcut: the stored choice, the backend of this desktop, and what Settings says.

One backend per platform (``shortcuts/``): Windows and macOS have their own hot key APIs,
an X11 session a key grab, a Wayland session the desktop portal. Where none can work
(another Wayland session without the portal, no desktop at all) Settings says so and shows
the command to bind in the desktop's own keyboard settings (docs/quick-ask.md).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence

from threadline.ui.quick_ask.shortcuts.base import COMMAND, DEFAULT_SHORTCUT, GlobalShortcut, ShortcutError

log = logging.getLogger("threadline.ui.quick_ask.global_hotkey")


def make_backend(failed: Callable[[str], None]) -> GlobalShortcut:
    """This desktop's backend; ``ShortcutError`` says why there is none."""
    if sys.platform == "win32":
        from threadline.ui.quick_ask.shortcuts.windows import WindowsShortcut

        return WindowsShortcut()
    if sys.platform == "darwin":
        from threadline.ui.quick_ask.shortcuts.macos import MacShortcut

        return MacShortcut()
    platform = QGuiApplication.platformName()
    if platform == "xcb":
        from threadline.ui.quick_ask.shortcuts.x11 import X11Shortcut

        return X11Shortcut()
    if platform.startswith("wayland"):
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            raise ShortcutError("This Wayland session has no session bus to reach the desktop portal.")
        from threadline.ui.quick_ask.shortcuts.portal import PortalShortcut

        return PortalShortcut(failed)
    raise ShortcutError(f"Global shortcuts are not available here (Qt platform “{platform}”).")


class QuickAskShortcut(QObject):
    """Binds the chosen shortcut to ``activated`` and keeps what Settings shows of it."""

    statusChanged = Signal(str)

    def __init__(self, activated: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._activated = activated
        self._backend: GlobalShortcut | None = None
        self._why_none = ""
        self.sequence = QKeySequence(DEFAULT_SHORTCUT)
        self.status = ""
        self.working = False
        """True while a backend holds the shortcut."""

    @property
    def backend_name(self) -> str:
        return self._backend.name if self._backend is not None else ""

    def apply(self, text: str) -> None:
        """Bind ``text`` (portable key sequence text; "" lets go) and say how that went."""
        self.sequence = QKeySequence(text)
        if self._backend is None and not self._why_none:
            try:
                self._backend = make_backend(self._failed)
            except ShortcutError as err:
                self._why_none = err.user_message
        if self._backend is None:
            self._set_status(False, f"{self._why_none} Bind “{COMMAND}” in your desktop's keyboard settings.")
            return
        if self.sequence.isEmpty():
            self._backend.unbind()
            self._set_status(
                False, f"No shortcut. You can bind “{COMMAND}” in your desktop's keyboard settings."
            )
            return
        try:
            self._backend.bind(self.sequence, self._pressed)
        except ShortcutError as err:
            self._set_status(False, err.user_message)
            return
        shown = self.sequence.toString(QKeySequence.SequenceFormat.NativeText)
        self._set_status(True, f"{shown} opens Quick ask from any application ({self._backend.name}).")

    def suspend(self) -> None:
        """Let go while the key sequence editor records (a held grab would swallow the keys typed)."""
        if self._backend is not None and self._backend.local and self.working:
            self._backend.unbind()

    def resume(self) -> None:
        if self._backend is not None and self._backend.local and self.working:
            self.apply(self.sequence.toString(QKeySequence.SequenceFormat.PortableText))

    def release(self) -> None:
        if self._backend is not None:
            self._backend.unbind()
        self.working = False

    def _pressed(self) -> None:
        # Out of the native event filter (or the portal's task) before windows are shown.
        QTimer.singleShot(0, self._activated)

    def _failed(self, text: str) -> None:
        self._set_status(False, f"{text} Bind “{COMMAND}” in your desktop's keyboard settings.")

    def _set_status(self, working: bool, text: str) -> None:
        self.working = working
        self.status = text
        log.info("quick ask shortcut: %s", text)
        self.statusChanged.emit(text)
