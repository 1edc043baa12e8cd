"""What a chat tab does with a slash command sent from its composer.

Sending text first passes through ``SlashCommandRunner.prompt_or_run``: ordinary text
comes back to be sent (``//…`` as ``/…``); a command runs instead and nothing is sent.
The result shows in the tab, never as a message in the conversation:

* done: a ``CommandNotice`` above the message box says what happened (the list of
  checkpoints, the help…) and the box is emptied;
* refused or failed (an unknown command, a wrong argument, an unknown checkpoint):
  the tab's error banner says why and the box keeps the text to correct.

Commands that have a place in the window open it instead: ``/context`` the Context
dialog, ``/usage`` the meter's breakdown, ``/export`` without a path the export dialog,
``/model`` and ``/agent`` without an argument their pickers; ``/compact`` goes through
the tab's own compaction (progress in the banner, sending held meanwhile). The rest
run in ``engine.commands``, as they do for ``threadline ask``.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from threadline.core.slash_commands import (
    COMMANDS,
    CommandName,
    CommandProblem,
    PlainText,
    SlashCommand,
    help_text,
    parse,
)
from threadline.engine.commands import CommandOutcome, run_command
from threadline.ui.common.announce import announce
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import spawn


def help_table() -> str:
    """``/help`` as a two-column table (usage, description), which lines up in any font."""
    rows = "".join(
        f"<tr><td style='padding-right:14px'><b>/{spec.name}</b> {escape(spec.hint)}</td>"
        f"<td>{escape(spec.description)}</td></tr>"
        for spec in COMMANDS
    )
    return f"<table>{rows}</table><p>Start with // to send text that begins with a slash.</p>"


if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.engine.events import ErrorAction
    from threadline.ui.chat.composer.composer import Composer
    from threadline.ui.chat.controls.context_dialog import ContextDialog
    from threadline.ui.chat.controls.conversation_controls import ConversationControls
    from threadline.ui.chat.view.chat_view import ChatView


class SlashHost(Protocol):
    """What the runner needs of its tab: the runner is built by the tab and does not import it
    (the controls room sits under the tab; docs/ui-layout.md)."""

    engine: EngineApi
    view: ChatView
    composer: Composer
    controls: ConversationControls
    bridge: MessageBridge

    @property
    def session_id(self) -> str: ...
    def compact(
        self, instructions: str = "", *, keep_turns: int = 0, finished: Callable[[bool], None] | None = None
    ) -> None: ...
    def edit_context(self) -> ContextDialog: ...
    def dismiss_command_error(self) -> None: ...
    def request_export(self, session_ids: list[str]) -> None: ...
    def _show_local_error(self, text: str, actions: tuple[ErrorAction, ...]) -> None: ...


class CommandNotice(QFrame):
    """A quiet note above the message box with a command's result; × or the next send closes it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InfoBanner")
        self.setAccessibleName("Command result")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 6, 8)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._text = ""
        layout.addWidget(self.label, 1)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setAccessibleName("Close the command result")
        self.close_button.setToolTip("Close")
        self.close_button.clicked.connect(self.hide)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str, rich: str = "") -> None:
        """Show ``text`` (or ``rich``, its rich-text form, when given) and have it read out."""
        self.label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.label.setText(rich or text)
        self._text = text
        self.show()
        announce(self, text)

    def text(self) -> str:
        """What the note says (plain text), "" while it is closed."""
        return self._text if self.isVisible() else ""


class SlashCommandRunner:
    """Runs the slash commands of one tab (see the module docstring)."""

    def __init__(self, tab: SlashHost) -> None:
        self._tab = tab
        self.notice = CommandNotice()
        self.run_prompt: Callable[[str], bool] | None = None
        """Runs ``/server:prompt …`` (the tab's ``ChatMcp``); False when the text is not one."""

    def prompt_or_run(self, text: str) -> str | None:
        """The text to send, or ``None`` when ``text`` was a command (run or refused here)."""
        if self.run_prompt is not None and self.run_prompt(text):
            self.notice.hide()
            return None  # an MCP prompt: its messages are sent once the server gave them
        parsed = parse(text)
        if isinstance(parsed, PlainText):
            if parsed.text.strip():
                self.notice.hide()
            return parsed.text
        if isinstance(parsed, CommandProblem):
            self.notice.hide()
            self._tab._show_local_error(parsed.message, ())
            return None
        self.notice.hide()
        self._run(parsed)
        return None

    def _run(self, command: SlashCommand) -> None:
        tab, name = self._tab, command.name
        if name is CommandName.HELP:
            self._done(CommandOutcome())
            self.notice.show_text(help_text(), help_table())
        elif name is CommandName.COMPACT:
            tab.compact(command.argument, keep_turns=2, finished=self._compacted)
        elif name is CommandName.CLEAR:
            self._done(CommandOutcome())
            tab.controls.clear_context()  # as the menu's Clear context: with its Undo notice
        elif name is CommandName.COMPARE:
            self._done(CommandOutcome())
            # Tick 2–4 models; the next message goes to each. Popped up (not exec'd): no nested
            # event loop inside the key press that sent the command.
            button = tab.composer.compare_button
            menu = button.menu()
            if menu is not None:
                menu.popup(button.mapToGlobal(QPoint(0, -menu.sizeHint().height())))
        elif name is CommandName.CONTEXT:
            self._done(CommandOutcome())
            tab.edit_context()
        elif name is CommandName.USAGE:
            self._done(CommandOutcome())
            tab.composer.meter.show_breakdown()
        elif name is CommandName.EXPORT and not command.argument:
            self._done(CommandOutcome())
            QTimer.singleShot(0, self._export_dialog)  # a modal dialog: not inside the key press
        elif name is CommandName.MODEL and not command.argument:
            self._done(CommandOutcome())
            tab.composer.model_picker.setFocus()
            tab.composer.model_picker.showPopup()
        elif name is CommandName.AGENT and not command.argument:
            self._done(CommandOutcome())
            tab.composer.agent_picker.combo.setFocus()
            tab.composer.agent_picker.combo.showPopup()
        else:
            restoring = name is CommandName.RESTORE and bool(command.argument)

            def done(outcome: CommandOutcome) -> None:
                self._done(outcome)
                if restoring and outcome.ok and outcome.changed:  # the files may follow, as from the list
                    tab.controls.checkpointRestored.emit(" ".join(command.argument.split()))

            spawn(
                run_command(tab.engine, tab.session_id, command, base_dir=Path.home()),
                on_done=done,
                tell=tab.bridge,
                context=f"/{name} failed",
                session_id=tab.session_id,
            )

    def _done(self, outcome: CommandOutcome) -> None:
        tab = self._tab
        if not outcome.ok:
            tab._show_local_error(outcome.error, ())
            return
        tab.dismiss_command_error()
        tab.composer.accept_sent()
        if outcome.text:
            self.notice.show_text(outcome.text)
        if outcome.changed:
            tab.view.scroll_to_bottom()

    def _compacted(self, summarised: bool) -> None:
        if summarised:  # the summary itself shows in the conversation; failures in the banner
            self._done(CommandOutcome("Earlier messages were summarised; the summary is in the chat."))

    def _export_dialog(self) -> None:
        """The window's export dialog, for this chat: asked for through the tab, since a tab
        does not reach into the window's room."""
        self._tab.request_export([self._tab.session_id])
