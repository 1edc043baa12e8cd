"""Store benchmarks against the budgets of docs/design.md §5 (a script, not a test).

    .venv/bin/python bench/store_bench.py [--url URL] [--fts-seconds 50] [--fts-max 1000000]

Builds, in a temporary SQLite file (or an empty database at ``--url``):
  * 10,000 sessions, then times the first sidebar page through ``Store.list_sessions``;
  * one session with a 10,000-message tree (prompts, replies with metadata, versions),
    then times ``Store.load_tree``;
  * as many messages as can be written in ``--fts-seconds`` (up to ``--fts-max``),
    then times the first 50 full-text hits through ``Store.search``.
Timings go through the async API (worker-thread hop included), median of several runs.
Bulk data is written with plain DB-API executemany, bypassing the repository, so the
build fits in a minute; the full-text index is filled by the same triggers as in use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from threadline.store.repository import Store

BUDGET_LIST_MS = 50.0
BUDGET_TREE_MS = 150.0
BUDGET_SEARCH_MS = 50.0
T0 = datetime(2024, 1, 1, tzinfo=UTC)

_WORDS_TEXT = """
the a of to and in is it you that for on with as are this be at have or from by not but what
all were when we there can an your which their said if do will each about how up out them then
she many some so these would other into has more her two like him see time could no make than
first been its who now people my made over did down only way find use may water long little
very after words called python qt widget database index search thread async model token stream
reply prompt session tree branch version checkpoint summary compact provider anthropic openai
ollama tool approval error retry network timeout budget latency memory render layout paint
delegate cache cursor keyboard mouse window tab sidebar archive pin title folder export import
backup migration schema sqlite postgres vector
"""
WORDS = _WORDS_TEXT.split()


def sentence(rng: random.Random, low: int = 8, high: int = 40) -> str:
    # Zipf-like: early words are common, late words rare; plus a random rare token.
    n = rng.randint(low, high)
    words = [WORDS[min(int(rng.paretovariate(1.1)) - 1, len(WORDS) - 1)] for _ in range(n)]
    words.append(f"w{rng.randint(0, 99_999)}")
    rng.shuffle(words)
    return " ".join(words).capitalize() + "."


def ts(value: datetime, dialect: str) -> Any:
    return value.replace(tzinfo=None).isoformat(" ") if dialect == "sqlite" else value


class Loader:
    """Bulk inserts with the driver's own paramstyle, committed in batches."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url)
        self.dialect = self.engine.dialect.name
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        self.session_sql = (
            "INSERT INTO sessions (id, title, title_set_by_user, pinned, archived, folder, agent_id, "
            "provider, model, active_leaf, preview, checkpoints, created_at, updated_at, summary) VALUES ("
            + ", ".join([mark] * 15)
            + ")"
        )
        self.message_sql = (
            "INSERT INTO messages (id, session_id, parent_id, ordinal, role, kind, text, content, status, "
            "metadata, created_at) VALUES (" + ", ".join([mark] * 11) + ")"
        )

    def sessions(self, rows: Sequence[tuple[Any, ...]]) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql(self.session_sql, list(rows))

    def messages(self, rows: Sequence[tuple[Any, ...]]) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql(self.message_sql, list(rows))

    def session_row(self, sid: str, i: int, *, leaf: str | None = None) -> tuple[Any, ...]:
        when = T0 + timedelta(minutes=i)
        return (
            sid, f"Session {i}", False, i % 97 == 0, i % 10 == 0, "", "", "openai", "gpt",
            leaf, f"preview {i}", "{}", ts(when, self.dialect), ts(when, self.dialect), "",
        )  # fmt: skip

    def message_row(
        self, mid: str, sid: str, parent: str | None, ordinal: int, text: str, user: bool
    ) -> tuple[Any, ...]:
        meta = None
        if not user:
            meta = json.dumps(
                {"provider": "openai", "model": "gpt", "input_tokens": 100, "output_tokens": 50}
            )
        return (
            mid, sid, parent, ordinal, "user" if user else "assistant", "prompt" if user else "response",
            text, "{}", "complete", meta, ts(T0 + timedelta(seconds=ordinal), self.dialect),
        )  # fmt: skip


def new_id() -> str:
    return uuid.uuid4().hex


