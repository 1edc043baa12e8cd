"""Errors the engine raises to its callers (the window, the command line) on purpose.

They live apart from ``engine.py`` so the UI can match them by type, importing
nothing heavy: a caller tells "this session is busy" from a real failure with
``isinstance``, never by comparing class names.
"""

from __future__ import annotations

from threadline.engine.events import ErrorAction


class EngineError(Exception):
    """Base of the engine's own errors; ``user_message`` is what to show as is."""

    default_message = "Threadline could not do that."

    def __init__(self, user_message: str = "") -> None:
        super().__init__(user_message or self.default_message)
        self.user_message = user_message or self.default_message


class SessionBusyError(EngineError):
    """A turn (or compaction) is already running in this session, or its last writes are being saved."""

    default_message = "A reply is still running in this chat. Wait for it to finish, or press Stop."


class SessionClosedError(EngineError, KeyError):
    """The session is not open in the engine (deleted, or never opened)."""

    default_message = "This chat is no longer open; it may have been deleted."

    def __str__(self) -> str:
        return self.user_message


class NothingToSendError(EngineError, ValueError):
    """Send was asked for an empty prompt (no text, no image, no file)."""

    default_message = "There is nothing to send: type a message or attach a file first."


class MessageGoneError(EngineError, KeyError):
    """The message asked for is not in the chat any more (deleted meanwhile)."""

    default_message = "That message is no longer in this chat."

    def __str__(self) -> str:
        return self.user_message


class TurnStopped(Exception):
    """The engine itself ended the turn (a runaway tool loop, a reply cut short, compaction failed).

    Raised inside a turn only (``turn_runner``, ``compaction``, ``compare_runner``); callers see
    it as a ``TurnFailed`` event (``turn_runner.user_error``), with ``kind`` and ``actions``.
    """

    def __init__(
        self, message: str, kind: str = "turn_stopped", actions: tuple[ErrorAction, ...] = ()
    ) -> None:
        super().__init__(message)
        self.user_message = message
        self.kind = kind
        self.actions = actions or (ErrorAction.RETRY,)
