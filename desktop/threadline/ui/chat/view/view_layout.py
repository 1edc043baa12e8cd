"""Where the chat view's rows are: a height per row and an anchor, measured only where visible.

The view keeps a height per row — an estimate from the text length until the row has been
seen, then its measured height — and an *anchor*: the top visible row and how far it is
scrolled. Filling the viewport measures only the rows that intersect it, so the cost of a
frame depends on what is visible, not on the length of the conversation, and a corrected
estimate above the anchor never moves what the user is looking at. While the view
*sticks* to the bottom (the user has not scrolled up), the anchor is recomputed from the
last row upwards, so new content stays in view.

Nothing here paints or touches a widget: the view hands in a ``measure`` callback.

Heights, widths and offsets are machine integers in ``array.array``, not lists of ``int``:
a list of a 10,000-message chat's offsets is 10,000 int objects (most heights and every
offset are above the 256 Python shares), remade whenever a measured height differs from
its estimate. Those objects filled the small-object heap among the chat's messages, where
the few that outlive a closed chat keep its memory (docs/performance.md).
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from threadline.core.messages import Message, MessageKind, TextShapes

MAX_CONTENT_WIDTH = 780
SIDE_MARGIN = 24
ROW_TOP = 14
ROW_BOTTOM = 6
HEADER_GAP = 5
FOOTER_H = 24
BUBBLE_PAD_X = 14
BUBBLE_PAD_Y = 10
UNKNOWN_ROW_HEIGHT = 60
"""Estimate for a row whose message cannot be read (should not happen; keeps the list whole)."""

Measure = Callable[[int], int]
"""Lays out row N and returns its height (the view renders its document to know)."""


def has_bubble(message: Message) -> bool:
    """Prompts sit in a rounded bubble, a summary on a card; everything else is painted on the background."""
    return message.kind is MessageKind.PROMPT or message.kind is MessageKind.SUMMARY


def content_width(viewport_width: int) -> int:
    """Width of the message column: the viewport less its margins, within readable limits."""
    return max(200, min(MAX_CONTENT_WIDTH, viewport_width - 2 * SIDE_MARGIN))


def content_left(viewport_width: int) -> int:
    """Left edge of the (centred) message column."""
    return max(SIDE_MARGIN, (viewport_width - content_width(viewport_width)) // 2)


def document_width(message: Message, column_width: int) -> int:
    """Width a message's document is laid out at (a bubble takes its padding)."""
    return column_width - 2 * BUBBLE_PAD_X if has_bubble(message) else column_width


def row_height(document_height: int, *, bubble: bool, header_height: int) -> int:
    """The full height of a row whose document is ``document_height`` tall."""
    body = document_height + (2 * BUBBLE_PAD_Y if bubble else 0)
    return ROW_TOP + header_height + HEADER_GAP + body + FOOTER_H + ROW_BOTTOM


@dataclass(frozen=True, slots=True)
class TextMetrics:
    """What an estimate needs to know of the body font and the header."""

    average_char_width: int
    line_height: int
    header_height: int


