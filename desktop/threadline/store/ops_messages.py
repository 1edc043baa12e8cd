"""Message operations, synchronous, each run inside one transaction on the store's thread.

Appending is one transaction: the row with the session's next ordinal, the
session's active leaf, its activity time and its preview move together, so a
crash never leaves a session pointing at a message that is not there.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from threadline.core.messages import Message, MessageStatus, utcnow
from threadline.core.tree import ConversationTree
from threadline.store.convert import (
    KINDS,
    ROLES,
    STATUSES,
    content_to_json,
    datetime_value,
    json_value,
    message_from_row,
    message_preview,
    message_values,
    metadata_fields_from_json,
    metadata_to_json,
)
from threadline.store.core_tables import messages as _messages
from threadline.store.errors import NotFoundError
from threadline.store.ops_sessions import path_preview, require_session, update_changed
from threadline.store.writers import left_behind, this_writer

log = logging.getLogger("threadline.store")

TREE_BATCH = 256
"""Rows fetched and turned into messages at a time when a tree loads (see ``load_tree``)."""

_RAW = sa.String()
_TREE_COLUMNS = (
    _messages.c.id,
    _messages.c.parent_id,
    _messages.c.role,
    _messages.c.kind,
    _messages.c.text,
    # Fetched undecoded: SQLAlchemy's per-value JSON and SQLite-datetime processors
    # cost more than the query itself on a 10,000-message tree; see ``StoredMessage``.
    sa.type_coerce(_messages.c.content, _RAW).label("content"),
    _messages.c.status,
    sa.type_coerce(_messages.c.metadata, _RAW).label("meta"),
    sa.type_coerce(_messages.c.created_at, _RAW).label("created_at"),
)


class StoredMessage(NamedTuple):
    """A message row as fetched for a tree, with JSON and timestamps decoded cheaply."""

    id: str
    parent_id: str | None
    role: str
    kind: str
    text: str
    content: dict[str, Any]
    status: str
    meta: dict[str, Any] | None
    created_at: datetime

    @classmethod
    def from_raw(cls, row: Sequence[Any]) -> StoredMessage:
        """``row`` is in ``_TREE_COLUMNS`` order (unpacked positionally: faster than attributes)."""
        id_, parent_id, role, kind, text, content, status, meta, created_at = row
        return cls(
            id_,
            parent_id,
            role,
            kind,
            text,
            {} if content == "{}" else json_value(content),
            status,
            None if meta is None else json_value(meta),
            datetime_value(created_at),
        )


def next_ordinal(connection: sa.Connection, session_id: str) -> int:
    """One past the session's highest ordinal (one probe of the (session_id, ordinal) index)."""
    highest = connection.execute(
        sa.select(sa.func.max(_messages.c.ordinal)).where(_messages.c.session_id == session_id)
    ).scalar_one()
    return 0 if highest is None else int(highest) + 1


def append_messages(connection: sa.Connection, session_id: str, messages: Sequence[Message]) -> None:
    """Insert messages in order after the session's last one; the last becomes the active leaf.

    The session row is locked first (``FOR UPDATE`` on PostgreSQL; on SQLite the
    transaction already holds the database's write lock), so two writers appending
    to one session take turns instead of both reading the same highest ordinal.
    """
    if not messages:
        return
    owner = require_session(connection, session_id, lock=True)
    if _already_stored(connection, session_id, messages):
        return  # an earlier attempt committed before its connection was lost: retrying is a no-op
    ordinal = next_ordinal(connection, session_id)
    rows = [message_values(m, session_id=session_id, ordinal=ordinal + i) for i, m in enumerate(messages)]
    for values in rows:
        if values["status"] == MessageStatus.STREAMING.value:
            values.update(_claim())
    connection.execute(sa.insert(_messages), rows)
    activity: dict[str, Any] = {"active_leaf": messages[-1].id, "updated_at": utcnow()}
    preview = next((p for m in reversed(messages) if (p := message_preview(m))), "")
    # Nothing to preview in what was added (a reply about to stream, tool results): the path's
    # own last words, so a regenerated reply does not keep previewing the version it replaces.
    activity["preview"] = preview or path_preview(connection, messages[0].parent_id) or owner.preview
    update_changed(connection, owner, **activity)


def _already_stored(connection: sa.Connection, session_id: str, messages: Sequence[Message]) -> bool:
    ids = [m.id for m in messages]
    found = connection.execute(
        sa.select(sa.func.count())
        .select_from(_messages)
        .where(_messages.c.id.in_(ids), _messages.c.session_id == session_id)
    ).scalar_one()
    return int(found) == len(ids)


def update_message(connection: sa.Connection, message: Message) -> None:
    """Rewrite what can change after insertion: text, kind, status, content and metadata.

    Only the columns that changed are written (none: no statement), as the ORM did.
    """
    row = connection.execute(sa.select(*_WRITTEN).where(_messages.c.id == message.id)).first()
    if row is None:
        raise NotFoundError(f"no message {message.id!r}")
    values: dict[str, Any] = {
        "text": message.text,
        "kind": message.kind.value,
        "status": message.status.value,
        "content": content_to_json(message),
        "metadata": metadata_to_json(message.metadata),
    }
    if message.status is MessageStatus.STREAMING:
        values.update(_claim())  # a reply continued in place is being written again
    changed = {key: value for key, value in values.items() if row._mapping[key] != value}
    if changed:
        connection.execute(sa.update(_messages).where(_messages.c.id == message.id).values(**changed))
    preview = message_preview(message)
    if preview:
        session = require_session(connection, row.session_id)
        if session.active_leaf == message.id:  # a version or compare column not shown previews nothing
            update_changed(connection, session, preview=preview)


