"""Backups of a SQLite database: where they live, how they are made, kept and restored.

Each backup is a complete, self-contained copy (``*.sqlite3``/``*.db`` like the
original, rollback journal instead of WAL so it is one file) in a ``backups/``
folder beside the database. Names carry the local time they were taken and why:
``threadline-20260501-093000-daily.db`` (the rolling daily copy) or
``threadline-20260501-093000-rev-0002.db`` (taken before a schema upgrade).

Copies are made with SQLite's online backup API, so a database in use (even
mid-write by another process) is copied consistently, WAL content included.

This module imports only the standard library: the app uses it on its start-up
error path, where SQLAlchemy may be what failed to load.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path

log = logging.getLogger("threadline.store")

BACKUPS_FOLDER = "backups"
DAILY_LABEL = "daily"
STAMP_FORMAT = "%Y%m%d-%H%M%S"
_STAMP = re.compile(r"-(\d{8}-\d{6})-")
_PARTIAL = ".partial"


def backups_dir(db_path: Path) -> Path:
    """The folder holding the backups of ``db_path`` (it may not exist yet)."""
    return Path(db_path).parent / BACKUPS_FOLDER


def backup_time(backup: Path) -> datetime | None:
    """When a backup was taken (local time, from its name), or ``None`` for a foreign name."""
    found = _STAMP.search(backup.name)
    if found is None:
        return None
    try:
        return datetime.strptime(found.group(1), STAMP_FORMAT)
    except ValueError:
        return None


def _pattern(db_path: Path) -> re.Pattern[str]:
    stem, suffix = re.escape(db_path.stem), re.escape(db_path.suffix)
    return re.compile(rf"{stem}-\d{{8}}-\d{{6}}-(?P<label>[A-Za-z0-9._-]+?){suffix}")


def list_backups(db_path: Path, directory: Path | None = None) -> list[Path]:
    """The backups of ``db_path`` (in ``directory``, default ``backups_dir``), newest first.

    Newest means most recently written (then by name): each file is written once.
    """
    folder = directory or backups_dir(db_path)
    if not folder.is_dir():
        return []
    pattern = _pattern(Path(db_path))
    found = [p for p in folder.iterdir() if pattern.fullmatch(p.name) and p.is_file()]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True)


def newest_backup(db_path: Path, directory: Path | None = None) -> Path | None:
    """The most recent backup of ``db_path``, or ``None`` when there is none."""
    backups = list_backups(db_path, directory)
    return backups[0] if backups else None


def _label_of(backup: Path, db_path: Path) -> str:
    found = _pattern(db_path).fullmatch(backup.name)
    return found.group("label") if found else ""


def daily_backups(db_path: Path, directory: Path | None = None) -> list[Path]:
    """The rolling daily backups of ``db_path``, newest first (upgrade backups excluded)."""
    return [
        p for p in list_backups(db_path, directory) if re.fullmatch(r"daily(-\d+)?", _label_of(p, db_path))
    ]


def daily_backup(
    db_path: Path, keep_days: int = 7, *, directory: Path | None = None, now: datetime | None = None
) -> Path | None:
    """Take today's backup of ``db_path`` unless one exists; returns it, or ``None`` if skipped.

    At most one per calendar day (local time). Daily backups older than
    ``keep_days`` days are deleted, and never more than ``keep_days`` are kept, so
    the folder stays bounded in both age and size.
    """
    db_path = Path(db_path)
    if not db_path.is_file():
        return None
    moment = now or datetime.now()
    folder = directory or backups_dir(db_path)
    existing = daily_backups(db_path, folder)
    made = None
    if not any(_taken_on(p) == moment.date() for p in existing):
        made = make_backup(db_path, DAILY_LABEL, directory=folder, now=moment)
    _prune_daily(db_path, folder, keep_days, moment.date())
    return made


def _taken_on(backup: Path) -> date | None:
    taken = backup_time(backup)
    return taken.date() if taken else None


def _prune_daily(db_path: Path, folder: Path, keep_days: int, today: date) -> None:
    oldest_kept = today - timedelta(days=max(keep_days, 1) - 1)
    kept = 0
    for backup in daily_backups(db_path, folder):
        taken = _taken_on(backup)
        if taken is not None and taken >= oldest_kept and kept < keep_days:
            kept += 1
            continue
        backup.unlink(missing_ok=True)
        log.info("removed old backup %s", backup)


def make_backup(
    db_path: Path, label: str, *, directory: Path | None = None, now: datetime | None = None
) -> Path:
    """A consistent copy of ``db_path`` named ``<stem>-<time>-<label><suffix>``; returns its path.

    Written under a temporary name and renamed when complete, so a crash or a full
    disk mid-copy never leaves something that looks like a usable backup.
    """
    db_path = Path(db_path)
    folder = directory or backups_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now()).strftime(STAMP_FORMAT)
    suffix = db_path.suffix
    target = folder / f"{db_path.stem}-{stamp}-{label}{suffix}"
    counter = 1
    while target.exists():
        counter += 1
        target = folder / f"{db_path.stem}-{stamp}-{label}-{counter}{suffix}"
    partial = target.with_name(target.name + _PARTIAL)
    try:
        _copy_database(db_path, partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    log.info("backed up %s to %s", db_path, target)
    return target


def _copy_database(source_path: Path, target: Path) -> None:
    source = sqlite3.connect(source_path)
    try:
        destination = sqlite3.connect(target)
        try:
            source.backup(destination)
            # One self-contained file: no -wal/-shm beside the copy.
            destination.execute("PRAGMA journal_mode=DELETE")
        finally:
            destination.close()
    finally:
        source.close()


class BackupUnusableError(RuntimeError):
    """The chosen backup is not a healthy SQLite database; nothing was changed."""


def restore_backup(backup: Path, db_path: Path) -> Path | None:
    """Put ``backup`` in place of ``db_path``; returns where the replaced file was moved.

    The current file (damaged, typically) and its ``-wal``/``-shm`` companions are
    moved aside to ``<name>.damaged-<time>`` beside it, never deleted: it may hold
    the latest conversations and can sometimes be repaired. Returns ``None`` when
    there was no file to move. The store must be closed. Raises
    ``BackupUnusableError`` (changing nothing) when the backup itself is damaged.
    """
    backup, db_path = Path(backup), Path(db_path)
    problems = quick_check(backup)
    if problems:
        raise BackupUnusableError(f"the backup {backup} is not usable: {problems[0]}")
    aside: Path | None = None
    if db_path.exists():
        aside = db_path.with_name(f"{db_path.name}.damaged-{datetime.now():{STAMP_FORMAT}}")
        counter = 1
        while aside.exists():
            counter += 1
            aside = db_path.with_name(f"{db_path.name}.damaged-{datetime.now():{STAMP_FORMAT}}-{counter}")
        for companion in ("", "-wal", "-shm"):
            current = Path(f"{db_path}{companion}")
            if current.exists():
                os.replace(current, Path(f"{aside}{companion}"))
    else:
        for companion in ("-wal", "-shm"):  # stale companions must not be replayed onto the copy
            Path(f"{db_path}{companion}").unlink(missing_ok=True)
    incoming = db_path.with_name(db_path.name + ".restoring")
    shutil.copyfile(backup, incoming)
    os.replace(incoming, db_path)
    log.info("restored %s from %s (the previous file is %s)", db_path, backup, aside)
    return aside


def quick_check(path: Path) -> list[str]:
    """SQLite's ``quick_check`` of a file opened read-only: ``[]`` when healthy, else the problems."""
    try:
        connection = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        return [str(error)]
    try:
        rows = [str(r[0]) for r in connection.execute("PRAGMA quick_check")]
    except sqlite3.Error as error:
        return [str(error)]
    finally:
        connection.close()
    return [] if rows == ["ok"] else rows