def estimate_heights(shapes: TextShapes, width: int, metrics: TextMetrics) -> array[int]:
    """A guessed height for each message, from its text's length and line breaks alone, with
    the per-view arithmetic done once: opening a 10,000-message session estimates every row,
    so this loop is all the per-message work of an open (nothing is laid out until it shows).
    Shapes in columns, not messages: a long chat's history is packed, and making each of its
    messages (or a tuple each) during an open costs time and memory (``core/packed_history.py``)."""
    line_h = metrics.line_height
    per_line_plain = max(20, width // metrics.average_char_width)
    per_line_bubble = max(20, (width - 2 * BUBBLE_PAD_X) // metrics.average_char_width)
    fixed = ROW_TOP + metrics.header_height + HEADER_GAP + FOOTER_H + ROW_BOTTOM
    prompt = MessageKind.PROMPT
    chars, line_breaks, parts = shapes.chars, shapes.line_breaks, shapes.parts
    out = array("q", bytes(8 * len(shapes)))
    for row, kind in enumerate(shapes.kinds):
        if kind is None:
            out[row] = UNKNOWN_ROW_HEIGHT
            continue
        bubble = kind is prompt
        lines = (
            chars[row] // (per_line_bubble if bubble else per_line_plain)
            + line_breaks[row]
            + 1
            + 2 * parts[row]
        )
        out[row] = fixed + lines * line_h + (2 * BUBBLE_PAD_Y if bubble else 0)
    return out


class RowLayout:
    """Row heights, their running offsets, and the anchor of the visible part."""

    def __init__(self) -> None:
        self.heights = array("q")
        self._measured = array("q")  # content width a height was measured at (0 = estimate, -1 = stale)
        self._offsets: array[int] | None = None
        self.anchor_row = 0
        self.anchor_off = 0
        self.stick = True
        """Follow new content: the anchor is recomputed from the bottom on every layout."""

    def __len__(self) -> int:
        return len(self.heights)

    # -- rows come and go -------------------------------------------------------------------

    def reset(self, estimates: Iterable[int]) -> None:
        self.heights = _int_array(estimates)
        self._measured = array("q", bytes(8 * len(self.heights)))
        self._offsets = None
        self.anchor_row, self.anchor_off = 0, 0
        self.stick = True

    def insert(self, first: int, estimates: Iterable[int]) -> None:
        added = _int_array(estimates)
        count = len(added)
        self.heights[first:first] = added
        self._measured[first:first] = array("q", bytes(8 * count))
        self._offsets = None
        if len(self.heights) > count and self.anchor_row >= first:
            self.anchor_row += count

    def remove(self, first: int, last: int) -> None:
        count = last - first + 1
        del self.heights[first : last + 1]
        del self._measured[first : last + 1]
        self._offsets = None
        if self.anchor_row > last:
            self.anchor_row -= count
        elif self.anchor_row >= first:
            self.anchor_row = min(first, max(0, len(self.heights) - 1))
            self.anchor_off = 0

    def mark_stale(self, row: int) -> None:
        """Row ``row`` changed: measure it again when it next shows."""
        if 0 <= row < len(self._measured):
            self._measured[row] = -1

    def set_measured(self, row: int, height: int, width: int) -> None:
        if self.heights[row] != height:
            self.heights[row] = height
            self._offsets = None
        self._measured[row] = width

    # -- positions --------------------------------------------------------------------------

    def offsets(self) -> array[int]:
        """Top of each row from the top of the content, and the total height last."""
        if self._offsets is None:
            # Through a list: an array filled from an iterator is slower, and this runs
            # whenever a measured height corrects an estimate (while scrolling).
            offsets = array("q")
            offsets.fromlist(list(itertools.accumulate(self.heights, initial=0)))
            self._offsets = offsets
        return self._offsets

    def total_height(self) -> int:
        return self.offsets()[-1]

    def scroll_value(self) -> int:
        """The scroll bar value that shows the anchor at the top."""
        if not self.heights:
            return 0
        offsets = self.offsets()
        return offsets[min(self.anchor_row, len(offsets) - 1)] + self.anchor_off

    def anchor_at(self, value: int) -> bool:
        """Move the anchor to scroll bar ``value``; False if there is nothing to scroll."""
        offsets = self.offsets()
        if len(offsets) <= 1:
            return False
        row = max(0, min(bisect.bisect_right(offsets, value) - 1, len(self.heights) - 1))
        self.anchor_row, self.anchor_off = row, value - offsets[row]
        return True

    def fill(self, viewport_height: int, measure: Measure) -> None:
        """Fix the anchor so a viewport ``viewport_height`` tall is filled, measuring only the
        rows that show."""
        n = len(self.heights)
        if n == 0:
            self.anchor_row, self.anchor_off = 0, 0
            return
        if self.stick:
            self._anchor_to_bottom(viewport_height, measure)
            return
        self.anchor_row = min(max(0, self.anchor_row), n - 1)
        # Walk down from the anchor; if the content ends above the viewport bottom,
        # the view is past the end: pin to the bottom instead.
        h = measure(self.anchor_row)
        self.anchor_off = min(max(0, self.anchor_off), max(0, h - 1))
        y = h - self.anchor_off
        row = self.anchor_row + 1
        while y < viewport_height and row < n:
            y += measure(row)
            row += 1
        if y < viewport_height:
            self._anchor_to_bottom(viewport_height, measure)

    def _anchor_to_bottom(self, viewport_height: int, measure: Measure) -> None:
        y = viewport_height
        row = len(self.heights) - 1
        while row >= 0:
            y -= measure(row)
            if y <= 0:
                break
            row -= 1
        if row < 0:
            self.anchor_row, self.anchor_off = 0, 0
        else:
            self.anchor_row, self.anchor_off = row, -y


def _int_array(values: Iterable[int]) -> array[int]:
    """``values`` as a new array (an array is copied whole, faster than item by item)."""
    return values[:] if isinstance(values, array) else array("q", values)
