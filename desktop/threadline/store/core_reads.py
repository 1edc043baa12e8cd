"""Reads through SQLAlchemy Core only: what a window's start and every turn read.

Each takes a ``sa.Connection`` inside a transaction (``Store._read_core``). They read the
``core_tables`` clauses and build the core types directly, so the ORM, SQLModel and
pydantic (``tables.py``, the ``ops_*`` modules) are imported only by the first write or
chat load, not by every start (see docs/performance.md, "Memory after start").
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.messages import MessageStatus
from threadline.core.project import Project
from threadline.core.session import SessionInfo
from threadline.store.coltypes import UTCDateTime
from threadline.store.convert import agent_from_row, project_from_row, provider_from_row, session_from_row
from threadline.store.core_tables import (
    agents,
    change_log,
    messages,
    projects,
    providers,
    sessions,
)


def has_streaming(connection: sa.Connection) -> bool:
    """Whether any reply is marked ``streaming`` (a cheap read before ``mark_interrupted``)."""
    statement = sa.select(messages.c.id).where(messages.c.status == MessageStatus.STREAMING.value).limit(1)
    return connection.execute(statement).first() is not None


def newest_change(connection: sa.Connection) -> int:
    """The newest change-log entry's number, 0 with none."""
    return int(connection.execute(sa.select(sa.func.max(change_log.c.seq))).scalar_one() or 0)


def list_providers(connection: sa.Connection) -> list[ProviderConfig]:
    rows = connection.execute(sa.select(providers).order_by(providers.c.name))
    return [provider_from_row(row) for row in rows]


def get_provider(connection: sa.Connection, name: str) -> ProviderConfig | None:
    row = connection.execute(sa.select(providers).where(providers.c.name == name)).first()
    return None if row is None else provider_from_row(row)


def list_agents(connection: sa.Connection) -> list[AgentConfig]:
    rows = connection.execute(sa.select(agents).order_by(agents.c.name, agents.c.id))
    return [agent_from_row(row) for row in rows]


def get_agent(connection: sa.Connection, agent_id: str) -> AgentConfig | None:
    row = connection.execute(sa.select(agents).where(agents.c.id == agent_id)).first()
    return None if row is None else agent_from_row(row)


def list_projects(connection: sa.Connection) -> list[Project]:
    """Every project, by name (case-insensitive), as the sidebar lists them."""
    statement = sa.select(projects).order_by(sa.func.lower(projects.c.name), projects.c.id)
    return [project_from_row(row) for row in connection.execute(statement)]


def get_project(connection: sa.Connection, project_id: str) -> Project | None:
    row = connection.execute(sa.select(projects).where(projects.c.id == project_id)).first()
    return None if row is None else project_from_row(row)


def find_project_by_name(connection: sa.Connection, name: str) -> Project | None:
    """The project called ``name`` (case-insensitive), for import and the command line."""
    statement = sa.select(projects).where(sa.func.lower(projects.c.name) == name.lower())
    row = connection.execute(statement.order_by(projects.c.created_at)).first()
    return None if row is None else project_from_row(row)


def project_chat_counts(connection: sa.Connection, *, archived: bool = False) -> dict[str, int]:
    """How many chats (of the archived list or the other) each project holds."""
    statement = (
        sa.select(sessions.c.project_id, sa.func.count())
        .where(sessions.c.project_id.is_not(None), sessions.c.archived == archived)
        .group_by(sessions.c.project_id)
    )
    return {str(project): int(count) for project, count in connection.execute(statement)}


def list_sessions(
    connection: sa.Connection,
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
        return _page(connection, scope, pinned=None, after=None, limit=limit, offset=offset)
    rows = _page(connection, scope, pinned=after.pinned, after=after, limit=limit, offset=offset)
    if after.pinned and len(rows) < limit:  # the pinned ones are exhausted: continue with the others
        rest = _page(connection, scope, pinned=False, after=None, limit=limit - len(rows), offset=0)
        rows += rest
    return rows


@dataclass(frozen=True, slots=True)
class _Scope:
    """Which list a page comes from: the archived one or the other, and one project or all."""

    archived: bool
    project_id: str | None


def _page(
    connection: sa.Connection,
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
    statement = sa.select(sessions).where(sessions.c.archived == scope.archived)
    if scope.project_id is not None:
        statement = statement.where(sessions.c.project_id == scope.project_id)
    if pinned is not None:
        statement = statement.where(sessions.c.pinned == pinned)
    if after is not None:
        bound = sa.tuple_(
            sa.bindparam(None, after.updated_at, type_=UTCDateTime()),
            sa.bindparam(None, after.id, type_=sa.String()),
        )
        statement = statement.where(sa.tuple_(sessions.c.updated_at, sessions.c.id) < bound)
    statement = statement.order_by(
        sessions.c.pinned.desc(), sessions.c.updated_at.desc(), sessions.c.id.desc()
    )
    statement = statement.limit(limit)
    if offset:
        statement = statement.offset(offset)
    return [session_from_row(row) for row in connection.execute(statement)]
