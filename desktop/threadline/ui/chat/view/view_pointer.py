"""The mouse over the chat view: what the pointer is over, and what a click there does.

Over a message's footer button the button is highlighted and the pointer is a hand; over
a link the pointer is a hand too, and the tooltip shows the address (only of a link the
view would open). A press makes the message under it current and gives the view the
focus — without arming its letter keys (``message_cursor``) — and the click acts on the
release, on the button or link under it; a double click on a message's text opens the
selection editor over it. Wide tables take their own drags and wheel first
(``table_scroll_input``): the view asks them before handing an event here.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt

from threadline.ui.chat.view.markdown import is_safe_link
from threadline.ui.chat.view.message_cursor import MessageCursor
from threadline.ui.chat.view.source_list import SOURCE_SCHEME, source_of, source_tooltip
from threadline.ui.chat.view.view_commands import ViewCommands
from threadline.ui.chat.view.view_host import ViewHost


class ViewPointer:
    """The chat view's mouse handling (``ChatView.pointer``)."""

    def __init__(self, host: ViewHost, cursor: MessageCursor, commands: ViewCommands) -> None:
        self._host = host
        self._cursor = cursor
        self._commands = commands
        self.hover: tuple[str, str] | None = None
        """(message id, action) of the footer button under the pointer (painted highlighted)."""

    def moved(self, pos: QPointF) -> None:
        target = self._host.hit(pos)
        viewport = self._host.viewport()
        hover = (target.row.message_id, target.action) if target.row and target.action else None
        if hover != self.hover:
            self.hover = hover
            viewport.update()
        pointing = target.action or target.href
        viewport.setCursor(Qt.CursorShape.PointingHandCursor if pointing else Qt.CursorShape.ArrowCursor)
        tip = target.href if target.href and is_safe_link(target.href) else ""
        if target.row is not None and target.href and target.href.startswith(SOURCE_SCHEME + ":"):
            tip = self._source_tip(target.row.message_id, target.href)
        if target.row is not None and target.action:
            tip = self._host.action_tooltip(target.row.message_id, target.action)
        viewport.setToolTip(tip)

    def _source_tip(self, message_id: str, href: str) -> str:
        """A source's label and the passage sent (a citation's or a Sources row's link)."""
        model = self._host.model()
        found = source_of(model.message(message_id) if model is not None else None, href)
        if found is None or found[0] not in ("open", "cite"):
            return ""
        return source_tooltip(found[2], found[1])

    def left(self) -> None:
        if self.hover is not None:
            self.hover = None
            self._host.viewport().update()

    def pressed(self, pos: QPointF) -> None:
        target = self._host.hit(pos)
        self._cursor.clicked(target.row.message_id if target.row is not None else None)
        self._host.setFocus(Qt.FocusReason.MouseFocusReason)

    def released(self, pos: QPointF) -> None:
        target = self._host.hit(pos)
        if target.row is None:
            return
        if target.action:
            self._commands.trigger(target.action, target.row.message_id)
        elif target.href:
            self._commands.activate_link(target.row.message_id, target.href)

    def double_clicked(self, pos: QPointF) -> None:
        target = self._host.hit(pos)
        geo = target.row
        on_text = geo is not None and geo.doc_rect.contains(pos)
        if geo is not None and on_text and target.action is None and target.href is None:
            self._host.open_selection_editor(geo.message_id)
