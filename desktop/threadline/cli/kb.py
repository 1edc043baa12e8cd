"""``threadline kb``: knowledge bases from the command line (docs/knowledge.md).

``add NAME FOLDER… [--embed PROVIDER:MODEL]`` defines a base (nothing is read yet),
``list`` shows them with what is indexed, ``index NAME`` brings the index up to date with a
progress line and a report of the files that could not be read, ``search NAME "query"
[--json]`` prints the best passages with their place, ``remove NAME`` forgets the base and its
index (the files stay). On a terminal ``index`` shows a progress line (files, passages, speed,
time left, or why it waits); Ctrl+C pauses it after the current file, and the next ``index`` (or
the app's next start) carries on. Waiting for the embedding server is said on stderr also when it
is not a terminal (a line each time the wait changes), since a run that seems stuck needs a reason.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.knowledge import Progress

PATIENCE_S = 300.0
"""How long ``kb index`` waits for an embedding server that does not answer, so a script is not
held forever; the next run embeds what is left (the app waits until it answers)."""


def add_kb_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    kb = commands.add_parser(
        "kb", parents=[common], help="knowledge bases: your folders, indexed and searched"
    )
    actions = kb.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    add = actions.add_parser("add", parents=[common], help="define a knowledge base (nothing is read yet)")
    add.add_argument("name")
    add.add_argument("paths", nargs="+", metavar="FOLDER", help="folders or files it holds")
    add.add_argument(
        "--embed", metavar="PROVIDER:MODEL", help="embedding model for vector search (keywords only without)"
    )
    actions.add_parser("list", parents=[common], help="list knowledge bases and what is indexed")
    index = actions.add_parser("index", parents=[common], help="index the base's files (only what changed)")
    index.add_argument("name")
    search = actions.add_parser("search", parents=[common], help="the best passages for a query")
    search.add_argument("name")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=8, metavar="N")
    search.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    remove = actions.add_parser("remove", parents=[common], help="forget a base and its index (files stay)")
    remove.add_argument("name")


class KbCommandError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    knowledge = engine.knowledge
    action = args.kb_command
    if action == "add":
        provider, model = _embed(args.embed)
        paths = [Path(p) for p in args.paths]
        if missing := [str(p) for p in paths if not p.exists()]:
            raise KbCommandError(f"not found: {', '.join(missing)}")
        base = await knowledge.add(args.name, paths, embed_provider=provider, embed_model=model)
        search_kind = f"vectors from {provider}:{model} and keywords" if base.embeds else "keywords only"
        out.write(f"Added “{base.name}” ({len(base.paths)} location(s), {search_kind}). ")
        out.write(f"Index it with: threadline kb index {_quoted(base.name)}\n")
        return 0
    if action == "list":
        bases = await knowledge.bases()
        if not bases:
            out.write("No knowledge bases. Add one with: threadline kb add NAME FOLDER…\n")
        for base in bases:
            files, chunks, _chars = await knowledge.totals(base.name)
            embed = f"{base.embed_provider}:{base.embed_model}" if base.embeds else "keywords only"
            out.write(
                f"{base.name}\t{files:,} files, {chunks:,} passages\t{embed}\t{', '.join(base.paths)}\n"
            )
        return 0
    if action == "index":
        return await _index(engine, args.name, out)
    if action == "search":
        result = await knowledge.search(args.name, args.query, max(1, args.limit))
        if args.json:
            hits = [
                {
                    "path": hit.chunk.path,
                    "page": hit.chunk.page,
                    "heading": hit.chunk.heading,
                    "line_start": hit.chunk.line_start,
                    "line_end": hit.chunk.line_end,
                    "score": hit.score,
                    "text": hit.chunk.text,
                }
                for hit in result.hits
            ]
            out.write(
                json.dumps({"hits": hits, "notice": result.notice}, ensure_ascii=False, indent=2) + "\n"
            )
            return 0
        if result.notice:
            out.write(f"({result.notice})\n")
        if not result.hits:
            out.write("Nothing found.\n")
        for number, hit in enumerate(result.hits, start=1):
            place = (
                f"page {hit.chunk.page}"
                if hit.chunk.page is not None
                else f"lines {hit.chunk.line_start}–{hit.chunk.line_end}"
            )
            heading = f" › {hit.chunk.heading}" if hit.chunk.heading else ""
            out.write(f"[{number}] {hit.chunk.path}{heading}, {place}\n")
            out.write("".join(f"    {line}\n" for line in hit.chunk.text.splitlines()[:6]))
        return 0
    if action == "remove":
        await knowledge.remove(args.name)
        out.write(f"Removed “{args.name}” and its index; the files were not touched.\n")
        return 0
    raise KbCommandError(f"unknown action {action!r}")


async def _index(engine: EngineApi, name: str, out: TextIO, err: TextIO | None = None) -> int:
    knowledge = engine.knowledge
    err = err or sys.stderr
    shown = err.isatty()
    last = [0.0]
    said = [""]

    def progress(state: Progress) -> None:  # on the worker thread; a line at most every 0.2 s
        if not shown:
            if state.waiting and state.waiting != said[0]:
                err.write(f"{state.waiting}\n")  # not a terminal: only why it waits, a line each
                err.flush()
            said[0] = state.waiting
            return
        now = time.monotonic()
        if now - last[0] < 0.2 and state.files_done < state.files_total and not state.waiting:
            return
        last[0] = now
        err.write(f"\r{progress_line(state)}\x1b[K")
        err.flush()

    task = asyncio.ensure_future(knowledge.index(name, progress, patience=PATIENCE_S))
    try:
        report = await asyncio.shield(task)
    except (KeyboardInterrupt, asyncio.CancelledError):
        knowledge.pause(name)  # Ctrl+C: stop after the current file, carry on next time
        report = await task
    if shown:
        err.write("\n")
    state = report.progress
    files, chunks, _chars = await knowledge.totals(name)
    verb = "Paused" if report.cancelled else "Indexed"
    out.write(
        f"{verb}: {state.files_read:,} file(s) read, {state.files_done - state.files_read:,} unchanged, "
        f"{report.removed:,} removed; “{name}” holds {files:,} files and {chunks:,} passages.\n"
    )
    if report.cancelled:
        out.write(f"Run `threadline kb index {_quoted(name)}` again to carry on.\n")
    if report.embedding_notice:
        out.write(f"{report.embedding_notice}\n")
    if report.problems:
        out.write(f"{len(report.problems):,} file(s) could not be indexed:\n")
        for problem in report.problems:
            out.write(f"  {problem.path}: {problem.reason}\n")
    return 0


def progress_line(state: Progress) -> str:
    """One line of progress: files, passages, speed and time left, or why it waits."""
    if state.waiting:
        return state.waiting
    left = state.seconds_left
    eta = f", about {_duration(left)} left" if left is not None else ""
    speed = f", {state.files_per_second:,.1f} files/s" if state.files_done else ""
    embedded = f", {state.embedded:,} embedded" if state.embedded else ""
    down = f"; no vectors yet: {state.embed_down} does not answer" if state.embed_down else ""
    return (
        f"Indexing {state.files_done:,}/{state.files_total:,} files, {state.chunks:,} passages"
        f"{embedded}{speed}{eta}{down}"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _embed(value: str | None) -> tuple[str, str]:
    if not value:
        return "", ""
    provider, _, model = value.partition(":")
    if not provider or not model:
        raise KbCommandError("--embed takes PROVIDER:MODEL, e.g. --embed ollama:nomic-embed-text")
    return provider, model


def _quoted(name: str) -> str:
    return name if name.replace("-", "").replace("_", "").isalnum() else json.dumps(name, ensure_ascii=False)


async def kb_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """Open the engine, run the action; a refusal is one ``threadline:`` line."""
    from threadline.cli.common import CommandError, open_engine
    from threadline.engine.errors import EngineError
    from threadline.store.errors import StoreError

    engine = await open_engine(data_dir, database_url)
    try:
        return await run(engine, args)
    except KbCommandError as err:
        raise CommandError(str(err)) from err
    except (EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()
