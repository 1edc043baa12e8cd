"""Find in a chat at 10,000 messages: time to the first match and to the full count.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/find_bench.py [--count N] [--runs R]

Builds a conversation of ``N`` messages (default 10,000: prompts and replies of a few
hundred characters, every tenth reply with a tool call and a tool result) and measures,
for a rare word (in one message near the end), a common word (in every reply) and a word
that is nowhere:

* cold: the first search of a chat (each message's text lowered and kept);
* warm: a search again after a key (the prepared texts reused), as the find bar does
  while the user types;
* ``first``: until the first match is known (lazy search, ``iter_matches``);
* ``all``: until every match is counted (capped at 10,000 like the bar: "10,000+");
* ``bar``: the real find bar searching a real ConversationModel of the same messages
  (offscreen), from the query to the "n of m" label, view scrolled to the match; and what
  opening it costs (it reads the messages and builds the search text then, so that the
  first key is a warm search). A reply is searched as it is rendered, so its Markdown is
  parsed once (``ui/chat/find/find_shown_text.py``) in slices between frames: the time until
  the chat is searchable is given, and the longest slice (what a frame waits at most);
* ``markdown``: the same for a chat whose replies are Markdown (bold, links, code, lists,
  a code block; every one different, so nothing comes from the cache);
* ``first match``: time to the first match on a cold chat of ``N / 2`` Markdown replies
  (nothing parsed yet, the view at its end as a chat opens), through the real bar: Ctrl+F,
  the query typed, until a current match exists — for a word in the last reply (on
  screen), one only in the first reply (the top: made last of all) and one only just above
  the view (the 7th reply from the end, within the about two screens above the view that
  are made right after the rows on screen; ``ViewRows.order``). Texts are searched as they
  are made. Given from Ctrl+F (which includes the bar's 40 ms typing pause, so not held to
  the budget) and from the search's start, with the count shown then and once the whole
  chat is searched, and the rows on screen and above it made first.

Budget: 50 ms to the first match. Prints p50 / max of ``R`` runs (default 5).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "desktop"))

from tests.support.ui_fakes import FakeLive  # noqa: E402

from threadline.core.find_text import FindIndex, find_matches, iter_matches  # noqa: E402
from threadline.core.messages import Message, ToolCall  # noqa: E402

BUDGET_MS = 50.0
MAX_MATCHES = 10_000
QUERIES = {"rare": "zeppelin", "common": "paragraph", "none": "nothing like this"}
FILLER = (
    "This is a generated paragraph about nothing in particular, long enough to look like a "
    "real answer: it mentions files, functions, a few numbers such as 42 and 1,024, and a "
    "closing sentence that wraps up the thought. "
)


def build(count: int) -> FakeLive:
    live = FakeLive()
    for i in range(count // 2):
        live.user_says(f"Question {i}: tell me more about topic {i % 97}?")
        live.begin()
        live.delta(FILLER * 2 + (" The zeppelin lands here." if i == count // 2 - 7 else ""))
        if i % 10 == 0:
            live.finish(tool_calls=(ToolCall(f"c{i}", "search", f'{{"query": "topic {i}"}}'),))
            live.cancel()
        else:
            live.finish()
    return live


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def row(label: str, values: list[float], budget: float | None = BUDGET_MS) -> str:
    flag = "" if budget is None or max(values) <= budget else "  (over budget)"
    return f"  {label:<28} p50 {statistics.median(values):7.2f} ms   max {max(values):7.2f} ms{flag}"


def pure(messages: list[Message], runs: int) -> None:
    versions = [0] * len(messages)
    print(f"core.find_text over {len(messages):,} messages")
    for name, query in QUERIES.items():
        cold_first, cold_all, warm_first, warm_all = [], [], [], []
        for _ in range(runs):

            def first(index: FindIndex, query: str = query) -> object:
                return next(iter_matches(messages, query, index=index, versions=versions), None)

            def every(index: FindIndex, query: str = query) -> object:
                return find_matches(messages, query, index=index, versions=versions, limit=MAX_MATCHES + 1)

            cold_first.append(timed(lambda: first(FindIndex())))
            index = FindIndex()
            cold_all.append(timed(lambda index=index: every(index)))  # type: ignore[misc]
            warm_first.append(timed(lambda index=index: first(index)))  # type: ignore[misc]
            warm_all.append(timed(lambda index=index: every(index)))  # type: ignore[misc]
        found = len(find_matches(messages, query, limit=MAX_MATCHES + 1))
        print(f" {name} ({query!r}, {found:,}{'+' if found > MAX_MATCHES else ''} matches)")
        print(row("cold, first match", cold_first))
        print(row("cold, all matches", cold_all))
        print(row("warm, first match", warm_first))
        print(row("warm, all matches", warm_all))


MARKDOWN = (
    "Here is **step {i}** of the plan, with `code_{i}` and a [link](https://example.com/{i}).\n\n"
    "- first point about topic {i}\n- second *point* with a paragraph of words in it\n\n"
    "```python\nprint({i})\n```\n\nA closing paragraph that wraps up item {i} in a sentence or two."
)


NEAR_AND_FAR = {
    "on screen (last reply)": "kestrel",
    "top of the chat (first reply)": "aardvark",
    "just above the view (7th reply from the end)": "zeppelin",
}
"""The texts are made from the rows on screen and about two screens above them, then down
from the view, then upward: the reply just above the view is made in the first slice, the
first reply last."""


def build_markdown(count: int) -> FakeLive:
    live = FakeLive()
    for i in range(count // 2):
        live.user_says(f"Question {i}: and then?")
        live.begin()
        extra = " The zeppelin lands here." if i == count // 2 - 7 else ""
        extra += " An aardvark digs." if i == 0 else ""
        extra += " A kestrel hovers." if i == count // 2 - 1 else ""
        live.delta(MARKDOWN.format(i=i) + extra)
        live.finish()
    return live


def find_host(live: FakeLive) -> tuple[Any, Any, Any, Any, Any]:
    """A chat view over ``live`` with a message box under it and the find bar installed, shown
    at a window's size: (host, model, view, composer, find)."""
    from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

    from threadline.ui.chat.find.find_bar import install_find
    from threadline.ui.chat.view.chat_view import ChatView
    from threadline.ui.chat.view.conversation_model import ConversationModel

    host = QWidget()
    layout = QVBoxLayout(host)
    model = ConversationModel(live, host)  # type: ignore[arg-type]  # the tests' fake has no last_context
    view = ChatView()
    view.setModel(model)
    composer = QLineEdit()
    layout.addWidget(view, 1)
    layout.addWidget(composer)
    find = install_find(host, view, model, focus_back=composer.setFocus)
    host.resize(900, 700)
    host.show()
    return host, model, view, composer, find


