"""Remembering that a SQLite database was found damaged, for every process that opens it later.

Damage is seen in different places: the self-test's integrity check, the check of a
fresh backup (a copy of a damaged file is damaged too), a read that meets a damaged
page. Once seen, it is written to a small marker file beside the database
(``threadline.db.damage-seen``, JSON) so that the next command, in another process,
refuses to write into the damaged file until it is restored (``restore_backup``
removes the marker) or the user explicitly continues (``--ignore-damage``).

The marker names the file it is about by device and inode: a database that was moved
away and replaced (a restore, or a new empty database) is a different file, and the
stale marker is ignored and removed. See docs/storage.md, "Damage".

Standard library only: the start-up error path and ``--self-test`` use it.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from threadline.files.private import open_private

log = logging.getLogger("threadline.store")

MARKER_SUFFIX = ".damage-seen"

SEEN_BY_SELF_TEST = "the self-test"
SEEN_BY_BACKUP = "the check of a new backup"
SEEN_BY_READ = "a read of the database"


@dataclass(frozen=True, slots=True)
class DamageRecord:
    """When and how damage in a database was seen, and the first problem found."""

    seen_at: datetime
    seen_by: str
    problem: str

    def describe(self) -> str:
        """E.g. "found by the self-test on 2026-05-01 09:30"."""
        return f"found by {self.seen_by} on {self.seen_at:%Y-%m-%d %H:%M}"


def marker_path(db_path: Path) -> Path:
    """Where the damage of ``db_path`` is recorded (the file may not exist)."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + MARKER_SUFFIX)


def _identity(db_path: Path) -> list[int] | None:
    try:
        status = os.stat(db_path)
    except OSError:
        return None
    return [status.st_dev, status.st_ino]


def record_damage(db_path: Path, seen_by: str, problem: str) -> None:
    """Remember that ``db_path`` is damaged (kept if already recorded; never raises)."""
    db_path = Path(db_path)
    if seen_damage(db_path) is not None:
        return
    identity = _identity(db_path)
    if identity is None:
        return
    record = {
        "seen_at": datetime.now().isoformat(timespec="seconds"),
        "seen_by": seen_by,
        "problem": problem[:500],
        "file": identity,
    }
    marker = marker_path(db_path)
    partial = marker.with_name(marker.name + ".partial")
    try:
        with open_private(partial, "w", encoding="utf-8") as out:  # owner only, like the database
            out.write(json.dumps(record))
        os.replace(partial, marker)
    except OSError as error:
        partial.unlink(missing_ok=True)
        log.warning("could not record the damage of %s: %s", db_path, error)
        return
    log.info("recorded damage in %s, %s: %s", db_path, seen_by, problem)


def seen_damage(db_path: Path) -> DamageRecord | None:
    """The recorded damage of ``db_path``, or ``None`` (none recorded, or about another file)."""
    db_path = Path(db_path)
    marker = marker_path(db_path)
    if not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        seen_at = datetime.fromisoformat(str(data["seen_at"]))
        identity = [int(v) for v in data["file"]]
        record = DamageRecord(seen_at, str(data["seen_by"]), str(data["problem"]))
    except (OSError, ValueError, KeyError, TypeError):
        # A marker that cannot be read still says damage was seen: keep refusing.
        return DamageRecord(datetime.fromtimestamp(_mtime(marker)), "an earlier check", "(unreadable record)")
    if identity != _identity(db_path):  # the file was replaced since: the record is stale
        clear_damage(db_path)
        return None
    return record


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def clear_damage(db_path: Path) -> None:
    """Forget the recorded damage of ``db_path`` (after a restore, or a check that passed)."""
    marker = marker_path(db_path)
    if not marker.is_file():
        return
    try:
        marker.unlink()
    except FileNotFoundError:
        return
    except OSError as error:
        log.warning("could not remove %s: %s", marker, error)
        return
    log.info("cleared the damage record of %s", db_path)
