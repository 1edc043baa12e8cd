"""The order a long chat is made searchable in, and the search of what is made so far.

The find bar (``find_bar``) searches each reply's text as rendered (``find_shown_text``),
which costs 0.1-1 ms a reply to make; a chat of thousands of replies is made a slice at a
time between frames. These pure pieces decide which rows are made first (around the view:
where a remembered word usually is), search the rows made so far without searching any row
twice, and choose which match the bar shows first, the same whether every text was made
already or not. No Qt here, so the rules are tested as tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from threadline.core.find_text import Match, find_matches
from threadline.core.messages import Message
from threadline.ui.chat.find.find_shown_text import ShownTexts

NEAR_SCREENS_ABOVE = 2
"""The screens above the view made searchable right after the rows on screen."""
NEAR_ROWS_ABOVE = 16
"""At least this many rows above the view are made so (about two screens of a prompt and a
reply each: rows above the view are not laid out, so their heights are not known)."""


@dataclass(frozen=True, slots=True)
class ViewRows:
    """Where the view is, in rows of the path: ``top`` (its first row), ``end`` (one past its
    last) and ``near_top``, the first row of the about two screens above it."""

    top: int
    end: int
    near_top: int

    @classmethod
    def around(cls, top: int, end: int, count: int) -> ViewRows:
        """The rows ``top`` to ``end`` on screen, in a path of ``count`` rows; rows above are
        not laid out, so two screens above are taken as twice the rows on screen (at least
        ``NEAR_ROWS_ABOVE``: prompts above are short)."""
        top = max(0, min(top, count))
        end = max(top + 1, min(end, count)) if count else 0
        above = max(NEAR_ROWS_ABOVE, NEAR_SCREENS_ABOVE * (end - top))
        return cls(top, end, max(0, top - above))

    def order(self, count: int) -> list[int]:
        """The rows in the order they are made searchable: those on screen, the two screens
        above them (nearest first), the rows below the view, then the rest above (nearest
        first). Each row made keeps the made ones one unbroken run of rows."""
        return (
            list(range(self.top, self.end))
            + list(range(self.top - 1, self.near_top - 1, -1))
            + list(range(self.end, count))
            + list(range(self.near_top - 1, -1, -1))
        )


@dataclass(slots=True)
class EarlySearch:
    """A search of the texts made so far, while a long chat is still being made searchable.

    Rows are searched in the order they are made (``ViewRows.order``), so the rows searched
    are always one run, ``low`` to ``high`` (exclusive): each new one is just below it or
    just above it. ``searched`` rows of that order are searched; the next ones are searched
    once made, so no row is searched twice.
    """

    messages: list[Message]
    """The path searched (the bar's snapshot of it)."""
    shown: ShownTexts
    """The chat's shown texts, which the bar is making."""
    view: ViewRows
    order: list[int]
    searched: int = 0
    low: int = 0
    high: int = 0

    @classmethod
    def of(cls, messages: list[Message], shown: ShownTexts, view: ViewRows) -> EarlySearch:
        return cls(messages, shown, view, view.order(len(messages)), low=view.top, high=view.top)

    def ready_rows(self) -> tuple[list[int], list[int]]:
        """The rows made since the last call, up to the first one not made yet: those above
        the run searched and those below it, each top to bottom."""
        count = len(self.order)
        end = self.searched
        while end < count and self.shown.prepared(self.messages[self.order[end]]):
            end += 1
        above: list[int] = []
        below: list[int] = []
        for row in self.order[self.searched : end]:
            if row >= self.high:
                below.append(row)
                self.high = row + 1
            else:
                above.append(row)
                self.low = row
        self.searched = end
        return above[::-1], below

    @property
    def done(self) -> bool:
        return self.searched >= len(self.order)


def preparation_order(messages: list[Message], shown: ShownTexts, view: ViewRows) -> list[Message]:
    """The messages whose shown text is still to be made, last to be made first (popped
    from the end), in ``ViewRows.order``."""
    return [messages[r] for r in reversed(view.order(len(messages))) if not shown.prepared(messages[r])]


def match_to_show(matches: list[Match], view: ViewRows, low: int, high: int, count: int) -> int | None:
    """Which of ``matches`` (in the chat's order, found in rows ``low`` to ``high`` of
    ``count``) the bar goes to first, or None while that is not known yet.

    The first one on screen from the view's top; else the nearest in the two screens above
    (what the user just scrolled past: a browser's find wraps, and the nearest is what is
    expected); else the first below the view; else the nearest above it. Whether texts were
    made already or are being made, the same match is chosen: the rows are made in that
    order (``ViewRows.order``), and it is chosen as soon as the rows it depends on are made."""
    rows = [m.message_index for m in matches]
    on_screen = [i for i, r in enumerate(rows) if view.top <= r < view.end]
    if on_screen:
        return on_screen[0]  # the run searched starts at the top: none on screen above it is missed
    if low > view.near_top or high < view.end:
        return None
    near_above = [i for i, r in enumerate(rows) if view.near_top <= r < view.top]
    if near_above:
        return near_above[-1]
    below = [i for i, r in enumerate(rows) if r >= view.end]
    if below:
        return below[0]
    if high < count:
        return None
    above = [i for i, r in enumerate(rows) if r < view.top]
    if above:
        return above[-1]
    return None


def search_rows(
    messages: list[Message],
    shown: ShownTexts,
    rows: list[int],
    query: str,
    *,
    case_sensitive: bool,
    limit: int,
) -> list[Match]:
    """The matches in ``messages`` at ``rows``, in that order (each match's ``message_index``
    its row in ``messages``)."""
    found = find_matches(
        [messages[r] for r in rows], query, case_sensitive=case_sensitive, limit=limit, shown_text=shown
    )
    return [Match(rows[m.message_index], m.part, m.offset, m.length) for m in found]
