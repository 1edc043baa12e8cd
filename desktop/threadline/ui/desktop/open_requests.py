"""What a start asks of the window (its own words, or a later start's): files, links, actions.

The words come from ``app/single_instance`` (``--show``, ``--new-chat``, ``--quick-ask``,
absolute paths, ``threadline://`` links). Nothing happens without the user: an export is
offered for import, a bundle opens the install dialog (which shows what it runs), a link
asks first (docs/desktop.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from threadline.ui.common.activation import bring_up, offered, split_token
from threadline.ui.common.tasks import spawn
from threadline.ui.desktop.actions import NEW_CHAT, QUICK_ASK, DesktopActions
from threadline.ui.desktop.links import BadLink, McpInstallLink, NewChatLink, parse_link

if TYPE_CHECKING:
    from threadline.tools.mcp.config import McpServerConfig
    from threadline.ui.window.main_window import MainWindow

log = logging.getLogger("threadline.ui.desktop.open_requests")

PROMPT_SHOWN = 400
"""How much of a link's prompt the question shows (the message box gets all of it)."""


class OpenRequests:
    def __init__(self, window: MainWindow, actions: DesktopActions) -> None:
        self.window = window
        self.actions = actions
        self.questions: list[QMessageBox] = []
        """The questions open now (tests answer them)."""

    def open_words(self, words: list[str]) -> None:
        """Act on a start's words; the window that comes up for them uses the start's token."""
        words, token = split_token(words)
        with offered(token):
            self._open_words(words)

    def _open_words(self, words: list[str]) -> None:
        quick_ask_only = set(words) <= {"--show", "--quick-ask"} and "--quick-ask" in words
        if not quick_ask_only:
            bring_to_front(self.window)
        for word in words:
            if word == "--show":
                continue
            if word == "--new-chat":
                self.actions.dispatch(NEW_CHAT)
            elif word == "--quick-ask":
                self.actions.dispatch(QUICK_ASK)
            elif word.lower().startswith("threadline:"):
                self.open_link(word)
            elif word.startswith("-"):
                log.info("ignored an unknown word from another start: %s", word)
            else:
                self.open_path(Path(word))

    # -- files -------------------------------------------------------------------------------

    def open_path(self, path: Path) -> None:
        from threadline.ui.settings.extension_install import BUNDLE_SUFFIXES

        if not path.is_file():
            self.window.show_message(f"Could not open {path}: there is no such file.")
            return
        if path.suffix.lower() in BUNDLE_SUFFIXES:
            self.window.extension_actions.install(path)  # the dialog shows what it runs, and asks
            return
        self._ask(
            "Import chats",
            f"Import the chats in “{path.name}” into Threadline?",
            f"{path}",
            "Import",
            lambda: self.window.interchange.import_path(path),
        )

    # -- links -------------------------------------------------------------------------------

    def open_link(self, url: str) -> None:
        try:
            link = parse_link(url)
        except BadLink as err:
            self.window.show_message(f"Could not open the link: {err}.")
            return
        if isinstance(link, NewChatLink):
            shown = link.prompt if len(link.prompt) <= PROMPT_SHOWN else link.prompt[:PROMPT_SHOWN] + "…"
            self._ask(
                "Open a link",
                "A link asks to start a new chat with this prompt. It goes in the message box; "
                "nothing is sent until you send it.",
                shown or "(no prompt)",
                "New chat",
                lambda: self.new_chat_with(link.prompt),
            )
        elif isinstance(link, McpInstallLink):
            config = link.config
            runs = config.url if config.url else " ".join([config.command, *config.args])
            self._ask(
                "Open a link",
                f"A link asks to add the MCP server “{config.name}”. It would run:",
                runs,
                "Review…",
                lambda: self.review_server(config),
            )

    def new_chat_with(self, prompt: str) -> None:
        window = self.window
        engine = window.engine
        if engine is None:
            return

        async def create() -> None:
            info = await engine.sessions.new_session(project_id=window.sidebar.project_scope.project_id)
            window.sidebar.model.upsert(info)
            tab = await window.session_tabs.open(info.id, focus=True)
            if tab is not None:
                tab.composer.set_text(prompt)
                tab.focus_composer()

        spawn(create(), tell=window.bridge, context="Could not start a chat")

    def review_server(self, config: McpServerConfig) -> None:
        """The MCP server editor filled from the link: nothing is saved until its Save."""
        from threadline.ui.settings.mcp_server_editor import McpServerEditor

        engine = self.window.engine
        if engine is None:
            return
        editor = McpServerEditor(engine, None, self.window)
        editor.fill(config)
        editor.setWindowTitle("Add MCP server from a link")
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.open()
        self.editor = editor

    # -- asking --------------------------------------------------------------------------------

    def _ask(self, title: str, text: str, detail: str, yes: str, then: Callable[[], None]) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self.window)
        box.setObjectName("OpenRequestQuestion")
        box.setInformativeText(detail)
        accept = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self.questions.append(box)

        def answered(_code: int) -> None:
            self.questions.remove(box)
            box.deleteLater()
            if box.clickedButton() is accept:
                then()

        box.finished.connect(answered)
        box.open()


def bring_to_front(window: MainWindow) -> None:
    """Show the window over the others: un-minimise, raise and ask for the focus (with the
    activation token of the start that asked, if any: ``ui/common/activation.py``)."""
    bring_up(window)
