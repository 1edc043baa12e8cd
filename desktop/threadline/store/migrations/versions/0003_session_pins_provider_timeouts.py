"""Sessions own their provider and model; providers carry their own timeouts.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

Before this revision a session with an empty provider followed the global
default, which fell back to the alphabetically first provider: adding a provider
named ``aaa`` moved old chats onto it. A session now stores its provider and model
from creation; this upgrade pins every session that had none to what it resolved
to at the moment of the upgrade (the default provider setting, else the first
provider, and that provider's default model), so nothing about it changes later.

``connect_timeout`` and ``first_byte_timeout`` (seconds, NULL = the app's default)
let a slow local server or a far cloud endpoint get its own bounds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("providers", sa.Column("connect_timeout", sa.Float(), nullable=True))
    op.add_column("providers", sa.Column("first_byte_timeout", sa.Float(), nullable=True))
    _pin_sessions(op.get_bind())


def downgrade() -> None:
    op.drop_column("providers", "first_byte_timeout")
    op.drop_column("providers", "connect_timeout")


def _setting(connection: sa.Connection, key: str) -> Any:
    raw = connection.execute(sa.text("SELECT value FROM settings WHERE key = :k"), {"k": key}).scalar()
    if raw is None:
        return None
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None


def _pin_sessions(connection: sa.Connection) -> None:
    providers = {
        str(name): str(model or "")
        for name, model in connection.execute(
            sa.text("SELECT name, default_model FROM providers ORDER BY name")
        )
    }
    if not providers:
        return  # nothing to resolve to; such sessions pick a model on their first send
    wanted = _setting(connection, "default_provider")
    name = wanted if isinstance(wanted, str) and wanted in providers else next(iter(providers))
    default_model = _setting(connection, "default_model")
    connection.execute(sa.text("UPDATE sessions SET provider = :p WHERE provider = ''"), {"p": name})
    for provider, model in providers.items():
        if not model and provider == name and isinstance(default_model, str):
            model = default_model
        if model:
            connection.execute(
                sa.text("UPDATE sessions SET model = :m WHERE provider = :p AND model = ''"),
                {"m": model, "p": provider},
            )
