"""``threadline import FILE``: bring in a ChatGPT, Claude, Open WebUI or Threadline export.

Prints what happened — how many chats were imported, updated (a re-import that
found new messages), skipped (already there, unchanged) and, when any, kept (the
file is an older copy of a chat continued since), and each failure
with its chat's title and the reason — and exits 1 when anything failed, so a
script notices. Importing the same file again is safe: nothing is duplicated.
While it runs, a line on standard error counts the chats when it is a terminal.
Only light modules are imported at the top: this module is loaded to build the
argument parser.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.interchange.model import ImportProgress, ImportReport

EXIT_FAILED = 1


def add_import_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "import",
        parents=[common],
        help="import chats from a ChatGPT, Claude or Open WebUI export, or Threadline's own JSON",
    )
    parser.add_argument("file", type=Path, help="the export: a .zip or a .json file")


async def command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """Open the engine, import, print the report (called by ``cli.run_command``)."""
    from threadline.cli.common import CommandError, open_engine
    from threadline.store.errors import StoreError

    engine = await open_engine(data_dir, database_url)
    try:
        return await run(engine, args.file)
    except StoreError as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def run(engine: EngineApi, path: Path, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    counter = _Counter(err)
    report = await engine.library.import_file(path, progress=counter)
    counter.end()
    write_report(report, out)
    return EXIT_FAILED if report.failed else 0


def write_report(report: ImportReport, out: TextIO) -> None:
    kept = f"kept {report.kept_newer} (the stored chat is newer), " if report.kept_newer else ""
    out.write(
        f"imported {report.imported}, updated {report.updated}, skipped {report.skipped} (unchanged), "
        f"{kept}failed {len(report.failed)}\n"
    )
    for problem in report.failed:
        out.write(f"failed: {problem.title}: {problem.reason}\n")
    if report.cancelled:
        out.write("the import was stopped; the chats counted above are stored whole\n")


class _Counter:
    """A progress line on a terminal ("423 chats read, 41 %"); silent when redirected."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._shown = False
        self._live = err.isatty()

    def __call__(self, progress: ImportProgress) -> None:
        if not self._live:
            return
        share = f", {progress.fraction:.0%}" if progress.fraction is not None else ""
        self._err.write(f"\r{progress.done} chats read{share}")
        self._err.flush()
        self._shown = True

    def end(self) -> None:
        if self._shown:
            self._err.write("\n")