async def timed(label: str, call: Callable[[], Awaitable[Any]], budget_ms: float, runs: int = 15) -> float:
    """Median wall time of ``call``; the process CPU time is shown too, because on a busy
    2-core machine wall time also measures the neighbours."""
    await call()  # warm caches once, as a running app would be
    samples, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    median = statistics.median(samples)
    verdict = "OK" if median <= budget_ms else "OVER BUDGET"
    figures = f"median {median:8.2f} ms  (min {min(samples):7.2f}, cpu {statistics.median(cpu):7.2f})"
    print(f"  {label:<52} {figures}  budget {budget_ms:.0f} ms  {verdict}")
    return median


def chunks(total: int, size: int) -> Iterator[range]:
    for start in range(0, total, size):
        yield range(start, min(total, start + size))


async def bench(url: str, fts_seconds: float, fts_max: int) -> None:
    store = await Store.open(url)
    loader = Loader(url)
    rng = random.Random(7)
    try:
        print(f"store: {url}")
        # -- sidebar ------------------------------------------------------------------------
        start = time.perf_counter()
        for part in chunks(10_000, 2_000):
            loader.sessions([loader.session_row(new_id(), i) for i in part])
        print(f"built 10,000 sessions in {time.perf_counter() - start:.1f} s")
        for limit in (100, 500):
            await timed(
                f"list_sessions first page ({limit} rows of 10,000)",
                lambda limit=limit: store.list_sessions(limit=limit),
                BUDGET_LIST_MS,
            )

        # -- one long session ------------------------------------------------------------------
        start = time.perf_counter()
        sid = new_id()
        rows, parent, leaf = [], None, None
        for ordinal in range(10_000):
            mid = new_id()
            user = ordinal % 2 == 0
            # Every 50th reply gets a sibling version (regenerate), as real trees do.
            branch_parent = parent
            rows.append(loader.message_row(mid, sid, branch_parent, ordinal, sentence(rng, 20, 120), user))
            if ordinal % 50 == 1:
                continue  # the next message is a sibling of this one
            parent, leaf = mid, mid
        loader.sessions([loader.session_row(sid, 10_001, leaf=leaf)])
        loader.messages(rows)
        print(f"built a 10,000-message session in {time.perf_counter() - start:.1f} s")
        tree = await store.load_tree(sid)
        assert len(tree) == 10_000, len(tree)
        await timed("load_tree (10,000 messages)", lambda: store.load_tree(sid), BUDGET_TREE_MS, runs=7)

        # -- full-text search -----------------------------------------------------------------
        start = time.perf_counter()
        built = 10_000
        batch, sessions = 20_000, 0
        while built < fts_max and time.perf_counter() - start < fts_seconds:
            session_ids = [new_id() for _ in range(20)]
            loader.sessions([loader.session_row(s, 20_000 + sessions + i) for i, s in enumerate(session_ids)])
            sessions += len(session_ids)
            count = min(batch, fts_max - built)
            loader.messages(
                [
                    loader.message_row(
                        new_id(), session_ids[i % 20], None, built + i, sentence(rng), i % 2 == 0
                    )
                    for i in range(count)
                ]
            )
            built += count
        elapsed = time.perf_counter() - start
        print(f"built a full-text index over {built:,} messages (+{built - 10_000:,} in {elapsed:.1f} s)")
        if loader.dialect == "postgresql":
            # What autovacuum would have done by now: without statistics the planner
            # walks the primary key backwards even for words that occur nowhere.
            with loader.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("ANALYZE")
        for query in ("python", "the", "database index", "checkp", "w12345", "nomatchatall"):
            hits = await store.search(query)
            await timed(
                f"search {query!r} first 50 ({len(hits)} hits)",
                lambda query=query: store.search(query, limit=50),
                BUDGET_SEARCH_MS,
                runs=9,
            )
        scaled = built / 1_000_000
        if scaled < 1:
            print(f"  (index holds {scaled:.0%} of the budget's 1,000,000 messages)")
        print(f"load average while measuring: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        loader.engine.dispose()
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="an EMPTY database to fill (default: a temporary SQLite file)")
    parser.add_argument("--fts-seconds", type=float, default=50.0, help="time allowed for building messages")
    parser.add_argument("--fts-max", type=int, default=1_000_000, help="stop at this many messages")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="threadline-bench-") as tmp:
        url = args.url or Store.sqlite_url(Path(tmp) / "bench.sqlite3")
        asyncio.run(bench(url, args.fts_seconds, args.fts_max))


if __name__ == "__main__":
    main()
