"""Typed events a live conversation tells its observers (tabs, the sidebar, the CLI).

Observers subscribe to one ``LiveConversation``; events arrive on the asyncio
loop's thread, in the order things happened. A streamed token is a
``TextDelta`` of one message, never a reload, so a Qt model can turn it into a
single ``dataChanged``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from threadline.core.compare import CompareTarget, WorkerState
from threadline.core.config import AgentConfig
from threadline.core.file_changes import ChangeSet
from threadline.core.gathered_context import GatheredContext
from threadline.core.memory import Memory
from threadline.core.messages import Message
from threadline.core.project import Project
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
    SET_CONTEXT_WINDOW = "set_context_window"
    """Give the model's context window (Settings → Models): the server did not say it."""
    RERUN_TOOLS = "rerun_tools"
    """Run again the tool calls Threadline stopped while they ran (a crash)."""
    SKIP_TOOLS = "skip_tools"
    """Leave those calls unrun; the model is told they were interrupted."""


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
class ReasoningDelta:
    """A reply's reasoning grew (``delta`` more of it) or a thinking block ended; the reply's
    ``reasoning`` holds the whole of it. Like ``TextDelta``: one row's repaint, never a reload."""

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
class SessionBusyElsewhere:
    """Another instance (window, process or machine) holds this chat's turn.

    Sent when a turn start here found the chat busy there (it then waits, or is
    refused with ``TurnFailed`` and the prompt back in the composer), and when that
    other turn ended (``host`` empty): the tab shows "Replying on <host>" with a
    "Stop it" action (``engine.turns.stop_elsewhere``) while ``host`` is set.
    """

    session_id: str
    host: str
    stop_requested: bool = False