def bar(live: FakeLive, runs: int, title: str = "") -> None:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    _host, model, view, _composer, find = find_host(live)  # _host: kept alive while measured
    app.processEvents()
    slices: list[float] = []
    prepare = find._prepare_some

    def timed_slice() -> None:
        slices.append(timed(prepare))

    find._preparing.timeout.disconnect()
    find._preparing.timeout.connect(timed_slice)
    start = time.perf_counter()
    opened = timed(find.open)
    while find.preparing:
        app.processEvents()
    ready = (time.perf_counter() - start) * 1000
    rows = f"{model.rowCount():,} rows{title}"
    print(f"find bar over a ConversationModel of {rows} (query to label, view scrolled)")
    print(f"  Ctrl+F (bar shown, messages read): {opened:.1f} ms")
    longest = max(slices, default=0.0)
    made = f"text made in {len(slices)} slices, longest {longest:.1f} ms"
    print(f"  Ctrl+F to searchable ({made}): {ready:.1f} ms")
    for name, query in QUERIES.items():
        times = []
        for _ in range(runs):
            find.edit.blockSignals(True)
            find.edit.setText(query)
            find.edit.blockSignals(False)
            times.append(timed(find.search))
            view.viewport().repaint()
        print(f" {name}: {find.count.text()!r}")
        print(row("search + scroll", times))


def first_match(live: FakeLive, runs: int) -> None:
    """Time to the first match through the real bar on a cold Markdown chat (see the module doc)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    rows = len(list(live.conversation.path()))
    print(
        f"time to first match, cold chat of {rows // 2:,} Markdown replies ({rows:,} rows), view at its end"
    )
    for name, query in NEAR_AND_FAR.items():
        from_key, from_search, labels = [], [], []
        for _ in range(runs):
            host, _model, _view, composer, find = find_host(live)  # a new bar: no reply parsed yet
            host.activateWindow()
            composer.setFocus()
            app.processEvents()
            searched: list[float] = []
            find._typing.timeout.disconnect()
            find._typing.timeout.connect(lambda searched=searched: searched.append(time.perf_counter()))
            find._typing.timeout.connect(find.search)
            start = time.perf_counter()
            QTest.keyClick(composer, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
            if not find.isVisible():
                find.open()  # no active window on this platform: the shortcut did not fire
            QTest.keyClicks(find.edit, query)
            while find.current_match is None and time.perf_counter() - start < 60:
                app.processEvents()
            found = time.perf_counter()
            shown = find.count.text()
            early = find._early
            near = f"rows {early.view.near_top:,}-{early.view.end - 1:,} first" if early else "all made"
            while find.preparing:
                app.processEvents()
            exact = (time.perf_counter() - start) * 1000
            from_key.append((found - start) * 1000)
            from_search.append((found - searched[0]) * 1000 if searched else float("nan"))
            labels.append(f"{shown!r}, then {find.count.text()!r} at {exact:.0f} ms ({near})")
            host.close()
            host.deleteLater()
            app.processEvents()
        print(f" {name} ({query!r}): {labels[-1]}")
        print(row("Ctrl+F + typing to match", from_key, budget=None))
        print(row("search start to match", from_search))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    live = build(args.count)
    messages = list(live.conversation.path())
    print(f"built {len(messages):,} messages in {time.perf_counter() - start:.1f} s")
    pure(messages, args.runs)
    bar(live, args.runs)
    markdown = build_markdown(args.count)
    bar(markdown, args.runs, ", Markdown replies")
    first_match(markdown, args.runs)


if __name__ == "__main__":
    main()
