"""One place for everything the user must be told: info, warnings and expected errors.

Widgets and tasks do not pick where a message shows; they say what happened (an
expected error, the context it failed in, the session it is about) and the bridge
routes it from what it is (docs/ui-layout.md, "Telling the user"):

1. an error a handler claims by its kind (a damaged database: the window's banner with
   Restore, ``intercept``) goes there and nowhere else;
2. a message about a session goes out on ``shown``: the tab of that session shows it in
   its banner, the status bar shows it too;
3. otherwise, while a dialog that claimed the bridge is visible (``claim``; a stack, the
   topmost visible one wins, released when it closes), the dialog shows it inline;
4. otherwise it goes out on ``shown``, to the window's status bar.

The bridge is created once in ``app/start.py`` and passed through constructors (the main
window, its tabs, the settings dialog), or found from a widget through its parents
(``bridge_of``); there is no module-level instance, so tests build their own.

Only text meant for a person goes through here — an exception's ``user_message``,
never its ``str()`` or a traceback. Unexpected errors go to the crash handler instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from typing import NamedTuple, Protocol

import shiboken6
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


class InlineSink(Protocol):
    """A dialog that shows the messages meant for it in its own place while it is open."""

    def isVisible(self) -> bool: ...
    def show_user_message(self, message: UserMessage) -> None: ...


ErrorHandler = Callable[[BaseException], bool]
"""Takes an error of the kind it handles (and shows it its own way): True; anything else: False."""


class MessageBridge(QObject):
    """Carries user-visible messages from whoever has one to whoever shows them."""

    shown = Signal(object)
    """Each message for the window, as a :class:`UserMessage`: the status bar shows them all,
    a tab those about its session. A message a dialog showed inline does not come here."""
    shown_inline = Signal(object)
    """A message a dialog that claimed the bridge showed inline."""
    info_shown = Signal(str)
    warning_shown = Signal(str)
    error_shown = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[UserMessage] = []
        """The last messages (newest last, at most ``HISTORY``): tests and a future log view read it."""
        self._claims: list[InlineSink] = []
        self._handlers: list[ErrorHandler] = []

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
        for handler in self._handlers:
            if handler(err):
                log.info("error handled by its kind: %s", text)
                return True
        self.error(f"{context.rstrip(':. ')}: {text}" if context else text, session_id=session_id)
        return True

    def intercept(self, handler: ErrorHandler) -> None:
        """Errors of a kind with a place of their own (a damaged database) go to ``handler`` first."""
        self._handlers.append(handler)

    def claim(self, sink: InlineSink) -> None:
        """While ``sink`` is visible (and none claimed after it), messages about no session show in it."""
        self.release(sink)
        self._claims.append(sink)

    def release(self, sink: InlineSink) -> None:
        self._claims = [claim for claim in self._claims if claim is not sink]

    def claimant(self) -> InlineSink | None:
        """The dialog that shows messages now: the last to claim among those visible."""
        self._claims = [c for c in self._claims if not isinstance(c, QObject) or shiboken6.isValid(c)]
        return next((claim for claim in reversed(self._claims) if claim.isVisible()), None)

    def show(self, message: UserMessage) -> None:
        log.info("%s shown to the user: %s", message.level.value, message.text)
        self.history.append(message)
        del self.history[: -self.HISTORY]
        sink = self.claimant() if message.session_id is None else None
        if sink is not None:
            sink.show_user_message(message)
            self.shown_inline.emit(message)
        else:
            self.shown.emit(message)
        {
            MessageLevel.INFO: self.info_shown,
            MessageLevel.WARNING: self.warning_shown,
            MessageLevel.ERROR: self.error_shown,
        }[message.level].emit(message.text)


def bridge_of(obj: QObject | None) -> MessageBridge | None:
    """The bridge ``obj`` reaches: itself, or the ``bridge`` of it or of its nearest parent holding one."""
    while obj is not None and shiboken6.isValid(obj):
        if isinstance(obj, MessageBridge):
            return obj
        found = getattr(obj, "bridge", None)
        if isinstance(found, MessageBridge):
            return found
        obj = obj.parent()
    return None
