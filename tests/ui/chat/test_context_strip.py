"""The context strip's line and tooltip for what a request's sticky context held."""

from __future__ import annotations

from typing import Any

from threadline.core.gathered_context import (
    ContextOrigin,
    ContextPiece,
    ContextProblem,
    GatheredContext,
    LeftOut,
)
from threadline.core.sticky import ContextHook, ContextSource, StickyContext
from threadline.ui.chat.controls.context_strip import ContextStrip, summary


def piece(label: str, kind: str = "file") -> ContextPiece:
    return ContextPiece(label, "text", 10, ContextOrigin.SESSION, kind)


def test_the_line_counts_what_was_sent_and_names_problems_and_what_was_left_out() -> None:
    gathered = GatheredContext(
        pieces=(piece("/p/a.md"), piece("/p/b.md"), piece("Hook: Branch", "hook")),
        left_out=(LeftOut("/p/big.log", "over budget: needs ≈9,000 tokens"), LeftOut("/p/c.md", "over")),
        problems=(
            ContextProblem("/p/gone.md", "missing: the file does not exist"),
            ContextProblem("Hook: Slow", "did not finish within 1 s and was stopped"),
            ContextProblem("/p/img.png", "refused: a binary file"),
        ),
        budget_tokens=1000,
        window_tokens=8000,
    )
    assert summary(gathered) == (
        "Context: 2 files, 1 hook  ·  ⚠ gone.md missing; Hook: Slow did not finish within 1 s and was "
        "stopped; 1 more  ·  Left out (over budget): big.log, c.md"
    )
    assert summary(GatheredContext()) == ""


def test_the_strip_warns_only_when_there_is_news_and_lists_every_item(qtbot: Any) -> None:
    strip = ContextStrip()
    qtbot.addWidget(strip)
    strip.show_configured(StickyContext(sources=(ContextSource("a.md"),), hooks=(ContextHook("date"),)))
    assert strip.text.text() == "Context: 1 source, 1 hook, read with each message"
    strip.show_gathered(GatheredContext(pieces=(piece("/p/a.md"),), budget_tokens=100, window_tokens=200))
    assert strip.text.objectName() == "Hint" and strip.text.text() == "Context: 1 file"
    strip.show_configured(StickyContext())  # a request's result stays until the next request
    assert strip.text.text() == "Context: 1 file"
    strip.show_gathered(
        GatheredContext(
            left_out=(LeftOut("/p/big.log", "over budget: needs ≈9,000 tokens"),), budget_tokens=100
        )
    )
    assert strip.text.objectName() == "ContextWarning"
    assert "/p/big.log — over budget: needs ≈9,000 tokens" in strip.text.toolTip()
