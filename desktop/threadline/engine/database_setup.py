"""The database facet (``engine.database``): which database the conversations live in.

Settings → Data tests a server database, copies the conversations into an empty one,
and saves the choice for the next start (``engine/database_choice.py``: the file beside
the database, the password in the keychain; ``engine/database_probe.py``: one test
connection). Those steps open connections, read the keychain and copy the store, so they
sit behind the engine as ``DatabaseApi`` (``engine/api.py``) rather than in a widget:
the window asks, the engine does the store-level work, off the event loop where it
blocks (a connection, the keychain, a copy). The page keeps only the form and what it
says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from threadline.engine.database_choice import (
    POSTGRESQL,
    DatabaseChoice,
    ServerChoice,
    build_url,
    has_stored_password,
    load_choice,
    save_choice,
    store_password,
    stored_password,
    use_local_file,
)
from threadline.engine.database_probe import ProbeResult, probe_server


@dataclass(frozen=True, slots=True)
class CopyResult:
    """How a copy into a server database went; ``message`` is what the page shows."""

    identical: bool
    message: str


def where_in_use(url: str | None, data_dir: Path | None) -> str:
    """A sentence naming the database a URL points at, without its password."""
    from threadline.store.db import sqlite_path

    if url is None:
        if data_dir is None:
            return "This window's database is not known."
        from threadline.engine.engine import DATABASE_FILENAME

        return f"This window uses the file {data_dir / DATABASE_FILENAME}."
    path = sqlite_path(url)
    if path is not None:
        return f"This window uses the file {path}."
    from threadline.store.copy import safe_url

    return f"This window uses the server database {safe_url(url)}."


class DatabaseSetup:
    """What ``DatabaseApi`` offers Settings → Data for the data folder ``data_dir``.

    ``url`` is the database this engine has open. A ``password`` argument is what the
    user typed; empty means the one in the keychain (or ``THREADLINE_DB_PASSWORD``).
    """

    def __init__(self, data_dir: Path, url: str) -> None:
        self.data_dir = data_dir
        self._url = url

    def in_use(self) -> str:
        """A sentence naming the database this window uses (no password in it)."""
        return where_in_use(self._url, self.data_dir)

    def load_choice(self) -> DatabaseChoice:
        """The choice saved for the next start (``DatabaseChoiceError``: the file is unreadable)."""
        return load_choice(self.data_dir)

    async def has_stored_password(self, server: ServerChoice) -> bool:
        """Whether the keychain holds this server's password (asked off the loop: it may wait)."""
        return await asyncio.to_thread(has_stored_password, server)

    async def probe(self, server: ServerChoice, password: str = "") -> ProbeResult:
        """One test connection: can we sign in, and what does the database hold?"""
        return await asyncio.to_thread(lambda: probe_server(server, password or stored_password(server)))

    async def copy_to(
        self, server: ServerChoice, password: str = "", progress: Callable[[str, int], None] | None = None
    ) -> CopyResult:
        """Copy this window's conversations into the empty database of ``server`` and read it back.

        ``progress(table, rows)`` is called on the event loop as the copy goes. Raises the
        store's errors (``CopyError`` when the target is not empty).
        """
        from threadline.store.copy import copy_database

        loop = asyncio.get_running_loop()

        def told(table: str, rows: int) -> None:
            if progress is not None:
                loop.call_soon_threadsafe(progress, table, rows)

        def run() -> CopyResult:
            report = copy_database(self._url, build_url(server, password or stored_password(server)), told)
            if report.identical:
                rows = sum(f.rows for f in report.source)
                return CopyResult(
                    True,
                    f"Copied {rows:,} rows in {report.seconds:.1f} s; the server's copy was read back "
                    "and its counts and checksums match. Save to use it from the next start.",
                )
            return CopyResult(
                False,
                "The copy did not read back identical: "
                + "; ".join(report.differences())
                + ". Keep using the local file, and try the copy again into a new empty database.",
            )

        return await asyncio.to_thread(run)

    async def save_server(self, server: ServerChoice, password: str = "") -> tuple[DatabaseChoice, bool]:
        """Choose ``server`` for the next start (a typed password goes to the keychain); the
        saved choice and whether a password is stored for it."""

        def write() -> tuple[DatabaseChoice, bool]:
            if password:
                store_password(server, password)
            choice = DatabaseChoice(POSTGRESQL, server)
            save_choice(self.data_dir, choice)
            return choice, has_stored_password(server)

        return await asyncio.to_thread(write)

    def use_local_file(self) -> DatabaseChoice:
        """Choose the data folder's own file for the next start; the saved choice."""
        use_local_file(self.data_dir)
        return load_choice(self.data_dir)
