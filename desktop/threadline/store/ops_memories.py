"""Saved memories (migration 0012; docs/memory.md), in SQLAlchemy Core."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from threadline.core.memory import Memory, MemoryScope
from threadline.store.convert import as_utc
from threadline.store.core_tables import memories
from threadline.store.errors import NotFoundError


def list_memories(connection: sa.Connection) -> list[Memory]:
    """Every memory, oldest first (a person keeps tens, not thousands: read whole)."""
    rows = connection.execute(sa.select(memories).order_by(memories.c.created_at, memories.c.id))
    # A scope this version does not know (written by a newer one) is left out, not widened.
    return [_memory(row) for row in rows if row.scope in MemoryScope._value2member_map_]


def save_memory(connection: sa.Connection, memory: Memory) -> Memory:
    """Insert ``memory``, or update the one with its id (text and scope)."""
    values = {"text": memory.text, "scope": memory.scope.value, "target": memory.target}
    changed = connection.execute(
        sa.update(memories).where(memories.c.id == memory.id).values(**values, updated_at=memory.updated_at)
    )
    if not changed.rowcount:
        connection.execute(
            sa.insert(memories).values(
                id=memory.id, created_at=memory.created_at, updated_at=memory.updated_at, **values
            )
        )
    return memory


def delete_memory(connection: sa.Connection, memory_id: str) -> None:
    deleted = connection.execute(sa.delete(memories).where(memories.c.id == memory_id))
    if not deleted.rowcount:
        raise NotFoundError(f"no memory {memory_id!r}")


def _memory(row: Any) -> Memory:
    return Memory(
        id=row.id,
        text=row.text,
        scope=MemoryScope(row.scope),
        target=row.target or "",
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
    )
