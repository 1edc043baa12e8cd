"""The window as the person behind the MCP servers (``McpPerson``, docs/mcp.md).

Set on ``engine.mcp_people`` when the engine is attached, cleared when the window closes.
A server's question goes to the tab of the conversation whose tool call asks (opened in
the background if the user had closed it, as for an approval), where its form or its
page's address is shown (``McpQuestionWiring``); a question of no known conversation goes
to the current tab. A sign in (OAuth) that a tool call needs is asked for in that call's
tab first ("needs you to sign in", Sign in / Cancel); one from Settings opens at once. Pages
open in the browser through the desktop (``QDesktopServices``), which a test can route to
its own handler. The progress of the calls goes to their tabs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from threadline.engine.api import EngineApi
from threadline.engine.mcp_people import Answer, CallProgress, FormRequest, UrlRequest
from threadline.ui.chat.controls.mcp_question_wiring import McpQuestionWiring
from threadline.ui.common.theme import ThemeColors, ThemeManager

if TYPE_CHECKING:
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.window.tab_container import TabContainer

log = logging.getLogger("threadline.ui.mcp")

OpenTab = Callable[[str], Awaitable["ChatTab | None"]]


class WindowPerson:
    def __init__(self, engine: EngineApi, tabs: TabContainer, open_tab: OpenTab, theme: ThemeManager) -> None:
        self._engine = engine
        self._tabs = tabs
        self._open_tab = open_tab
        self._attached = True
        self._wirings: dict[str, McpQuestionWiring] = {}
        """Each tab's side of its MCP calls, by session (``wiring``)."""
        theme.changed.connect(self._recolor)
        tabs.tab_closed.connect(self._tab_closed)
        engine.mcp_people.set_person(self)
        self._unsubscribe = engine.mcp_people.subscribe_progress(self._progress)

    def wiring(self, tab: ChatTab) -> McpQuestionWiring:
        """The tab's side of its MCP calls, made the first time a server needs the tab (tabs that
        never meet a question pay nothing); it goes with the tab, cancelling an open question."""
        wiring = self._wirings.get(tab.session_id)
        if wiring is None:
            wiring = McpQuestionWiring(tab)
            self._wirings[tab.session_id] = wiring
            tab.busyChanged.connect(wiring.turn_busy)  # a sign in's waiting line ends with the turn
        return wiring

    def find(self, tab: ChatTab) -> McpQuestionWiring | None:
        """The tab's wiring if a server ever needed the tab (never makes one)."""
        return self._wirings.get(tab.session_id)

    def _tab_closed(self, session_id: str) -> None:
        wiring = self._wirings.pop(session_id, None)
        if wiring is not None:
            wiring.closed()  # nobody is left to answer

    def _recolor(self, colors: ThemeColors) -> None:
        for wiring in self._wirings.values():
            wiring.set_colors(colors)

    def detach(self) -> None:
        """The window is closing: questions are declined from now on."""
        if self._attached:
            self._attached = False
            self._engine.mcp_people.set_person(None)
            self._unsubscribe()
            for wiring in self._wirings.values():
                wiring.closed()

    async def _tab(self, session_id: str) -> ChatTab | None:
        if not self._attached:
            return None
        if not session_id:
            return self._tabs.current_tab()
        tab = self._tabs.tab_for(session_id)
        if tab is None:
            log.info("an MCP server asks in session %s: opening its tab", session_id)
            tab = await self._open_tab(session_id)
        return tab if self._attached else None

    async def answer_form(self, request: FormRequest) -> Answer:
        tab = await self._tab(request.session_id)
        return Answer.declined() if tab is None else await self.wiring(tab).ask_form(request)

    async def answer_url(self, request: UrlRequest) -> Answer:
        tab = await self._tab(request.session_id)
        return Answer.declined() if tab is None else await self.wiring(tab).ask_url(request)

    async def open_sign_in(self, server: str, url: str) -> None:
        """From Settings ("Sign in") the page opens at once; in a turn the chat asks first."""
        session_id = self._engine.mcp_people.asking_session()
        tab = await self._tab(session_id) if session_id else None
        if tab is not None:
            if not await self.wiring(tab).ask_sign_in(server, url):
                raise RuntimeError(f"The sign in to MCP server {server!r} was cancelled.")
            return
        if not QDesktopServices.openUrl(QUrl(url)):
            raise RuntimeError(f"The sign-in page of {server} could not be opened: no browser was found.")

    def _progress(self, progress: CallProgress) -> None:
        tab = self._tabs.tab_for(progress.session_id) if progress.session_id else None
        wiring = self.find(tab) if tab is not None else None
        if wiring is not None:
            wiring.progress(progress)
        elif tab is not None and not progress.done:
            self.wiring(tab).progress(progress)