_WRITTEN = (
    _messages.c.session_id,
    _messages.c.ordinal,
    _messages.c.text,
    _messages.c.kind,
    _messages.c.status,
    _messages.c.content,
    _messages.c.metadata,
    _messages.c.writer,
    _messages.c.heartbeat_at,
)
"""What ``update_message`` reads to write only what changed."""


def update_message_text(connection: sa.Connection, message_id: str, text: str) -> None:
    """The streaming fast path: one UPDATE (the trigger re-indexes the text), which is also a heartbeat."""
    result = connection.execute(
        sa.update(_messages).where(_messages.c.id == message_id).values(text=text, **_claim())
    )
    if result.rowcount == 0:
        raise NotFoundError(f"no message {message_id!r}")


def touch_message(connection: sa.Connection, message_id: str) -> None:
    """A heartbeat for a streaming reply whose text has not changed (a stalled stream)."""
    connection.execute(sa.update(_messages).where(_messages.c.id == message_id).values(**_claim()))


def mark_interrupted(connection: sa.Connection) -> int:
    """Replies still ``streaming`` whose writer is gone become ``interrupted`` (``writers.py``).

    A reply another live instance is streaming right now is left alone.
    """
    now = utcnow()
    rows = connection.execute(
        sa.select(_messages.c.id, _messages.c.writer, _messages.c.heartbeat_at).where(
            _messages.c.status == MessageStatus.STREAMING.value
        )
    ).all()
    orphans = [id_ for id_, writer, heartbeat_at in rows if left_behind(writer, heartbeat_at, now)]
    if orphans:
        connection.execute(
            sa.update(_messages)
            .where(_messages.c.id.in_(orphans))
            .values(status=MessageStatus.INTERRUPTED.value)
        )
    return len(orphans)


def _claim() -> dict[str, Any]:
    """The columns that say this process is writing a reply, now."""
    return {"writer": this_writer(), "heartbeat_at": utcnow()}


def message_count(connection: sa.Connection, session_id: str) -> int:
    statement = sa.select(sa.func.count()).select_from(_messages).where(_messages.c.session_id == session_id)
    return int(connection.execute(statement).scalar_one())


def load_tree(connection: sa.Connection, session_id: str) -> ConversationTree:
    """The session's tree in ordinal order, with its active leaf and checkpoints.

    Rows are read as plain tuples (no ORM objects) because this is the hot path
    for long sessions, and a batch at a time (``TREE_BATCH``), each turned into
    messages before the next is fetched: only the messages outlive the load, so a
    10,000-message tree no longer holds every row beside every message at its peak
    (whose freed gaps later objects filled, keeping that memory after the chat was
    closed; docs/performance.md). A message whose parent is missing cannot be placed
    and is skipped with a warning rather than making the whole session unreadable.
    """
    owner = require_session(connection, session_id)
    statement = (
        sa.select(*_TREE_COLUMNS).where(_messages.c.session_id == session_id).order_by(_messages.c.ordinal)
    )
    tree = ConversationTree()
    made: list[str] = []
    with _collector_paused():
        for rows in connection.execute(statement).partitions(TREE_BATCH):
            made.extend(_fill_tree(tree, rows, session_id))
        tree.unpack_leaves()  # a leaf may still grow: only messages with children stay packed
        tree.pack(made)  # a row made as a message that is plain after all (empty content lists)
    leaf = owner.active_leaf if owner.active_leaf in tree else _newest_leaf(tree)
    tree.set_active_leaf(leaf)
    tree.checkpoints = {name: target for name, target in (owner.checkpoints or {}).items() if target in tree}
    return tree


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while tens of thousands of acyclic objects are made.

    Each allocation burst would otherwise trigger collections that rescan everything
    alive; on a 10,000-message tree that roughly doubles the load time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _fill_tree(tree: ConversationTree, rows: Sequence[Sequence[Any]], session_id: str) -> list[str]:
    """Add ``rows`` to ``tree``; returns the ids of those made as ``Message`` objects."""
    made: list[str] = []
    for record in rows:
        row = StoredMessage.from_raw(record)
        parent_id = row.parent_id
        if parent_id is not None:
            if parent_id not in tree:
                log.warning("session %s: message %s has no parent %s; skipped", session_id, row.id, parent_id)
                continue
            # The parent's own id string rather than the row's equal copy: one string per
            # id for as long as the tree lives (10,000 fewer objects in a 10,000-message tree).
            parent_id = tree.stored_id(parent_id)
        # A plain row (text and request metadata only) goes straight into the packed form:
        # no ``Message`` is made for most of a long chat (docs/design.md, "Settled history
        # is packed"). The others, and anything packing could not give back exactly, are
        # made as messages.
        if not row.content and tree.add_settled(
            row.id,
            parent_id,
            ROLES[row.role],
            KINDS[row.kind],
            row.text,
            STATUSES[row.status],
            row.created_at,
            None if row.meta is None else metadata_fields_from_json(row.meta),
        ):
            continue
        message = message_from_row(row)
        message.parent_id = parent_id
        tree.add(message, activate=False)
        made.append(message.id)
    return made


def _newest_leaf(tree: ConversationTree) -> str | None:
    """The leaf stored last: the tree was filled in ordinal order, which its iteration keeps."""
    return next((i for i in reversed(tree.ids()) if not tree.has_children(i)), None)
