"""The shapes every import format is parsed into, and the report an import ends with.

A parser produces core :class:`~threadline.core.messages.Message` objects directly, so
the store writes imported history exactly like history made here. Message and session
ids are Threadline ids; the source's own ids are kept in ``source_id`` (conversation)
and ``source_message_ids`` (message id → source id) so a second import of the same
file can recognise what it already holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from threadline.core.messages import Message


class ImportSource(StrEnum):
    """Where a conversation came from, detected from a file's content (never its name)."""

    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    OPEN_WEBUI = "openwebui"
    THREADLINE = "threadline"


@dataclass(frozen=True, slots=True)
class ImportedProject:
    """The project a chat was in where it was exported: matched here by name, made if missing.

    Only what describes the project travels: its context files and hooks do not (a file
    from elsewhere must not make Threadline read local files or run commands).
    """

    name: str
    colour: str = ""
    instructions: str = ""


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """One conversation read from a file, ready to be stored as one session.

    ``messages`` are ordered parents before children; ``active_leaf`` is the message
    the source showed last (its "current node"), or ``None`` for the newest leaf.
    """

    source: ImportSource
    source_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    messages: tuple[Message, ...]
    active_leaf: str | None = None
    archived: bool = False
    pinned: bool = False
    provider: str = ""
    model: str = ""
    agent_id: str = ""
    checkpoints: Mapping[str, str] = field(default_factory=dict)
    source_message_ids: Mapping[str, str] = field(default_factory=dict)
    project: ImportedProject | None = None
    session_id: str = ""
    """The Threadline session id to store it under; empty: derived from ``source`` and
    ``source_id`` (``interchange.ids.session_id_for``), so a re-import finds the same session."""


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """A conversation that was not imported at all, with its title and the reason."""

    title: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Told after each conversation of an import: how far it has come."""

    done: int
    """Conversations handled so far (stored, skipped or failed)."""
    total: int | None
    """How many there are, when known before the end (a streamed file does not say)."""
    title: str
    """The conversation just handled."""
    fraction: float | None = None
    """The share of the input read so far (0–1), for a progress bar when ``total`` is unknown."""


@dataclass(slots=True)
class ImportReport:
    """What an import did: counts, and one problem per conversation that failed."""

    imported: int = 0
    updated: int = 0
    skipped: int = 0
    kept_newer: int = 0
    """Chats the file holds an older copy of: the stored chat has messages the file lacks."""
    failed: list[ImportProblem] = field(default_factory=list)
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and not self.cancelled
