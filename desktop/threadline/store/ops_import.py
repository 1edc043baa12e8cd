"""Storing one imported conversation, in one transaction, so an import is never half-done.

Each conversation of an import is written by one call of
:func:`import_conversation`: the session row and all its messages commit together
or not at all, which is what lets a cancelled or failed import leave only whole
conversations behind. The same conversation imported again is recognised by its
session id (derived from the source's ids, or Threadline's own) and:

* skipped when nothing changed (``UNCHANGED``), or kept as it is when the file
  adds nothing but the stored chat holds messages the file lacks — an older export
  of a chat continued since (``KEPT_NEWER``);
* otherwise ``UPDATED``: messages the store lacks are appended as new nodes (new
  branches, a continued chat), a stored message the file changed is rewritten only
  while it is a leaf — history is append-only, a message with replies stays as it
  was — and the title (unless the user renamed the chat) and archived flag follow
  the file.

Message ids are unique across the database; a file whose message ids already
belong to another chat (a copy of an export edited by hand) is refused rather
than merged into the wrong conversation. Rows are inserted with one executemany
(no ORM objects per message): a chat of ten thousand messages is one statement.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session

from threadline.core.messages import Message, MessageStatus
from threadline.interchange.model import ImportedConversation
from threadline.store.convert import (
    as_utc,
    content_to_json,
    message_preview,
    metadata_to_json,
    session_from_row,
)
from threadline.store.import_outcome import ImportCancelled, ImportOutcome, ImportRefused, StoredImport
from threadline.store.ops_messages import next_ordinal
from threadline.store.tables import MessageRow, SessionRow

_messages = cast(sa.Table, sa.inspect(MessageRow).local_table)
MAX_ID = 64
"""The id columns' width."""
_ID_BATCH = 500


def import_conversation(
    session: Session,
    conversation: ImportedConversation,
    session_id: str,
    *,
    stop: threading.Event | None = None,
) -> StoredImport:
    """Write ``conversation`` as session ``session_id``, or update that session from it."""
    messages = [_storable(m) for m in conversation.messages]
    _check_shape(session_id, messages)
    row = session.get(SessionRow, session_id)
    _refuse_foreign_ids(session, session_id, [m.id for m in messages])
    if row is None:
        row = _new_session(session, conversation, session_id, messages)
        outcome = ImportOutcome.IMPORTED
    else:
        outcome = _update_session(session, row, conversation, messages)
    if stop is not None and stop.is_set():
        raise ImportCancelled()  # before the commit: the transaction is rolled back
    return StoredImport(outcome, session_from_row(row))


def _storable(message: Message) -> Message:
    """A reply exported mid-stream has no writer here: it is stored as interrupted, never streaming."""
    if message.status is MessageStatus.STREAMING:
        return message.copy(status=MessageStatus.INTERRUPTED)
    return message


def _check_shape(session_id: str, messages: Sequence[Message]) -> None:
    if not session_id or len(session_id) > MAX_ID:
        raise ImportRefused(f"its id is longer than {MAX_ID} characters")
    seen: set[str] = set()
    for message in messages:
        if not message.id or len(message.id) > MAX_ID:
            raise ImportRefused(f"a message id is empty or longer than {MAX_ID} characters")
        if message.id in seen:
            raise ImportRefused("two of its messages have the same id")
        seen.add(message.id)


def _refuse_foreign_ids(session: Session, session_id: str, ids: Sequence[str]) -> None:
    for start in range(0, len(ids), _ID_BATCH):
        batch = ids[start : start + _ID_BATCH]
        statement = sa.select(_messages.c.id).where(
            _messages.c.id.in_(batch), _messages.c.session_id != session_id
        )
        if session.connection().execute(statement.limit(1)).first() is not None:
            raise ImportRefused("some of its messages are already stored in another chat")


