"""What the chat view's helpers need of the view: the small side of ``chat_view.ChatView``.

The view is a core (model signals, painting, the mouse, the keyboard's dispatch) with
helper objects beside it, each typed against this protocol rather than the view's class,
so a helper can be read (and tested) without the rest of the view and none imports it
back: ``view_scroller`` (where the view is scrolled, following the stream),
``message_cursor`` (the current message and moving it), ``view_commands`` (what a
message's buttons, links and menu do) and ``view_pointer`` (the mouse).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from PySide6.QtCore import QPointF, Qt, SignalInstance
from PySide6.QtWidgets import QScrollBar, QTextBrowser, QWidget

from threadline.ui.chat.changes.header_counts import HeaderCounts
from threadline.ui.chat.view.chat_accessibility import MessageItems
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.hit_testing import Hit, RowGeometry
from threadline.ui.chat.view.view_layout import RowLayout


class ViewHost(Protocol):
    """The chat view as its helpers see it."""

    @property
    def rows(self) -> RowLayout:
        """Row heights and the anchor of the visible part (``view_layout``)."""
        ...

    @property
    def header_height(self) -> int:
        """Height of a message's header line (above its document)."""
        ...

    @property
    def accessible_items(self) -> MessageItems: ...
    @property
    def atBottomChanged(self) -> SignalInstance: ...
    @property
    def currentMessageChanged(self) -> SignalInstance: ...
    @property
    def actionTriggered(self) -> SignalInstance: ...

    def model(self) -> ConversationModel | None: ...
    def viewport(self) -> QWidget: ...
    def verticalScrollBar(self) -> QScrollBar: ...
    def measure_height(self, row: int) -> int:
        """Render row ``row`` (if needed) and return its height."""
        ...

    def ensure_layout(self) -> None:
        """Fill the viewport from the anchor, measuring only what shows, and set the scroll bar."""
        ...

    def ensure_visible_geometry(self) -> None:
        """Lay out the visible rows now, so their geometry (``geometry_of``) is current."""
        ...

    def geometry_of(self, message_id: str) -> RowGeometry | None:
        """Where a message was last painted, None when it is not in view."""
        ...

    def hit(self, pos: QPointF) -> Hit:
        """What is under ``pos`` in the viewport: a message, its button or link."""
        ...

    def setFocus(self, reason: Qt.FocusReason) -> None: ...
    def visible_message_ids(self) -> list[str]: ...
    def bring_into_view(self, message_id: str) -> bool: ...
    def scroll_to_bottom(self) -> None: ...
    def open_selection_editor(self, message_id: str) -> QTextBrowser | None: ...
    def tool_display_name(self, name: str) -> str: ...
    def action_tooltip(self, message_id: str, action: str) -> str:
        """What hovering a painted button says beyond its label ("" for nothing)."""
        ...

    @property
    def change_counts(self) -> Mapping[str, HeaderCounts]:
        """Each turn's file changes by its last reply's id."""
        ...
