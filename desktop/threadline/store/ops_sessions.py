"""Session operations, synchronous, each run inside one transaction on the store's thread.

``updated_at`` means "last activity": it moves when messages are added, not when
a session is renamed, pinned or archived, so organising the sidebar does not
reshuffle it.
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from threadline.core.messages import new_id, utcnow
from threadline.core.session import SessionInfo
from threadline.core.sticky import StickyContext
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
