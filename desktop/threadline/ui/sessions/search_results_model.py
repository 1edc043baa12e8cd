"""Rows of the sidebar's filter results: title matches first, then full-text hits.

Each query replaces the whole list, so a reset is the honest signal here; it is
never used for streamed content.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from threadline.core.session import SNIPPET_CLOSE, SNIPPET_OPEN, SearchHit, SessionInfo

ResultRole = Qt.ItemDataRole.UserRole + 1

AnyIndex = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class SearchResult:
    session_id: str
    title: str
    snippet: str
    """With SNIPPET_OPEN/SNIPPET_CLOSE around the matched words."""
    message_id: str | None = None


def mark_title(title: str, query: str) -> str:
    """``title`` with every case-insensitive occurrence of ``query`` marked as a hit."""
    q = query.strip().lower()
    if not q:
        return title
    out, i, low = [], 0, title.lower()
    while (j := low.find(q, i)) >= 0:
        out.append(title[i:j] + SNIPPET_OPEN + title[j : j + len(q)] + SNIPPET_CLOSE)
        i = j + len(q)
    out.append(title[i:])
    return "".join(out)


def split_snippet(snippet: str) -> list[tuple[str, bool]]:
    """[(text, is_hit)] pieces of a marked snippet."""
    pieces: list[tuple[str, bool]] = []
    hit = False
    buf = ""
    for ch in snippet:
        if ch == SNIPPET_OPEN:
            if buf:
                pieces.append((buf, hit))
            buf, hit = "", True
        elif ch == SNIPPET_CLOSE:
            if buf:
                pieces.append((buf, hit))
            buf, hit = "", False
        else:
            buf += ch
    if buf:
        pieces.append((buf, hit))
    return pieces


def centre_on_hit(
    pieces: list[tuple[str, bool]], width: int, advance: Callable[[str, bool], int]
) -> list[tuple[str, bool]]:
    """``pieces`` cut so that the first hit shows in a line ``width`` wide.

    The store's snippet is a window of words around the hits, longer than a sidebar row, and
    the hit can sit at its end: drawn from the start, the row would show only the words before
    it. When the words before the first hit do not leave room for it, the ones furthest from it
    give way to "…", starting at a word, until the hit begins about a third of the way in.
    ``advance(text, is_hit)`` is the width the row's fonts give ``text``.
    """
    first = next((i for i, (_, hit) in enumerate(pieces) if hit), None)
    if first is None:
        return pieces
    lead = "".join(text for text, _ in pieces[:first])
    if advance(lead, False) + advance(pieces[first][0], True) <= width:
        return pieces
    room = max(width // 3, 0)
    cut = len(lead)
    for at in range(len(lead)):
        if (at == 0 or lead[at - 1] == " ") and advance("…" + lead[at:], False) <= room:
            cut = at
            break
    kept = lead[cut:]
    return [("…" + kept, False), *pieces[first:]] if cut else pieces


class SearchResultsModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self.query = ""

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._results)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._results)):
            return None
        r = self._results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return r.title
        if role == ResultRole:
            return r
        if role == Qt.ItemDataRole.ToolTipRole:
            return r.title
        return None

    def result(self, row: int) -> SearchResult | None:
        return self._results[row] if 0 <= row < len(self._results) else None

    def set_results(self, query: str, titles: list[SessionInfo], hits: list[SearchHit]) -> None:
        self.beginResetModel()
        self.query = query
        results = [SearchResult(s.id, s.display_title, mark_title(s.display_title, query)) for s in titles]
        for h in hits:
            results.append(SearchResult(h.session_id, h.session_title or "New chat", h.snippet, h.message_id))
        self._results = results
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._results = []
        self.query = ""
        self.endResetModel()
