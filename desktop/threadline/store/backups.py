"""Backups of a SQLite database: where they live, how they are made, kept and restored.

Each backup is a complete, self-contained copy (``*.sqlite3``/``*.db`` like the
original, rollback journal instead of WAL so it is one file) in a ``backups/``
folder beside the database. Names carry the local time they were taken and why:
``threadline-20260501-093000-daily.db`` (the rolling daily copy) or
``threadline-20260501-093000-rev-0002.db`` (taken before a schema upgrade).

Copies are made with SQLite's online backup API, so a database in use (even
mid-write by another process) is copied consistently, WAL content included. The
backup API copies pages as they are, damaged ones too, so every new copy is
checked with ``PRAGMA quick_check`` before it counts as a backup: one that fails
is set aside as ``<name>.damaged`` (never listed, offered or counted in
rotation) and the damage of the database is recorded (``store.damage``). Rotation
keeps the window of days anchored at the newest *healthy* daily copy, so damaged
days never push a healthy copy out (docs/storage.md, "Backups").

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

from threadline.files.private import create_private_file, private_folder
from threadline.store import damage

log = logging.getLogger("threadline.store")

BACKUPS_FOLDER = "backups"
DAILY_LABEL = "daily"
STAMP_FORMAT = "%Y%m%d-%H%M%S"
_STAMP = re.compile(r"-(\d{8}-\d{6})-")
_PARTIAL = ".partial"
DAMAGED_SUFFIX = ".damaged"
"""Appended to a backup that failed its check: it no longer looks like a backup to anything here."""
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26


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
    """The most recent backup of ``db_path``, or ``None`` when there is none (unchecked: see
    ``newest_healthy_backup`` for the one to offer)."""
    backups = list_backups(db_path, directory)
    return backups[0] if backups else None


_known_healthy: set[tuple[str, int, int]] = set()
"""Backups that passed ``quick_check`` (path, mtime, size): a backup is written once, so one
check is enough for the life of the process."""


def is_healthy(backup: Path) -> bool:
    """Whether ``backup`` passes ``quick_check`` (remembered once it has)."""
    try:
        status = backup.stat()
    except OSError:
        return False
    key = (str(backup), status.st_mtime_ns, status.st_size)
    if key in _known_healthy:
        return True
    if quick_check(backup):
        return False
    _known_healthy.add(key)
    return True


def _remember_healthy(backup: Path) -> None:
    status = backup.stat()
    _known_healthy.add((str(backup), status.st_mtime_ns, status.st_size))


def healthy_backups(db_path: Path, directory: Path | None = None) -> list[Path]:
    """The backups of ``db_path`` that pass ``quick_check``, newest first.

    A backup that fails is set aside (``set_aside``) on the way, so it is never offered again.
    """
    healthy = []
    for backup in list_backups(db_path, directory):
        if is_healthy(backup):
            healthy.append(backup)
        elif backup.exists():
            set_aside(backup, quick_check(backup))
    return healthy


def newest_healthy_backup(db_path: Path, directory: Path | None = None) -> Path | None:
    """The most recent backup of ``db_path`` that passes ``quick_check`` (the one to restore).

    Older backups are checked only while the newer ones fail; failures are set aside.
    """
    for backup in list_backups(db_path, directory):
        if is_healthy(backup):
            return backup
        if backup.exists():
            set_aside(backup, quick_check(backup))
    return None


def set_aside_backups(db_path: Path, directory: Path | None = None) -> list[Path]:
    """Backups of ``db_path`` that failed their check and were set aside, newest first."""
    folder = directory or backups_dir(db_path)
    if not folder.is_dir():
        return []
    pattern = re.compile(_pattern(Path(db_path)).pattern + re.escape(DAMAGED_SUFFIX))
    found = [p for p in folder.iterdir() if pattern.fullmatch(p.name) and p.is_file()]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True)


def set_aside(backup: Path, problems: list[str]) -> Path:
    """Rename a backup that failed its check to ``<name>.damaged``; returns the new path."""
    target = backup.with_name(backup.name + DAMAGED_SUFFIX)
    os.replace(backup, target)
    first = problems[0] if problems else "it could not be checked"
    log.info("the backup %s is damaged (%s); set aside as %s", backup, first, target.name)
    return target


class BackupDamagedError(RuntimeError):
    """The copy just made failed ``quick_check``: the database it came from is damaged.

    The copy was set aside (``aside``) and the damage recorded; nothing counts it as a backup.
    """

    def __init__(self, aside: Path, problems: list[str]) -> None:
        super().__init__(f"the new backup failed its check and was set aside as {aside}: {problems[0]}")
        self.aside = aside
        self.problems = problems


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

    At most one per calendar day (local time). Daily backups more than
    ``keep_days`` days older than the newest healthy one are deleted, and never more
    than ``keep_days`` are kept, so the folder stays bounded in both age and size;
    the newest healthy one is never deleted. No copy is made of a database whose
    damage is recorded (a copy of it would be damaged too). Raises
    ``BackupDamagedError`` (after rotation) when the new copy fails its check.
    """
    db_path = Path(db_path)
    if not db_path.is_file():
        return None
    moment = now or datetime.now()
    folder = directory or backups_dir(db_path)
    _prune_set_aside(db_path, folder, keep_days, moment.date())
    if damage.seen_damage(db_path) is not None:
        log.info("no daily backup of %s: it was found damaged", db_path)
        return None
    existing = daily_backups(db_path, folder)
    made = None
    try:
        if not any(_taken_on(p) == moment.date() for p in existing):
            made = make_backup(db_path, DAILY_LABEL, directory=folder, now=moment)
    finally:
        _prune_daily(db_path, folder, keep_days)
    return made