@dataclass(frozen=True, slots=True)
class ChangesReceiving:
    """Whether this window hears what other instances write (the change feed's connection).

    ``receiving=False`` when the feed lost the database (or never reached it): other
    windows' and machines' changes do not show until it is back, so the tab says
    "Not receiving other windows' changes — reconnecting…"; ``True`` once it is back
    and has caught up. Sent only on a change after start-up.
    """

    session_id: str
    receiving: bool


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A transient error; the engine retries after ``delay`` seconds (shown to the user).

    ``reason`` says what happened, never what to do: the app is already doing it,
    so a "try again in 1 s" beside "Retrying in 2 s" would contradict it.
    """

    session_id: str
    attempt: int
    """The attempt about to be made (2, 3, …)."""
    delay: float
    reason: str
    max_attempts: int = 0
    """Attempts in all, the first included (0: not known)."""

    def describe(self, seconds_left: float | None = None) -> str:
        """The line the tab and ``threadline ask`` show: "Retrying (2 of 4) in 4 s: <reason>."."""
        left = self.delay if seconds_left is None else seconds_left
        count = f"{self.attempt} of {self.max_attempts}" if self.max_attempts else f"attempt {self.attempt}"
        return f"Retrying ({count}) in {max(1, math.ceil(left))} s: {self.reason}."


@dataclass(frozen=True, slots=True)
class SessionUpdated:
    """Title, pin, model or preview changed: the sidebar row and tab title follow."""

    session: SessionInfo


@dataclass(frozen=True, slots=True)
class SessionRemoved:
    """A session was deleted: the sidebar drops its row and an open tab closes.

    Sent the moment ``engine.sessions.delete_session`` is called; the stored session stays
    until the undo window ends, so ``SessionRestored`` may still follow.
    """

    session_id: str


@dataclass(frozen=True, slots=True)
class SaveStateChanged:
    """Whether the turn's writes are behind because the store refused them.

    ``saving`` is true from the first failed write of a turn (``error`` says what
    is wrong, e.g. the disk is full or the server connection was lost; a write kept
    waiting while the store retries counts too) until the store accepts its writes
    again, when a second event with ``saving=False`` and no error follows. Meanwhile the text
    stays in memory and is retried, and the session refuses new sends
    (``SessionBusyError``): the turn ends (its final state event) only once saved.
    """

    session_id: str
    saving: bool
    error: UserFacingError | None = None


@dataclass(frozen=True, slots=True)
class AgentChanged:
    """The agent a session runs with changed (a switch, a deleted agent) or was edited.

    ``update_available``: the agent's stored settings differ from the ones this session
    runs with, so the tab offers to use them (``engine.agents.use_agent_settings``).
    ``notice``: a change the person did not make in this tab, said in the tab.
    """

    session_id: str
    agent: AgentConfig
    update_available: bool = False
    notice: str = ""


@dataclass(frozen=True, slots=True)
class ContextGathered:
    """The sticky context of a request was read: what went in, what was left out, what failed."""

    session_id: str
    gathered: GatheredContext


@dataclass(frozen=True, slots=True)
class MessagesRemoved:
    """The user deleted ``message_id`` and the ``ids`` below it (``engine.messages.delete_message``).

    They left the tree at once (an ``ActivePathChanged`` follows); the stored rows go
    when the undo window ends, so ``MessagesRestored`` may still bring them back.
    """

    session_id: str
    message_id: str
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MessagesRestored:
    """A deleted message came back with everything below it (``engine.messages.undo_delete_message``)."""

    session_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class CheckpointsChanged:
    """A checkpoint was set, removed or restored, or a tangent started or ended.

    ``checkpoints`` are the named ones (name → message id); ``tangent_origin`` is where
    leaving the current tangent returns to, ``None`` when the chat is not in one.
    """

    session_id: str
    checkpoints: Mapping[str, str]
    tangent_origin: str | None


@dataclass(frozen=True, slots=True)
class CompareStarted:
    """A prompt went to several workers at once (``engine.turns.send_compare``): one column each."""

    session_id: str
    prompt_id: str
    targets: tuple[CompareTarget, ...]


@dataclass(frozen=True, slots=True)
class CompareWorkerChanged:
    """Worker ``index`` of the running compare moved to ``state`` (``error`` when it failed,
    ``note`` for a retry under way). The compare's own end is the session's ``TurnStateChanged``."""

    session_id: str
    index: int
    state: WorkerState
    error: UserFacingError | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class CompareWorkerEvent:
    """A message event of one worker's lane (its reply added, a token, its end, reasoning).

    Wrapped, not sent as is: the chat's own list shows the session's path, which during
    a compare ends at the prompt; the columns show these.
    """

    session_id: str
    index: int
    event: MessageAdded | TextDelta | MessageChanged | ReasoningDelta


@dataclass(frozen=True, slots=True)
class FileChangesRecorded:
    """A tool call (or a restore) changed files in the allowed folders; ``change_set`` says
    which and how (docs/workspace.md). The reply header's counts and the status line's
    per-file totals follow from it."""

    session_id: str
    change_set: ChangeSet


@dataclass(frozen=True, slots=True)
class KnowledgeNotice:
    """The request just built searched its knowledge bases by keyword only although vectors were
    meant to help (the embedding server down or refusing): ``text`` says why, and the tab shows
    it as a quiet notice (docs/knowledge.md, "Keyword-only")."""

    session_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ModelLoading:
    """The turn's model is being loaded before it can reply (the runtime "On this computer"
    starting, which can take many seconds): the tab says "Loading MODEL…" rather than
    "Replying…" until ``loading`` is ``False`` (docs/local-models.md, "The runtime")."""

    session_id: str
    model: str
    loading: bool


ConversationEvent = (
    AgentChanged
    | MessagesRemoved
    | MessagesRestored
    | MessageAdded
    | TextDelta
    | ReasoningDelta
    | MessageChanged
    | ActivePathChanged
    | TurnStateChanged
    | TurnFailed
    | SessionBusyElsewhere
    | ChangesReceiving
    | RetryScheduled
    | SessionUpdated
    | SaveStateChanged
    | ContextGathered
    | CheckpointsChanged
    | CompareStarted
    | CompareWorkerChanged
    | CompareWorkerEvent
    | FileChangesRecorded
    | KnowledgeNotice
    | ModelLoading
)


@dataclass(frozen=True, slots=True)
class SessionRestored:
    """A pending delete was undone (``engine.sessions.restore_session``): the row comes back and a
    window that closed the session's tab for the delete opens it again."""

    session: SessionInfo


@dataclass(frozen=True, slots=True)
class SessionForked:
    """``engine.sessions.fork_session`` made ``session`` from ``source_id``: the window opens the copy."""

    source_id: str
    session: SessionInfo


@dataclass(frozen=True, slots=True)
class ProjectsChanged:
    """A project was created, edited or deleted: ``projects`` is the whole list now, by name."""

    projects: tuple[Project, ...]


@dataclass(frozen=True, slots=True)
class MemoriesChanged:
    """A memory was saved, edited or deleted, here or in another instance (the change feed):
    ``memories`` is the whole list now, oldest first (docs/memory.md)."""

    memories: tuple[Memory, ...]


SessionEvent = (
    SessionUpdated | SessionRemoved | SessionRestored | SessionForked | ProjectsChanged | MemoriesChanged
)
"""What ``subscribe_sessions`` observers hear: the listing of every session, not one conversation."""
