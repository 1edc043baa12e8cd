"""Project operations, synchronous, each run inside one transaction on the store's thread."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col

from threadline.core.messages import utcnow
from threadline.core.project import Project
from threadline.core.session import SessionInfo
from threadline.store.convert import project_from_row, project_to_row, session_from_row
from threadline.store.errors import NotFoundError
from threadline.store.ops_sessions import require_session, update_changed
from threadline.store.tables import ProjectRow, SessionRow


def save_project(session: Session, project: Project) -> Project:
    """Insert or update ``project`` (its ``updated_at`` moves to now)."""
    stored = project_to_row(project)
    stored.updated_at = utcnow()
    row = session.get(ProjectRow, project.id)
    if row is None:
        session.add(stored)
        row = stored
    else:
        row.name = stored.name
        row.colour = stored.colour
        row.instructions = stored.instructions
        row.context = stored.context
        row.updated_at = stored.updated_at
        session.add(row)
    session.flush()
    return project_from_row(row)


def delete_project(session: Session, project_id: str) -> int:
    """Delete the project; its chats stay, outside any project. Returns how many were moved out."""
    moved = session.connection().execute(
        sa.update(SessionRow).where(col(SessionRow.project_id) == project_id).values(project_id=None)
    )
    row = session.get(ProjectRow, project_id)
    if row is None:
        raise NotFoundError(f"no project {project_id!r}")
    session.delete(row)
    session.flush()
    return int(moved.rowcount or 0)


def set_session_project(session: Session, session_id: str, project_id: str | None) -> SessionInfo:
    """Move a chat into ``project_id`` (``None``: out of any project)."""
    if project_id is not None and session.get(ProjectRow, project_id) is None:
        raise NotFoundError(f"no project {project_id!r}")
    connection = session.connection()
    row = require_session(connection, session_id)
    return session_from_row(update_changed(connection, row, project_id=project_id))
