"""Importing a large ChatGPT export: time, peak memory, and full-text search over the result.

Writes a ChatGPT-format ``conversations.json`` of ``--chats`` conversations of
``--messages`` messages each (default 10,000 × 100 = 1,000,000 messages, each
chat with one edited prompt so trees have branches), imports it into a fresh
SQLite file through the engine's importer, and prints: file size, import wall
time and rate, peak resident memory of the process, and the time of the first
50 full-text hits for a few queries. Run: ``.venv/bin/python bench/import_bench.py
[--chats N] [--messages M]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))

from threadline.engine.importer import import_file  # noqa: E402
from threadline.store.repository import Store  # noqa: E402

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
]


def write_export(path: Path, chats: int, messages: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for n in range(chats):
            mapping: dict[str, object] = {}
            for m in range(messages):
                parent = f"n{m - 1}" if m else None
                if m == messages - 1 and messages > 2:
                    parent = "n0"  # the last one is an edited first prompt's reply: a branch
                words = " ".join(WORDS[(n + m + k) % len(WORDS)] for k in range(30))
                mapping[f"n{m}"] = {
                    "id": f"n{m}",
                    "parent": parent,
                    "children": [],
                    "message": {
                        "id": f"n{m}",
                        "author": {"role": "user" if m % 2 == 0 else "assistant"},
                        "create_time": 1600000000 + n * 1000 + m,
                        "content": {"content_type": "text", "parts": [f"chat{n} msg{m} {words}"]},
                        "status": "finished_successfully",
                        "metadata": {"model_slug": "gpt-4o"} if m % 2 else {},
                        "recipient": "all",
                    },
                }
            record = {
                "title": f"Benchmark chat {n}",
                "create_time": 1600000000 + n * 1000,
                "update_time": 1600000000 + n * 1000 + messages,
                "mapping": mapping,
                "current_node": f"n{messages - 2}",
                "conversation_id": f"bench-{n}",
            }
            out.write(("," if n else "") + json.dumps(record))
        out.write("]")


async def run(chats: int, messages: int, folder: Path) -> None:
    export = folder / "conversations.json"
    started = time.perf_counter()
    write_export(export, chats, messages)
    print(
        f"export: {chats:,} chats × {messages} messages, {export.stat().st_size / 1e6:,.0f} MB, "
        f"written in {time.perf_counter() - started:.1f} s"
    )
    store = await Store.open(Store.sqlite_url(folder / "bench.sqlite3"), keep_daily_backups=0)
    try:
        started = time.perf_counter()
        report = await import_file(store, export)
        elapsed = time.perf_counter() - started
        total = chats * messages
        print(
            f"import: {elapsed:.1f} s, {report.imported:,} chats imported, {len(report.failed)} failed; "
            f"{total / elapsed:,.0f} messages/s, {chats / elapsed:,.0f} chats/s"
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak resident memory (whole process, including writing the export): {peak:,.0f} MB")
        for query in ("chat42 msg7", "foxtrot golf", "november alph", f"chat{chats - 1} msg1"):
            await store.search(query, limit=50)  # warm
            started = time.perf_counter()
            hits = await store.search(query, limit=50)
            print(f"search {query!r}: {len(hits)} hits in {(time.perf_counter() - started) * 1000:.1f} ms")
        started = time.perf_counter()
        again = await import_file(store, export)
        took = time.perf_counter() - started
        print(f"second import of the same file: {again.skipped:,} skipped in {took:.1f} s")
        print(f"database: {(folder / 'bench.sqlite3').stat().st_size / 1e6:,.0f} MB")
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args.chats, args.messages, Path(folder)))


if __name__ == "__main__":
    main()
