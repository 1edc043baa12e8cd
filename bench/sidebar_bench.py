"""The sidebar at 100,000 chats: first fill, scroll frame times, filter latency.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/sidebar_bench.py [--count N] [--data-dir DIR]

Generates ``N`` chats (default 100,000; each with a prompt and a reply) straight
into a SQLite file with ``executemany`` (reused when ``--data-dir`` already holds
them), then opens the real engine and the real sidebar offscreen and measures:

* first fill: from ``load()`` to the first page laid out and painted;
* scrolling through the whole list a screen per frame, the view repainted
  synchronously each frame (pages are fetched as the bottom is reached, as a
  person scrolling would make them): p50 / p99 / max frame time, budget 16 ms;
* filter latency: from the query leaving the debounce to its results shown
  (titles and message text from the store), for a rare title, a common word
  and no match: p50 / max, budget 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "desktop"))

FRAME_BUDGET_MS = 16.0
FILTER_BUDGET_MS = 50.0
QUERIES = ("zeppelin voyage", "chat 4242", "generated", "nothing like this")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(data_dir: Path) -> dict[str, float]:
    from PySide6.QtCore import QModelIndex

    from threadline.core.session import SessionInfo
    from threadline.engine.engine import Engine
    from threadline.ui.sessions.session_sidebar import SessionSidebar

    engine = await Engine.open(data_dir)
    sidebar = SessionSidebar()
    sidebar.resize(300, 900)
    sidebar.show()
    sidebar.set_engine(engine)
    view, model = sidebar.list, sidebar.model
    errors: list[str] = []
    sidebar.errorMessage.connect(errors.append)
    try:
        appends: list[float] = []
        append_page = model.append_page

        def timed_append(page: list[SessionInfo]) -> int:
            """A page arriving blocks the UI thread too: it counts as a frame."""
            t = time.perf_counter()
            try:
                return append_page(page)
            finally:
                appends.append((time.perf_counter() - t) * 1000)

        model.append_page = timed_append  # type: ignore[method-assign]
        started = time.perf_counter()
        await sidebar.load()
        view.executeDelayedItemsLayout()
        view.viewport().repaint()
        first_fill = (time.perf_counter() - started) * 1000

        bar = view.verticalScrollBar()
        frames: list[float] = []
        waits = 0
        while True:
            t = time.perf_counter()
            bar.setValue(min(bar.maximum(), bar.value() + bar.pageStep()))
            view.executeDelayedItemsLayout()
            view.viewport().repaint()
            frames.append((time.perf_counter() - t) * 1000)
            if bar.value() >= bar.maximum():
                if model.complete:
                    break
                before = model.loaded_count()
                if model.canFetchMore(QModelIndex()):  # the view asked already, unless it was busy
                    model.fetchMore(QModelIndex())
                waits += 1
                deadline = time.monotonic() + 30
                while model.loaded_count() == before and not model.complete:
                    await asyncio.sleep(0.001)  # the page is read on the store's thread
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"no page after {before} sessions: {errors}")
            await asyncio.sleep(0)

        filters: list[float] = []
        for query in QUERIES * 3:
            sidebar.filter.blockSignals(True)
            sidebar.filter.setText(query)
            sidebar.filter.blockSignals(False)
            done = asyncio.get_running_loop().create_future()

            def finished(_q: str, done: asyncio.Future[None] = done) -> None:
                if not done.done():
                    done.set_result(None)

            sidebar.searchFinished.connect(finished)
            t = time.perf_counter()
            sidebar._run_search()  # what the debounce timer calls
            await asyncio.wait_for(done, 10)
            sidebar.hits.executeDelayedItemsLayout()
            sidebar.hits.viewport().repaint()
            filters.append((time.perf_counter() - t) * 1000)
            sidebar.searchFinished.disconnect(finished)
        frames += appends[1:]  # the first page is the first fill
        return {
            "sessions_loaded": float(model.loaded_count()),
            "first_fill_ms": round(first_fill, 1),
            "scroll_frames": float(len(frames)),
            "scroll_page_waits": float(waits),
            "page_append_max_ms": round(max(appends), 2),
            "scroll_p50_ms": round(statistics.median(frames), 2),
            "scroll_p99_ms": round(p(frames, 0.99), 2),
            "scroll_max_ms": round(max(frames), 2),
            "filter_p50_ms": round(statistics.median(filters), 1),
            "filter_max_ms": round(max(filters), 1),
        }
    finally:
        sidebar.detach()
        sidebar.hide()
        await engine.aclose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()

    from tests.ui.sessions.generated_sessions import DATABASE_FILENAME, generate

    data_dir: Path = args.data_dir or Path(f"/tmp/threadline-sidebar-bench-{args.count}")
    if not (data_dir / DATABASE_FILENAME).exists():
        t = time.perf_counter()
        generate(data_dir, args.count)
        print(f"generated {args.count} chats in {time.perf_counter() - t:.1f} s into {data_dir}")

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        result = loop.run_until_complete(measure(data_dir))
    for key, value in result.items():
        print(f"{key:20} {value:g}")
    ok = result["scroll_p99_ms"] <= FRAME_BUDGET_MS and result["filter_max_ms"] <= FILTER_BUDGET_MS
    print(
        f"budgets: scroll p99 <= {FRAME_BUDGET_MS:g} ms, filter <= {FILTER_BUDGET_MS:g} ms: "
        + ("met" if ok else "NOT met")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
