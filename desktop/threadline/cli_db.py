"""``threadline db copy``: move everything to a server database, or back to a file.

``--to URL`` copies the database Threadline uses (the data folder's file, or
``--database-url``) into the empty database at URL; ``--from URL`` copies the one
at URL into the database Threadline uses, which must be empty. Afterwards both
sides are counted and checksummed table by table (``store.copy``); the command
prints the figures and exits 1 unless they are identical.

A password may be given in the URL or, to keep it out of the shell's history and
the process list, in the ``THREADLINE_DB_PASSWORD`` environment variable. It is
never printed.

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
    """``threadline db copy (--to URL | --from URL)``."""
    parser = commands.add_parser("db", parents=[common], help="copy the database to or from a server")
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
