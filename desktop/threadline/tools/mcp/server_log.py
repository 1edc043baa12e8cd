"""What an MCP server logs to its client (``notifications/message``), kept for Settings → MCP.

A server with the ``logging`` capability sends log messages at or above the level the
client asked for (``logging/setLevel``; until asked, the server's own default). The SDK
hands each to the session's logging callback, ``ServerLog.receive``; the last
``MAX_ENTRIES`` are kept in memory (they are the server's words, shown, not stored) with
every value Threadline injected into the server masked (``mcp_stderr``), and observers
hear each new one. docs/mcp.md, "Settings → MCP".
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("threadline.tools.mcp")

MAX_ENTRIES = 500
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, as MCP names them, least severe first."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    when: float
    """``time.time()`` when it arrived."""
    level: str
    logger: str
    text: str


LogObserver = Callable[[LogEntry], None]


class ServerLog:
    def __init__(self, mask: Callable[[str], str]) -> None:
        self._mask = mask
        self.entries: deque[LogEntry] = deque(maxlen=MAX_ENTRIES)
        self.level = ""
        """The level Threadline last asked for ("" until it asked: the server's default)."""
        self._observers: list[LogObserver] = []

    async def receive(self, params: Any) -> None:
        """The SDK's ``logging_callback``: ``params`` is a ``LoggingMessageNotificationParams``."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        entry = LogEntry(time.time(), str(params.level), str(params.logger or ""), self._mask(text))
        self.entries.append(entry)
        for observer in list(self._observers):
            try:
                observer(entry)
            except Exception:
                log.exception("MCP log observer failed")

    def subscribe(self, observer: LogObserver) -> Callable[[], None]:
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe
