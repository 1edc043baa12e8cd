"""The one live conversation of a session, observed by tabs, the sidebar and the CLI.

The registry hands out references to this object, never copies: the bug that
broke the original multi-session design (a stale staged message in a cloned
conversation, docs/design.md §1) cannot happen when there is only one instance.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from threadline.core.conversation import Conversation
from threadline.core.gathered_context import GatheredContext
from threadline.core.session import SessionInfo
from threadline.engine.events import ConversationEvent
from threadline.engine.knowledge import SentKnowledge

log = logging.getLogger("threadline.engine")

Observer = Callable[[ConversationEvent], None]


class LiveConversation:
    """A session's ``Conversation`` plus its listing and the observers of its events."""

    def __init__(self, info: SessionInfo, conversation: Conversation) -> None:
        self._info = info
        self._conversation = conversation
        self._observers: list[Observer] = []
        self.last_context: GatheredContext | None = None
        """The sticky context of the latest request (for the tab and the meter; not stored)."""
        self.last_knowledge: SentKnowledge | None = None
        """The passages sent with the latest request (``engine/knowledge.py``): the meter's part."""

    @property
    def session_id(self) -> str:
        return self._info.id

    @property
    def info(self) -> SessionInfo:
        return self._info

    @info.setter
    def info(self, value: SessionInfo) -> None:
        self._info = value

    @property
    def conversation(self) -> Conversation:
        return self._conversation

    def subscribe(self, callback: Observer) -> Callable[[], None]:
        self._observers.append(callback)

        def unsubscribe() -> None:
            if callback in self._observers:
                self._observers.remove(callback)

        return unsubscribe

    def emit(self, event: ConversationEvent) -> None:
        """Tell every observer; one failing observer must not stop the turn or the others."""
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:
                log.exception("observer of session %s failed on %s", self.session_id, type(event).__name__)
