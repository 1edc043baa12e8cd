"""Change feed latency: from a write in one engine to the event in another (a script, not a test).

    .venv/bin/python bench/feed_bench.py [--writes 200] [--backend sqlite|postgres|both] [--url URL]

Two engines share one database: a SQLite file in a temporary folder, and a database
on a PostgreSQL server (``--url``, or a private server started like the tests' one).
Engine B (following changes, as the window does) has a chat open in which engine A's
store grows a streaming reply, one text write at a time, as a turn's writer does. Each
sample is the time from the start of A's write (``Store.update_message_text``) to B's
``TextDelta`` carrying that text; the next write follows after a random 0–100 ms pause
so writes do not line up with the SQLite check interval. Prints p50, p95 and max per
backend (goal: p95 ≤ 250 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "desktop"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from threadline.core.messages import Message  # noqa: E402
from threadline.engine.engine import Engine  # noqa: E402
from threadline.engine.events import ConversationEvent, TextDelta  # noqa: E402
from threadline.store.repository import Store  # noqa: E402

GOAL_P95_MS = 250.0
TIMEOUT = 10.0


async def measure(url: str, writes: int, data_dir: Path) -> list[float]:
    writer = await Engine.open(data_dir / "a", database_url=url)
    reader = await Engine.open(data_dir / "b", database_url=url, watch_changes=True)
    try:
        info = await writer.sessions.new_session("Feed benchmark")
        prompt = Message.prompt("Tell me a long story.")
        reply = Message.reply(parent_id=prompt.id)
        await writer.store.append_messages(info.id, [prompt, reply])
        live = await reader.sessions.open_session(info.id)
        arrived: dict[str, float] = {}

        def seen(event: ConversationEvent) -> None:
            if isinstance(event, TextDelta) and event.message_id == reply.id:
                arrived[live.conversation.tree.get(reply.id).text] = time.perf_counter()

        live.subscribe(seen)
        watch = reader.change_watch
        assert watch is not None
        while watch.feed is None:  # the feed starts after the last entry existing when it opened
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        text = ""
        delays: list[float] = []
        for n in range(writes):
            text += f"word{n} "
            started = time.perf_counter()
            await writer.store.update_message_text(reply.id, text)
            async with asyncio.timeout(TIMEOUT):
                while text not in arrived:
                    await asyncio.sleep(0.001)
            delays.append((arrived[text] - started) * 1000)
            await asyncio.sleep(random.uniform(0.0, 0.1))
        return delays
    finally:
        await reader.aclose()
        await writer.aclose()


def report(name: str, delays: list[float]) -> bool:
    ordered = sorted(delays)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
    ok = p95 <= GOAL_P95_MS
    print(
        f"{name:<10} writes={len(ordered)}  p50={p50:6.1f} ms  p95={p95:6.1f} ms  max={ordered[-1]:6.1f} ms"
        f"  (goal p95 ≤ {GOAL_P95_MS:.0f} ms: {'met' if ok else 'MISSED'})"
    )
    return ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--url", help="an empty PostgreSQL database (default: start a private server)")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="threadline-feed-bench-") as folder:
        base = Path(folder)
        if args.backend in ("sqlite", "both"):
            delays = await measure(Store.sqlite_url(base / "shared.db"), args.writes, base / "sqlite")
            ok &= report("SQLite", delays)
        if args.backend in ("postgres", "both"):
            server = None
            url = args.url
            if url is None:
                from tests.support.postgres import start_postgres

                server = start_postgres()
                url = server.create_database()
            try:
                ok &= report("PostgreSQL", await measure(url, args.writes, base / "postgres"))
            finally:
                if server is not None:
                    server.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
