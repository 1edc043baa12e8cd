"""Store benchmarks against the budgets of docs/design.md §5 (a script, not a test).

    .venv/bin/python bench/store_bench.py [--url URL] [--fts-seconds 50] [--fts-max 1000000]

Builds, in a temporary SQLite file (or an empty database at ``--url``):
  * 10,000 sessions, then times the first sidebar page through ``Store.list_sessions``;
  * one session with a 10,000-message tree (prompts, replies with metadata, versions),
    then times ``Store.load_tree``;
  * ``--fts-max`` messages (1,000,000), as many as fit in ``--fts-seconds`` of writing,
    then times the first 50 full-text hits through ``Store.search`` for varied queries
    (common and rare words, two words, prefixes typed so far, no match) and prints
    their p50/p95.
Timings go through the async API (worker-thread hop included). Bulk data is written with
plain DB-API executemany, bypassing the repository. On SQLite the million messages go in
through a raw ``sqlite3`` connection in big transactions with the full-text (and change
feed) triggers dropped; the FTS5 index is then built once with its ``'rebuild'`` command and
the triggers are created again from the migrations' own statements, so the index is the one
the triggers would have built and the schema is left as the migrations define it. On
PostgreSQL the stored ``search_vector`` column is filled as rows are written.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import os
import pkgutil
import random
import re
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from threadline.store.db import sqlite_path
from threadline.store.repository import Store

BUDGET_LIST_MS = 50.0
BUDGET_TREE_MS = 150.0
BUDGET_SEARCH_MS = 50.0
T0 = datetime(2024, 1, 1, tzinfo=UTC)
REPLY_METADATA = json.dumps({"provider": "openai", "model": "gpt", "input_tokens": 100, "output_tokens": 50})

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


PARETO_ALPHA = 1.1
WORD_WEIGHTS = [1 - (k + 2) ** -PARETO_ALPHA for k in range(len(WORDS) - 1)] + [1.0]
"""Cumulative weights of ``WORDS``: word k has the chance that ``int(paretovariate(1.1)) - 1``
is k (the rarer tail folded into the last word), so early words are common, late ones rare."""


def sentences(rng: random.Random, count: int, low: int = 8, high: int = 40) -> list[str]:
    """``count`` sentences of ``low``..``high`` Zipf-like words plus one rare token (``w`` and
    a number below 100,000) at a random place. Drawn in one ``choices`` call per batch:
    a word at a time was 33 s of a million messages, longer than writing them."""
    lengths = rng.choices(range(low, high + 1), k=count)
    words = rng.choices(WORDS, cum_weights=WORD_WEIGHTS, k=sum(lengths))
    out, at = [], 0
    for n in lengths:
        sentence = words[at : at + n]
        at += n
        sentence.insert(rng.randrange(n + 1), f"w{rng.randrange(100_000)}")
        out.append(" ".join(sentence).capitalize() + ".")
    return out


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
        meta = None if user else REPLY_METADATA
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


BULK_BATCH = 100_000
"""Messages per transaction of the bulk load (one WAL checkpoint each, not one per row)."""
MESSAGES_PER_SESSION = 1_000
FTS_TABLE = "messages_fts"
MIGRATIONS = "threadline.store.migrations.versions"
LOADED_TABLES = ("messages", "sessions")
FTS_TRIGGERS = {"messages_fts_insert", "messages_fts_delete", "messages_fts_update"}
DROPPED_TRIGGERS = ("messages_fts_", "change_log_")
"""Triggers dropped for the load: the full-text index's (rebuilt after) and the change feed's
(a log of recent changes, nothing to rebuild). Any other trigger stays and fires per row."""


def migration_triggers() -> dict[str, str]:
    """Every SQLite trigger the migrations create, by name, as the statement the migration runs
    (found in each migration module's constants, e.g. the first one's ``SQLITE_FTS`` and the
    change feed's ``SQLITE_TRIGGERS``; a later revision's statement for a name wins)."""
    package = importlib.import_module(MIGRATIONS)
    found: dict[str, str] = {}
    for module in sorted(info.name for info in pkgutil.iter_modules(package.__path__)):
        migration = importlib.import_module(f"{MIGRATIONS}.{module}")
        for statement in (text for value in vars(migration).values() for text in _strings(value)):
            if match := re.search(r"CREATE TRIGGER (\w+)", statement):
                found[match.group(1)] = statement
    return found


def _strings(value: object) -> list[str]:
    """The strings in a module constant: itself, or the items of a list, tuple or dict's values."""
    if isinstance(value, dict):
        value = list(value.values())
    items = value if isinstance(value, list | tuple) else [value]
    return [item for item in items if isinstance(item, str)]


