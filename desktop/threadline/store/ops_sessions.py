"""Session operations, synchronous, each run inside one transaction on the store's thread.

``updated_at`` means "last activity": it moves when messages are added, not when
a session is renamed, pinned or archived, so organising the sidebar does not
reshuffle it.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session, col, select

from threadline.core.messages import new_id, utcnow
from threadline.core.session import SessionInfo
from threadline.core.sticky import StickyContext
from threadline.store.coltypes import UTCDateTime
from threadline.store.convert import session_from_row
from threadline.store.errors import NotFoundError
from threadline.store.tables import SessionRow


def require_session(session: Session, session_id: str, *, lock: bool = False) -> SessionRow:
    """The session's row; ``lock`` holds it (``SELECT … FOR UPDATE``) until the transaction ends."""
    if lock:
        statement = select(SessionRow).where(col(SessionRow.id) == session_id).with_for_update()
        row = session.exec(statement).first()
    else:
        row = session.get(SessionRow, session_id)
    if row is None:
        raise NotFoundError(f"no session {session_id!r}")
    return row


def create_session(
    session: Session, *, title: str, agent_id: str, provider: str, model: str, session_id: str | None
) -> SessionInfo:
    now = utcnow()
    row = SessionRow(
        id=session_id or new_id(),
        title=title,
        agent_id=agent_id,
        provider=provider,
        model=model,
        checkpoints={},
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    session.flush()
    return session_from_row(row)


def get_session(session: Session, session_id: str) -> SessionInfo | None:
    row = session.get(SessionRow, session_id)
    return None if row is None else session_from_row(row)


def list_sessions(
    session: Session,
    *,
    archived: bool,
    limit: int,
    offset: int,
    after: SessionInfo | None = None,
    project_id: str | None = None,
) -> list[SessionInfo]:
    """One sidebar page: pinned first, then most recent activity (served by ``ix_sessions_list``).

    ``after`` is keyset paging: the page starts right after that session's place in
    the order (its pinned flag, activity time and id as given, even if the row has
    changed or gone since). Unlike ``offset``, whose cost grows with the number of
    rows skipped, every page is one index seek, so the 500th page of 100,000
    sessions costs what the first does. ``offset`` applies on top of ``after``.
    ``project_id`` lists only that project's chats (served by ``ix_sessions_project``).
    """
    scope = _Scope(archived=archived, project_id=project_id)
    if after is None:
        return _page(session, scope, pinned=None, after=None, limit=limit, offset=offset)
    rows = _page(session, scope, pinned=after.pinned, after=after, limit=limit, offset=offset)
    if after.pinned and len(rows) < limit:  # the pinned ones are exhausted: continue with the others
        rest = _page(session, scope, pinned=False, after=None, limit=limit - len(rows), offset=0)
        rows += rest
    return rows


@dataclass(frozen=True, slots=True)
class _Scope:
    """Which list a page comes from: the archived one or the other, and one project or all."""

    archived: bool
    project_id: str | None


def _page(
    session: Session,
    scope: _Scope,
    *,
    pinned: bool | None,
    after: SessionInfo | None,
    limit: int,
    offset: int,
) -> list[SessionInfo]:
    """Rows in sidebar order; with ``pinned`` given, only that part, and only past ``after``.

    Equality on ``archived`` and ``pinned`` then a row-value bound on
    ``(updated_at, id)`` is a plain range of ``ix_sessions_list`` on SQLite and
    PostgreSQL alike.
    """
    statement = select(SessionRow).where(col(SessionRow.archived) == scope.archived)
    if scope.project_id is not None:
        statement = statement.where(col(SessionRow.project_id) == scope.project_id)
    if pinned is not None:
        statement = statement.where(col(SessionRow.pinned) == pinned)
    if after is not None:
        bound = sa.tuple_(
            sa.bindparam(None, after.updated_at, type_=UTCDateTime()),
            sa.bindparam(None, after.id, type_=sa.String()),
        )
        statement = statement.where(sa.tuple_(col(SessionRow.updated_at), col(SessionRow.id)) < bound)
    statement = statement.order_by(
        col(SessionRow.pinned).desc(), col(SessionRow.updated_at).desc(), col(SessionRow.id).desc()
    )
    statement = statement.limit(limit)
    if offset:
        statement = statement.offset(offset)
    return [session_from_row(row) for row in session.exec(statement)]


def rename_session(session: Session, session_id: str, title: str, *, by_user: bool) -> SessionInfo:
    """Set the title; an automatic title never replaces one the user chose."""
    row = require_session(session, session_id)
    if by_user:
        row.title = title
        row.title_set_by_user = True
    elif not row.title_set_by_user:
        row.title = title
    session.add(row)
    session.flush()
    return session_from_row(row)


def pin_session(session: Session, session_id: str, pinned: bool) -> SessionInfo:
    row = require_session(session, session_id)
    row.pinned = pinned
    session.add(row)
    session.flush()
    return session_from_row(row)


def archive_session(session: Session, session_id: str, archived: bool) -> SessionInfo:
    row = require_session(session, session_id)
    row.archived = archived
    session.add(row)
    session.flush()
    return session_from_row(row)


def delete_session(session: Session, session_id: str) -> None:
    """Delete the session; the foreign key cascades to its messages, triggers to the text index."""
    row = session.get(SessionRow, session_id)
    if row is not None:
        session.delete(row)
        session.flush()


def update_session(
    session: Session,
    session_id: str,
    *,
    provider: str | None,
    model: str | None,
    agent_id: str | None,
    checkpoints: dict[str, str] | None,
    context: StickyContext | None = None,
) -> SessionInfo:
    row = require_session(session, session_id)
    if provider is not None:
        row.provider = provider
    if model is not None:
        row.model = model
    if agent_id is not None:
        row.agent_id = agent_id
    if checkpoints is not None:
        row.checkpoints = dict(checkpoints)
    if context is not None:
        row.context = context.to_json()
    session.add(row)
    session.flush()
    return session_from_row(row)


def sessions_with_agent(session: Session, agent_id: str) -> list[SessionInfo]:
    """Every session (archived too) whose agent is ``agent_id``: what deleting that agent touches."""
    rows = session.exec(select(SessionRow).where(col(SessionRow.agent_id) == agent_id)).all()
    return [session_from_row(row) for row in rows]


def set_active_leaf(session: Session, session_id: str, leaf_id: str | None) -> None:
    row = require_session(session, session_id)
    row.active_leaf = leaf_id
    session.add(row)
