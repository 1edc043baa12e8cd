"""Saving and removing providers and agents: small keyed records, written whole.

Providers never carry secrets: the key lives in the OS keychain
and ``convert.header_sources`` keeps every header value out of the row (a
header's name does not tell whether its value is a credential). Reading them is in
``core_reads`` and settings and UI state in ``key_values``, without the ORM.
"""

from __future__ import annotations

from sqlmodel import Session

from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.messages import utcnow
from threadline.store.convert import agent_to_row, provider_to_row
from threadline.store.tables import AgentRow, ProviderRow


def save_provider(session: Session, config: ProviderConfig) -> None:
    row = provider_to_row(config)
    row.updated_at = utcnow()
    session.merge(row)


def remove_provider(session: Session, name: str) -> None:
    row = session.get(ProviderRow, name)
    if row is not None:
        session.delete(row)


def save_agent(session: Session, agent: AgentConfig) -> None:
    row = agent_to_row(agent)
    row.updated_at = utcnow()
    session.merge(row)


def remove_agent(session: Session, agent_id: str) -> None:
    row = session.get(AgentRow, agent_id)
    if row is not None:
        session.delete(row)
