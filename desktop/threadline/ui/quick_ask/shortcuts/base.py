"""What every global shortcut backend offers, and the choice of one for this desktop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QKeySequence

DEFAULT_SHORTCUT = "Ctrl+Alt+Space"
SHORTCUT_SETTING = "quick_ask_shortcut"
"""``engine.settings`` key: the shortcut as portable text (``QKeySequence.toString``); "" = none."""
COMMAND = "threadline --quick-ask"
"""What to bind in the desktop's own keyboard settings where no backend works."""


EventType = QByteArray | bytes | bytearray | memoryview
"""What Qt passes a native event filter as the event's type name."""


def event_name(event_type: EventType) -> bytes:
    """A native event's type name as bytes (``b"xcb_generic_event_t"``, ``b"windows_generic_MSG"``)."""
    return bytes(event_type.data()) if isinstance(event_type, QByteArray) else bytes(event_type)


class ShortcutError(Exception):
    """The shortcut could not be taken; ``user_message`` says why and what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class GlobalShortcut(Protocol):
    """One way to be told of a key combination pressed anywhere on the desktop."""

    name: str
    """What the settings row shows ("X11 key grab", "the desktop portal", …)."""
    local: bool
    """Held by this process (a grab, a hot key): let go and taken again cheaply, e.g. while
    Settings records a new shortcut. The portal's is the compositor's and may ask the person."""

    def bind(self, sequence: QKeySequence, activated: Callable[[], None]) -> None:
        """Take ``sequence`` (replacing any bound before) and call ``activated`` on each press.

        Raises ``ShortcutError`` when it cannot be taken (in use by another program, a key
        this backend cannot name). The portal may ask the person first and answer later;
        its ``bind`` returns at once.
        """
        ...

    def unbind(self) -> None:
        """Let go of the shortcut (nothing happens if none is bound)."""
        ...


def shown(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


def cannot_use(sequence: QKeySequence) -> ShortcutError:
    return ShortcutError(f"{shown(sequence)} cannot be used as a global shortcut: pick another.")


def taken(sequence: QKeySequence) -> ShortcutError:
    return ShortcutError(f"{shown(sequence)} is taken by another program: pick another.")
