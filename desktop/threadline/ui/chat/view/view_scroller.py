"""Where the chat view is scrolled: following the stream, the scroll bar, bringing a message in.

The view's position is an *anchor* (``view_layout.RowLayout``: the top visible row and
how far it is scrolled), not a pixel offset, so a corrected height above the anchor never
moves what the user reads. While the view *follows* (the user is at the bottom) the anchor
is recomputed from the last row on every layout and a streaming reply stays in view;
scrolling up stops following, scrolling back to the bottom (or End) starts it again. The
scroll bar shows the anchor's place in the estimated total height; moving it moves the
anchor. ``atBottomChanged`` tells the tab when following starts or stops (its "Jump to
latest" button).

A search hit is brought to the top of the view and flashed for a moment; the keyboard's
current message and a find match are brought in by scrolling as little as needed.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

from threadline.ui.chat.view.view_host import ViewHost
from threadline.ui.chat.view.view_layout import BUBBLE_PAD_Y, HEADER_GAP, ROW_TOP, has_bubble

FLASH_MS = 1800
"""How long a message brought into view by a search stays highlighted."""


class ViewScroller:
    """The chat view's scrolling (``ChatView.scroller``)."""

    def __init__(self, host: ViewHost) -> None:
        self._host = host
        self._syncing = False
        self.flash_id: str | None = None
        """The message highlighted after a search brought it in (painted by the row painter)."""
        self._flash_timer = QTimer(host.viewport())
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self._end_flash)

    @property
    def following(self) -> bool:
        """Whether the view follows new content (the user is at the bottom)."""
        return self._host.rows.stick

    def sync_scrollbar(self) -> None:
        """Set the scroll bar's range and value from the rows and the anchor."""
        bar = self._host.verticalScrollBar()
        rows = self._host.rows
        vh = self._host.viewport().height()
        self._syncing = True
        try:
            bar.setRange(0, max(0, rows.total_height() - vh))
            bar.setPageStep(max(1, vh))
            bar.setValue(min(rows.scroll_value(), bar.maximum()))
        finally:
            self._syncing = False

    def scrolled(self, value: int) -> None:
        """The scroll bar moved (the user, or ``sync_scrollbar``): move the anchor there."""
        rows = self._host.rows
        if self._syncing or not rows.anchor_at(value):
            return
        was = rows.stick
        rows.stick = value >= self._host.verticalScrollBar().maximum() - 2
        if was != rows.stick:
            self._host.atBottomChanged.emit(rows.stick)
        self._host.viewport().update()

    def scroll_to_bottom(self) -> None:
        rows = self._host.rows
        was = rows.stick
        rows.stick = True
        if not was:
            self._host.atBottomChanged.emit(True)
        self._host.viewport().update()

    def scroll_to_message(self, message_id: str, *, flash: bool = True) -> bool:
        """Bring a message to the top of the view (search hits), briefly highlighted."""
        model = self._host.model()
        row = model.row_of(message_id) if model is not None else -1
        if row < 0:
            return False
        rows = self._host.rows
        rows.stick = False
        rows.anchor_row, rows.anchor_off = row, 0
        if flash:
            self.flash_id = message_id
            self._flash_timer.start(FLASH_MS)
        self._host.ensure_layout()
        self._host.viewport().update()
        return True

    def _end_flash(self) -> None:
        self.flash_id = None
        self._host.viewport().update()

    def bring_into_view(self, message_id: str) -> bool:
        """Scroll as little as needed so a message shows whole (its top, if it is taller than the view)."""
        host = self._host
        model = host.model()
        row = model.row_of(message_id) if model is not None else -1
        if row < 0:
            return False
        host.ensure_visible_geometry()
        vh = host.viewport().height()
        geo = host.geometry_of(message_id)
        if geo is not None and geo.top >= 0 and (geo.top + geo.height <= vh or geo.top == 0):
            return True
        height = host.measure_height(row)
        if row == len(host.rows) - 1 and height <= vh:
            self.scroll_to_bottom()
        elif (geo is not None and geo.top < 0) or row <= host.rows.anchor_row or height >= vh:
            self.scroll_to_message(message_id, flash=False)
        else:  # below: its bottom at the viewport's bottom
            y, top = vh - height, row
            while y > 0 and top > 0:
                top -= 1
                y -= host.measure_height(top)
            self._set_anchor(top, max(0, -y))
        host.ensure_visible_geometry()
        return True

    def _set_anchor(self, row: int, offset: int) -> None:
        rows = self._host.rows
        was, rows.stick = rows.stick, False
        rows.anchor_row, rows.anchor_off = row, offset
        if was:
            self._host.atBottomChanged.emit(False)
        self._host.ensure_layout()
        self._host.viewport().update()

    def reveal_text(self, message_id: str, doc_top: float, doc_bottom: float, *, clear_top: int = 0) -> bool:
        """Scroll so that the part of a message's document between ``doc_top`` and ``doc_bottom``
        shows below ``clear_top`` (what floats over the view), a third of the way down the view
        if the view has to move (find matches)."""
        host = self._host
        model = host.model()
        row = model.row_of(message_id) if model is not None else -1
        message = model.message_at(row) if model is not None and row >= 0 else None
        if message is None:
            return False
        host.measure_height(row)
        bubble_pad = BUBBLE_PAD_Y if has_bubble(message) else 0
        above_doc = ROW_TOP + host.header_height + HEADER_GAP + bubble_pad
        top, bottom = above_doc + doc_top, above_doc + doc_bottom
        host.ensure_visible_geometry()
        geo = host.geometry_of(message_id)
        vh = host.viewport().height()
        if geo is not None and geo.top + top >= clear_top and geo.top + bottom <= vh:
            return True
        was, host.rows.stick = host.rows.stick, False
        host.rows.anchor_at(max(0, int(host.rows.offsets()[row] + top - max(vh // 3, clear_top))))
        if was:
            host.atBottomChanged.emit(False)
        host.ensure_layout()
        host.ensure_visible_geometry()
        host.viewport().update()
        return True