def stored_triggers(connection: sqlite3.Connection) -> dict[str, str]:
    """The triggers on the tables the bulk load writes, by name, with their stored SQL."""
    marks = ", ".join("?" * len(LOADED_TABLES))
    rows = connection.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({marks})", LOADED_TABLES
    )
    return dict(rows.fetchall())


def bulk_rows(
    loader: Loader, rng: random.Random, first: int, count: int
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Session and message rows for messages ``first`` .. ``first + count - 1`` (ids drawn from
    ``rng``: uuid4's system randomness is a second of a million rows)."""
    session_ids = [f"{rng.getrandbits(128):032x}" for _ in range(-(-count // MESSAGES_PER_SESSION))]
    sessions = [
        loader.session_row(sid, 20_000 + first // MESSAGES_PER_SESSION + i)
        for i, sid in enumerate(session_ids)
    ]
    texts = sentences(rng, count)
    messages = [
        loader.message_row(
            f"{rng.getrandbits(128):032x}",
            session_ids[i // MESSAGES_PER_SESSION],
            None,
            first + i,
            text,
            i % 2 == 0,
        )
        for i, text in enumerate(texts)
    ]
    return sessions, messages


def bulk_load_sqlite(path: Path, loader: Loader, rng: random.Random, count: int, seconds: float) -> int:
    """Write up to ``count`` messages within ``seconds``, then index them all at once.

    Through the triggers every row is its own FTS5 insert and its own change-feed entry (which
    doubled the CPU time of a row); FTS5's ``'rebuild'`` reads the content table once and
    writes each index segment once. Those triggers are dropped for the load (a bulk load, like
    an import, is no change a reader follows: the feed keeps only its newest entries) and
    created again from the migrations' own statements; every trigger on the loaded tables is
    then checked against what was stored before. ``synchronous=OFF`` on this connection only:
    the file is the bench's own.
    """
    known = migration_triggers()
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        before = stored_triggers(connection)
        dropped = {name for name in before if name.startswith(DROPPED_TRIGGERS)}
        if not dropped <= known.keys() or not dropped >= FTS_TRIGGERS:
            raise SystemExit(f"triggers on {LOADED_TABLES}: {sorted(before)}; migrations: {sorted(known)}")
        triggers = {name: known[name] for name in sorted(dropped)}
        connection.execute("PRAGMA synchronous=OFF")
        connection.execute("PRAGMA cache_size=-200000")  # 200 MB: the id index stays in memory
        connection.execute("BEGIN")
        for name in triggers:
            connection.execute(f"DROP TRIGGER {name}")
        connection.execute("COMMIT")
        start, written = time.perf_counter(), 0
        try:
            while written < count and time.perf_counter() - start < seconds:
                sessions, messages = bulk_rows(
                    loader, rng, 30_000 + written, min(BULK_BATCH, count - written)
                )
                connection.execute("BEGIN")
                connection.executemany(loader.session_sql, sessions)
                connection.executemany(loader.message_sql, messages)
                connection.execute("COMMIT")
                written += len(messages)
            loaded = time.perf_counter()
            print(
                f"  wrote {written:,} messages in {loaded - start:.1f} s (triggers dropped)",
                end="",
                flush=True,
            )
        finally:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            connection.execute("BEGIN")
            connection.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
            for statement in triggers.values():
                connection.execute(statement)
            connection.execute("COMMIT")
        print(f", index rebuilt and triggers restored in {time.perf_counter() - loaded:.1f} s")
        if stored_triggers(connection) != before:
            raise SystemExit("the restored triggers differ from the migration's")
        return written
    finally:
        connection.close()


def load_through_driver(loader: Loader, rng: random.Random, count: int, seconds: float) -> int:
    """Servers: executemany in batches; the stored ``search_vector`` is computed per row."""
    start, written = time.perf_counter(), 0
    while written < count and time.perf_counter() - start < seconds:
        sessions, messages = bulk_rows(loader, rng, 30_000 + written, min(20_000, count - written))
        loader.sessions(sessions)
        loader.messages(messages)
        written += len(messages)
    return written


def search_queries(rng: random.Random) -> list[str]:
    """What people type: common and rare words, two words, a word being typed, no match."""
    rare = [f"w{rng.randrange(100_000)}" for _ in range(5)]
    return [
        "the", "and", "you", "python", "reply",  # common
        "checkpoint", "postgres", "vector", "backup", "schema",  # rare words
        "database index", "token stream", "sqlite migration", "the python", "async error retry",
        "pyt", "datab", "che", "mi", "sqlite mig",  # still being typed: last word a prefix
        *rare, "w1",
        "nomatchatall", "python nomatchatall", "zz",  # nothing found
    ]  # fmt: skip


async def time_searches(store: Store, queries: Sequence[str], built: int, runs: int = 5) -> None:
    """Each query once to warm, then ``runs`` times; p50/p95 over every timed run."""
    samples: list[float] = []
    for query in queries:
        hits = await store.search(query, limit=50)
        own = []
        for _ in range(runs):
            start = time.perf_counter()
            await store.search(query, limit=50)
            own.append((time.perf_counter() - start) * 1000)
        samples += own
        print(
            f"  search {query!r:<24} {len(hits):>2} hits  "
            f"median {statistics.median(own):7.2f} ms  max {max(own):7.2f} ms"
        )
    p50 = statistics.median(samples)
    p95 = statistics.quantiles(samples, n=100, method="inclusive")[94]
    verdict = "OK" if p95 <= BUDGET_SEARCH_MS else "OVER BUDGET"
    print(
        f"  first 50 hits over {built:,} messages, {len(queries)} queries x {runs}: p50 {p50:.2f} ms, "
        f"p95 {p95:.2f} ms, max {max(samples):.2f} ms  budget {BUDGET_SEARCH_MS:.0f} ms  {verdict}"
    )


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
                functools.partial(store.list_sessions, limit=limit),
                BUDGET_LIST_MS,
            )

        # -- one long session ------------------------------------------------------------------
        start = time.perf_counter()
        sid = new_id()
        rows: list[tuple[Any, ...]] = []
        parent: str | None = None
        leaf: str | None = None
        texts = sentences(rng, 10_000, 20, 120)
        for ordinal in range(10_000):
            mid = new_id()
            user = ordinal % 2 == 0
            # Every 50th reply gets a sibling version (regenerate), as real trees do.
            branch_parent = parent
            rows.append(loader.message_row(mid, sid, branch_parent, ordinal, texts[ordinal], user))
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
        path = sqlite_path(url)
        if path is not None:
            added = bulk_load_sqlite(path, loader, rng, fts_max - 10_000, fts_seconds)
        else:
            added = load_through_driver(loader, rng, fts_max - 10_000, fts_seconds)
        built = 10_000 + added
        elapsed = time.perf_counter() - start
        print(f"built a full-text index over {built:,} messages (+{added:,} in {elapsed:.1f} s)")
        if loader.dialect == "postgresql":
            # What autovacuum would have done by now: without statistics the planner
            # walks the primary key backwards even for words that occur nowhere.
            with loader.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("ANALYZE")
        await time_searches(store, search_queries(random.Random(11)), built)
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
    parser.add_argument(
        "--fts-seconds",
        type=float,
        default=50.0,
        help="time allowed for writing the messages (SQLite: the index is built after)",
    )
    parser.add_argument("--fts-max", type=int, default=1_000_000, help="stop at this many messages")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="threadline-bench-") as tmp:
        url = args.url or Store.sqlite_url(Path(tmp) / "bench.sqlite3")
        asyncio.run(bench(url, args.fts_seconds, args.fts_max))


if __name__ == "__main__":
    main()
