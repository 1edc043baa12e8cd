"""``threadline db copy``: move everything to a server database, or back to a file;
``threadline db restore``: put a backup in place of a damaged SQLite file.

``--to URL`` copies the database Threadline uses (the data folder's file, or
``--database-url``) into the empty database at URL; ``--from URL`` copies the one
at URL into the database Threadline uses, which must be empty. Afterwards both
sides are counted and checksummed table by table (``store.copy``); the command
prints the figures and exits 1 unless they are identical.

A password may be given in the URL or, to keep it out of the shell's history and
the process list, in the ``THREADLINE_DB_PASSWORD`` environment variable. It is
never printed.

``restore [BACKUP]`` puts the newest healthy backup (or the one named) in place of the
data folder's file, moving the current file aside as the start-up dialog does
(``store.backups.restore_backup``); ``restore --list`` lists the backups, whether each
passes its check, and the recorded damage. The damage advice of every command points
here (``refusal``), and writing commands refuse while damage is recorded unless given
``--ignore-damage`` (docs/storage.md, "Damage").

The module imports nothing heavy at the top: building the parser runs at every start.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any, TextIO

PASSWORD_VARIABLE = "THREADLINE_DB_PASSWORD"


def add_db_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """``threadline db copy (--to URL | --from URL)``, ``threadline db restore [BACKUP] [--list]``."""
    parser = commands.add_parser(
        "db", parents=[common], help="copy the database to or from a server, or restore a backup"
    )
    actions = parser.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    copy = actions.add_parser(
        "copy",
        parents=[common],
        help="copy every chat, agent, provider, project and setting, then verify the copy",
        description=(
            "Copy the whole database into an empty one and verify counts and checksums. "
            f"A password can come from ${PASSWORD_VARIABLE} instead of the URL."
        ),
    )
    direction = copy.add_mutually_exclusive_group(required=True)
    direction.add_argument(
        "--to",
        metavar="URL",
        help="copy into this empty database (a file path or a postgresql+psycopg:// URL)",
    )
    direction.add_argument(
        "--from", dest="source", metavar="URL", help="copy from this database into the one in use"
    )
    restore = actions.add_parser(
        "restore",
        parents=[common],
        help="put a backup in place of the database file (the current file is kept beside it)",
        description=(
            "Replace the data folder's database with a backup: the newest one that passes its "
            "check, or BACKUP. The current file is moved aside, never deleted. Close Threadline's "
            "windows first."
        ),
    )
    restore.add_argument("backup", nargs="?", metavar="BACKUP", help="a backup's file name or path")
    restore.add_argument(
        "--list", action="store_true", help="list the backups and their checks; change nothing"
    )


def database_url(value: str) -> str:
    """A URL from what was typed: a file path becomes a SQLite URL; the password may come from
    the environment."""
    import sqlalchemy as sa

    from threadline.store.repository import Store

    if "://" not in value:
        return Store.sqlite_url(Path(value).expanduser().resolve())
    url = sa.make_url(value)
    password = os.environ.get(PASSWORD_VARIABLE)
    if password and url.password is None and url.get_backend_name() != "sqlite":
        url = url.set(password=password)
    if url.get_backend_name() == "postgresql" and url.get_driver_name() in ("", "psycopg2"):
        url = url.set(drivername="postgresql+psycopg")  # the driver Threadline ships
    return url.render_as_string(hide_password=False)


def run(args: argparse.Namespace, current_url: str, out: TextIO | None = None) -> int:
    """``db copy`` or ``db restore``, as asked."""
    if args.db_command == "restore":
        return restore(args, current_url, out or sys.stdout)
    return copy(args, current_url, out)


def copy(args: argparse.Namespace, current_url: str, out: TextIO | None = None) -> int:
    """Copy as asked and print the figures; 0 only when the copy reads back identical."""
    out = out or sys.stdout
    from threadline.store.copy import CopyError, copy_database, safe_url
    from threadline.store.errors import StoreError

    if args.to is not None:
        source, target = current_url, database_url(args.to)
    else:
        source, target = database_url(args.source), current_url
    print(f"Copying {safe_url(source)} → {safe_url(target)}", file=out)

    def progress(table: str, rows: int) -> None:
        print(f"\r  {table}: {rows:,} rows", end="", file=out, flush=True)

    try:
        report = asyncio.run(asyncio.to_thread(copy_database, source, target, progress))
    except (CopyError, StoreError) as err:
        print(file=out)
        print(f"threadline: {err.user_message}", file=sys.stderr)
        return 1
    print("\r", end="", file=out)
    width = max(len(f.table) for f in report.source)
    for mine, theirs in zip(report.source, report.target, strict=True):
        mark = "ok" if mine == theirs else "DIFFERENT"
        print(f"  {mine.table:<{width}}  {mine.rows:>9,} rows  {mark}", file=out)
    if not report.identical:
        for line in report.differences():
            print(f"threadline: {line}", file=sys.stderr)
        return 1
    total = sum(f.rows for f in report.source)
    print(f"Copied {total:,} rows in {report.seconds:.1f} s; counts and checksums match.", file=out)
    return 0


# -- restore ---------------------------------------------------------------------------------------


def refusal(database: Path) -> str | None:
    """Why a writing command must not run on ``database`` (its damage is recorded), or ``None``."""
    from threadline.engine.damage_advice import restore_advice
    from threadline.store.damage import seen_damage

    record = seen_damage(database)
    if record is None:
        return None
    return (
        f"The conversation database ({database}) is damaged ({record.describe()}); nothing was "
        f"written. {restore_advice(database)} To write into the damaged file anyway, add "
        "--ignore-damage."
    )


def restore(args: argparse.Namespace, current_url: str, out: TextIO) -> int:
    """``db restore [BACKUP] [--list]`` on the SQLite file behind ``current_url``."""
    from threadline.engine.damage_advice import RESTORE_COMMAND
    from threadline.engine.damage_advice import backup_taken as _when
    from threadline.store.db import sqlite_path

    database = sqlite_path(current_url)
    if database is None:
        print(
            "threadline: db restore works on the SQLite file in the data folder; a database "
            "server keeps its own backups.",
            file=sys.stderr,
        )
        return 1
    if args.list:
        return _list_backups(database, out)
    from threadline.store.backups import (
        BackupUnusableError,
        backups_dir,
        newest_healthy_backup,
        restore_backup,
    )

    if args.backup:
        backup = Path(args.backup).expanduser()
        if not backup.is_file() and (backups_dir(database) / args.backup).is_file():
            backup = backups_dir(database) / args.backup
        if not backup.is_file():
            print(f"threadline: no backup {args.backup!r} (see `{RESTORE_COMMAND} --list`)", file=sys.stderr)
            return 1
    else:
        found = newest_healthy_backup(database)
        if found is None:
            print(
                f"threadline: no healthy backup of {database} was found in {backups_dir(database)}; "
                "nothing was changed.",
                file=sys.stderr,
            )
            return 1
        backup = found
    try:
        aside = restore_backup(backup, database)
    except BackupUnusableError:
        print(
            f"threadline: the backup {backup} is damaged too; nothing was changed. "
            f"Choose another (`{RESTORE_COMMAND} --list`).",
            file=sys.stderr,
        )
        return 1
    except OSError as err:
        print(f"threadline: the backup could not be put in place ({err}); nothing was lost.", file=sys.stderr)
        return 1
    print(f"Restored {database} from the backup of {_when(backup)} ({backup.name}).", file=out)
    if aside is not None:
        print(f"The previous file is kept as {aside}.", file=out)
    return 0


def _list_backups(database: Path, out: TextIO) -> int:
    """One line per backup, newest first: when, size, whether it passes its check."""
    from threadline.engine.damage_advice import backup_taken as _when
    from threadline.store.backups import backups_dir, healthy_backups, set_aside_backups
    from threadline.store.damage import seen_damage

    record = seen_damage(database)
    state = f"damaged ({record.describe()}: {record.problem})" if record else "no damage recorded"
    print(f"{database}: {state}", file=out)
    healthy = healthy_backups(database)
    aside = set_aside_backups(database)
    if not healthy and not aside:
        print(f"No backups in {backups_dir(database)}.", file=out)
        return 0
    print(f"Backups in {backups_dir(database)}, newest first:", file=out)
    for index, backup in enumerate(healthy):
        mark = "  (restored by default)" if index == 0 else ""
        print(f"  {_when(backup)}  {_size(backup):>9}  ok       {backup.name}{mark}", file=out)
    for backup in aside:
        print(
            f"  {_when(backup)}  {_size(backup):>9}  DAMAGED  {backup.name}  (never restored)",
            file=out,
        )
    return 0


def _size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return "?"
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size / 1000:.1f} kB"
