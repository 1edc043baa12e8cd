"""Providers, agents, settings and UI state: small keyed records, upserted whole.

Providers never carry secrets: the key lives in the OS keychain
and ``convert.safe_headers`` keeps every header value out of the row (a
header's name does not tell whether its value is a credential). Setting and UI-state
values are any JSON value.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlmodel import Session, col, select

from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.messages import utcnow
from threadline.store.convert import agent_from_row, agent_to_row, provider_from_row, provider_to_row
from threadline.store.tables import AgentRow, ProviderRow, SettingRow, UIStateRow


def get_provider(session: Session, name: str) -> ProviderConfig | None:
    row = session.get(ProviderRow, name)
    return None if row is None else provider_from_row(row)


def save_provider(session: Session, config: ProviderConfig) -> None:
    row = provider_to_row(config)
    row.updated_at = utcnow()
    session.merge(row)


def remove_provider(session: Session, name: str) -> None:
    row = session.get(ProviderRow, name)
    if row is not None:
        session.delete(row)


def list_agents(session: Session) -> list[AgentConfig]:
    rows = session.exec(select(AgentRow).order_by(col(AgentRow.name), col(AgentRow.id)))
    return [agent_from_row(row) for row in rows]


def get_agent(session: Session, agent_id: str) -> AgentConfig | None:
    row = session.get(AgentRow, agent_id)
    return None if row is None else agent_from_row(row)


def save_agent(session: Session, agent: AgentConfig) -> None:
    row = agent_to_row(agent)
    row.updated_at = utcnow()
    session.merge(row)


def remove_agent(session: Session, agent_id: str) -> None:
    row = session.get(AgentRow, agent_id)
    if row is not None:
        session.delete(row)


KeyValueRow = TypeVar("KeyValueRow", SettingRow, UIStateRow)


def set_value(session: Session, table: type[KeyValueRow], key: str, value: Any) -> None:
    """Insert or replace one key, in one statement (``INSERT … ON CONFLICT DO UPDATE``).

    Not ``merge`` (a read, then an insert or an update): two instances saving the same key
    at once — the last-used model, the window state — both read "absent", and the second
    insert fails on the primary key. The upsert lets the later write win instead.
    """
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement = pg_insert(table).values(key=key, value=value)
        session.execute(
            statement.on_conflict_do_update(index_elements=["key"], set_={"value": statement.excluded.value})
        )
    else:  # SQLite: the PostgreSQL dialect is not loaded (it costs every `ask` start)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        lite = sqlite_insert(table).values(key=key, value=value)
        session.execute(
            lite.on_conflict_do_update(index_elements=["key"], set_={"value": lite.excluded.value})
        )
