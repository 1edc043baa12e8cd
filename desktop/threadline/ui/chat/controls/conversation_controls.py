"""A chat tab's conversation controls: compact, clear, tangents and checkpoints.

The tab owns one :class:`ConversationControls`. It adds the "⋯" conversation menu beside
the context meter, the tangent strip at the top of the tab and the "Context cleared —
Undo" notice above the composer, and turns what the user picks there (or in a message's
menu: "Start tangent from here", "Set checkpoint here…") into engine calls. Whatever the
engine says back arrives as events: the strip follows the conversation's
``tangent_origin``, the chat view repaints its checkpoint flags. Nothing here deletes a
message: a clear adds a marker, a tangent a branch, a restore moves the shown path.

After each action the keyboard focus goes back to the message box, where the person
continues (a dialog or the checkpoint list gives it back when it closes).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
)

from threadline.core.messages import Message
from threadline.engine import events
from threadline.engine.api import EngineApi, LiveConversationApi
from threadline.engine.events import ActivePathChanged, ConversationEvent, MessageAdded
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.controls.checkpoint_menu import CheckpointList, CheckpointNameDialog
from threadline.ui.chat.controls.tangent_banner import TangentBanner
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.context_marks import excerpt, named_checkpoints, tangent_origin
from threadline.ui.chat.view.message_actions import CHECKPOINT_HERE, TANGENT_HERE
from threadline.ui.common.announce import announce
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # the dialog's module is imported when it is opened
    from threadline.ui.chat.controls.compact_dialog import CompactDialog

log = logging.getLogger("threadline.ui.chat.controls.conversation_controls")

_CHECKPOINTS_CHANGED = getattr(events, "CheckpointsChanged", None)
"""The engine's event for a changed checkpoint or tangent (looked up by name: it is being added
alongside this module, and a restore or tangent that arrives before it still moves the path)."""

UNDO_CLEAR_SECONDS = 10.0
"""How long "Context cleared — Undo" is offered (undo only moves the shown path back)."""


class ControlsHost(Protocol):
    """What the controls need of their tab."""

    engine: EngineApi
    live: LiveConversationApi
    view: ChatView
    composer: Composer
    bridge: MessageBridge

    @property
    def busy(self) -> bool: ...
    @property
    def compacting(self) -> bool: ...
    def compact(
        self, instructions: str = "", *, keep_turns: int = 0, finished: Callable[[bool], None] | None = None
    ) -> None: ...
    def show_control_error(self, text: str) -> None: ...
    def show_status(self, text: str) -> None: ...


class ClearNotice(QFrame):
    """ "Context cleared — earlier messages are no longer sent. Undo" for a few seconds."""

    def __init__(self, undo: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        self.setAccessibleName("Context cleared")
        self._undo = undo
        self._leaf: str | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = QLabel("Context cleared — earlier messages are no longer sent.")
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Undo")
        self.button.setObjectName("ClearUndoButton")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.setAccessibleDescription("Send the earlier messages again")
        self.button.clicked.connect(self._clicked)
        layout.addWidget(self.button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(int(UNDO_CLEAR_SECONDS * 1000))
        self._timer.timeout.connect(self.withdraw)
        self.hide()

    def offer(self, previous_leaf: str) -> None:
        self._leaf = previous_leaf
        self.show()
        self._timer.start()
        announce(self, "Context cleared. Earlier messages are no longer sent. Undo is offered.")

    def withdraw(self) -> None:
        self._timer.stop()
        self._leaf = None
        self.hide()

    def _clicked(self) -> None:
        leaf = self._leaf
        self.withdraw()
        if leaf is not None:
            self._undo(leaf)


class ConversationControls(QObject):
    """The tab's compact / clear / tangent / checkpoint actions and the widgets that show them."""

    checkpointRestored = Signal(str)
    """The conversation moved back to this checkpoint (the files may follow: ``changes_wiring``)."""

    def __init__(self, host: ControlsHost, colors: ThemeColors) -> None:
        super().__init__(host.view)
        self._host = host
        self._engine: EngineApi = host.engine
        self._colors = colors
        self.tangent_banner = TangentBanner(colors)
        self.tangent_banner.returnRequested.connect(self.end_tangent)
        self.clear_notice = ClearNotice(self._undo_clear)
        self.menu = QMenu(host.composer)
        self.menu.setObjectName("ConversationMenu")
        self.menu.aboutToShow.connect(self._fill_menu)
        self.menu_button = QToolButton()
        self.menu_button.setObjectName("ConversationMenuButton")
        self.menu_button.setText("⋯")
        self.menu_button.setAutoRaise(True)
        self.menu_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.menu_button.setToolTip("Conversation: compact, clear context, tangent, checkpoints")
        self.menu_button.setAccessibleName("Conversation menu")
        self.menu_button.setMenu(self.menu)
        self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu_button.setStyleSheet(
            "QToolButton { font-size: 17px; font-weight: 600; padding: 0 6px; }"
            "QToolButton::menu-indicator { image: none; width: 0; }"
        )
        self.menu_button.setFixedWidth(32)  # "⋯" needs no more; the composer's row must stay narrow
        self._clear_marker: str | None = None
        self.checkpoint_list: CheckpointList | None = None
        """The checkpoint list last opened (tests read it)."""
        self.dialog: QDialog | None = None
        """The compact or checkpoint-name dialog now open (tests read it)."""
        place_before(host.composer.meter, self.menu_button)
        self._unsubscribe: Callable[[], None] | None = host.live.subscribe(self._event)
        self.sync()

    # -- state -------------------------------------------------------------------------------

    @property
    def _session_id(self) -> str:
        return self._host.live.session_id

    def tangent_origin(self) -> str | None:
        return tangent_origin(self._host.live.conversation.tree)

    def named_checkpoints(self) -> dict[str, str]:
        return dict(named_checkpoints(self._host.live.conversation.tree))

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.tangent_banner.set_colors(colors)

    def sync(self) -> None:
        """Show what the conversation is in now: the tangent strip, the checkpoint flags."""
        self.tangent_banner.follow(self.tangent_origin())
        self._host.view.viewport().update()

    def _event(self, event: ConversationEvent) -> None:
        try:
            if isinstance(event, ActivePathChanged) or type(event) is _CHECKPOINTS_CHANGED:
                self.sync()
            if isinstance(event, ActivePathChanged | MessageAdded):
                self._withdraw_stale_undo()
        except Exception:  # an observer must never break the engine's loop
            log.exception("conversation controls failed on %r", type(event).__name__)

    # -- the menu ------------------------------------------------------------------------------

    def _fill_menu(self) -> None:
        menu = self.menu
        menu.clear()
        host = self._host
        idle = not host.busy and not host.compacting
        has_messages = bool(host.live.conversation.tree.active_leaf)
        self._add(menu, "Compact conversation…", self.open_compact_dialog, "compact", idle and has_messages)
        self._add(menu, "Clear context", self.clear_context, "clear", idle and has_messages)
        menu.addSeparator()
        if self.tangent_origin() is None:
            self._add(
                menu, "Start tangent", lambda: self.start_tangent(None), "tangent", idle and has_messages
            )
        else:
            self._add(menu, "Return to main line", lambda: self.end_tangent(False), "return", idle)
            self._add(
                menu,
                "Return, bringing the last exchange",
                lambda: self.end_tangent(True),
                "return-bring",
                idle,
            )
        menu.addSeparator()
        self._add(
            menu, "Set checkpoint…", lambda: self.ask_checkpoint(None), "checkpoint", idle and has_messages
        )
        count = len(self.named_checkpoints())
        label = f"Checkpoints ({count})…" if count else "Checkpoints…"
        self._add(menu, label, self.show_checkpoints, "checkpoints", True)

    @staticmethod
    def _add(menu: QMenu, text: str, slot: Callable[[], object], name: str, enabled: bool) -> None:
        action = menu.addAction(text)
        action.setObjectName(f"conversation-{name}")
        action.setEnabled(enabled)
        action.triggered.connect(lambda _checked=False: slot())

    def message_action(self, action: str, message_id: str) -> None:
        """A message's menu asked for a tangent from it, or a checkpoint naming it."""
        if action == TANGENT_HERE:
            self.start_tangent(message_id)
        elif action == CHECKPOINT_HERE:
            self.ask_checkpoint(message_id)

    # -- compact ---------------------------------------------------------------------------------

    def open_compact_dialog(self) -> CompactDialog:
        """Ask how much to keep and how to steer the summary; the tab compacts on Compact."""
        from threadline.ui.chat.controls.compact_dialog import (
            CompactDialog,  # only when asked for, not per open
        )

        dialog = CompactDialog(self._host.view.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.accepted.connect(lambda: self._compact_chosen(dialog))
        dialog.finished.connect(self._dialog_closed)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _compact_chosen(self, dialog: CompactDialog) -> None:
        choice = dialog.choice()
        self._host.compact(choice.instructions, keep_turns=choice.keep_turns)

    def _dialog_closed(self, _result: int = 0) -> None:
        self.dialog = None
        self._focus_composer()

    # -- clear -----------------------------------------------------------------------------------

    def clear_context(self) -> None:
        """Start a fresh context here: a marker after which requests start; nothing is deleted."""
        previous = self._host.live.conversation.tree.active_leaf

        def done(marker: Message) -> None:
            self._host.view.scroll_to_bottom()
            if previous:
                self._clear_marker = marker.id
                self.clear_notice.offer(previous)
            self._host.show_status("Context cleared; earlier messages stay in the chat but are not sent.")

        spawn(
            self._engine.controls.clear_context(self._session_id),
            on_done=done,
            tell=self._host.bridge,
            context="Could not clear the context",
            session_id=self._session_id,
        )
        self._focus_composer()

    def _withdraw_stale_undo(self) -> None:
        """Undo of a clear is offered only while the chat still ends at its marker."""
        if (
            self.clear_notice.isVisible()
            and self._host.live.conversation.tree.active_leaf != self._clear_marker
        ):
            self.clear_notice.withdraw()

    def _undo_clear(self, previous_leaf: str) -> None:
        spawn(
            self._engine.controls.set_active_leaf(self._session_id, previous_leaf),
            on_done=lambda _: self._host.show_status("Context restored: earlier messages are sent again."),
            tell=self._host.bridge,
            context="Could not undo the clear",
            session_id=self._session_id,
        )
        self._focus_composer()

    # -- tangents --------------------------------------------------------------------------------

    def start_tangent(self, from_message_id: str | None) -> None:
        """Open a side conversation after ``from_message_id`` (the last message when None)."""
        spawn(
            self._engine.controls.start_tangent(self._session_id, from_message_id),
            on_done=lambda _marker: self._tangent_started(),
            tell=self._host.bridge,
            context="Could not start a tangent",
            session_id=self._session_id,
        )
        self._focus_composer()

    def _tangent_started(self) -> None:
        self.sync()
        self._host.view.scroll_to_bottom()

    def end_tangent(self, bring_last_exchange: bool) -> None:
        spawn(
            self._engine.controls.end_tangent(self._session_id, bring_last_exchange=bring_last_exchange),
            on_done=lambda _: self._tangent_ended(),
            tell=self._host.bridge,
            context="Could not return to the main line",
            session_id=self._session_id,
        )
        self._focus_composer()

    def _tangent_ended(self) -> None:
        self.sync()
        self._host.view.scroll_to_bottom()
        self._host.show_status("Back on the main line; the tangent stays in the branch map.")

    # -- checkpoints -----------------------------------------------------------------------------

    def ask_checkpoint(self, message_id: str | None) -> CheckpointNameDialog | None:
        """Ask for a name, then set a checkpoint at ``message_id`` (the last message when None)."""
        tree = self._host.live.conversation.tree
        target = message_id or tree.active_leaf
        if target is None:
            return None
        model = self._host.view.model()
        message = model.message(target) if model is not None else None
        about = excerpt(message) if message is not None else "the latest message"
        dialog = CheckpointNameDialog(self.named_checkpoints(), about, self._host.view.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.accepted.connect(lambda: self.set_checkpoint(dialog.checkpoint_name(), message_id))
        dialog.finished.connect(self._dialog_closed)
        self.dialog = dialog
        dialog.open()
        return dialog

    def set_checkpoint(self, name: str, message_id: str | None) -> None:
        if not name:
            return
        spawn(
            self._engine.controls.set_checkpoint(self._session_id, name, message_id),
            on_done=lambda _: self._host.show_status(f"Checkpoint “{name}” set."),
            tell=self._host.bridge,
            context=f"Could not set the checkpoint “{name}”",
            session_id=self._session_id,
        )

    def show_checkpoints(self) -> CheckpointList:
        """The list of checkpoints, opened above the conversation menu's button."""
        model = self._host.view.model()
        popup = CheckpointList(
            self.named_checkpoints(),
            model.message if model is not None else lambda _id: None,
            self._host.view,
            muted=self._colors.muted,
        )
        popup.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        popup.restoreRequested.connect(self.restore_checkpoint)
        popup.removeRequested.connect(self.remove_checkpoint)
        popup.destroyed.connect(lambda *_: self._list_closed(popup))
        self.checkpoint_list = popup
        popup.show_above(self.menu_button if self.menu_button.isVisible() else self._host.composer)
        return popup

    def _list_closed(self, popup: CheckpointList) -> None:
        if self.checkpoint_list is popup:
            self.checkpoint_list = None

    def restore_checkpoint(self, name: str) -> None:
        target = self.named_checkpoints().get(name)

        def done(_: object) -> None:
            self.sync()
            if target is not None:
                self._host.view.set_current_message(target)
            self._host.show_status(f"Restored “{name}”; the later messages stay in the branch map.")
            self.checkpointRestored.emit(name)

        spawn(
            self._engine.controls.restore_checkpoint(self._session_id, name),
            on_done=done,
            tell=self._host.bridge,
            context=f"Could not restore “{name}”",
            session_id=self._session_id,
        )
        self._focus_composer()

    def remove_checkpoint(self, name: str) -> None:
        spawn(
            self._engine.controls.remove_checkpoint(self._session_id, name),
            on_done=lambda _: self._host.show_status(f"Checkpoint “{name}” removed."),
            tell=self._host.bridge,
            context=f"Could not remove “{name}”",
            session_id=self._session_id,
        )
        self._focus_composer()

    # -- helpers ---------------------------------------------------------------------------------

    def _focus_composer(self) -> None:
        self._host.composer.focus_input()


def place_before(anchor: QWidget, widget: QWidget) -> None:
    """Put ``widget`` just before ``anchor`` in whichever layout (or nested layout) holds it."""
    parent = anchor.parentWidget()
    top = parent.layout() if parent is not None else None
    holder = _layout_holding(top, anchor) if top is not None else None
    if holder is None:
        raise ValueError("the anchor widget is not in a box layout")
    holder.insertWidget(holder.indexOf(anchor), widget)


def _layout_holding(layout: QLayout, widget: QWidget) -> QBoxLayout | None:
    if isinstance(layout, QBoxLayout) and layout.indexOf(widget) >= 0:
        return layout
    for i in range(layout.count()):
        item = layout.itemAt(i)
        child = item.layout() if item is not None else None
        if child is not None:
            found = _layout_holding(child, widget)
            if found is not None:
                return found
    return None
