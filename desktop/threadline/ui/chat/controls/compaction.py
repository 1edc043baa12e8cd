"""Summarising a conversation so far (the banner's Compact, the meter's Compact…, ``/compact``).

While the summary is requested the banner says so and sending is held; afterwards the
summary shows in the conversation, or the banner shows why not (the engine's ``TurnFailed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from threadline.core.messages import Message
from threadline.engine.api import EngineApi
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.common.error_banner import ErrorBanner
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import spawn

COMPACTING_TEXT = "Summarising earlier messages…"


class CompactionHost(Protocol):
    """What compaction needs of its tab."""

    engine: EngineApi
    banner: ErrorBanner
    view: ChatView
    bridge: MessageBridge

    @property
    def session_id(self) -> str: ...
    def show_status(self, text: str) -> None: ...
    def update_held(self) -> None: ...


class Compaction:
    """One tab's compaction: at most one summary is requested at a time."""

    def __init__(self, host: CompactionHost) -> None:
        self._host = host
        self.running = False

    def compact(
        self, instructions: str = "", *, keep_turns: int = 0, finished: Callable[[bool], None] | None = None
    ) -> None:
        """Summarise the whole conversation so far, so the next message starts from the summary.

        ``/compact`` passes the user's ``instructions``, keeps the last turns and is told
        through ``finished`` whether a summary was made.

        The banner offers this when the conversation no longer fits the model's context
        window; there the latest turn is the one that did not fit, so nothing is kept
        verbatim.
        """
        if self.running:
            return
        host = self._host
        self.running = True
        host.banner.show_info(COMPACTING_TEXT)
        host.update_held()

        def done(summary: Message | None) -> None:
            self.running = False
            host.update_held()
            if summary is not None:
                host.banner.dismiss()
                host.view.scroll_to_bottom()
                host.show_status("Earlier messages were summarised; you can continue the chat.")
            elif host.banner.error is None:  # stopped before any answer: no error to show
                host.banner.dismiss()
            if finished is not None:
                finished(summary is not None)

        def failed(_err: BaseException) -> None:
            self.running = False
            host.update_held()
            if finished is not None:
                finished(False)

        spawn(
            host.engine.turns.compact(host.session_id, instructions, keep_turns=keep_turns),
            on_done=done,
            on_failed=failed,
            tell=host.bridge,
            context="Could not compact the conversation",
            session_id=host.session_id,
        )
