"""A quiet notice in the tab when a turn's knowledge search fell back to keywords.

The engine tells the tab with ``KnowledgeNotice`` when the request it built searched the attached
knowledge bases by keyword only although vectors were meant to help (the embedding server down or
refusing); the banner shows the reason as information, not as an error: the reply still came,
with the passages keyword search found (docs/knowledge.md, "Keyword-only").
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from threadline.engine.api import LiveConversationApi
from threadline.engine.events import ConversationEvent, KnowledgeNotice


class KnowledgeNotices(QObject):
    def __init__(self, live: LiveConversationApi, show: Callable[[str], None], parent: QObject) -> None:
        super().__init__(parent)
        self._show = show
        unsubscribe = live.subscribe(self._event)
        self.destroyed.connect(lambda *_: unsubscribe())  # the tab closed: no more notices for it

    def _event(self, event: ConversationEvent) -> None:
        if isinstance(event, KnowledgeNotice):
            self._show(event.text)
