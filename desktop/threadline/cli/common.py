"""What every command of the command line shares: ``CommandError``, the exit codes,
opening the engine and ending the process.

The command modules and the dispatcher (``cli.run``) import it, so no command module
imports the dispatcher back.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A problem to report in one line (bad arguments, unknown session, no keychain…)."""


def exit_process(code: int) -> NoReturn:
    """End the process now that the command has finished: flush, close the logs, skip the teardown.

    By the time a command returns, the engine is closed: its replies are stored, the
    database connections and MCP servers are closed and its threads have ended. What
    the interpreter would still do is free every object and module one by one, which
    took a third of ``ask``'s wall time (most of the imported SQLAlchemy and SDK modules;
    the figures are in docs/performance.md, "Command line").
    Only the process's own command line comes here, never ``main`` called in-process.
    """
    import logging
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(code)


async def open_engine(data_dir: Path, database_url: str | None) -> EngineApi:
    """The engine, as every command holds it: through the protocols the window uses too."""
    from threadline.engine.engine import Engine
    from threadline.store.errors import StoreError

    try:
        engine = await Engine.open(data_dir, database_url=database_url)
    except StoreError as err:
        raise CommandError(err.user_message) from err
    for (
        notice
    ) in await engine.settings.take_notices():  # an upgrade's word to the user (docs/storage.md, "Secrets")
        print(f"threadline: {notice}", file=sys.stderr)
    return engine
