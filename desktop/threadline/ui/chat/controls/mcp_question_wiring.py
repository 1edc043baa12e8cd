"""A tab's side of its MCP tool calls: the server's questions put to the person, and their progress.

The window's person (``ui/window/mcp_person.py``) keeps one wiring per tab that a server
needed, and hands each question of a server to the wiring of the tab of the conversation
whose tool call asks; the wiring shows it in the tab's
``McpQuestionBar`` (built the first time it is needed, above the composer where the
approval bar goes) and waits for the answer. One question at a time: a second waits for
the first. A page is opened through the desktop (``QDesktopServices``) only once the
person agreed; the call then shows that it waits for them, with Stop. Closing the tab,
or stopping the reply, cancels a question (the server is told ``cancel``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QWidget

from threadline.engine.mcp_people import Answer, CallProgress, FormRequest, UrlRequest
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # built at the first question or progress, not by every open
    from threadline.ui.chat.controls.mcp_question_bar import McpQuestionBar


class McpQuestionHost(Protocol):
    """What the wiring needs of its tab."""

    composer: Composer
    view: ChatView

    @property
    def colors(self) -> ThemeColors: ...
    def stop(self) -> None: ...
    def place_approval(self, bar: QWidget) -> None: ...


class McpQuestionWiring:
    def __init__(self, host: McpQuestionHost) -> None:
        self._host = host
        self._bar: McpQuestionBar | None = None
        self._turn = asyncio.Lock()
        self._wait: asyncio.Future[Answer] | None = None
        self._asking_for: tuple[str, str] | None = None
        """(server, tool) of the call whose question is shown: its end (a Stop) cancels it."""
        self._signing_in = ""
        """The server whose sign-in page was opened from this tab (shown until the turn ends)."""
        self._waiting_on: dict[tuple[str, str], str] = {}
        """(server, tool) of a call whose page the person opened -> the page's host."""

    @property
    def built(self) -> McpQuestionBar | None:
        return self._bar

    @property
    def bar(self) -> McpQuestionBar:
        if self._bar is None:
            from threadline.ui.chat.controls.mcp_question_bar import McpQuestionBar

            bar = McpQuestionBar(self._host.colors)
            bar.answered.connect(self._answered)
            bar.stopRequested.connect(self._host.stop)
            self._host.place_approval(bar)
            self._bar = bar
        return self._bar

    @property
    def asking(self) -> bool:
        return self._wait is not None

    async def ask_form(self, request: FormRequest) -> Answer:
        async with self._turn:
            self.bar.ask_form(request.server, request.tool, request.message, dict(request.schema))
            return await self._answer((request.server, request.tool))

    async def ask_url(self, request: UrlRequest) -> Answer:
        """Ask before opening the page; on accept it is opened and the call shows it waits."""
        async with self._turn:
            self.bar.ask_url(request.server, request.tool, request.message, request.host, request.url)
            answer = await self._answer((request.server, request.tool))
        if answer.action == "accept":
            if not QDesktopServices.openUrl(QUrl(request.url)):
                raise RuntimeError(f"The page {request.url} could not be opened: no browser was found.")
            self._waiting_on[(request.server, request.tool)] = request.host
            self.bar.show_running(
                f"{request.server} · {request.tool}" if request.tool else request.server,
                0,
                None,
                f"Waiting for you to finish on {request.host}",
            )
        return answer

    async def ask_sign_in(self, server: str, url: str) -> bool:
        """A call's server needs a sign in: ask, then open its page; False when the person cancels."""
        from urllib.parse import urlsplit

        host = urlsplit(url).hostname or url
        async with self._turn:
            self.bar.ask_sign_in(server, host, url)
            answer = await self._answer((server, ""))
        if answer.action != "accept":
            return False
        if not QDesktopServices.openUrl(QUrl(url)):
            raise RuntimeError(f"The sign-in page of {server} could not be opened: no browser was found.")
        self._signing_in = server
        self.bar.show_running(server, 0, None, f"Waiting for you to sign in on {host}")
        return True

    def turn_busy(self, busy: bool) -> None:
        """The tab's turn started or ended: a sign in's waiting line ends with the turn."""
        if not busy and self._signing_in and self._bar is not None:
            self._signing_in = ""
            self._bar.end_running()

    async def _answer(self, asking_for: tuple[str, str]) -> Answer:
        wait: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._wait, self._asking_for = wait, asking_for
        bar = self.bar
        if bar.isVisible() and bar.window().isActiveWindow():
            bar.focus_first()
        self._host.view.scroll_to_bottom()
        try:
            return await wait
        finally:
            self._wait = None
            if self._bar is not None and self._bar.asking:  # stopped meanwhile
                self._bar.end_question()

    def _answered(self, action: str, values: dict[str, object]) -> None:
        wait = self._wait
        if wait is not None and not wait.done():
            wait.set_result(Answer(action, values))  # type: ignore[arg-type]
        self._host.composer.focus_input()

    def closed(self) -> None:
        """The tab is closing: its widgets go; an open question is cancelled."""
        self._bar = None
        self.end()

    def progress(self, progress: CallProgress) -> None:
        """A call of this tab's conversation reported progress, or ended (``done``)."""
        key = (progress.server, progress.tool)
        if progress.server == self._signing_in:  # signed in: the call runs
            self._signing_in = ""
        if progress.done:
            self._waiting_on.pop(key, None)
            if key == self._asking_for:  # stopped while asking: nobody waits for the answer now
                self.end()
            if self._bar is not None:
                self._bar.end_running()
            return
        host = self._waiting_on.get(key)
        message = progress.message or (f"Waiting for you to finish on {host}" if host else "")
        self.bar.show_running(
            f"{progress.server} · {progress.tool}", progress.progress, progress.total, message
        )

    def set_colors(self, colors: ThemeColors) -> None:
        if self._bar is not None:
            self._bar.set_colors(colors)

    def end(self) -> None:
        """The tab closes (or its call stopped): a question still open is cancelled."""
        wait, self._wait = self._wait, None
        if wait is not None and not wait.done():
            wait.set_result(Answer("cancel"))
