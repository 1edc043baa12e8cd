"""Three compare columns streaming at 1,000 tokens/s each: ``python bench/compare_bench.py [TOKENS]``.

One chat tab sends one prompt to three models at once (``Engine.send_compare``) while
the replay server (its own process, as in ``ui_bench.py``) streams each reply at
~1,000 tokens/s; a 2 ms asyncio ticker records how late each tick runs. Prints the
event-loop stall p50/p99/max against the frame budget (16 ms), the tokens/s each
column got, and whether every column holds its whole reply. Runs offscreen.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "desktop")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("THREADLINE_BENCH_KEY", "sk-bench")

from bench.ui_bench import open_bench_engine, stall_pieces, start_server, window_with_tabs  # noqa: E402

WORKERS = 3
FRAME_BUDGET_MS = 16.0


def measure(data_dir: str, tokens: int) -> dict[str, float]:
    from threadline.app.start import create_application
    from threadline.core.compare import CompareTarget

    _app, theme, loop = create_application()
    server = start_server(WORKERS, tokens)  # three scripted streams, one per worker
    expected = "".join(stall_pieces(tokens))

    async def go() -> dict[str, float]:
        engine = await open_bench_engine(data_dir, server.base_url)
        window, (tab,) = await window_with_tabs(theme, data_dir, engine, 1)
        lateness: list[float] = []
        stop = asyncio.Event()

        async def ticker() -> None:
            interval = 0.002
            while not stop.is_set():
                t = time.perf_counter()
                await asyncio.sleep(interval)
                lateness.append(max(0.0, (time.perf_counter() - t - interval) * 1000))

        targets = tuple(CompareTarget("replay", f"model-{i}") for i in range(WORKERS))
        tab.composer.compare_button.set_ticked(targets)
        tick = asyncio.create_task(ticker())
        start = time.perf_counter()
        tab.composer.set_text("Stream please")
        tab.composer.submit()
        await asyncio.sleep(0.05)
        while engine.turns.running(tab.session_id):
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - start
        stop.set()
        await tick
        columns = tab.compare_view.columns
        words = expected.split()  # the column shows Markdown once a reply ends: compare the words
        complete = all(c.body.toPlainText().split() == words for c in columns)
        prompt = next(m for m in tab.live.conversation.tree if m.text == "Stream please")
        stored = tab.live.conversation.tree.children(prompt.id)
        window.hide()
        await engine.aclose()
        lateness.sort()
        return {
            "columns": float(len(columns)),
            "stall_p50_ms": lateness[len(lateness) // 2],
            "stall_p99_ms": lateness[int(len(lateness) * 0.99)],
            "stall_max_ms": lateness[-1],
            "stream_seconds": elapsed,
            "tokens_per_s_per_column": tokens / elapsed,
            "complete": float(
                complete and len(stored) == WORKERS and all(r.text == expected for r in stored)
            ),
        }

    try:
        with loop:
            return loop.run_until_complete(go())
    finally:
        server.close()


def main() -> None:
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    with tempfile.TemporaryDirectory(prefix="threadline-compare-bench-") as data_dir:
        result = measure(data_dir, tokens)
    print(json.dumps(result, indent=2))
    verdict = "within" if result["stall_p99_ms"] <= FRAME_BUDGET_MS else "OVER"
    print(
        f"{WORKERS} columns × {result['tokens_per_s_per_column']:.0f} tokens/s: loop stall p99 "
        f"{result['stall_p99_ms']:.1f} ms ({verdict} the {FRAME_BUDGET_MS:.0f} ms frame budget), "
        f"p50 {result['stall_p50_ms']:.1f} ms, max {result['stall_max_ms']:.1f} ms; "
        f"complete: {bool(result['complete'])}"
    )


if __name__ == "__main__":
    main()
