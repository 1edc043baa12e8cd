"""What a message's action (its menu, keys or buttons in the chat view) does in the tab.

The view only names the action (``actionTriggered``); edits go to the composer, the
conversation controls take theirs, the rest are engine calls whose failures the banner
shows.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QApplication

from threadline.core.messages import MessageKind
from threadline.engine.api import EngineApi
from threadline.ui.chat.changes.changes_wiring import FileChangesWiring
from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, UNDO_CHANGES_ACTION
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.controls.conversation_controls import ConversationControls
from threadline.ui.chat.sources.chat_sources import ChatSources
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.message_actions import COMPARE_VERSIONS, CONTROL_ACTIONS, is_editable_reply
from threadline.ui.common.error_banner import ErrorBanner
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import describe, spawn

REPLY_EDIT_HINT = "Editing a reply — Enter saves your text as a new version (nothing is sent), Esc cancels."


class MessageCommandsHost(Protocol):
    """What a message's actions need of their tab."""

    engine: EngineApi
    model: ConversationModel
    view: ChatView
    composer: Composer
    banner: ErrorBanner
    controls: ConversationControls
    bridge: MessageBridge
    file_changes: FileChangesWiring

    @property
    def session_id(self) -> str: ...
    def compare_versions(self, prompt_id: str) -> None: ...
    def show_control_error(self, text: str) -> None: ...
    def show_status(self, text: str) -> None: ...


class MessageCommands:
    """Runs the actions the chat view reports for one tab."""

    def __init__(self, host: MessageCommandsHost) -> None:
        self._host = host
        self.sources = ChatSources(host, host.view)  # a reply's Sources: open, pin, exclude

    def run(self, action: str, message_id: str) -> None:
        host = self._host
        message = host.model.message(message_id)
        if message is None:
            return
        engine, session_id = host.engine, host.session_id
        try:
            if action == "edit" and message.kind is MessageKind.PROMPT:
                host.composer.begin_edit(message_id, message.text)
            elif action == "edit" and is_editable_reply(message):
                host.composer.begin_edit(message_id, message.text, REPLY_EDIT_HINT)
            elif action in CONTROL_ACTIONS:
                host.controls.message_action(action, message_id)
            elif action == "delete":
                spawn(
                    engine.messages.delete_message(session_id, message_id),
                    tell=host.bridge,
                    context="Not deleted",
                    session_id=session_id,
                )
            elif action == COMPARE_VERSIONS and message.parent_id is not None:
                host.compare_versions(message.parent_id)
            elif action == "copy_markdown":
                host.show_status("Copied as Markdown")
            elif action == "copy_chat_markdown":
                spawn(engine.library.export_markdown(session_id), tell=host.bridge, on_done=self._copy_chat)
            elif action in ("regenerate", "retry"):
                host.banner.dismiss()
                engine.turns.regenerate(session_id, message_id)
                host.view.scroll_to_bottom()
            elif action == "continue":
                host.banner.dismiss()
                engine.turns.resume(session_id, message_id)
                host.view.scroll_to_bottom()
            elif action in ("prev_version", "next_version"):
                offset = -1 if action == "prev_version" else 1
                spawn(
                    engine.controls.switch_version(session_id, message_id, offset),
                    tell=host.bridge,
                    session_id=session_id,
                )
            elif action == CHANGES_ACTION:
                host.file_changes.open_turn(message_id)
            elif action == UNDO_CHANGES_ACTION:
                host.file_changes.undo_turn(message_id)
            elif action == "copy":
                host.show_status("Copied to the clipboard")
            elif action == "copy_code":
                host.show_status("Code copied to the clipboard")
        except Exception as err:
            host.show_control_error(describe(err))

    def _copy_chat(self, markdown: str) -> None:
        QApplication.clipboard().setText(markdown)
        self._host.show_status("Conversation copied as Markdown")
