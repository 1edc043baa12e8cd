"""`threadline db copy` at scale: SQLite → PostgreSQL → SQLite of 100,000 messages (a script).

    .venv/bin/python bench/copy_bench.py [--messages 100000] [--url postgresql+psycopg://…]

Builds a SQLite database of ``--messages`` messages: a few hundred chats written through
the store as the app writes them (versions, tool calls and their results, reasoning with a
signature, markers, checkpoints), plus plain chats bulk-loaded the way ``store_bench.py``
loads its million (triggers dropped for the load, the full-text index rebuilt and the
triggers restored after). Then copies it to an empty database on a PostgreSQL server (a
private one started like the tests', or ``--url``) and from there to a new SQLite file,
with the functions ``threadline db copy`` runs, and prints per leg the time and rows per
second, and whether the round trip is identical: every table's row count and SHA-256 over
its rows in key order (the copy's own figures) of the first file and the last, and the
same full-text search hits in both files for a handful of queries.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "desktop", ROOT / "bench"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from store_bench import Loader, bulk_load_sqlite  # noqa: E402

from threadline.core.config import AgentConfig, ProviderConfig, ProviderKind  # noqa: E402
from threadline.core.messages import (  # noqa: E402
    Marker,
    MarkerType,
    Message,
    MessageStatus,
    RequestMetadata,
    ToolCall,
    ToolResult,
    new_id,
)
from threadline.core.project import Project  # noqa: E402
from threadline.core.reasoning import Reasoning  # noqa: E402
from threadline.store.copy import CopyReport, copy_database  # noqa: E402
from threadline.store.repository import Store  # noqa: E402

RICH_CHATS = 300
QUERIES = ("paris", "tool result", "signature", "quarterly", "zebra", "word")


async def build_rich(url: str, chats: int) -> int:
    """Chats as the app stores them; returns how many messages were written."""
    store = await Store.open(url)
    written = 0
    try:
        await store.save_provider(
            ProviderConfig("Local llama", ProviderKind.OPENAI, base_url="http://127.0.0.1:8080/v1")
        )
        await store.save_agent(AgentConfig("reviewer", "Reviewer", system_prompt="Review carefully."))
        await store.set_setting("context_windows", {"Local llama/qwen": 8192})
        await store.set_ui_state("window", {"width": 1200, "height": 800})
        project = await store.save_project(Project(new_id(), "Trips", instructions="Prices in euros."))
        for n in range(chats):
            info = await store.create_session(title=f"Rich chat {n}", provider="openai", model="gpt-4o")
            prompt = Message.prompt(f"Plan a trip to Paris number {n}, with a budget")
            meta = RequestMetadata(provider="openai", model="gpt-4o", input_tokens=120 + n, output_tokens=40)
            call = ToolCall(f"call_{n}", "search_web", '{"query": "paris hotels"}')
            asks = Message.reply(
                parent_id=prompt.id, tool_calls=(call,), status=MessageStatus.COMPLETE, metadata=meta
            )
            asks.reasoning = (Reasoning(text=f"I should look up hotels {n}.", signature=f"sig-{n:04d}"),)
            results = Message.tool_results_message(
                (ToolResult(call.id, f"tool result {n}: 3 hotels near the Louvre"),), parent_id=asks.id
            )
            answer = Message.reply(
                parent_id=results.id,
                text=f"Here is a plan for Paris ({n}): day one, the Louvre…",
                status=MessageStatus.COMPLETE,
                metadata=meta,
            )
            again = Message.reply(  # a second version of the answer (regenerate)
                parent_id=results.id,
                text=f"Another plan for Paris ({n}).",
                status=MessageStatus.INTERRUPTED,
                metadata=meta,
            )
            marker = Message.marker_message(Marker(MarkerType.CLEAR, "Context cleared"), parent_id=answer.id)
            follow = Message.prompt("And a quarterly budget table?", parent_id=marker.id)
            messages = [prompt, asks, results, answer, again, marker, follow]
            await store.append_messages(info.id, messages)
            await store.set_active_leaf(info.id, follow.id)
            await store.update_session(info.id, checkpoints={"before the plan": prompt.id})
            if n % 3 == 0:
                await store.set_session_project(info.id, project.id)
            written += len(messages)
    finally:
        await store.close()
    return written


async def search_hits(url: str) -> dict[str, list[tuple[str, str]]]:
    store = await Store.open(url)
    try:
        return {q: [(h.session_id, h.message_id) for h in await store.search(q, limit=50)] for q in QUERIES}
    finally:
        await store.close()


def leg(label: str, source: str, target: str, messages: int) -> CopyReport:
    start = time.perf_counter()
    report = copy_database(source, target)
    seconds = time.perf_counter() - start
    rows = sum(f.rows for f in report.source)
    print(
        f"{label}: {rows:,} rows ({messages:,} messages) in {seconds:.1f} s, "
        f"{rows / seconds:,.0f} rows/s, verified {'identical' if report.identical else 'DIFFERENT'}"
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--url", help="an EMPTY PostgreSQL database (default: a private server)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="threadline-copy-bench-") as tmp:
        first = Store.sqlite_url(Path(tmp) / "first.sqlite3")
        last = Store.sqlite_url(Path(tmp) / "last.sqlite3")
        start = time.perf_counter()
        rich = asyncio.run(build_rich(first, RICH_CHATS))
        loader = Loader(first)
        try:
            bulk = bulk_load_sqlite(
                Path(tmp) / "first.sqlite3", loader, random.Random(3), args.messages - rich, 600
            )
        finally:
            loader.engine.dispose()
        total = rich + bulk
        built = time.perf_counter() - start
        print(f"built {total:,} messages ({rich:,} in {RICH_CHATS} rich chats) in {built:.1f} s")
        server = None
        url = args.url
        if url is None:
            from tests.support.postgres import start_postgres

            server = start_postgres()
            url = server.create_database()
        try:
            there = leg("SQLite → PostgreSQL", first, url, total)
            back = leg("PostgreSQL → SQLite", url, last, total)
        finally:
            if server is not None:
                server.stop()
        same_rows = there.source == back.target
        hits_first, hits_last = asyncio.run(search_hits(first)), asyncio.run(search_hits(last))
        same_hits = hits_first == hits_last and any(hits_first.values())
        for figures in back.target:
            print(f"  {figures.table}: {figures.rows:,} rows, sha256 {figures.checksum[:16]}…")
        print(
            f"round trip identical: {'yes' if same_rows else 'NO'} (every table's rows and checksum); "
            f"search hits the same: {'yes' if same_hits else 'NO'} "
            f"({sum(len(v) for v in hits_first.values())} hits over {len(QUERIES)} queries)"
        )
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process: {peak_mb:.0f} MB (build, both copies, searches)")
        print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if not (same_rows and same_hits):
            raise SystemExit(1)


if __name__ == "__main__":
    main()