def _taken_on(backup: Path) -> date | None:
    taken = backup_time(backup)
    return taken.date() if taken else None


def _beyond_window(daily: list[Path], keep_days: int) -> list[Path]:
    """The daily backups (newest first) outside the window that ends at the newest one."""
    newest = _taken_on(daily[0]) if daily else None
    if newest is None:
        return daily[1:]
    oldest_kept = newest - timedelta(days=max(keep_days, 1) - 1)
    doomed, kept = [], 0
    for backup in daily:
        taken = _taken_on(backup)
        if taken is not None and taken >= oldest_kept and kept < keep_days:
            kept += 1
        else:
            doomed.append(backup)
    return doomed


def _prune_daily(db_path: Path, folder: Path, keep_days: int) -> None:
    """Delete the daily backups outside the window anchored at the newest healthy one.

    The anchor is checked before anything is deleted (a copy made by this process was
    checked already); an anchor that fails is set aside and the next one anchors.
    """
    while True:
        daily = daily_backups(db_path, folder)
        doomed = _beyond_window(daily, keep_days)
        if not doomed:
            return
        if not is_healthy(daily[0]):
            if daily[0].exists():
                set_aside(daily[0], quick_check(daily[0]))
            continue
        for backup in doomed:
            backup.unlink(missing_ok=True)
            log.info("removed old backup %s", backup)
        return


def _prune_set_aside(db_path: Path, folder: Path, keep_days: int, today: date) -> None:
    """Set-aside (damaged) copies are kept for ``keep_days`` days, at most ``keep_days`` of them."""
    oldest_kept = today - timedelta(days=max(keep_days, 1) - 1)
    for index, aside in enumerate(set_aside_backups(db_path, folder)):
        taken = _taken_on(aside)
        if index < keep_days and taken is not None and taken >= oldest_kept:
            continue
        aside.unlink(missing_ok=True)
        log.info("removed old damaged copy %s", aside)


def make_backup(
    db_path: Path, label: str, *, directory: Path | None = None, now: datetime | None = None
) -> Path:
    """A consistent copy of ``db_path`` named ``<stem>-<time>-<label><suffix>``; returns its path.

    Written under a temporary name and renamed when complete, so a crash or a full
    disk mid-copy never leaves something that looks like a usable backup. The copy is
    then checked: one that fails is set aside, the damage of ``db_path`` is recorded
    and ``BackupDamagedError`` is raised.
    """
    db_path = Path(db_path)
    folder = private_folder(directory or backups_dir(db_path))
    stamp = (now or datetime.now()).strftime(STAMP_FORMAT)
    suffix = db_path.suffix
    target = folder / f"{db_path.stem}-{stamp}-{label}{suffix}"
    counter = 1
    while target.exists():
        counter += 1
        target = folder / f"{db_path.stem}-{stamp}-{label}-{counter}{suffix}"
    partial = target.with_name(target.name + _PARTIAL)
    try:
        create_private_file(partial)
        _copy_database(db_path, partial)
        os.replace(partial, target)
    except sqlite3.DatabaseError as error:
        partial.unlink(missing_ok=True)
        if (getattr(error, "sqlite_errorcode", 0) & 0xFF) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            damage.record_damage(db_path, damage.SEEN_BY_BACKUP, str(error))
        raise
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    problems = quick_check(target)
    if problems:
        aside = set_aside(target, problems)
        damage.record_damage(db_path, damage.SEEN_BY_BACKUP, problems[0])
        raise BackupDamagedError(aside, problems)
    _remember_healthy(target)  # rotation anchors on it without checking it again
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
    create_private_file(incoming)
    shutil.copyfile(backup, incoming)
    os.replace(incoming, db_path)
    damage.clear_damage(db_path)
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
