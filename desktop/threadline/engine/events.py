"""Typed events a live conversation tells its observers (tabs, the sidebar, the CLI).

Observers subscribe to one ``LiveConversation``; events arrive on the asyncio
loop's thread, in the order things happened. A streamed token is a
``TextDelta`` of one message, never a reload, so a Qt model can turn it into a
single ``dataChanged``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from threadline.core.messages import Message
from threadline.core.session import SessionInfo
from threadline.core.turn import TurnState


class ErrorAction(StrEnum):
    """What the user can do about an error; the UI turns each into a button."""

    RETRY = "retry"
    ADD_KEY = "add_key"
    PICK_MODEL = "pick_model"
    COMPACT = "compact"
    NEW_SESSION = "new_session"
    SETTINGS = "settings"


@dataclass(frozen=True, slots=True)
class UserFacingError:
    """An error as the user sees it: what happened, what to do, which buttons to offer."""

    kind: str
    message: str
    actions: tuple[ErrorAction, ...] = (ErrorAction.RETRY,)
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class MessageAdded:
    session_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class TextDelta:
    session_id: str
    message_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class MessageChanged:
    """A message's status, metadata, tool calls or (after a reload) text changed."""

    session_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class ActivePathChanged:
    """The active leaf moved (version switch, regenerate, edit): the shown path is new."""

    session_id: str
    leaf_id: str | None


@dataclass(frozen=True, slots=True)
class TurnStateChanged:
    session_id: str
    state: TurnState


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """The turn ended with an error the user should see.

    ``unsent_prompt`` is set when the prompt itself could not be stored: nothing
    was sent to the model, the prompt was taken back out of the conversation,
    and the tab puts its text and attachments back in the composer.
    """

    session_id: str
    error: UserFacingError
    unsent_prompt: Message | None = None


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A transient error; the engine retries after ``delay`` seconds (shown to the user)."""

    session_id: str
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class SessionUpdated:
    """Title, pin, model or preview changed: the sidebar row and tab title follow."""

    session: SessionInfo


@dataclass(frozen=True, slots=True)
class SessionRemoved:
    """A session was deleted: the sidebar drops its row and an open tab closes."""

    session_id: str


@dataclass(frozen=True, slots=True)
class SaveStateChanged:
    """Whether the turn's writes are behind because the store refused them.

    ``saving`` is true from the first failed write of a turn (``error`` says what
    is wrong, e.g. the disk is full) until everything is stored again, when a
    second event with ``saving=False`` and no error follows. Meanwhile the text
    stays in memory and is retried, and the session refuses new sends
    (``SessionBusyError``): the turn ends (its final state event) only once saved.
    """

    session_id: str
    saving: bool
    error: UserFacingError | None = None


ConversationEvent = (
    MessageAdded
    | TextDelta
    | MessageChanged
    | ActivePathChanged
    | TurnStateChanged
    | TurnFailed
    | RetryScheduled
    | SessionUpdated
    | SaveStateChanged
)
