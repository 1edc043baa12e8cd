"""The tables as SQLAlchemy Core clauses (no ORM), for the operations that run most.

``tables.py`` declares the tables as SQLModel classes, which needs SQLAlchemy's ORM,
SQLModel and pydantic: megabytes of memory and a noticeable import time (figures:
docs/performance.md). What a window reads
while it starts (settings, the sidebar's first page, projects, providers), what the
change feed reads, and what a turn writes (a chat, its messages, its lease) needs none
of it, so those operations use these lightweight ``sa.table`` clauses, and the ORM is
imported by the first operation still written with it (saving or removing projects,
agents and providers, moving a chat to a project, import and deleting a subtree).

These clauses only name columns and their types for reading; the schema itself is
the migrations', and a test checks every column here against ``tables.py``.
"""

from __future__ import annotations

import sqlalchemy as sa

from threadline.store.coltypes import JSONValue, UTCDateTime

sessions = sa.table(
    "sessions",
    sa.column("id", sa.String),
    sa.column("title", sa.String),
    sa.column("title_set_by_user", sa.Boolean),
    sa.column("pinned", sa.Boolean),
    sa.column("archived", sa.Boolean),
    sa.column("folder", sa.String),
    sa.column("agent_id", sa.String),
    sa.column("provider", sa.String),
    sa.column("model", sa.String),
    sa.column("active_leaf", sa.String),
    sa.column("preview", sa.String),
    sa.column("checkpoints", JSONValue),
    sa.column("created_at", UTCDateTime),
    sa.column("updated_at", UTCDateTime),
    sa.column("summary", sa.String),
    sa.column("context", JSONValue),
    sa.column("project_id", sa.String),
)

projects = sa.table(
    "projects",
    sa.column("id", sa.String),
    sa.column("name", sa.String),
    sa.column("colour", sa.String),
    sa.column("instructions", sa.String),
    sa.column("context", JSONValue),
    sa.column("created_at", UTCDateTime),
    sa.column("updated_at", UTCDateTime),
)

messages = sa.table(
    "messages",
    sa.column("seq", sa.Integer),
    sa.column("id", sa.String),
    sa.column("session_id", sa.String),
    sa.column("parent_id", sa.String),
    sa.column("ordinal", sa.Integer),
    sa.column("role", sa.String),
    sa.column("kind", sa.String),
    sa.column("text", sa.String),
    sa.column("content", JSONValue),
    sa.column("status", sa.String),
    sa.column("metadata", JSONValue),
    sa.column("created_at", UTCDateTime),
    sa.column("writer", sa.String),
    sa.column("heartbeat_at", UTCDateTime),
)

change_log = sa.table(
    "change_log",
    sa.column("seq", sa.Integer),
    sa.column("at", UTCDateTime),
    sa.column("kind", sa.String),
    sa.column("session_id", sa.String),
    sa.column("message_id", sa.String),
)

providers = sa.table(
    "providers",
    sa.column("name", sa.String),
    sa.column("kind", sa.String),
    sa.column("base_url", sa.String),
    sa.column("api_key_env", sa.String),
    sa.column("default_model", sa.String),
    sa.column("headers", JSONValue),
    sa.column("connect_timeout", sa.Float),
    sa.column("first_byte_timeout", sa.Float),
    sa.column("updated_at", UTCDateTime),
)

agents = sa.table(
    "agents",
    sa.column("id", sa.String),
    sa.column("name", sa.String),
    sa.column("system_prompt", sa.String),
    sa.column("provider", sa.String),
    sa.column("model", sa.String),
    sa.column("temperature", sa.Float),
    sa.column("max_tokens", sa.Integer),
    sa.column("enabled_tools", JSONValue),
    sa.column("approval_rules", JSONValue),
    sa.column("allowed_folders", JSONValue),
    sa.column("default_approval", sa.String),
    sa.column("top_p", sa.Float),
    sa.column("context", JSONValue),
    sa.column("context_share", sa.Float),
    sa.column("updated_at", UTCDateTime),
)

session_leases = sa.table(
    "session_leases",
    sa.column("session_id", sa.String),
    sa.column("holder", sa.String),
    sa.column("host", sa.String),
    sa.column("acquired_at", UTCDateTime),
    sa.column("heartbeat_at", UTCDateTime),
    sa.column("stop_requested", sa.Boolean),
)

settings = sa.table("settings", sa.column("key", sa.String), sa.column("value", JSONValue))

ui_state = sa.table("ui_state", sa.column("key", sa.String), sa.column("value", JSONValue))

change_sets = sa.table(
    "change_sets",
    sa.column("id", sa.String),
    sa.column("session_id", sa.String),
    sa.column("source", sa.String),
    sa.column("created_at", sa.Float),
    sa.column("machine", sa.String),
    sa.column("message_id", sa.String),
    sa.column("call_id", sa.String),
    sa.column("tool_name", sa.String),
    sa.column("note", sa.Text),
    sa.column("skipped", sa.Text),
)

file_changes = sa.table(
    "file_changes",
    sa.column("change_set_id", sa.String),
    sa.column("position", sa.Integer),
    sa.column("path", sa.LargeBinary),
    sa.column("kind", sa.String),
    sa.column("renamed_from", sa.LargeBinary),
    sa.column("added", sa.Integer),
    sa.column("removed", sa.Integer),
    *(
        sa.column(f"{side}_{name}", kind)
        for side in ("before", "after")
        for name, kind in (
            ("digest", sa.String),
            ("size", sa.BigInteger),
            ("kept", sa.Boolean),
            ("binary", sa.Boolean),
            ("not_kept", sa.Text),
            ("unknown", sa.Boolean),
        )
    ),
)

memories = sa.table(
    "memories",
    sa.column("id", sa.String),
    sa.column("text", sa.Text),
    sa.column("scope", sa.String),
    sa.column("target", sa.String),
    sa.column("created_at", UTCDateTime),
    sa.column("updated_at", UTCDateTime),
)

ALL = (
    sessions,
    projects,
    messages,
    change_log,
    providers,
    agents,
    session_leases,
    settings,
    ui_state,
    change_sets,
    file_changes,
    memories,
)


def message_columns() -> tuple[sa.ColumnElement[object], ...]:
    """Every column of ``messages``, with ``metadata`` read as ``meta`` (``convert.MessageRecord``)."""
    return tuple(column.label("meta") if column.name == "metadata" else column for column in messages.c)
