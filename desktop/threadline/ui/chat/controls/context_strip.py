"""A one-line strip above the composer: what the sticky context of the last request held.

It says nothing loud while all is well ("Context: 2 files, 1 hook"), and names what the
user should know after each request: files that are missing, unreadable or refused, hooks
that failed or timed out, and what was left out over budget, with the reason. The full
list is in the tooltip and in the Context dialog. Its "Context…" button opens the dialog
where the session's own sticky context is edited (``context_dialog.py``).

The strip follows ``ContextGathered`` events (``show_gathered``) and the session's
configured context (``show_configured``) until the first request is made.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from threadline.core.gathered_context import GatheredContext
from threadline.core.sticky import StickyContext

MAX_NAMED = 2
"""Problems named in the line itself; the rest are counted (all are in the tooltip)."""


def summary(gathered: GatheredContext) -> str:
    """The strip's line for a request's sticky context ("" when there is nothing to say)."""
    parts = []
    files = sum(1 for p in gathered.pieces if p.kind == "file")
    hooks = len(gathered.pieces) - files
    if files or hooks:
        parts.append("Context: " + _counted(files, "file", hooks))
    named = [f"{_short(p.label)} {p.reason.split(':')[0]}" for p in gathered.problems[:MAX_NAMED]]
    if gathered.problems:
        more = len(gathered.problems) - len(named)
        parts.append("⚠ " + "; ".join(named) + (f"; {more} more" if more > 0 else ""))
    if gathered.left_out:
        names = ", ".join(_short(o.label) for o in gathered.left_out[:MAX_NAMED])
        more = len(gathered.left_out) - MAX_NAMED
        extra = f" and {more} more" if more > 0 else ""
        parts.append(f"Left out (over budget): {names}{extra}")
    return "  ·  ".join(parts)


def details(gathered: GatheredContext) -> str:
    """Every piece, problem and left-out item with its reason (rich text for a tooltip)."""
    lines = []
    if gathered.problems:
        lines.append("<b>Not sent</b>")
        lines += [f"{escape(p.label)} — {escape(p.reason)}" for p in gathered.problems]
    if gathered.left_out:
        lines.append("<b>Left out over budget</b>")
        lines += [f"{escape(o.label)} — {escape(o.reason)}" for o in gathered.left_out]
    if gathered.pieces:
        window = f"{gathered.window_tokens:,}" + ("" if gathered.window_known else " (assumed)")
        lines.append(
            f"<b>Sent</b> (≈{gathered.tokens:,} of {gathered.budget_tokens:,} tokens allowed; "
            f"window {window})"
        )
        lines += [f"{escape(p.label)} — ≈{p.tokens:,} tokens" for p in gathered.pieces]
    return "<br>".join(lines)


def configured_summary(context: StickyContext) -> str:
    """The line before any request: what the session itself adds."""
    if not context:
        return ""
    counted = _counted(len(context.sources), "source", len(context.hooks))
    return f"Context: {counted}, read with each message"


class ContextStrip(QWidget):
    """The line and the "Context…" button; ``editRequested`` when the button is pressed."""

    editRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ContextStrip")
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 0, 2, 0)
        row.setSpacing(6)
        self.text = QLabel()
        self.text.setObjectName("Hint")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.text.setAccessibleName("Sticky context")
        self.button = QPushButton("Context…")
        self.button.setObjectName("FlatButton")
        self.button.setToolTip("Files, folders and commands this chat sends with every message")
        self.button.setAccessibleName("Edit this chat's sticky context")
        self.button.clicked.connect(self.editRequested)
        row.addWidget(self.text, 1)
        row.addWidget(self.button)
        self.gathered: GatheredContext | None = None

    def show_gathered(self, gathered: GatheredContext) -> None:
        self.gathered = gathered
        self._set(summary(gathered), details(gathered), warn=gathered.has_news)

    def show_configured(self, context: StickyContext) -> None:
        """Before the first request of this tab: what is configured (a request replaces it)."""
        if self.gathered is None:
            self._set(configured_summary(context), "", warn=False)

    def _set(self, text: str, tooltip: str, *, warn: bool) -> None:
        self.text.setText(text)
        self.text.setToolTip(tooltip)
        self.text.setAccessibleDescription(tooltip)
        self.text.setObjectName("ContextWarning" if warn else "Hint")
        self.text.style().unpolish(self.text)
        self.text.style().polish(self.text)


def _counted(files: int, noun: str, hooks: int) -> str:
    parts = []
    if files:
        parts.append(f"{files} {noun}{'' if files == 1 else 's'}")
    if hooks:
        parts.append(f"{hooks} hook{'' if hooks == 1 else 's'}")
    return ", ".join(parts) or "nothing"


def _short(label: str) -> str:
    """A path's last part (a hook's label as it is): the line has little room."""
    if label.startswith("Hook: "):
        return label
    return label.rstrip("/").rsplit("/", 1)[-1] or label
