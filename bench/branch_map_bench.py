"""The branch map at 10,000 messages: layout time and paint time per frame.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/branch_map_bench.py [--size N] [--runs R]

Builds a seeded tree of ``N`` messages (default 10,000) with a branch every dozen
messages — versions, edited prompts, tangents, branches of branches
(tests/support/branchy_trees.py) — then measures:

* layout: ``layout_conversation`` alone (the pure grid, core/tree_layout.py), ``R`` runs;
* relayout: the widget's ``relayout`` (layout + checkpoints + scroll ranges), what the
  panel pays after a new message or a path switch, ``R`` runs;
* paint: the map scrolled through the whole tree a screen per frame, each frame
  repainted synchronously; the time inside ``paintEvent``; budget 16 ms a frame;
* paint with the hover halo and the focus ring on, in the middle of the tree.

Figures are p50 / p99 / max in milliseconds.
"""

from __future__ import annotations

import argparse
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


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def line(name: str, values: list[float], budget: float | None = None) -> str:
    text = (
        f"{name:<28} p50 {p(values, 0.5):7.2f} ms   p99 {p(values, 0.99):7.2f} ms   "
        f"max {max(values):7.2f} ms   mean {statistics.fmean(values):7.2f} ms   n={len(values)}"
    )
    if budget is not None:
        text += f"   (budget {budget:.0f} ms: {'ok' if p(values, 0.99) <= budget else 'OVER'})"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication
    from tests.support.branchy_trees import branchy_tree

    from threadline.core.tree_layout import layout_conversation
    from threadline.ui.chat.branch_map.branch_map import BranchMap
    from threadline.ui.common.theme import DARK

    app = QApplication.instance() or QApplication([])
    tree = branchy_tree(args.size)
    path = tree.path()
    tree.set_checkpoint("start", path[0].id)
    tree.set_checkpoint("middle", path[len(path) // 2].id)

    layouts: list[float] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        layout = layout_conversation(tree)
        layouts.append((time.perf_counter() - started) * 1000)
    branches = layout.branch_count
    print(
        f"tree: {len(layout):,} messages, {branches:,} branches, {layout.row_count:,} rows, "
        f"{layout.column_count} columns, shown path {len(path):,} messages"
    )
    print(line("layout (core)", layouts))

    view = BranchMap()
    view.set_colors(DARK)
    view.resize(280, 900)
    view.show()
    view.set_tree(tree)
    app.processEvents()
    relayouts: list[float] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        view.relayout()
        relayouts.append((time.perf_counter() - started) * 1000)
    print(line("relayout (widget)", relayouts))

    paints: list[float] = []
    view.paint_hook = paints.append
    bar = view.verticalScrollBar()
    bar.setValue(0)
    while True:
        view.viewport().repaint()
        if bar.value() >= bar.maximum():
            break
        bar.setValue(bar.value() + bar.pageStep())
    print(line("paint, scrolling through", paints, FRAME_BUDGET_MS))

    paints.clear()
    view.setFocus(Qt.FocusReason.OtherFocusReason)
    middle = path[len(path) // 2].id
    view.set_current(middle)
    point = view.message_point(middle)
    assert point is not None
    view._hover = view.tree_layout.index_of[middle]  # the halo a mouse over it draws
    for _ in range(args.runs * 3):
        view.viewport().repaint()
    print(line("paint, hover + focus", paints, FRAME_BUDGET_MS))
    view.close()


if __name__ == "__main__":
    main()
