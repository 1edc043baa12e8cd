"""Threadline's own JSON format: every session with its whole tree, nothing lost, no secrets.

The format (documented for people in ``docs/import-export.md``)::

    {"format": "threadline", "version": 1, "exported_at": "2026-…Z",
     "sessions": [{"id": …, "title": …, "pinned": …, "archived": …, "agent_id": …,
                   "provider": …, "model": …, "active_leaf": …, "checkpoints": {…},
                   "created_at": …, "updated_at": …, …,
                   "messages": [{"id": …, "parent_id": …, "role": …, "kind": …, "text": …,
                                 "images": […], "context": […], "tool_calls": […],
                                 "tool_results": […], "status": …, "metadata": {…},
                                 "created_at": …, "summarised_through": …}, …]}, …]}

Sessions and messages are written field by field from their dataclasses
(``interchange.codec``), so a field added to ``Message`` or ``SessionInfo`` is exported
and read back without a change here. Messages are listed parents first, siblings in
version order. Keys and other secrets never appear: sessions hold none (they live in the
keychain), and provider and MCP configuration is not exported.

Reading is for untrusted files: every value is checked against its field's type, and a
session with a wrong type, a missing parent, a cycle, a repeated id or a dangling active
leaf or checkpoint becomes an :class:`ImportProblem` naming it; the others still import.
Ids are kept as they are, so importing a file twice finds the same sessions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from threadline.core.messages import Message, utcnow
from threadline.core.project import MAX_PROJECT_NAME, Project
from threadline.core.session import SessionInfo
from threadline.core.tree import ConversationTree, TreeError
from threadline.interchange.codec import CodecError, decode_record, encode
from threadline.interchange.model import ImportedConversation, ImportedProject, ImportProblem, ImportSource

FORMAT_NAME = "threadline"
FORMAT_VERSION = 1
"""Raised when a change would make older Threadlines misread a file (a field changing
meaning); new fields do not need it, since readers ignore keys they do not know."""

SESSION_FIELDS_LEFT_OUT = frozenset({"preview"})
"""Derived from the messages when stored; writing it would only let it disagree."""
SESSION_FIELDS_NOT_IMPORTED = frozenset({"context", "project_id", "project"})
"""Sticky context is exported for the record but never imported: its hooks are commands,
and a file from elsewhere must not make Threadline run anything. A project id means
nothing in another database: the chat's ``project`` (name, colour, instructions) is
matched by name instead (``ImportedProject``)."""
MAX_PROJECT_INSTRUCTIONS = 100_000
"""Characters of a project's instructions read from a file; longer is refused as damaged."""
MAX_ID_LENGTH = 200


# -- writing ----------------------------------------------------------------------------


def session_record(
    info: SessionInfo, messages: Iterable[Message], project: Project | None = None
) -> dict[str, Any]:
    """One session as a JSON object: its fields, its project's description, then its messages
    parents first."""
    record: dict[str, Any] = {
        key: value for key, value in encode(info).items() if key not in SESSION_FIELDS_LEFT_OUT
    }
    if project is not None:
        record["project"] = {
            "name": project.name,
            "colour": project.colour,
            "instructions": project.instructions,
        }
    record["messages"] = [encode(message) for message in messages]
    return record


def document_start(exported_at: datetime | None = None) -> str:
    """The text before the first session; sessions follow, joined by ``SESSION_SEPARATOR``."""
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": encode(exported_at or utcnow()),
    }
    return json.dumps(header, ensure_ascii=False)[:-1] + ', "sessions": [\n'


SESSION_SEPARATOR = ",\n"
DOCUMENT_END = "\n]}\n"


def session_text(info: SessionInfo, messages: Iterable[Message], project: Project | None = None) -> str:
    """One session's JSON text, to write between ``document_start`` and ``DOCUMENT_END``."""
    return json.dumps(session_record(info, messages, project), ensure_ascii=False)


def dumps(sessions: Iterable[tuple[SessionInfo, Iterable[Message]]]) -> str:
    """A whole document in one string (small exports and tests)."""
    return document_start() + SESSION_SEPARATOR.join(session_text(i, m) for i, m in sessions) + DOCUMENT_END


# -- reading ----------------------------------------------------------------------------


def looks_like_threadline(data: object) -> bool:
    """Whether parsed JSON is a Threadline export (by its content: the format marker)."""
    return isinstance(data, dict) and data.get("format") == FORMAT_NAME and "sessions" in data


