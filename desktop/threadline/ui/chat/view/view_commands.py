"""What a message's buttons, links and menu do in the chat view.

The footer buttons, the menu (right click, the Menu key, Shift+F10, assistive tools) and
the keys of ``message_keys`` all end in :meth:`ViewCommands.run`, so a command offered in
one place is offered (and refused) the same way in the others. What the view can do
itself it does here — copy, open a link, an image or a wide table, open or close a
collapsed block — and every command is then emitted (``actionTriggered``) for the tab,
which does what needs the engine (edit, regenerate, delete, fork…).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QPoint, QPointF, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextDocument
from PySide6.QtWidgets import QMenu, QWidget

from threadline.core.messages import Message
from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, UNDO_CHANGES_ACTION
from threadline.ui.chat.view import view_layout
from threadline.ui.chat.view.context_marks import SUMMARY_TOGGLE_ACTION, summary_key
from threadline.ui.chat.view.copy_feedback import COPIED_MS, COPIED_TEXT, COPY_TEXT, relabel_link
from threadline.ui.chat.view.document_cache import DocumentCache
from threadline.ui.chat.view.hit_testing import Hit
from threadline.ui.chat.view.image_viewer import ImageViewer, open_image
from threadline.ui.chat.view.markdown import COPY_CODE_SCHEME, is_safe_link
from threadline.ui.chat.view.math_render import formula_url_at
from threadline.ui.chat.view.message_actions import actions_for
from threadline.ui.chat.view.message_html import IMAGE_SCHEME, RESOURCE_SCHEME, TOGGLE_SCHEME
from threadline.ui.chat.view.message_keys import SELECT_TEXT
from threadline.ui.chat.view.message_markdown import message_markdown
from threadline.ui.chat.view.message_menu import message_menu, offered_commands
from threadline.ui.chat.view.source_list import SOURCE_SCHEME
from threadline.ui.chat.view.table_tokens import OPEN_TABLE_SCHEME
from threadline.ui.chat.view.thinking_block import TOGGLE_THINKING_ACTION, thinking_key
from threadline.ui.chat.view.view_host import ViewHost

log = logging.getLogger("threadline.ui.chat.view.view_commands")


class ViewCommands:
    """A chat view's message commands (``ChatView.commands``); menus and dialogs open over ``parent``."""

    def __init__(self, host: ViewHost, parent: QWidget, docs: DocumentCache, expanded: set[str]) -> None:
        self._host = host
        self._parent = parent
        self._docs = docs
        self._expanded = expanded
        self.image_viewer: ImageViewer | None = None
        """The last image opened full size from a message (tests read it)."""

    def actions_for(self, message: Message, busy: bool) -> list[str]:
        """The footer buttons of a message."""
        model = self._host.model()
        count = model.version(message.id).count if model is not None else 1
        return actions_for(message, busy=busy, version_count=count)

    def offered(self, message_id: str) -> list[str]:
        """What can be done to a message now, in menu order (the footer's actions plus Select text;
        the version switcher as Previous/Next version)."""
        model = self._host.model()
        message = model.message(message_id) if model is not None else None
        if message is None or model is None:
            return []
        busy = not model.live.conversation.ready_for_input
        versions = model.version(message_id).count
        offered = offered_commands(message, self.actions_for(message, busy), busy=busy, versions=versions)
        if message_id in self._host.change_counts:  # the last reply of a turn that changed files
            offered += [CHANGES_ACTION] if busy else [CHANGES_ACTION, UNDO_CHANGES_ACTION]
        return offered

    def run(self, action: str, message_id: str) -> None:
        """Do ``action`` to a message, as its footer button or menu entry would."""
        if action == SELECT_TEXT:
            if self._host.bring_into_view(message_id):
                self._host.ensure_visible_geometry()
                self._host.open_selection_editor(message_id)
        elif action in self.offered(message_id):
            self.trigger(action, message_id)

    def trigger(self, action: str, message_id: str) -> None:
        """A footer button was pressed (or its command chosen): do the view's part, then tell the tab."""
        model = self._host.model()
        if action == SUMMARY_TOGGLE_ACTION:
            self.activate_link(message_id, f"{TOGGLE_SCHEME}:{summary_key(message_id)}")
        elif action == TOGGLE_THINKING_ACTION:
            self.activate_link(message_id, f"{TOGGLE_SCHEME}:{thinking_key(message_id)}")
        elif action == "copy":
            self.copy_message(message_id)
        elif action == "copy_markdown":
            message = model.message(message_id) if model else None
            if message is not None:
                QGuiApplication.clipboard().setText(message_markdown(message, self._host.tool_display_name))
        self._host.actionTriggered.emit(action, message_id)

    def copy_message(self, message_id: str) -> None:
        model = self._host.model()
        message = model.message(message_id) if model else None
        if message is not None:
            QGuiApplication.clipboard().setText(message.text)

    def activate_link(self, message_id: str, href: str) -> None:
        """A link in a message was clicked: our own schemes act here, a web link opens outside."""
        model = self._host.model()
        if href.startswith(COPY_CODE_SCHEME + ":"):
            rendered = self._docs.get(message_id)
            try:
                code = rendered.code_blocks[int(href.split(":", 1)[1])] if rendered else None
            except (ValueError, IndexError):
                code = None
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self._confirm_copy(message_id, href)
                self._host.actionTriggered.emit("copy_code", message_id)
        elif href.startswith(IMAGE_SCHEME + ":"):
            message = model.message(message_id) if model else None
            self.image_viewer = open_image(self._parent, message, href)
        elif href.startswith(OPEN_TABLE_SCHEME + ":"):
            from threadline.ui.chat.view.table_dialog import open_table  # first use only

            open_table(self._parent, model.message(message_id) if model else None, href)
        elif href.startswith((RESOURCE_SCHEME + ":", SOURCE_SCHEME + ":")):  # the tab's helpers act
            self._host.actionTriggered.emit(href, message_id)
        elif href.startswith(TOGGLE_SCHEME + ":"):
            key = href.split(":", 1)[1]
            self._expanded.symmetric_difference_update({key})
            row = model.row_of(message_id) if model else -1
            if row >= 0:
                self._host.rows.mark_stale(row)
            self._host.viewport().update()
        elif is_safe_link(href):
            QDesktopServices.openUrl(QUrl(href))
            self._host.actionTriggered.emit("open_link", message_id)
        else:
            log.info("refused to open link with unsupported scheme")

    def _document_of(self, message_id: str) -> QTextDocument | None:
        rendered = self._docs.get(message_id)
        return rendered.doc if rendered is not None else None

    def _confirm_copy(self, message_id: str, href: str) -> None:
        """The code block's Copy link reads "Copied" for a moment (``copy_feedback``)."""
        doc = self._document_of(message_id)
        viewport = self._host.viewport()
        if doc is None or not relabel_link(doc, href, COPY_TEXT, COPIED_TEXT):
            return
        viewport.update()

        def back() -> None:
            if self._document_of(message_id) is doc and relabel_link(doc, href, COPIED_TEXT, COPY_TEXT):
                viewport.update()

        QTimer.singleShot(COPIED_MS, self._parent, back)

    def open_menu(self, message_id: str) -> None:
        """Open a message's menu below its header (the keyboard's way to its actions)."""
        if not self._host.bring_into_view(message_id):
            return
        geo = self._host.geometry_of(message_id)
        top = max(0, geo.top) if geo is not None else 0
        viewport = self._host.viewport()
        pos = QPoint(view_layout.content_left(viewport.width()), top + self._host.header_height)
        self.exec_menu(message_id, viewport.mapToGlobal(pos), None)

    def exec_menu(self, message_id: str, global_pos: QPoint, href: str | None) -> None:
        menu = self.message_menu(message_id, href)
        if menu is not None:
            menu.exec(global_pos)
            menu.deleteLater()

    def message_menu(self, message_id: str, href: str | None) -> QMenu | None:
        """The menu of a message: its commands with the keys that do them (``message_menu``)."""
        model = self._host.model()
        if model is None or model.message(message_id) is None:
            return None
        commands = self.offered(message_id)
        return message_menu(self._parent, commands, href, lambda action: self.run(action, message_id))

    def formula_at(self, target: Hit, pos: QPoint) -> str | None:
        """The ``tex-math:`` URL of a formula under ``pos`` (its menu offers "Copy LaTeX")."""
        doc = self._document_of(target.row.message_id) if target.row is not None else None
        if doc is None or target.row is None or not target.row.doc_rect.contains(QPointF(pos)):
            return None
        return formula_url_at(doc, QPointF(pos) - target.row.doc_rect.topLeft())
