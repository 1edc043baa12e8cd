"""SQLModel tables (``*Row``), kept apart from the core types on purpose.

Rows are storage shapes: flat columns for what is queried or indexed, JSON for
the rest. The core dataclasses stay free of SQL; ``convert`` maps between them.
The schema itself is owned by the Alembic migrations (``migrations/versions``);
these classes must describe the same tables, which a test checks.

Indexes exist for the two hot reads (the budgets): the sidebar page
(``ix_sessions_list``: archived filter, then pinned and recency, scanned in
reverse) and loading one session's tree (``uq_messages_session_ordinal``, which
also gives the next ordinal with one index probe).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from threadline.core.messages import utcnow
from threadline.store.coltypes import JSONValue, UTCDateTime

metadata = SQLModel.metadata


class SessionRow(SQLModel, table=True):
    """One conversation; its messages live in ``messages``."""

    __tablename__ = "sessions"
    __table_args__ = (
        sa.Index("ix_sessions_list", "archived", "pinned", "updated_at", "id"),
        sa.Index("ix_sessions_project", "project_id", "archived", "pinned", "updated_at", "id"),
    )

    id: str = Field(primary_key=True, max_length=64)
    title: str = Field(default="")
    title_set_by_user: bool = Field(default=False)
    pinned: bool = Field(default=False)
    archived: bool = Field(default=False)
    folder: str = Field(default="")
    agent_id: str = Field(default="")
    provider: str = Field(default="")
    model: str = Field(default="")
    active_leaf: str | None = Field(default=None, max_length=64)
    preview: str = Field(default="")
    checkpoints: dict[str, str] = Field(default_factory=dict, sa_type=JSONValue, nullable=False)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    summary: str = Field(default="")
    context: dict[str, Any] = Field(
        default_factory=dict, sa_type=JSONValue, nullable=False, sa_column_kwargs={"server_default": "{}"}
    )
    """Sticky context of this session (``threadline.core.sticky.StickyContext`` as JSON)."""
    project_id: str | None = Field(default=None, max_length=64)
    """The project the chat belongs to (``projects.id``); NULL for none. No foreign key:
    SQLite cannot add one to an existing table without rebuilding it, and the sessions
    table carries full-text triggers; deleting a project clears it in the same transaction."""


class ProjectRow(SQLModel, table=True):
    """A project: a named group of chats with shared instructions and sticky context."""

    __tablename__ = "projects"

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(default="")
    colour: str = Field(default="", max_length=16)
    instructions: str = Field(default="")
    context: dict[str, Any] = Field(
        default_factory=dict, sa_type=JSONValue, nullable=False, sa_column_kwargs={"server_default": "{}"}
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class MessageRow(SQLModel, table=True):
    """One node of a session's tree.

    ``seq`` is an integer key used only as the full-text index's row id (SQLite's
    implicit rowid may change on VACUUM for tables with a text key). ``ordinal``
    numbers messages within their session in insertion order, which is also the
    sibling order ("version 2 / 3") after a reload.
    """

    __tablename__ = "messages"
    __table_args__ = (
        sa.UniqueConstraint("session_id", "ordinal", name="uq_messages_session_ordinal"),
        # Partial on PostgreSQL too (migration 0001 says so). ``postgresql_where`` is left out
        # here: SQLAlchemy would import its whole PostgreSQL dialect at every start
        # just to check the keyword, and the schema is made by the migrations, never from these
        # classes (Alembic's comparison does not read an index's WHERE either).
        sa.Index("ix_messages_streaming", "status", sqlite_where=sa.text("status = 'streaming'")),
    )

    seq: int | None = Field(default=None, primary_key=True)
    id: str = Field(max_length=64, unique=True)
    session_id: str = Field(
        max_length=64,
        sa_column_args=[sa.ForeignKey("sessions.id", ondelete="CASCADE")],
        nullable=False,
    )
    parent_id: str | None = Field(default=None, max_length=64)
    ordinal: int = Field(nullable=False)
    role: str = Field(max_length=16)
    kind: str = Field(max_length=32)
    text: str = Field(default="")
    content: dict[str, Any] = Field(default_factory=dict, sa_type=JSONValue, nullable=False)
    status: str = Field(max_length=16)
    meta: dict[str, Any] | None = Field(
        default=None, sa_type=JSONValue, sa_column_kwargs={"name": "metadata"}, nullable=True
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    writer: str | None = Field(default=None, max_length=200)
    """``host|pid`` of the process streaming this reply (see ``threadline.store.writers``)."""
    heartbeat_at: datetime | None = Field(default=None, sa_type=UTCDateTime, nullable=True)


class ChangeLogRow(SQLModel, table=True):
    """One change to a session, message, project or memory, written by database triggers (the change feed).

    Triggers, not store code, fill it, so every writer of the database is covered; see
    ``threadline.store.change_feed``. ``kind`` is one of ``change_feed.ChangeKind``.
    ``session_id`` holds the project's id for ``project_changed`` (migration 0009) and the
    memory's for ``memory_changed`` (migration 0013): a plain key whose meaning the kind sets.
    """

    __tablename__ = "change_log"
    __table_args__ = {"sqlite_autoincrement": True}

    seq: int | None = Field(
        default=None,
        sa_column=sa.Column(
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    kind: str = Field(max_length=32)
    session_id: str = Field(max_length=64)
    message_id: str | None = Field(default=None, max_length=64)


class AgentRow(SQLModel, table=True):
    """An agent: system prompt, model, parameters, tools and approval rules."""

    __tablename__ = "agents"

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(default="")
    system_prompt: str = Field(default="")
    provider: str = Field(default="")
    model: str = Field(default="")
    temperature: float | None = Field(default=None)
    max_tokens: int | None = Field(default=None)
    enabled_tools: list[str] = Field(default_factory=list, sa_type=JSONValue, nullable=False)
    approval_rules: list[dict[str, str]] = Field(default_factory=list, sa_type=JSONValue, nullable=False)
    allowed_folders: list[str] = Field(default_factory=list, sa_type=JSONValue, nullable=False)
    default_approval: str = Field(default="ask", max_length=16)
    top_p: float | None = Field(default=None)
    context: dict[str, Any] = Field(
        default_factory=dict, sa_type=JSONValue, nullable=False, sa_column_kwargs={"server_default": "{}"}
    )
    """Sticky context of the agent (``threadline.core.sticky.StickyContext`` as JSON)."""
    context_share: float | None = Field(default=None)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class ProviderRow(SQLModel, table=True):
    """Where a provider lives. Never a key: keys are in the OS keychain."""

    __tablename__ = "providers"

    name: str = Field(primary_key=True, max_length=128)
    kind: str = Field(max_length=32)
    base_url: str = Field(default="")
    api_key_env: str = Field(default="")
    default_model: str = Field(default="")
    headers: list[list[str]] = Field(default_factory=list, sa_type=JSONValue, nullable=False)
    connect_timeout: float | None = Field(default=None)
    first_byte_timeout: float | None = Field(default=None)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class SettingRow(SQLModel, table=True):
    """One user setting: a key and a JSON value."""

    __tablename__ = "settings"

    key: str = Field(primary_key=True, max_length=255)
    value: Any = Field(default=None, sa_type=JSONValue, nullable=True)


class UIStateRow(SQLModel, table=True):
    """Window geometry, open tabs and the like: a key and a JSON value."""

    __tablename__ = "ui_state"

    key: str = Field(primary_key=True, max_length=255)
    value: Any = Field(default=None, sa_type=JSONValue, nullable=True)


class SessionLeaseRow(SQLModel, table=True):
    """Which instance runs a turn in a session right now (``threadline.store.leases``)."""

    __tablename__ = "session_leases"

    session_id: str = Field(primary_key=True, max_length=64)
    holder: str = Field(max_length=200)
    """``host|pid`` of the holding process, as ``threadline.store.writers`` names writers."""
    host: str = Field(max_length=200)
    acquired_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    heartbeat_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    stop_requested: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})


class ChangeSetRow(SQLModel, table=True):
    """What one tool call (or restore) changed on disk (migration 0011; docs/workspace.md)."""

    __tablename__ = "change_sets"
    __table_args__ = (sa.Index("ix_change_sets_session_id", "session_id", "created_at"),)

    id: str = Field(primary_key=True, max_length=64)
    session_id: str = Field(
        max_length=64, sa_column_args=[sa.ForeignKey("sessions.id", ondelete="CASCADE")], nullable=False
    )
    source: str = Field(max_length=16)
    created_at: float = Field(sa_type=sa.Float, nullable=False)
    machine: str = Field(max_length=64)
    message_id: str = Field(default="", max_length=64, sa_column_kwargs={"server_default": ""})
    call_id: str = Field(default="", max_length=200, sa_column_kwargs={"server_default": ""})
    tool_name: str = Field(default="", max_length=200, sa_column_kwargs={"server_default": ""})
    note: str = Field(default="", sa_type=sa.Text, sa_column_kwargs={"server_default": ""})
    skipped: str = Field(default="", sa_type=sa.Text, sa_column_kwargs={"server_default": ""})
    """JSON list of what the scans did not look at."""


class FileChangeRow(SQLModel, table=True):
    """One file of a change set; paths are the file system's bytes (``os.fsencode``)."""

    __tablename__ = "file_changes"

    change_set_id: str = Field(
        primary_key=True,
        max_length=64,
        sa_column_args=[sa.ForeignKey("change_sets.id", ondelete="CASCADE")],
    )
    position: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    path: bytes = Field(sa_type=sa.LargeBinary, nullable=False)
    kind: str = Field(max_length=16)
    renamed_from: bytes | None = Field(default=None, sa_type=sa.LargeBinary, nullable=True)
    added: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    removed: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    before_digest: str = Field(default="", max_length=64, sa_column_kwargs={"server_default": ""})
    before_size: int = Field(default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": "0"})
    before_kept: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    before_binary: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    before_not_kept: str = Field(default="", sa_type=sa.Text, sa_column_kwargs={"server_default": ""})
    before_unknown: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    after_digest: str = Field(default="", max_length=64, sa_column_kwargs={"server_default": ""})
    after_size: int = Field(default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": "0"})
    after_kept: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    after_binary: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    after_not_kept: str = Field(default="", sa_type=sa.Text, sa_column_kwargs={"server_default": ""})
    after_unknown: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})


class MemoryRow(SQLModel, table=True):
    """One saved memory (migration 0012; docs/memory.md): the user's own words for the model."""

    __tablename__ = "memories"
    __table_args__ = (sa.Index("ix_memories_scope", "scope", "target"),)

    id: str = Field(primary_key=True, max_length=64)
    text: str = Field(sa_type=sa.Text, nullable=False)
    scope: str = Field(default="global", max_length=16, sa_column_kwargs={"server_default": "global"})
    target: str = Field(default="", max_length=64, sa_column_kwargs={"server_default": ""})
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
