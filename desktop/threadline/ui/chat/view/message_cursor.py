"""The chat view's *current* message: the one the keyboard acts on, and moving it.

The current message is drawn with a focus ring while the view has the focus. Up/Down and
K/J move it, Home/End go to the first/last message; moving it scrolls it into view and
tells assistive tools. A click makes the clicked message current without scrolling.

The single-letter keys (E, R, Del…) act only once the keyboard has chosen the current
message (``keys_armed``): the focus came by Tab, a pane key or the program, or an arrow
moved it. After a click they do not, so a sentence typed at the wrong moment cannot edit,
regenerate or delete (docs/accessibility.md).

When the current message leaves the view (regenerate, a version switch or an edit remove
the tail, then insert the new one), the message that later takes its place becomes current,
and meanwhile the nearest row.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent

from threadline.ui.chat.view.view_host import ViewHost


class MessageCursor:
    """The current message of a chat view (``ChatView.cursor``)."""

    def __init__(self, host: ViewHost) -> None:
        self._host = host
        self.current: str | None = None
        self.keys_armed = True
        """Whether the keyboard chose the current message, so its letter keys act (see above)."""
        self._lost_row: int | None = None
        """Where the current message was when it left the view (it is replaced from there)."""

    def set_current_message(self, message_id: str) -> bool:
        """Make a message current and scroll it into view; False if it is not in the view."""
        model = self._host.model()
        if model is None or model.row_of(message_id) < 0:
            return False
        self.keys_armed = True
        self.set_current(message_id, scroll=True)
        return True

    def ensure_current(self) -> str | None:
        """The current message, choosing the keyboard's starting one if there is none (its menu key)."""
        if self.current is None:
            self.move_to(self.default_row())
        return self.current

    def default_row(self) -> int:
        """Where the keyboard starts: the last message that shows, else the last one."""
        model = self._host.model()
        if model is None or model.rowCount() == 0:
            return -1
        visible = self._host.visible_message_ids()
        row = model.row_of(visible[-1]) if visible else -1
        return row if row >= 0 else model.rowCount() - 1

    def move_to(self, row: int) -> None:
        model = self._host.model()
        message = model.message_at(row) if model is not None and row >= 0 else None
        if message is not None:
            self.set_current(message.id, scroll=True)

    def set_current(self, message_id: str | None, *, scroll: bool, keep_lost: bool = False) -> None:
        if not keep_lost:
            self._lost_row = None
        changed = message_id != self.current
        self.current = message_id
        if message_id is not None and scroll:
            self._host.bring_into_view(message_id)
        self._host.viewport().update()
        if changed:
            self._host.currentMessageChanged.emit(message_id or "")
            if message_id is not None:
                self._host.accessible_items.focus_moved(message_id)

    def clicked(self, message_id: str | None) -> None:
        """A press on the view: the message under it (if any) is current, its letter keys wait."""
        self.keys_armed = False
        if message_id is not None:
            self.set_current(message_id, scroll=False)

    @staticmethod
    def typed_text(event: QKeyEvent) -> bool:
        """Whether the key types text (a letter, a digit, a space), not a command with Ctrl or Alt."""
        held = event.modifiers() & (
            Qt.KeyboardModifier.ControlModifier
            | Qt.KeyboardModifier.AltModifier
            | Qt.KeyboardModifier.MetaModifier
        )
        text = event.text()
        return not held and bool(text) and text.isprintable()

    def navigate(self, event: QKeyEvent) -> bool:
        """Up/Down, K/J, Home/End (with or without Ctrl) move the current message."""
        model = self._host.model()
        mods = event.modifiers() & ~(Qt.KeyboardModifier.KeypadModifier | Qt.KeyboardModifier.ControlModifier)
        if mods or model is None:
            return False
        key = event.key()
        n = model.rowCount()
        row = model.row_of(self.current) if self.current is not None else -1
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if key in (Qt.Key.Key_Up, Qt.Key.Key_K) and not ctrl:
            target = self.default_row() if row < 0 else max(0, row - 1)
        elif key in (Qt.Key.Key_Down, Qt.Key.Key_J) and not ctrl:
            target = self.default_row() if row < 0 else min(n - 1, row + 1)
        elif key == Qt.Key.Key_Home:
            target = 0
        elif key == Qt.Key.Key_End:
            target = n - 1
        else:
            return False
        self.move_to(target)
        if key == Qt.Key.Key_End and target == n - 1:
            self._host.scroll_to_bottom()  # follow new content again, as Ctrl+End always did
        self.keys_armed = True
        return True

    def focus_in(self, reason: Qt.FocusReason) -> None:
        """The view took the focus: whether by the keyboard (arms the keys) and which message is current."""
        mouse = reason == Qt.FocusReason.MouseFocusReason
        if mouse:
            self.keys_armed = False
        elif reason not in (Qt.FocusReason.ActiveWindowFocusReason, Qt.FocusReason.PopupFocusReason):
            self.keys_armed = True  # Tab, a pane key, the program: the keyboard comes here
        model = self._host.model()
        if self.current is None or model is None or model.row_of(self.current) < 0:
            self.current = None
            if not mouse:  # a click makes the clicked message current itself, without scrolling
                self.move_to(self.default_row())
        else:
            self._host.accessible_items.focus_moved(self.current)

    def rows_inserted(self, first: int, last: int) -> None:
        """New rows: the one that took the lost current message's place becomes current."""
        lost, model = self._lost_row, self._host.model()
        if lost is not None and first <= lost <= last and model is not None:
            message = model.message_at(lost)
            self._lost_row = None
            if message is not None:
                self.set_current(message.id, scroll=False)

    def forget_missing(self, near: int = 0) -> None:
        """After rows went away: stand-ins are let go, and a current message that went away is
        replaced by the row now at its place (from the next turn of the event loop), until the
        message that takes its place comes (``rows_inserted``) or the user moves elsewhere."""
        self._host.accessible_items.prune()
        model = self._host.model()
        if self.current is None or model is None or model.row_of(self.current) >= 0:
            return
        self.current = None
        self._lost_row = near
        QTimer.singleShot(0, self._host.viewport(), self._replace_lost)

    def _replace_lost(self) -> None:
        row, model = self._lost_row, self._host.model()
        if row is None or self.current is not None or model is None:
            return
        n = model.rowCount()
        message = model.message_at(min(row, n - 1)) if n else None
        self.set_current(message.id if message is not None else None, scroll=False, keep_lost=True)
        if message is None:
            self._host.currentMessageChanged.emit("")
