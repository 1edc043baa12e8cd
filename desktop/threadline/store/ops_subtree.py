"""Deleting a message and everything below it, in one transaction on the store's thread.

This is the only place stored messages are ever removed one by one (a session's
delete removes them all). The engine calls it when the undo window of a user's
delete has passed, so until then the rows are untouched and an undo costs nothing
here. The subtree is found in the database, not taken from memory, so a reply
another instance added below the deleted message goes too, and the full-text
index follows through the ``messages`` delete trigger (SQLite) or the generated
column's index (PostgreSQL).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, delete, select

from threadline.store.ops_sessions import require_session, update_changed
from threadline.store.tables import MessageRow

_BATCH = 500
"""Ids per ``IN (…)`` list: SQLite and PostgreSQL both take far more, this keeps statements small."""


def subtree_ids(session: Session, session_id: str, message_id: str) -> list[str]:
    """``message_id`` and every stored descendant of it in the session, top first (``[]``: not stored)."""
    found = session.exec(
        select(MessageRow.id).where(
            col(MessageRow.id) == message_id, col(MessageRow.session_id) == session_id
        )
    ).first()
    if found is None:
        return []
    ids = [message_id]
    frontier = [message_id]
    while frontier:
        children: list[str] = []
        for start in range(0, len(frontier), _BATCH):
            batch = frontier[start : start + _BATCH]
            children += session.exec(
                select(MessageRow.id)
                .where(col(MessageRow.session_id) == session_id, col(MessageRow.parent_id).in_(batch))
                .order_by(col(MessageRow.ordinal))
            ).all()
        ids += children
        frontier = children
    return ids


def delete_subtree(session: Session, session_id: str, message_id: str, fallback_leaf: str | None) -> int:
    """Delete a message and its descendants; returns how many rows went.

    A session whose stored active leaf was among them points at ``fallback_leaf``
    instead (when that is still stored), else at the deleted message's parent, and
    checkpoints that named one of them are dropped, so the session never names a
    message that is not there.
    """
    owner = require_session(session.connection(), session_id, lock=True)
    ids = subtree_ids(session, session_id, message_id)
    if not ids:
        return 0
    parent_id = session.exec(select(MessageRow.parent_id).where(col(MessageRow.id) == message_id)).first()
    for start in range(0, len(ids), _BATCH):
        session.exec(delete(MessageRow).where(col(MessageRow.id).in_(ids[start : start + _BATCH])))
    gone = set(ids)
    repaired: dict[str, Any] = {}
    if owner.active_leaf in gone:
        still_there = (
            fallback_leaf is not None and fallback_leaf not in gone and _stored(session, fallback_leaf)
        )
        repaired["active_leaf"] = fallback_leaf if still_there else parent_id
    if owner.checkpoints and any(target in gone for target in owner.checkpoints.values()):
        repaired["checkpoints"] = {name: t for name, t in owner.checkpoints.items() if t not in gone}
    update_changed(session.connection(), owner, **repaired)
    return len(ids)


def _stored(session: Session, message_id: str) -> bool:
    return session.exec(select(MessageRow.id).where(col(MessageRow.id) == message_id)).first() is not None
