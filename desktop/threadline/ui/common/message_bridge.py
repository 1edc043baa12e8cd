"""One place for everything the user must be told: info, warnings and expected errors.

Widgets and tasks do not pick where a message shows; they hand it to the window's
``MessageBridge`` and the listeners decide: the status bar shows every message, the
tab whose session a message is about shows it in its banner, a dialog that is open
may show it inline. The bridge is created once in ``app/start.py`` and passed through
constructors (the main window, its tabs, the settings dialog); there is no module-level
instance, so tests build their own.

Only text meant for a person goes through here — an exception's ``user_message``,
never its ``str()`` or a traceback. Unexpected errors go to the crash handler instead.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal

log = logging.getLogger("threadline.ui.common.message_bridge")

DEFAULT_TIMEOUT_MS = 6000
"""How long the status bar keeps an info message; warnings and errors stay twice as long."""


class MessageLevel(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class UserMessage(NamedTuple):
    """One message for the user; ``session_id`` names the chat it is about, if any.

    (A ``NamedTuple``: the window imports this module before its first paint, where a frozen
    dataclass and the ``dataclasses`` module cost CPU time, docs/performance.md.)
    """

    level: MessageLevel
    text: str
    session_id: str | None = None

    @property
    def timeout_ms(self) -> int:
        return DEFAULT_TIMEOUT_MS if self.level is MessageLevel.INFO else 2 * DEFAULT_TIMEOUT_MS


def user_message_of(err: BaseException) -> str | None:
    """The sentence an expected error carries for the user, or ``None`` for an unexpected one.

    An error is expected exactly when it has a non-empty string ``user_message`` (store,
    engine, provider and keychain errors do); anything else is a bug.
    """
    text = getattr(err, "user_message", None)
    return text.strip() if isinstance(text, str) and text.strip() else None


class MessageBridge(QObject):
    """Carries user-visible messages from whoever has one to whoever shows them."""

    shown = Signal(object)
    """Every message, as a :class:`UserMessage` (the status bar listens here)."""
    info_shown = Signal(str)
    warning_shown = Signal(str)
    error_shown = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[UserMessage] = []
        """The last messages (newest last, at most ``HISTORY``): tests and a future log view read it."""

    HISTORY = 50

    def info(self, text: str, *, session_id: str | None = None) -> None:
        self.show(UserMessage(MessageLevel.INFO, text, session_id))

    def warning(self, text: str, *, session_id: str | None = None) -> None:
        self.show(UserMessage(MessageLevel.WARNING, text, session_id))

    def error(self, text: str, *, session_id: str | None = None) -> None:
        self.show(UserMessage(MessageLevel.ERROR, text, session_id))

    def report(self, err: BaseException, *, context: str = "", session_id: str | None = None) -> bool:
        """Show an expected error's ``user_message`` (after ``context``, e.g. "Could not open the chat").

        Returns False, showing nothing, when ``err`` carries no user message: the caller
        then hands it to the crash handler.
        """
        text = user_message_of(err)
        if text is None:
            return False
        self.error(f"{context.rstrip(':. ')}: {text}" if context else text, session_id=session_id)
        return True

    def show(self, message: UserMessage) -> None:
        log.info("%s shown to the user: %s", message.level.value, message.text)
        self.history.append(message)
        del self.history[: -self.HISTORY]
        self.shown.emit(message)
        {
            MessageLevel.INFO: self.info_shown,
            MessageLevel.WARNING: self.warning_shown,
            MessageLevel.ERROR: self.error_shown,
        }[message.level].emit(message.text)
