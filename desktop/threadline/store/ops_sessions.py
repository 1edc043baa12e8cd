"""Session operations, synchronous, each run inside one transaction on the store's thread.

``updated_at`` means "last activity": it moves when messages are added, not when
a session is renamed, pinned or archived, so organising the sidebar does not
reshuffle it.

Written in SQLAlchemy Core (``core_tables``), as every operation a turn runs is: an
``ask`` or a window's first send then never imports the ORM, SQLModel or pydantic.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from threadline.core.messages import new_id, utcnow
from threadline.core.session import SessionInfo
from threadline.core.sticky import StickyContext
from threadline.store.convert import PREVIEW_KINDS, preview_of, session_from_row
from threadline.store.core_tables import messages, sessions
from threadline.store.errors import NotFoundError


def require_session(connection: sa.Connection, session_id: str, *, lock: bool = False) -> sa.Row[Any]:
    """The session's row; ``lock`` holds it (``SELECT … FOR UPDATE``) until the transaction ends."""
    statement = sa.select(sessions).where(sessions.c.id == session_id)
    row = connection.execute(statement.with_for_update() if lock else statement).first()
    if row is None:
        raise NotFoundError(f"no session {session_id!r}")
    return row


def update_changed(connection: sa.Connection, row: sa.Row[Any], **values: Any) -> sa.Row[Any]:
    """Write the columns of ``values`` that differ from ``row`` (none: no statement); the row as stored.

    As the ORM did: an unchanged session is not written, so the change feed's triggers
    tell other instances nothing that did not happen.
    """
    changed = {key: value for key, value in values.items() if getattr(row, key) != value}
    if not changed:
        return row
    connection.execute(sa.update(sessions).where(sessions.c.id == row.id).values(**changed))
    return require_session(connection, row.id)


def create_session(
    connection: sa.Connection, *, title: str, agent_id: str, provider: str, model: str, session_id: str | None
) -> SessionInfo:
    now = utcnow()
    new = session_id or new_id()
    connection.execute(
        sa.insert(sessions).values(
            id=new,
            title=title,
            title_set_by_user=False,
            pinned=False,
            archived=False,
            folder="",
            agent_id=agent_id,
            provider=provider,
            model=model,
            active_leaf=None,
            preview="",
            checkpoints={},
            created_at=now,
            updated_at=now,
            summary="",
            context={},
            project_id=None,
        )
    )
    return session_from_row(require_session(connection, new))


def get_session(connection: sa.Connection, session_id: str) -> SessionInfo | None:
    row = connection.execute(sa.select(sessions).where(sessions.c.id == session_id)).first()
    return None if row is None else session_from_row(row)


def rename_session(connection: sa.Connection, session_id: str, title: str, *, by_user: bool) -> SessionInfo:
    """Set the title; an automatic title never replaces one the user chose."""
    row = require_session(connection, session_id)
    if by_user:
        row = update_changed(connection, row, title=title, title_set_by_user=True)
    elif not row.title_set_by_user:
        row = update_changed(connection, row, title=title)
    return session_from_row(row)


def pin_session(connection: sa.Connection, session_id: str, pinned: bool) -> SessionInfo:
    return session_from_row(
        update_changed(connection, require_session(connection, session_id), pinned=pinned)
    )


def archive_session(connection: sa.Connection, session_id: str, archived: bool) -> SessionInfo:
    row = require_session(connection, session_id)
    return session_from_row(update_changed(connection, row, archived=archived))


def delete_session(connection: sa.Connection, session_id: str) -> None:
    """Delete the session; the foreign key cascades to its messages, triggers to the text index."""
    connection.execute(sa.delete(sessions).where(sessions.c.id == session_id))


def update_session(
    connection: sa.Connection,
    session_id: str,
    *,
    provider: str | None,
    model: str | None,
    agent_id: str | None,
    checkpoints: dict[str, str] | None,
    context: StickyContext | None = None,
) -> SessionInfo:
    given = {
        "provider": provider,
        "model": model,
        "agent_id": agent_id,
        "checkpoints": None if checkpoints is None else dict(checkpoints),
        "context": None if context is None else context.to_json(),
    }
    row = require_session(connection, session_id)
    return session_from_row(
        update_changed(connection, row, **{key: value for key, value in given.items() if value is not None})
    )


def sessions_with_agent(connection: sa.Connection, agent_id: str) -> list[SessionInfo]:
    """Every session (archived too) whose agent is ``agent_id``: what deleting that agent touches."""
    rows = connection.execute(sa.select(sessions).where(sessions.c.agent_id == agent_id))
    return [session_from_row(row) for row in rows]


def set_active_leaf(connection: sa.Connection, session_id: str, leaf_id: str | None) -> None:
    """Show another path (a version, a branch, a compare's chosen reply): the sidebar's preview
    follows it, so it reads what the chat shows, also after a restart."""
    update_changed(
        connection,
        require_session(connection, session_id),
        active_leaf=leaf_id,
        preview=path_preview(connection, leaf_id),
    )


PREVIEW_SEARCH_DEPTH = 64
"""How far up the path ``path_preview`` looks for a message that previews (a long tool round's
records are the most it passes); a path with none that close keeps an empty preview."""


def path_preview(connection: sa.Connection, leaf_id: str | None) -> str:
    """The preview of the path ending at ``leaf_id``: its last message a person wrote or a model
    said (records such as tool results and summaries are passed over), one primary-key probe
    per message walked up."""
    current = leaf_id
    for _ in range(PREVIEW_SEARCH_DEPTH):
        if current is None:
            return ""
        row = connection.execute(
            sa.select(messages.c.parent_id, messages.c.kind, messages.c.text).where(messages.c.id == current)
        ).first()
        if row is None:
            return ""
        if row.kind in _PREVIEW_KIND_VALUES and (preview := preview_of(row.text or "")):
            return preview
        current = row.parent_id
    return ""


_PREVIEW_KIND_VALUES = frozenset(kind.value for kind in PREVIEW_KINDS)