def _new_session(
    session: Session, conversation: ImportedConversation, session_id: str, messages: list[Message]
) -> SessionRow:
    known: set[str] = set()
    for message in messages:
        if message.parent_id is not None and message.parent_id not in known:
            raise ImportRefused("a message comes before its parent or has no parent in the chat")
        known.add(message.id)
    leaf = (
        conversation.active_leaf
        if conversation.active_leaf in known
        else (messages[-1].id if messages else None)
    )
    row = SessionRow(
        id=session_id,
        title=conversation.title,
        pinned=conversation.pinned,
        archived=conversation.archived,
        agent_id=conversation.agent_id,
        provider=conversation.provider,
        model=conversation.model,
        active_leaf=leaf,
        preview=_preview(messages, leaf),
        checkpoints={k: v for k, v in conversation.checkpoints.items() if v in known},
        created_at=as_utc(conversation.created_at),
        updated_at=as_utc(conversation.updated_at),
    )
    session.add(row)
    session.flush()
    _insert(session, session_id, messages, first_ordinal=0)
    return row


def _update_session(
    session: Session, row: SessionRow, conversation: ImportedConversation, messages: list[Message]
) -> ImportOutcome:
    stored = {
        r.id: r
        for r in session.connection().execute(
            sa.select(
                _messages.c.id,
                _messages.c.parent_id,
                _messages.c.kind,
                _messages.c.text,
                _messages.c.status,
                _messages.c.content,
                _messages.c.metadata,
            ).where(_messages.c.session_id == row.id)
        )
    }
    fresh = [m for m in messages if m.id not in stored]
    known = set(stored)
    for message in fresh:
        if message.parent_id is not None and message.parent_id not in known:
            raise ImportRefused("a message comes before its parent or has no parent in the chat")
        known.add(message.id)
    parents = {r.parent_id for r in stored.values()} | {m.parent_id for m in fresh}
    rewritten = [m for m in messages if m.id in stored and m.id not in parents and _differs(m, stored[m.id])]
    for message in rewritten:
        session.connection().execute(
            sa.update(_messages)
            .where(_messages.c.id == message.id)
            .values(
                text=message.text,
                kind=message.kind.value,
                status=message.status.value,
                content=content_to_json(message),
                metadata=metadata_to_json(message.metadata),
            )
        )
    changed = bool(fresh or rewritten)
    if fresh:
        _insert(session, row.id, fresh, first_ordinal=next_ordinal(session.connection(), row.id))
    if changed:
        if conversation.active_leaf in known:
            row.active_leaf = conversation.active_leaf
        row.updated_at = max(as_utc(row.updated_at), as_utc(conversation.updated_at))
        row.preview = _preview(messages, row.active_leaf) or row.preview
    if conversation.title and conversation.title != row.title and not row.title_set_by_user:
        row.title = conversation.title
        changed = True
    if conversation.archived != row.archived:
        row.archived = conversation.archived
        changed = True
    if not changed:
        in_file = {m.id for m in messages}
        newer = any(message_id not in in_file for message_id in stored)
        return ImportOutcome.KEPT_NEWER if newer else ImportOutcome.UNCHANGED
    session.add(row)
    session.flush()
    return ImportOutcome.UPDATED


def _differs(message: Message, stored: Any) -> bool:
    return (
        message.text != stored.text
        or message.kind.value != stored.kind
        or message.status.value != stored.status
        or content_to_json(message) != (stored.content or {})
        or metadata_to_json(message.metadata) != stored.metadata
    )


def _insert(session: Session, session_id: str, messages: Iterable[Message], *, first_ordinal: int) -> None:
    rows = [
        {
            "id": m.id,
            "session_id": session_id,
            "parent_id": m.parent_id,
            "ordinal": first_ordinal + index,
            "role": m.role.value,
            "kind": m.kind.value,
            "text": m.text,
            "content": content_to_json(m),
            "status": m.status.value,
            "metadata": metadata_to_json(m.metadata),
            "created_at": as_utc(m.created_at),
        }
        for index, m in enumerate(messages)
    ]
    if rows:
        session.connection().execute(sa.insert(_messages), rows)


def _preview(messages: Sequence[Message], leaf: str | None) -> str:
    """What the sidebar shows: the newest text on the path to ``leaf``."""
    by_id = {m.id: m for m in messages}
    node = by_id.get(leaf) if leaf is not None else None
    for _ in range(len(by_id)):
        if node is None:
            break
        if preview := message_preview(node):
            return preview
        node = by_id.get(node.parent_id) if node.parent_id is not None else None
    return ""
