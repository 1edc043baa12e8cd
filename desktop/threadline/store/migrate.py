"""Bringing a database to the code's schema: check, back up, upgrade, or refuse.

Importing Alembic is slow (docs/performance.md), so the common case — the stored
revision already is the head — is decided with one plain query and Alembic is
never imported. Only an older (or empty) database loads it, and a SQLite file
that holds data is copied to ``backups/`` first, so a failed upgrade loses
nothing. A revision this code does not know means a newer app wrote the file:
it is refused untouched.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from threadline.store import backups, db
from threadline.store.errors import SchemaTooNewError

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("threadline.store")

HEAD_REVISION = "0013"
KNOWN_REVISIONS = frozenset(
    {"0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011", "0012", "0013"}
)
"""Every revision in ``migrations/versions`` (a test checks these against Alembic)."""

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version"


def stored_revisions(connection: sa.Connection) -> tuple[list[str], bool]:
    """The revisions stamped in the database, and whether it holds any table at all."""
    inspector = sa.inspect(connection)
    tables = set(inspector.get_table_names())
    if VERSION_TABLE not in tables:
        return [], bool(tables)
    rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}"))
    return [str(r[0]) for r in rows], True


def ensure_schema(engine: Engine, *, sqlite_file: Path | None, backup_dir: Path | None) -> Path | None:
    """Make the schema current; returns the backup written before an upgrade, if any."""
    with engine.connect() as connection:
        revisions, has_tables = stored_revisions(connection)
    if revisions == [HEAD_REVISION]:
        return None
    unknown = [r for r in revisions if r not in KNOWN_REVISIONS]
    if unknown:
        raise SchemaTooNewError(unknown[0], location=str(sqlite_file or engine.url.render_as_string()))
    backup = None
    if has_tables and sqlite_file is not None:
        backup = backup_sqlite(sqlite_file, backup_dir or backups.backups_dir(sqlite_file), revisions)
    elif has_tables:
        log.warning("upgrading %s without a backup: back up server databases yourself", engine.url)
    if not has_tables and engine.dialect.name == "sqlite":
        from threadline.store import fresh_sqlite

        with db.writing(engine) as connection:
            if fresh_sqlite.create_schema(connection, HEAD_REVISION):
                return None
    run_alembic_upgrade(engine)
    return backup


KEPT_BACKUPS = 5
"""Backups of one database kept in ``backups/``: each is a full copy, made once per schema upgrade."""


def backup_sqlite(path: Path, directory: Path, revisions: list[str]) -> Path:
    """A consistent copy of a SQLite file (WAL content included), named by time and revision."""
    revision = "-".join(revisions) or "base"
    try:
        target = backups.make_backup(path, f"rev-{revision}", directory=directory)
    except backups.BackupDamagedError as error:
        # The file is damaged: upgrading it would write into damaged pages. Refused, with the
        # newest healthy backup named (the damage is recorded by make_backup).
        from threadline.store.translate import corrupt_error

        raise corrupt_error(str(error), path, directory) from error
    prune_backups(directory, path.stem)
    return target


def alembic_config(connection: sa.Connection | None = None) -> Config:
    """An Alembic ``Config`` for the packaged migrations (no ``alembic.ini`` needed)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def run_alembic_upgrade(engine: Engine, target: str = "head") -> None:
    from alembic import command

    with db.writing(engine) as connection:
        command.upgrade(alembic_config(connection), target)


def prune_backups(directory: Path, stem: str, keep: int = KEPT_BACKUPS) -> None:
    """Delete all but the newest ``keep`` backups of the database named ``stem``.

    Oldest first by modification time (each file is written once), then by name.
    """
    found = sorted(
        (p for p in directory.glob(f"{stem}-[0-9]*-rev-*") if not p.name.endswith(backups.DAMAGED_SUFFIX)),
        key=lambda p: (p.stat().st_mtime_ns, p.name),
    )
    for old in found[: max(0, len(found) - keep)]:
        old.unlink(missing_ok=True)
        log.info("removed old backup %s", old)
