"""``threadline export``: chats as Markdown or Threadline JSON, for backups and for leaving.

``--session ID …`` exports those chats in that order, ``--all`` every chat (archived
ones last). ``--format md`` writes each chat's active path (``--all-branches``: every
version of every message; ``--include-thinking``: replies' reasoning as quote blocks),
``--format json`` the lossless Threadline JSON that ``threadline import`` reads back
(reasoning always included). Without ``-o`` the export goes to standard output;
with it, to a file that is replaced only once the export is complete.

The module imports nothing heavy at the top: building the parser runs at every start.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.engine.exporting import ExportFormat


def add_export_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """``threadline export (--session ID … | --all) --format md|json [--all-branches]
    [--include-thinking] [-o PATH]``."""
    parser = commands.add_parser(
        "export", parents=[common], help="export chats as Markdown or Threadline JSON (never keys)"
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--session", metavar="ID", nargs="+", action="extend", help="these chats (ids from `threadline list`)"
    )
    which.add_argument("--all", action="store_true", help="every chat, archived ones included")
    parser.add_argument(
        "--format",
        choices=["md", "json"],
        required=True,
        help="md: readable Markdown; json: everything, for `threadline import`",
    )
    parser.add_argument(
        "--all-branches",
        action="store_true",
        help="with md: every version of every message, not only the shown path",
    )
    parser.add_argument(
        "--include-thinking",
        action="store_true",
        help="with md: each reply's reasoning as a quote block above it (json always has it)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="PATH", help="write to PATH instead of standard output"
    )


def export_format(args: argparse.Namespace) -> ExportFormat:
    from threadline.engine.exporting import ExportFormat

    if args.format == "json":
        return ExportFormat.JSON
    return ExportFormat.MARKDOWN_BRANCHES if args.all_branches else ExportFormat.MARKDOWN


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Export as asked; ``ExportError`` (unknown chat, unwritable file) is the caller's to report."""
    session_ids = None if args.all else list(args.session)
    fmt = export_format(args)
    thinking = bool(args.include_thinking)
    if args.output is not None:
        await engine.library.export(args.output, fmt, session_ids, include_thinking=thinking)
        return 0
    async for chunk in engine.library.export_chunks(fmt, session_ids, include_thinking=thinking):
        out.write(chunk)
    out.flush()
    return 0
