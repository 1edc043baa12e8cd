"""The window's one approval handler: sends each request to the tab of its session.

The engine calls the handler from a turn's task (inside the call's tool context,
so a ``write_file`` preview resolves its path against the agent's allowed
folders). The router computes the previews there, finds the session's tab —
opening it in the background if the user had closed it — and awaits that tab's
answer. A tab outside the window's tabs is asked first (``elsewhere``: Quick ask's, so a
Quick ask turn asks in the Quick ask window, where the person is looking, and the main
window is neither raised nor given a second tab of that chat; docs/quick-ask.md). A turn
stopped meanwhile cancels the wait; the engine records the calls as cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from threadline.core.messages import ToolCall
from threadline.engine.api import EngineApi
from threadline.engine.approval import Decision

if TYPE_CHECKING:
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.window.tab_container import TabContainer

log = logging.getLogger("threadline.ui.approval")

OpenTab = Callable[[str], Awaitable["ChatTab | None"]]
FindTab = Callable[[str], "ChatTab | None"]


class ApprovalRouter:
    def __init__(
        self, engine: EngineApi, tabs: TabContainer, open_tab: OpenTab, elsewhere: FindTab | None = None
    ) -> None:
        self._engine = engine
        self._tabs = tabs
        self._open_tab = open_tab
        self._elsewhere = elsewhere
        self._attached = True
        engine.turns.set_approval_handler(self)

    def detach(self) -> None:
        """The window is closing: calls that need asking are refused from now on."""
        if self._attached:
            self._attached = False
            self._engine.turns.set_approval_handler(None)

    async def __call__(self, session_id: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
        from threadline.engine.compare_runner import approval_label

        asker = approval_label()  # in a compare: the worker whose reply asks (read before any await)
        previews = {call.id: await asyncio.to_thread(self._engine.tools.preview, call) for call in calls}
        if not self._attached:
            return []
        tab = self._elsewhere(session_id) if self._elsewhere is not None else None
        if tab is None:
            tab = self._tabs.tab_for(session_id)
        if tab is None:
            log.info("session %s asks for approval: opening its tab", session_id)
            tab = await self._open_tab(session_id)
        if tab is None or not self._attached:
            return []
        return await tab.ask_approval(calls, previews, asker)