def parse_threadline(data: object) -> Iterator[ImportedConversation | ImportProblem]:
    """Each session of a parsed Threadline export, or the problem that keeps it out."""
    if not looks_like_threadline(data):
        yield ImportProblem("(the file)", "This is not a Threadline export.")
        return
    assert isinstance(data, dict)
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        yield ImportProblem("(the file)", "The file does not say which version of the format it uses.")
        return
    if version > FORMAT_VERSION:
        yield ImportProblem(
            "(the file)",
            f"The file was written by a newer Threadline (format version {version}). "
            "Update Threadline, then import it again.",
        )
        return
    sessions = data.get("sessions")
    if not isinstance(sessions, list):
        yield ImportProblem("(the file)", "The file's list of chats is missing or damaged.")
        return
    seen: set[str] = set()
    for index, record in enumerate(sessions):
        title = _title_of(record, index)
        try:
            conversation = _conversation(record)
        except (CodecError, TreeError, ValueError) as err:
            yield ImportProblem(title, f"The chat is damaged ({_short(err)}).")
            continue
        if conversation.source_id in seen:
            yield ImportProblem(title, "The file holds this chat twice; only the first was read.")
            continue
        seen.add(conversation.source_id)
        yield conversation


def _conversation(record: object) -> ImportedConversation:
    if not isinstance(record, dict):
        raise CodecError("a chat is not an object")
    fields = {k: v for k, v in record.items() if k not in SESSION_FIELDS_NOT_IMPORTED | {"messages"}}
    info: SessionInfo = decode_record(SessionInfo, fields, "chat")
    _check_id(info.id, "chat id")
    raw_messages = record.get("messages")
    if not isinstance(raw_messages, list):
        raise CodecError("messages: expected a list")
    messages: list[Message] = []
    ids: set[str] = set()
    for index, raw in enumerate(raw_messages):
        message: Message = decode_record(Message, raw, f"messages[{index}]")
        _check_id(message.id, f"messages[{index}].id")
        if message.id in ids:
            raise CodecError(f"message {message.id[:40]!r} appears twice")
        ids.add(message.id)
        messages.append(message)
    tree = ConversationTree(messages, active_leaf=info.active_leaf)  # refuses orphans and cycles
    ordered = tuple(tree)
    for message in ordered:
        if message.summarised_through is not None and message.summarised_through not in ids:
            raise CodecError(f"summary {message.id[:40]!r} replaces a message that is not in the chat")
    for name, target in info.checkpoints.items():
        if target not in ids:
            raise CodecError(f"checkpoint {name[:40]!r} points at a message that is not in the chat")
    return ImportedConversation(
        source=ImportSource.THREADLINE,
        source_id=info.id,
        title=info.title,
        created_at=info.created_at,
        updated_at=info.updated_at,
        messages=ordered,
        active_leaf=info.active_leaf,
        archived=info.archived,
        pinned=info.pinned,
        provider=info.provider,
        model=info.model,
        agent_id=info.agent_id,
        checkpoints=dict(info.checkpoints),
        source_message_ids={m.id: m.id for m in ordered},
        project=_project(record.get("project")),
    )


def _project(value: object) -> ImportedProject | None:
    """The chat's project as the file describes it (``None``: in no project)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CodecError("project: expected an object")
    name, colour, instructions = (value.get(k, "") for k in ("name", "colour", "instructions"))
    if not isinstance(name, str) or not isinstance(colour, str) or not isinstance(instructions, str):
        raise CodecError("project: name, colour and instructions must be text")
    name = " ".join(name.split())
    if not name or len(name) > MAX_PROJECT_NAME:
        raise CodecError(f"project: a name of 1 to {MAX_PROJECT_NAME} characters is needed")
    if len(instructions) > MAX_PROJECT_INSTRUCTIONS:
        raise CodecError("project: its instructions are too long")
    return ImportedProject(name=name, colour=colour, instructions=instructions)


def _check_id(value: str, where: str) -> None:
    if not value or len(value) > MAX_ID_LENGTH or not value.isprintable():
        raise CodecError(f"{where}: not a usable id")


def _title_of(record: object, index: int) -> str:
    title = record.get("title") if isinstance(record, dict) else None
    if isinstance(title, str) and title.strip():
        return title.strip()[:200]
    return f"Chat {index + 1} of the file (untitled)"


def _short(err: Exception) -> str:
    text = str(err)
    return text if len(text) <= 200 else text[:199] + "…"
