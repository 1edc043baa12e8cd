"""Change sets and their file changes (migration 0011; docs/workspace.md), in SQLAlchemy Core.

Paths go in and out as ``os.fsencode``/``os.fsdecode`` bytes, never as text, so a name that
is not UTF-8 comes back as the same bytes (``store/encodable.py`` scrubs text, not bytes).
"""

from __future__ import annotations

import json
import os

import sqlalchemy as sa

from threadline.core.file_changes import ChangeKind, ChangeSet, ChangeSource, FileChange, FileState
from threadline.store.core_tables import change_sets, file_changes

_STATE_FIELDS = ("digest", "size", "kept", "binary", "not_kept", "unknown")


def add_change_set(connection: sa.Connection, change_set: ChangeSet) -> None:
    connection.execute(
        sa.insert(change_sets).values(
            id=change_set.id,
            session_id=change_set.session_id,
            source=change_set.source.value,
            created_at=change_set.created_at,
            machine=change_set.machine,
            message_id=change_set.message_id,
            call_id=change_set.call_id,
            tool_name=change_set.tool_name,
            note=change_set.note,
            skipped=json.dumps(list(change_set.skipped)) if change_set.skipped else "",
        )
    )
    rows = [_file_row(change_set.id, position, change) for position, change in enumerate(change_set.changes)]
    if rows:
        connection.execute(sa.insert(file_changes), rows)


def _file_row(change_set_id: str, position: int, change: FileChange) -> dict[str, object]:
    row: dict[str, object] = {
        "change_set_id": change_set_id,
        "position": position,
        "path": os.fsencode(change.path),
        "kind": change.kind.value,
        "renamed_from": os.fsencode(change.renamed_from) if change.renamed_from else None,
        "added": change.added,
        "removed": change.removed,
    }
    for side, state in (("before", change.before), ("after", change.after)):
        for name in _STATE_FIELDS:
            row[f"{side}_{name}"] = getattr(state, name)
    return row


def session_change_sets(connection: sa.Connection, session_id: str) -> list[ChangeSet]:
    """The session's change sets, oldest first, each with its file changes in order."""
    sets = connection.execute(
        sa.select(change_sets)
        .where(change_sets.c.session_id == session_id)
        .order_by(change_sets.c.created_at, change_sets.c.id)
    ).all()
    if not sets:
        return []
    changes: dict[str, list[FileChange]] = {}
    ids = [row.id for row in sets]
    for start in range(0, len(ids), 500):
        rows = connection.execute(
            sa.select(file_changes)
            .where(file_changes.c.change_set_id.in_(ids[start : start + 500]))
            .order_by(file_changes.c.change_set_id, file_changes.c.position)
        ).all()
        for row in rows:
            changes.setdefault(row.change_set_id, []).append(_file_change(row))
    return [
        ChangeSet(
            id=row.id,
            session_id=row.session_id,
            source=ChangeSource(row.source),
            created_at=float(row.created_at),
            machine=row.machine,
            changes=tuple(changes.get(row.id, ())),
            message_id=row.message_id,
            call_id=row.call_id,
            tool_name=row.tool_name,
            note=row.note,
            skipped=tuple(json.loads(row.skipped)) if row.skipped else (),
        )
        for row in sets
    ]


def _file_change(row: sa.Row[object]) -> FileChange:
    mapping = row._mapping

    def state(side: str) -> FileState:
        values = {name: mapping[f"{side}_{name}"] for name in _STATE_FIELDS}
        return FileState(
            digest=values["digest"],
            size=int(values["size"]),
            kept=bool(values["kept"]),
            binary=bool(values["binary"]),
            not_kept=values["not_kept"],
            unknown=bool(values["unknown"]),
        )

    renamed = mapping["renamed_from"]
    return FileChange(
        path=os.fsdecode(bytes(mapping["path"])),
        kind=ChangeKind(mapping["kind"]),
        before=state("before"),
        after=state("after"),
        renamed_from=os.fsdecode(bytes(renamed)) if renamed else "",
        added=int(mapping["added"]),
        removed=int(mapping["removed"]),
    )


def kept_digests(connection: sa.Connection, machine: str, newer_than: float | None = None) -> set[str]:
    """The contents ``machine``'s change sets refer to (only those made after ``newer_than``)."""
    query = (
        sa.select(file_changes.c.before_digest, file_changes.c.after_digest)
        .join(change_sets, change_sets.c.id == file_changes.c.change_set_id)
        .where(change_sets.c.machine == machine)
    )
    if newer_than is not None:
        query = query.where(change_sets.c.created_at >= newer_than)
    found: set[str] = set()
    for before, after in connection.execute(query):
        found.update(d for d in (before, after) if d)
    return found
